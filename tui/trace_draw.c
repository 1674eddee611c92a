/*
 * trace_draw.c - the trace view's ruler, step row, lanes and legend.  Each lane
 * row costs one gt_store_lane_buckets query of the screen width, so a frame is
 * O(rows x columns x log n) whatever the zoom.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include "term.h"
#include "trace_view.h"
#include "demangle.h"
#include "gtrace/lsum.h"

void trace_draw_ruler(struct trace_view *t)
{
	const struct lrect *r = &t->lay.ruler;
	if (r->h <= 0)
		return;
	const struct gt_store *s = t->v.app->store;
	int64_t lo = gt_store_t_origin(s);
	int64_t step = layout_tick_ns(&t->m, 12);
	char buf[32];
	/* scale in the label column */
	if (t->lay.labels.w > 0)
		term_printf(r->y, t->lay.labels.x, t->lay.labels.w - 1, theme_attr(TH_DIM),
			    "1 col=%s", layout_fmt_dur(t->m.ns_per_col, buf, sizeof(buf)));
	int64_t rel0 = t->m.t0_ns - lo;
	int64_t k = rel0 >= 0 ? (rel0 + step - 1) / step : -((-rel0) / step);
	for (;; k++) {
		int64_t tt = lo + k * step;
		long c = layout_t2col(&t->m, tt);
		if (c >= r->w)
			break;
		if (c < 0)
			continue;
		layout_fmt_time(k * step, step, buf, sizeof(buf));
		term_put(r->y, r->x + (int)c, 1, theme_attr(TH_DIM), "|");
		/* a label is whole or not drawn (no "|197" cut at the right edge) */
		if (c + 1 + (long)strlen(buf) <= r->w)
			term_put(r->y, r->x + (int)c + 1, r->w - (int)c - 1, theme_attr(TH_NORMAL), buf);
	}
	/* mark and cursor */
	if (t->marking) {
		int64_t m0 = t->mark_t0, m1 = t->marking == 2 ? t->mark_t1 :
			     layout_col2t(&t->m, t->col + 1);
		if (m1 < m0) {
			int64_t x = m0;
			m0 = m1;
			m1 = x;
		}
		long c0 = layout_t2col(&t->m, m0), c1 = layout_t2col(&t->m, m1 - 1);
		if (c0 < 0)
			c0 = 0;
		if (c1 >= r->w)
			c1 = r->w - 1;
		struct lrect row = t->lay.steps.h ? t->lay.steps : *r;
		for (long c = c0; c <= c1; c++)
			mvchgat(row.y, row.x + (int)c, 1, theme_attr(TH_MARK), 0, NULL);
	}
	mvchgat(r->y, r->x + t->col, 1, theme_attr(TH_CURSOR) | A_REVERSE, 0, NULL);
	/* step boundaries */
	const struct lrect *sr = &t->lay.steps;
	if (sr->h <= 0 || !t->nsteps)
		return;
	int64_t v0 = t->m.t0_ns, v1 = layout_col2t(&t->m, sr->w);
	/* first step ending after v0 (steps sorted by start; ends mostly too) */
	size_t a = 0, b = t->nsteps;
	while (a < b) {
		size_t mid = (a + b) / 2;
		if (t->steps[mid].t0_ns < v0)
			a = mid + 1;
		else
			b = mid;
	}
	if (a > 0)
		a--;
	long last_c = -100;
	for (size_t i = a; i < t->nsteps && t->steps[i].t0_ns < v1; i++) {
		long c = layout_t2col(&t->m, t->steps[i].t0_ns);
		if (c < 0 || c <= last_c)
			continue;
		term_put(sr->y, sr->x + (int)c, 1, theme_attr(TH_STEP), "|");
		snprintf(buf, sizeof(buf), "#%lld", (long long)t->steps[i].num);
		last_c = c;
		/* skip steps that land in this column, and the same step of the
		 * other ranks right after it (one marker per step number) */
		int64_t nt = layout_col2t(&t->m, c + 1);
		while (i + 1 < t->nsteps && (t->steps[i + 1].t0_ns < nt ||
					     t->steps[i + 1].num == t->steps[i].num))
			i++;
		long next_c = i + 1 < t->nsteps ? layout_t2col(&t->m, t->steps[i + 1].t0_ns) : sr->w;
		/* whole or not at all: a label cut at the right edge would read
		   as another step ("#1" for 133) */
		if (next_c - c > (long)strlen(buf) && sr->w - c - 1 >= (long)strlen(buf))
			term_put(sr->y, sr->x + (int)c + 1, (int)(sr->w - c - 1), theme_attr(TH_STEP), buf);
	}
	if (t->lay.labels.w > 0)
		term_put(sr->y, t->lay.labels.x, t->lay.labels.w - 1, theme_attr(TH_DIM), "steps");
}

/* draw a bucket row; cat[] gives each column's category */
static void draw_cells(struct trace_view *t, int y, const struct gt_bucket *bk,
		       const uint8_t *cat, int cursor_row)
{
	const struct lrect *c = &t->lay.cells;
	for (int x = 0; x < c->w; x++) {
		int e = layout_eighths(bk[x].busy_ns, t->m.ns_per_col, bk[x].count);
		int cur = cursor_row && x == t->col;
		if (!e && !cur)
			continue;
		attr_t a = theme_attr((enum theme_role)cat[x]);
		if (cur)
			a = theme_attr(TH_CURSOR);
		const char *g = e ? theme_cell((enum theme_role)cat[x], e) : " ";
		attrset(a);
		term_glyph(y, c->x + x, g);
	}
	attrset(A_NORMAL);
}

/* bytes of s that fill at most w cells, whole characters only (their cell
 * width by wcwidth in a UTF-8 locale, else one per byte); cells in *cells */
static size_t fit_cells(const char *s, int w, int *cells)
{
	mbstate_t st;
	memset(&st, 0, sizeof(st));
	size_t n = 0;
	int c = 0;
	while (s[n]) {
		size_t k = 1;
		int cw = 1;
		if ((unsigned char)s[n] >= 0x80 && term_caps.utf8) {
			wchar_t wc;
			k = mbrtowc(&wc, s + n, MB_CUR_MAX, &st);
			if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
				k = 1;
				memset(&st, 0, sizeof(st));
			} else if ((cw = wcwidth(wc)) < 0) {
				cw = 1;
			}
		}
		if (c + cw > w)
			break;
		c += cw;
		n += k;
	}
	*cells = c;
	return n;
}

/* " name" of event e clipped to columns [c0, c1) of the cells at row y;
 * full: the whole demangled name ("aten::conv2d") when it fits, else short.
 * A cut name ends with an ellipsis; none when fewer than 4 cells of it fit */
static void put_name(struct trace_view *t, int y, const struct gt_event *e, long c0, long c1, int full)
{
	const struct lrect *c = &t->lay.cells;
	char nm[300], sh[256];
	const char *raw = gt_store_str(t->v.app->store, e->name);
	int w = (int)(c1 - c0), cw;
	int fits = 0;
	if (full) {
		demangle_name(raw, sh, sizeof(sh));
		fit_cells(sh, INT32_MAX, &cw);
		fits = cw + 1 <= w;
	}
	if (!fits)
		demangle_short_of(t->v.app->store, raw, sh, sizeof(sh));
	/* a name the buffer cut short: back off to a character boundary */
	size_t len = strlen(sh);
	int cut = len >= sizeof(sh) - 1;
	if (cut) {
		size_t k = len;
		while (k > 0 && ((unsigned char)sh[k - 1] & 0xc0) == 0x80)
			k--;
		if (k > 0 && (unsigned char)sh[k - 1] >= 0xc0) {
			unsigned char lead = (unsigned char)sh[k - 1];
			size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
			if (len - (k - 1) < need)
				sh[k - 1] = 0;   /* its last character lost bytes */
		}
	}
	snprintf(nm, sizeof(nm), " %s", sh);
	size_t nb = fit_cells(nm, w, &cw);
	if (nm[nb] || cut) {
		const char *mark = term_caps.utf8 ? "\u2026" : "~";
		if (w - 2 < 4)
			return;
		nb = fit_cells(nm, w - 1, &cw);
		snprintf(nm + nb, sizeof(nm) - nb, "%s", mark);
	}
	attr_t a = theme_attr(theme_cat(e)) | A_REVERSE;
	if (!term_caps.colors)
		a = A_REVERSE;
	term_put(y, c->x + (int)c0, w, a, nm);
}

/* names inside the events of one depth that span 5 columns or more, from
 * the row's buckets: the events of a depth are disjoint, so an event wider
 * than a column is the longest one of the columns it covers (no query) */
static void draw_depth_names(struct trace_view *t, int y, const struct gt_lane *l,
			     const struct gt_bucket *bk)
{
	const struct lrect *c = &t->lay.cells;
	size_t last = SIZE_MAX;
	for (long x = 0; x < c->w; x++) {
		size_t i = bk[x].dominant;
		if (i == SIZE_MAX || i == last || i >= l->n)
			continue;
		last = i;
		const struct gt_event *e = &l->ev[i];
		long c0 = layout_t2col(&t->m, e->start_ns), c1 = layout_t2col(&t->m, gt_event_end(e));
		if (c0 < x)
			c0 = x;
		if (c1 > c->w)
			c1 = c->w;
		if (c1 - c0 < 5)
			continue;
		put_name(t, y, e, c0, c1, 1);
		x = c1 - 1;
	}
}

/* names inside events that span enough columns */
static void draw_names(struct trace_view *t, int y, const struct gt_lane *l)
{
	const struct lrect *c = &t->lay.cells;
	int64_t v0 = t->m.t0_ns, v1 = layout_col2t(&t->m, c->w);
	size_t f, la;
	gt_store_lane_range(l, v0, v1, &f, &la);
	if (la - f > (size_t)c->w)
		return;
	for (size_t i = f; i < la; i++) {
		const struct gt_event *e = &l->ev[i];
		long c0 = layout_t2col(&t->m, e->start_ns), c1 = layout_t2col(&t->m, gt_event_end(e));
		if (c0 < 0)
			c0 = 0;
		if (c1 > c->w)
			c1 = c->w;
		if (c1 - c0 < 5)
			continue;
		put_name(t, y, e, c0, c1, 0);
	}
}

void trace_draw_free(struct trace_view *t)
{
	for (int i = 0; i < t->rc_rows; i++) {
		free(t->rc[i].b);
		free(t->rc[i].cat);
	}
	free(t->rc);
	t->rc = NULL;
	t->rc_rows = t->rc_cols = 0;
}

/* one slot per screen row of w columns; 0 or -1 on no memory */
static int cache_size(struct trace_view *t, int rows, int w)
{
	if (rows == t->rc_rows && w == t->rc_cols)
		return 0;
	trace_draw_free(t);
	t->rc = calloc((size_t)(rows > 0 ? rows : 1), sizeof(*t->rc));
	if (!t->rc)
		return -1;
	t->rc_rows = rows;
	t->rc_cols = w;
	for (int i = 0; i < rows; i++) {
		t->rc[i].b = malloc((size_t)w * sizeof(*t->rc[i].b));
		t->rc[i].cat = malloc((size_t)w);
		if (!t->rc[i].b || !t->rc[i].cat) {
			trace_draw_free(t);
			return -1;
		}
	}
	return 0;
}

/* the category of a summary bucket's dominant (kind | sub << 8 | flags << 16) */
static uint8_t kfs_cat(uint32_t kfs)
{
	if (kfs == UINT32_MAX)
		return TH_COMPUTE;
	struct gt_event e = { .kind = (uint8_t)kfs, .sub = (uint8_t)(kfs >> 8),
			      .flags = (uint16_t)(kfs >> 16) };
	return (uint8_t)theme_cat(&e);
}

/* columns of a lane from the file's summary when they are wide enough
 * (zoomed out): no event is read; 1 when done, 0 to read the events */
static int sum_row(const struct gt_store *s, uint32_t lane, int64_t t0, int64_t npc, int n,
		   struct gt_bucket *b, uint8_t *cat)
{
	const struct gt_lsum *m = gt_store_summary(s);
	if (!gt_lsum_applies(m, lane, npc))
		return 0;
	uint32_t kb[256];
	for (int x0 = 0; x0 < n; x0 += 256) {
		int k = n - x0 < 256 ? n - x0 : 256;
		gt_lsum_buckets(m, lane, t0 + (int64_t)x0 * npc, npc, k, b + x0, kb, NULL);
		for (int x = 0; x < k; x++)
			cat[x0 + x] = kfs_cat(kb[x]);
	}
	return 1;
}

/* buckets and categories of columns [c0, c0 + n) of row `ri` (a lane, or a
 * folded group: the union of up to 64 child lanes coloured by the busiest) */
static void fill_row(struct trace_view *t, uint32_t ri, int c0, int n, struct gt_bucket *b,
		     uint8_t *cat)
{
	const struct gt_store *s = t->v.app->store;
	const struct lanes_row *r = &t->L.all[ri];
	int64_t t0 = layout_col2t(&t->m, c0), npc = t->m.ns_per_col;
	b += c0;
	cat += c0;
	if (r->kind == LROW_DEPTH) {
		/* one nesting depth: its events are disjoint, coloured by the longest */
		const struct gt_lane *l = gt_store_lane_at(s, r->lane);
		gt_store_depth_buckets(trace_view_depth(t, r->lane), l, r->level, t0, npc, n, b);
		for (int x = 0; x < n; x++)
			cat[x] = b[x].dominant != SIZE_MAX ? (uint8_t)theme_cat(&l->ev[b[x].dominant]) :
							      TH_COMPUTE;
		return;
	}
	if (r->kind == LROW_LANE) {
		const struct gt_lane *l = gt_store_lane_at(s, r->lane);
		if (sum_row(s, r->lane, t0, npc, n, b, cat))
			return;
		gt_store_read_tick_span(s, l, t0, t0 + n * npc);
		gt_store_lane_buckets(l, t0, npc, n, b);
		for (int x = 0; x < n; x++)
			cat[x] = b[x].dominant != SIZE_MAX ? (uint8_t)theme_cat(&l->ev[b[x].dominant]) :
							      TH_COMPUTE;
		/* host threads nest ranges (step > op > runtime call): colour a
		 * column by the innermost range at its middle, not the longest */
		if (l->key.type == GT_LANE_HOST)
			for (int x = 0; x < n; x++) {
				if (!b[x].count && !b[x].busy_ns)
					continue;
				size_t i = gt_store_lane_event_at(l, t0 + x * npc + npc / 2);
				if (i != SIZE_MAX)
					cat[x] = (uint8_t)theme_cat(&l->ev[i]);
			}
		return;
	}
	memset(b, 0, (size_t)n * sizeof(*b));
	memset(cat, TH_COMPUTE, (size_t)n);
	int nchild = 0;
	for (uint32_t i = ri + 1; i < r->end && nchild < 64; i++) {
		if (t->L.all[i].kind != LROW_LANE)
			continue;
		const struct gt_lane *l = gt_store_lane_at(s, t->L.all[i].lane);
		if (!l->n)
			continue;
		nchild++;
		int fs = sum_row(s, t->L.all[i].lane, t0, npc, n, t->bk2, t->cat2);
		if (!fs) {
			gt_store_read_tick_span(s, l, t0, t0 + n * npc);
			gt_store_lane_buckets(l, t0, npc, n, t->bk2);
		}
		for (int x = 0; x < n; x++) {
			const struct gt_bucket *o = &t->bk2[x];
			if (o->busy_ns > b[x].busy_ns || (!b[x].count && o->count)) {
				if (fs && (o->busy_ns || o->count))
					cat[x] = t->cat2[x];
				else if (o->dominant != SIZE_MAX)
					cat[x] = (uint8_t)theme_cat(&l->ev[o->dominant]);
				if (o->busy_ns > b[x].busy_ns)
					b[x].busy_ns = o->busy_ns;
			}
			uint32_t sum = b[x].count + o->count;
			b[x].count = sum < b[x].count ? UINT32_MAX : sum;
		}
	}
}

static uint64_t row_key(const struct trace_view *t, uint32_t ri)
{
	return ((uint64_t)ri + 1) * 2 + t->L.all[ri].folded;
}

/* 1 when the cached row can be kept or shifted (a pan by whole columns) */
static int row_reusable(const struct trace_view *t, const struct trace_rowcache *rc, uint32_t ri, int w)
{
	int64_t npc = t->m.ns_per_col, d = t->m.t0_ns - rc->t0_ns;
	return rc->key == row_key(t, ri) && rc->gen == t->gen && rc->npc == npc &&
	       d % npc == 0 && d / npc < w && d / npc > -w;
}

static void row_stamp(struct trace_view *t, struct trace_rowcache *rc, uint32_t ri)
{
	rc->key = row_key(t, ri);
	rc->gen = t->gen;
	rc->npc = t->m.ns_per_col;
	rc->t0_ns = t->m.t0_ns;
}

/* the cached row for screen row yy showing row ri, brought up to date:
 * kept when nothing moved, shifted and completed after a pan by whole
 * columns, recomputed otherwise */
static struct trace_rowcache *row_buckets(struct trace_view *t, int yy, uint32_t ri, int w)
{
	struct trace_rowcache *rc = &t->rc[yy];
	int64_t npc = t->m.ns_per_col, d = t->m.t0_ns - rc->t0_ns;
	if (row_reusable(t, rc, ri, w)) {
		int sh = (int)(d / npc);
		if (sh > 0) {
			memmove(rc->b, rc->b + sh, (size_t)(w - sh) * sizeof(*rc->b));
			memmove(rc->cat, rc->cat + sh, (size_t)(w - sh));
			fill_row(t, ri, w - sh, sh, rc->b, rc->cat);
		} else if (sh < 0) {
			memmove(rc->b - sh, rc->b, (size_t)(w + sh) * sizeof(*rc->b));
			memmove(rc->cat - sh, rc->cat, (size_t)(w + sh));
			fill_row(t, ri, 0, -sh, rc->b, rc->cat);
		}
	} else {
		fill_row(t, ri, 0, w, rc->b, rc->cat);
	}
	row_stamp(t, rc, ri);
	return rc;
}

/* rows of whole lanes that a frame must recompute are independent reads of
 * the store into their own cache rows: with enough of them (a zoom with a
 * big capture on screen), half are filled on a second thread.  Folded
 * groups share scratch (bk2) and stay on the UI thread. */
#define PREFILL_MIN_COLS 4000    /* columns x rows below which one thread is faster */

struct prefill {
	struct trace_view *t;
	int w, n;
	int yy[512];
	uint32_t ri[512];
};

static void *prefill_run(void *arg)
{
	struct prefill *p = arg;
	for (int k = 0; k < p->n; k++) {
		struct trace_rowcache *rc = &p->t->rc[p->yy[k]];
		fill_row(p->t, p->ri[k], 0, p->w, rc->b, rc->cat);
		row_stamp(p->t, rc, p->ri[k]);
	}
	return NULL;
}

static void prefill_rows(struct trace_view *t, int h, int w)
{
	struct prefill part[2] = { { .t = t, .w = w }, { .t = t, .w = w } };
	int n = 0;
	for (int yy = 0; yy < h && yy < 1024; yy++) {
		size_t v = t->top + (size_t)yy;
		if (v >= t->L.nvis)
			break;
		uint32_t ri = t->L.vis[v];
		if (t->L.all[ri].kind < LROW_LANE || row_reusable(t, &t->rc[yy], ri, w))
			continue;
		struct prefill *p = &part[n++ % 2];
		p->yy[p->n] = yy;
		p->ri[p->n++] = ri;
	}
	if ((long)n * w < PREFILL_MIN_COLS)
		return;
	pthread_t th;
	int threaded = pthread_create(&th, NULL, prefill_run, &part[1]) == 0;
	prefill_run(&part[0]);
	if (threaded)
		pthread_join(th, NULL);
	else
		prefill_run(&part[1]);
}

/* the lanes whose events this frame reads (rows not cached, not drawn from
 * the summary; a folded group's first 64 lanes as fill_row takes them),
 * read ahead together: under a memory budget with a cold page cache the
 * disk gets every lane's pages at once instead of one fault at a time
 * (gt_store_prefetch; nothing without a cache file) */
static void prefetch_rows(struct trace_view *t, int h, int w)
{
	const struct gt_store *s = t->v.app->store;
	const struct gt_lsum *m = gt_store_summary(s);
	int64_t npc = t->m.ns_per_col;
	uint32_t ids[1024];
	size_t n = 0;
	for (int yy = 0; yy < h && n < 1024; yy++) {
		size_t v = t->top + (size_t)yy;
		if (v >= t->L.nvis)
			break;
		uint32_t ri = t->L.vis[v];
		const struct lanes_row *r = &t->L.all[ri];
		if (row_reusable(t, &t->rc[yy], ri, w) && t->rc[yy].t0_ns == t->m.t0_ns)
			continue;
		if (r->kind >= LROW_LANE) {
			if (r->kind == LROW_DEPTH || !gt_lsum_applies(m, r->lane, npc))
				ids[n++] = r->lane;
			continue;
		}
		if (!r->folded)
			continue;
		int nchild = 0;
		for (uint32_t i = ri + 1; i < r->end && nchild < 64 && n < 1024; i++) {
			if (t->L.all[i].kind != LROW_LANE ||
			    !gt_store_lane_at(s, t->L.all[i].lane)->n)
				continue;
			nchild++;
			if (!gt_lsum_applies(m, t->L.all[i].lane, npc))
				ids[n++] = t->L.all[i].lane;
		}
	}
	if (n)
		gt_store_prefetch(s, ids, n, t->m.t0_ns, layout_col2t(&t->m, w));
}

/* 1 when the row came from the summary with more events than columns:
 * draw_names would draw nothing, and would read the events to find out */
static int sum_crowded(const struct trace_view *t, uint32_t lane, const struct gt_bucket *b, int w)
{
	if (!gt_lsum_applies(gt_store_summary(t->v.app->store), lane, t->m.ns_per_col))
		return 0;
	uint64_t n = 0;
	for (int x = 0; x < w; x++)
		n += b[x].count;
	return n > (uint64_t)w;
}

void trace_draw_lanes(struct trace_view *t)
{
	const struct gt_store *s = t->v.app->store;
	const struct lrect *c = &t->lay.cells, *lb = &t->lay.labels;
	int w = c->w;
	if (w <= 0 || c->h <= 0 || cache_size(t, c->h, w))
		return;
	prefetch_rows(t, c->h, w);
	prefill_rows(t, c->h, w);
	for (int yy = 0; yy < c->h; yy++) {
		size_t v = t->top + (size_t)yy;
		if (v >= t->L.nvis)
			break;
		uint32_t ri = t->L.vis[v];
		const struct lanes_row *r = &t->L.all[ri];
		int y = c->y + yy, cursor = v == t->row;
		/* label */
		if (lb->w > 0) {
			char lab[96];
			const char *fold = "";
			if (r->kind < LROW_LANE || (r->kind == LROW_LANE && r->ndepth))
				fold = r->folded ? (term_caps.utf8 ? "\u25b8" : "+") :
						   (term_caps.utf8 ? "\u25be" : "-");
			const char *text = r->label;
			if ((int)strlen(r->label) + r->depth + 1 > lb->w - 1)
				text = r->short_label;
			snprintf(lab, sizeof(lab), "%*s%s%s", r->depth, "", fold, text);
			attr_t a = r->kind >= LROW_LANE ? theme_attr(r->kind == LROW_DEPTH ? TH_DIM : TH_NORMAL) :
							  theme_attr(TH_GROUP);
			if (cursor)
				a = theme_attr(TH_SELECT);
			term_fill((struct lrect){ lb->x, y, lb->w - 1, 1 }, cursor ? a : 0);
			term_put(y, lb->x, lb->w - 1, a, lab);
		}
		/* an open group shows its lanes below it */
		if (r->kind < LROW_LANE && !r->folded) {
			t->rc[yy].key = 0;
			if (cursor)
				mvchgat(y, c->x + t->col, 1, theme_attr(TH_CURSOR), 0, NULL);
			continue;
		}
		if (r->kind == LROW_LANE &&
		    gt_store_lane_at(s, r->lane)->key.type == GT_LANE_COUNTER) {
			t->rc[yy].key = 0;
			trace_counter_draw(t, y, gt_store_lane_at(s, r->lane), cursor);
			continue;
		}
		struct trace_rowcache *rc = row_buckets(t, yy, ri, w);
		draw_cells(t, y, rc->b, rc->cat, cursor);
		if (r->kind == LROW_LANE && !sum_crowded(t, r->lane, rc->b, w))
			draw_names(t, y, gt_store_lane_at(s, r->lane));
		else if (r->kind == LROW_DEPTH)
			draw_depth_names(t, y, gt_store_lane_at(s, r->lane), rc->b);
		/* names are drawn over the cells: the cursor cell stays visible */
		if (cursor && r->kind >= LROW_LANE) {
			attr_t ca = theme_attr(TH_CURSOR);
			mvchgat(y, c->x + t->col, 1, ca & ~A_COLOR, (short)PAIR_NUMBER(ca), NULL);
		}
	}
	if (!t->L.nvis && c->h > 0)
		term_put(c->y, c->x, c->w, theme_attr(TH_DIM), "no events yet");
}

void trace_draw_legend(struct trace_view *t)
{
	const struct lrect *r = &t->lay.legend;
	if (r->h <= 0)
		return;
	int x = r->x;
	for (int k = TH_COMPUTE; k < TH_CAT_END && x < r->x + r->w; k++) {
		const char *g = term_caps.colors ? (term_caps.utf8 ? "\u2588" : "#") :
						   theme_cell((enum theme_role)k, 8);
		term_put(r->y, x, 1, theme_attr((enum theme_role)k), "#");
		attrset(theme_attr((enum theme_role)k));
		if (x < r->x + r->w)
			mvaddstr(r->y, x, g);
		attrset(A_NORMAL);
		const char *n = theme_cat_name((enum theme_role)k);
		term_put(r->y, x + 1, r->x + r->w - x - 1, theme_attr(TH_DIM), n);
		x += (int)strlen(n) + 3;
	}
	const char *hint = "  ? keys";
	if (x + (int)strlen(hint) < r->x + r->w)
		term_put(r->y, r->x + r->w - (int)strlen(hint), (int)strlen(hint), theme_attr(TH_DIM), hint);
}
