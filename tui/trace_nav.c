/*
 * trace_nav.c - the trace view's jumps: regex search (/ n N), go to a time (g),
 * zoom to the selected event or step (z Z), previous/next event on a lane
 * ([ ]), the range mark (m) and the nesting depth rows of a lane (e).  State lives in struct trace_view (trace_view.h);
 * these functions change it and never draw.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "term.h"
#include "trace_view.h"

/* time at the middle of the cursor column */
static int64_t cursor_t(const struct trace_view *t)
{
	return layout_col2t(&t->m, t->col) + t->m.ns_per_col / 2;
}

/* the names (string ids) the search pattern matches: a table of ns flags,
 * NULL on no memory; *ns gets the string count */
static unsigned char *name_hits(const struct trace_view *t, size_t *ns)
{
	const struct gt_store *s = t->v.app->store;
	*ns = gt_store_str_count(s);
	unsigned char *hit = calloc(*ns ? *ns : 1, 1);
	if (!hit)
		return NULL;
	for (size_t i = 1; i < *ns; i++)
		hit[i] = regexec(&t->re, gt_store_str(s, (uint32_t)i), 0, NULL, 0) == 0;
	return hit;
}

/* the first match starting after `from` (dir > 0) or the last one starting
 * before it (dir < 0) over all lanes; lane UINT32_MAX when none */
static struct gt_ref find_from(const struct trace_view *t, const unsigned char *hit, size_t ns,
			       int64_t from, int dir)
{
	const struct gt_store *s = t->v.app->store;
	struct gt_ref best = { UINT32_MAX, 0 };
	int64_t best_t = 0;
	for (size_t li = 0; li < gt_store_lane_count(s); li++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)li);
		size_t f, la;
		if (dir > 0) {
			gt_store_lane_range(l, from == INT64_MAX ? from : from + 1, INT64_MAX, &f, &la);
			for (size_t i = f; i < la; i++) {
				const struct gt_event *e = &l->ev[i];
				if (e->start_ns > from && e->name < ns && hit[e->name]) {
					if (best.lane == UINT32_MAX || e->start_ns < best_t)
						best = (struct gt_ref){ (uint32_t)li, (uint32_t)i }, best_t = e->start_ns;
					break;
				}
			}
		} else {
			gt_store_lane_range(l, INT64_MIN, from, &f, &la);
			for (size_t i = la; i-- > f;) {
				const struct gt_event *e = &l->ev[i];
				if (e->start_ns < from && e->name < ns && hit[e->name]) {
					if (best.lane == UINT32_MAX || e->start_ns > best_t)
						best = (struct gt_ref){ (uint32_t)li, (uint32_t)i }, best_t = e->start_ns;
					break;
				}
			}
		}
	}
	return best;
}

/* how many events match (*total) and how many of them start before t0 */
static void count_hits(const struct trace_view *t, const unsigned char *hit, size_t ns, int64_t t0,
		       size_t *total, size_t *before)
{
	const struct gt_store *s = t->v.app->store;
	*total = *before = 0;
	for (size_t li = 0; li < gt_store_lane_count(s); li++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)li);
		for (size_t i = 0; i < l->n; i++) {
			const struct gt_event *e = &l->ev[i];
			if (e->name < ns && hit[e->name]) {
				++*total;
				*before += e->start_ns < t0;
			}
		}
	}
}

/* go to the match from `from` in direction dir, wrapping around the capture
 * once; the message says which match of how many, and that case is ignored */
static void search_go(struct trace_view *t, int64_t from, int dir)
{
	size_t ns, total, before;
	unsigned char *hit = name_hits(t, &ns);
	if (!hit)
		return;
	struct gt_ref r = find_from(t, hit, ns, from, dir);
	int wrapped = 0;
	if (r.lane == UINT32_MAX) {
		r = find_from(t, hit, ns, dir > 0 ? INT64_MIN : INT64_MAX, dir);
		wrapped = 1;
	}
	if (r.lane == UINT32_MAX) {
		free(hit);
		ui_msg(t->v.app, "/%s: no event matches (case-insensitive)", t->pattern);
		return;
	}
	count_hits(t, hit, ns, gt_store_ev(t->v.app->store, r)->start_ns, &total, &before);
	free(hit);
	trace_view_goto(&t->v, r);
	ui_msg(t->v.app, "/%s: match %zu of %zu (case-insensitive)%s", t->pattern, before + 1, total,
	       wrapped ? (dir > 0 ? ", wrapped to the start" : ", wrapped to the end") : "");
}

void trace_nav_search(struct trace_view *t, int dir)
{
	if (!t->has_re) {
		ui_msg(t->v.app, "no search yet: press /");
		return;
	}
	const struct gt_store *s = t->v.app->store;
	search_go(t, t->has_sel && ui_ref_ok(s, t->sel) ? gt_store_ev(s, t->sel)->start_ns : cursor_t(t),
		  dir);
}

void trace_nav_search_done(struct view *v, const char *text)
{
	struct trace_view *t = (struct trace_view *)v;
	char pat[128];
	snprintf(pat, sizeof(pat), "%s", *text ? text : t->pattern);
	text = pat;
	if (!*text)
		return;
	if (t->has_re)
		regfree(&t->re);
	t->has_re = 0;
	int rc = regcomp(&t->re, text, REG_EXTENDED | REG_NOSUB | REG_ICASE);
	if (rc) {
		char e[96];
		regerror(rc, &t->re, e, sizeof(e));
		ui_msg(t->v.app, "bad regex: %s", e);
		return;
	}
	t->has_re = 1;
	snprintf(t->pattern, sizeof(t->pattern), "%s", text);
	t->has_sel = 0;
	t->pinned = 0;
	/* the first match at or after the cursor column's start */
	search_go(t, layout_col2t(&t->m, t->col) - 1, 1);
}

void trace_nav_goto_done(struct view *v, const char *text)
{
	struct trace_view *t = (struct trace_view *)v;
	int64_t ns;
	if (layout_parse_time(text, &ns)) {
		ui_msg(t->v.app, "not a time: '%s' (units ns, us, ms, s, e.g. 1.5s)", text);
		return;
	}
	int64_t lo = gt_store_t_origin(t->v.app->store), at = lo + ns;
	const struct gt_store *s = t->v.app->store;
	int64_t hi = gt_store_event_count(s) ? gt_store_t_max(s) : lo;
	if (at > hi || ns < 0) {
		char b[32];
		layout_fmt_dur(hi - lo, b, sizeof(b));
		ui_msg(t->v.app, "%s is outside the capture (0..%s): went to its %s", text, b,
		       ns < 0 ? "start" : "end");
		at = ns < 0 ? lo : hi;
	}
	if (gt_store_event_count(s) && at < gt_store_t_min(s)) {
		/* a live ring (--ring) cut the capture's past */
		char b[32];
		layout_fmt_rel(gt_store_t_min(s) - lo, b, sizeof(b));
		ui_msg(t->v.app, "%s is before what the ring keeps (from %s): went there", text, b);
		at = gt_store_t_min(s);
	}
	/* the cursor column starts at `at` exactly; the view centres it, but
	   never starts before the capture nor ends a column past it when the
	   other side has room */
	int64_t npc = t->m.ns_per_col > 0 ? t->m.ns_per_col : 1;
	long cols = t->m.cols > 0 ? t->m.cols : 1, k = cols / 2;
	long kmax = (long)((at - lo) / npc), kmin = cols - 1 - (long)((hi - at) / npc);
	if (k > kmax)
		k = kmax;
	if (k < kmin && kmin <= kmax)
		k = kmin;
	if (k < 0)
		k = 0;
	if (k > cols - 1)
		k = cols - 1;
	t->m.t0_ns = at - (int64_t)k * npc;
	t->col = (int)k;
	t->pinned = 0;
	t->follow = 0;
}

void trace_nav_zoom_sel(struct trace_view *t)
{
	if (!t->has_sel)
		return;
	trace_view_goto(&t->v, t->sel);
}

void trace_nav_zoom_step(struct trace_view *t)
{
	int64_t at = cursor_t(t);
	for (size_t i = 0; i < t->nsteps; i++)
		if (t->steps[i].t0_ns <= at && t->steps[i].t1_ns > at) {
			trace_view_zoom_range(&t->v, t->steps[i].t0_ns, t->steps[i].t1_ns);
			return;
		}
	ui_msg(t->v.app, "no step under the cursor");
}

/* [ ] on a depth row: the previous / next event of that depth */
static void depth_step(struct trace_view *t, uint32_t lane, int lvl, int dir)
{
	const struct gt_lane *l = gt_store_lane_at(t->v.app->store, lane);
	const struct gt_depth *d = trace_view_depth(t, lane);
	if (!d || lvl >= d->nrows)
		return;
	const struct gt_depth_row *r = &d->row[lvl];
	size_t p;
	if (t->has_sel && t->sel.lane == lane && t->sel.idx < d->n && d->depth[t->sel.idx] == lvl &&
	    (p = gt_store_depth_pos(d, l, t->sel.idx)) != SIZE_MAX) {
		if (dir > 0 && p + 1 < r->n)
			p++;
		else if (dir < 0 && p > 0)
			p--;
		else
			return;
	} else {
		size_t f, la;
		gt_store_depth_range(d, l, lvl, cursor_t(t), cursor_t(t) + 1, &f, &la);
		p = dir > 0 ? la : (f ? f - 1 : SIZE_MAX);
		if (p >= r->n)
			return;
	}
	const struct gt_event *e = &l->ev[r->idx[p]];
	t->sel = (struct gt_ref){ lane, r->idx[p] };
	t->has_sel = t->pinned = 1;
	trace_view_cursor_to_col(t, layout_t2col(&t->m, e->start_ns + e->dur_ns / 2));
}

void trace_nav_lane_step(struct trace_view *t, int dir)
{
	uint32_t lane = trace_view_lane_of(t, t->row);
	if (lane == UINT32_MAX)
		return;
	int lvl = trace_view_level_of(t, t->row);
	if (lvl >= 0) {
		depth_step(t, lane, lvl, dir);
		return;
	}
	const struct gt_lane *l = gt_store_lane_at(t->v.app->store, lane);
	size_t i;
	if (t->has_sel && t->sel.lane == lane) {
		if (dir > 0 && t->sel.idx + 1 < l->n)
			i = t->sel.idx + 1;
		else if (dir < 0 && t->sel.idx > 0)
			i = t->sel.idx - 1;
		else
			return;
	} else {
		size_t f, la;
		gt_store_lane_range(l, cursor_t(t), cursor_t(t) + 1, &f, &la);
		i = dir > 0 ? la : (f ? f - 1 : SIZE_MAX);
		if (i >= l->n)
			return;
	}
	const struct gt_event *e = &l->ev[i];
	t->sel = (struct gt_ref){ lane, (uint32_t)i };
	t->has_sel = t->pinned = 1;
	trace_view_cursor_to_col(t, layout_t2col(&t->m, e->start_ns + e->dur_ns / 2));
}

void trace_nav_mark(struct trace_view *t)
{
	if (t->marking != 1) {
		t->marking = 1;
		t->mark_t0 = layout_col2t(&t->m, t->col);
		t->mark_row0 = t->row;
		trace_area_clear(t);
		ui_msg(t->v.app, "mark: move the cursor (to another lane: an area), m again to fix");
		return;
	}
	int64_t a = t->mark_t0, b = layout_col2t(&t->m, t->col);
	if (b < a) {
		int64_t x = a;
		a = b;
		b = x;
	}
	/* a mark ends at the capture's edges: time outside it holds nothing
	   and would water down the busy shares */
	const struct gt_store *s = t->v.app->store;
	int64_t lo = gt_store_t_min(s), hi = gt_store_t_max(s);
	b += t->m.ns_per_col;
	if (hi > lo) {
		a = a < lo ? lo : a > hi ? hi : a;
		b = b > hi ? hi : b < lo ? lo : b;
	}
	if (b <= a) {
		t->marking = 0;
		ui_msg(t->v.app, "mark: the range lies outside the capture");
		return;
	}
	t->mark_t0 = a;
	t->mark_t1 = b;
	t->marking = 2;
	trace_detail_mark(t);
	/* another row than the first m's: an area over the lanes between */
	if (t->row != t->mark_row0 && trace_area_compute(t, t->mark_row0, t->row))
		ui_msg(t->v.app, "mark: no lanes between the two rows (a time range only)");
}

/* monotonic clock in ns */
static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* the slot of lane in t->dx, or t->ndx */
static size_t dx_find(const struct trace_view *t, uint32_t lane)
{
	size_t i = 0;
	while (i < t->ndx && t->dx[i].lane != lane)
		i++;
	return i;
}

/* forget the depth index of slot i and collapse its lane */
static void dx_drop(struct trace_view *t, size_t i)
{
	lanes_set_depth(&t->L, t->dx[i].lane, 0);
	gt_store_depth_free(t->dx[i].d);
	t->dx[i] = t->dx[--t->ndx];
}

void trace_nav_expand(struct trace_view *t)
{
	uint32_t lane = trace_view_lane_of(t, t->row);
	if (lane == UINT32_MAX) {
		ui_msg(t->v.app, "e: put the cursor on a thread's row to show its nesting");
		return;
	}
	const struct gt_store *s = t->v.app->store;
	const struct gt_lane *l = gt_store_lane_at(s, lane);
	size_t i = dx_find(t, lane);
	t->gen++;   /* rows move: the row cache is keyed by row index */
	if (i < t->ndx) {
		/* collapse; the cursor goes back to the lane's row */
		int lvl = trace_view_level_of(t, t->row);
		if (lvl >= 0 && t->row > (size_t)lvl)
			t->row -= (size_t)lvl + 1;
		dx_drop(t, i);
		return;
	}
	if (l->key.type == GT_LANE_COUNTER) {
		ui_msg(t->v.app, "e: a counter track has no nesting");
		return;
	}
	struct gt_depth *d;
	if (gt_store_depth_build(l, &d)) {
		ui_msg(t->v.app, "e: out of memory for the depth index");
		return;
	}
	if (!d->nrows) {
		gt_store_depth_free(d);
		ui_msg(t->v.app, "e: this lane has no events yet");
		return;
	}
	/* nesting is a host thread's (step > operator > runtime call): another
	   lane says what it is, and expands only when its events overlap */
	int host = l->key.type == GT_LANE_HOST;
	if (!host && d->nrows < 2) {
		gt_store_depth_free(d);
		ui_msg(t->v.app, "e: not a host thread: this %s's events do not nest (nothing to expand)",
		       l->key.type == GT_LANE_GPU ? "GPU stream" : "lane");
		return;
	}
	struct trace_depth *p = realloc(t->dx, (t->ndx + 1) * sizeof(*p));
	if (!p || lanes_set_depth(&t->L, lane, d->nrows)) {
		if (p)
			t->dx = p;
		gt_store_depth_free(d);
		ui_msg(t->v.app, "e: out of memory");
		return;
	}
	t->dx = p;
	t->dx[t->ndx++] = (struct trace_depth){ lane, d, now_ns() };
	/* bring the new rows on screen (as many as fit below the lane's row) */
	int h = t->lay.cells.h > 0 ? t->lay.cells.h : 1;
	size_t last = t->row + (size_t)d->nrows;
	if (last >= t->top + (size_t)h) {
		size_t top = last + 1 - (size_t)h;
		t->top = top > t->row ? t->row : top;
	}
	if (host)
		ui_msg(t->v.app, "%d depth rows (e again collapses)", d->nrows);
	else
		ui_msg(t->v.app, "not a host thread: %d rows of overlapping events (e again collapses)",
		       d->nrows);
}

/* a full rebuild of a grown lane's index at most this often (the lane's
 * new events came out of order: rare, and O(n log n) on the UI thread) */
#define DEPTH_REBUILD_NS 1000000000LL

void trace_nav_depth_sync(struct trace_view *t)
{
	const struct gt_store *s = t->v.app->store;
	for (size_t i = 0; i < t->ndx;) {
		struct trace_depth *x = &t->dx[i];
		const struct gt_lane *l = x->lane < gt_store_lane_count(s) ? gt_store_lane_at(s, x->lane) : NULL;
		if (!l) {
			dx_drop(t, i);
			continue;
		}
		int old_rows = x->d->nrows;
		int cut = l->dropped != x->d->lane_dropped;   /* by a ring window: rebuilt now */
		if (l->n != x->d->n || cut) {
			int rc = gt_store_depth_extend(x->d, l);
			if (rc == -EAGAIN && (cut || now_ns() - x->built_ns >= DEPTH_REBUILD_NS)) {
				struct gt_depth *d;
				if (gt_store_depth_build(l, &d)) {
					dx_drop(t, i);
					continue;
				}
				gt_store_depth_free(x->d);
				x->d = d;
				x->built_ns = now_ns();
			} else if (rc && rc != -EAGAIN) {
				dx_drop(t, i);
				continue;
			}
		}
		if (x->d->nrows != old_rows) {
			/* rows below the lane's depth rows move: the cursor moves with them */
			size_t lr = SIZE_MAX;
			for (size_t v = 0; v < t->L.nvis && lr == SIZE_MAX; v++) {
				const struct lanes_row *r = &t->L.all[t->L.vis[v]];
				if (r->kind == LROW_LANE && r->lane == x->lane)
					lr = v;
			}
			if (lr != SIZE_MAX && t->row > lr + (size_t)old_rows)
				t->row += (size_t)(x->d->nrows - old_rows);
			t->gen++;
		}
		lanes_set_depth(&t->L, x->lane, x->d->nrows);
		i++;
	}
}

void trace_nav_depth_free(struct trace_view *t)
{
	for (size_t i = 0; i < t->ndx; i++)
		gt_store_depth_free(t->dx[i].d);
	free(t->dx);
	t->dx = NULL;
	t->ndx = 0;
}
