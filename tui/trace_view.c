/*
 * trace_view.c - the trace view: lanes over time, cursor and selection, zoom
 * and pan, fold, search, go to time, range mark, jumps between a kernel
 * and its launch.  Drawing is in trace_draw.c and trace_detail.c; this file holds
 * state changes only (plus the draw entry that calls them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/steps.h"
#include "term.h"
#include "trace_view.h"

static const char *const trace_help[] = {
	"h l  Left Right  move the cursor (pans at the edges)   H L  8 columns",
	"j k  Up Down     previous / next lane     PgUp PgDn  page",
	"a d              pan a quarter screen     Home End  start / end",
	"w s  + -  wheel  zoom in / out around the cursor",
	"f 0              zoom to fit              z  zoom to the selected event",
	"Z                zoom to the step under the cursor",
	"[ ]              previous / next event on the lane",
	"Enter            fold / unfold a group    o O  fold / unfold all",
	"e  click label   host thread: show / hide its nesting depth rows",
	"c                kernel <-> the API call that launched it",
	"/ n N            search names from the cursor (regex, any case); next, prev",
	"g                go to a time (e.g. 1.5s, 300ms from the start)",
	"m  M             mark a range (twice; on another lane: an area over the lanes between), zoom to it; Esc clears",
	"F                follow the newest data (live)",
	"mouse            click selects, drag pans, wheel zooms",
	NULL
};

uint32_t trace_view_lane_of(const struct trace_view *t, size_t v)
{
	if (v >= t->L.nvis)
		return UINT32_MAX;
	const struct lanes_row *r = &t->L.all[t->L.vis[v]];
	return r->kind >= LROW_LANE ? r->lane : UINT32_MAX;
}

int trace_view_level_of(const struct trace_view *t, size_t v)
{
	if (v >= t->L.nvis)
		return -1;
	const struct lanes_row *r = &t->L.all[t->L.vis[v]];
	return r->kind == LROW_DEPTH ? r->level : -1;
}

const struct gt_depth *trace_view_depth(const struct trace_view *t, uint32_t lane)
{
	for (size_t i = 0; i < t->ndx; i++)
		if (t->dx[i].lane == lane)
			return t->dx[i].d;
	return NULL;
}

/* the store the view shows */
static const struct gt_store *S(const struct trace_view *t)
{
	return t->v.app->store;
}

int64_t trace_view_t_lo(const struct trace_view *t)
{
	return gt_store_event_count(S(t)) ? gt_store_t_min(S(t)) : 0;
}

/* end of the capture (1 ms when empty) */
static int64_t t_hi(const struct trace_view *t)
{
	return gt_store_event_count(S(t)) ? gt_store_t_max(S(t)) : 1000000;
}

/* widest zoom: twice the capture over the screen, at least 1 us per column */
static int64_t max_npc(const struct trace_view *t)
{
	int64_t span = t_hi(t) - trace_view_t_lo(t);
	int64_t m = span * 2 / (t->m.cols > 0 ? t->m.cols : 1);
	return m < 1000 ? 1000 : m;
}

/* steps by start time */
static int step_cmp(const void *a, const void *b)
{
	const struct trace_step *x = a, *y = b;
	return x->t0_ns < y->t0_ns ? -1 : x->t0_ns > y->t0_ns;
}

/* the steps the analyses use (gt_steps_find per rank: GT_EV_STEP spans, else
 * NVTX step ranges, else inferred from the periodic GPU work; their
 * device-widened windows), all ranks together, sorted by start */
static void scan_steps(struct trace_view *t)
{
	free(t->steps);
	t->steps = NULL;
	t->nsteps = 0;
	const struct gt_store *s = S(t);
	int32_t *ranks = NULL;
	long nr = gt_steps_ranks(s, &ranks);
	size_t cap = 0;
	for (long r = 0; r < nr; r++) {
		struct gt_steps_list l;
		char err[160];
		if (gt_steps_find(s, ranks[r], NULL, &l, err, sizeof(err)))
			continue;
		if (l.n && t->nsteps + l.n > cap) {
			size_t nc = (t->nsteps + l.n) * 2;
			struct trace_step *p = realloc(t->steps, nc * sizeof(*p));
			if (p) {
				t->steps = p;
				cap = nc;
			}
		}
		for (size_t i = 0; i < l.n && t->nsteps < cap; i++)
			t->steps[t->nsteps++] = (struct trace_step){ l.v[i].t0_ns, l.v[i].t1_ns,
								  l.v[i].number };
		gt_steps_list_done(&l);
	}
	free(ranks);
	if (t->nsteps)
		qsort(t->steps, t->nsteps, sizeof(*t->steps), step_cmp);
}

/* the store changed: lanes, steps, first fit, follow the end when live */
static void trace_data(struct view *v)
{
	struct trace_view *t = (struct trace_view *)v;
	t->gen++;
	/* a ring window cut the selected event's lane: it moved, or is gone */
	if (t->has_sel && !ui_ref_move(v->app, &t->sel))
		t->has_sel = t->pinned = 0;
	if (gt_store_lane_count(S(t)) != t->L.nlanes_seen || !t->L.nall)
		lanes_build(&t->L, S(t));
	trace_nav_depth_sync(t);
	if (!t->fitted && gt_store_event_count(S(t)) && t->m.cols > 1) {
		layout_tmap_fit(&t->m, trace_view_t_lo(t), t_hi(t), t->m.cols);
		t->fitted = 1;
	} else if (t->follow && !v->app->paused && gt_store_event_count(S(t))) {
		int64_t span = (int64_t)t->m.cols * t->m.ns_per_col;
		t->m.t0_ns = t_hi(t) - span + span / 20;
	}
	if (t->row >= t->L.nvis)
		t->row = t->L.nvis ? t->L.nvis - 1 : 0;
}

/* the selected event from the cursor, unless pinned by a jump */
static void update_sel(struct trace_view *t)
{
	if (t->pinned && t->has_sel && !ui_ref_ok(S(t), t->sel))
		t->pinned = 0;
	if (t->pinned)
		return;
	t->has_sel = 0;
	uint32_t lane = trace_view_lane_of(t, t->row);
	if (lane == UINT32_MAX)
		return;
	const struct gt_lane *l = gt_store_lane_at(S(t), lane);
	int64_t c0 = layout_col2t(&t->m, t->col), c1 = c0 + t->m.ns_per_col;
	int lvl = trace_view_level_of(t, t->row);
	const struct gt_depth *d = lvl >= 0 ? trace_view_depth(t, lane) : NULL;
	size_t i;
	if (d) {
		/* a depth row: its event at the cursor, else the longest in the column */
		i = gt_store_depth_event_at(d, l, lvl, c0 + t->m.ns_per_col / 2);
		if (i == SIZE_MAX) {
			struct gt_bucket b;
			gt_store_depth_buckets(d, l, lvl, c0, t->m.ns_per_col, 1, &b);
			i = b.dominant;
		}
	} else if (lvl >= 0) {
		return;
	} else {
		i = gt_store_lane_event_at(l, c0 + t->m.ns_per_col / 2);
	}
	if (i == SIZE_MAX && lvl < 0) {
		struct gt_bucket b;
		gt_store_lane_bucket(l, c0, c1, &b);
		i = b.dominant;
	}
	if (i == SIZE_MAX)
		return;
	t->sel = (struct gt_ref){ lane, (uint32_t)i };
	t->has_sel = 1;
}

/* scroll the lanes so the cursor row is on screen and no room is wasted */
static void keep_row_visible(struct trace_view *t)
{
	int h = t->lay.cells.h > 0 ? t->lay.cells.h : 1;
	if (t->row < t->top)
		t->top = t->row;
	if (t->row >= t->top + (size_t)h)
		t->top = t->row - (size_t)h + 1;
	/* use the room when the screen grew */
	if (t->top + (size_t)h > t->L.nvis)
		t->top = t->L.nvis > (size_t)h ? t->L.nvis - (size_t)h : 0;
}

/* the status line's range (the mark or the visible span), the cursor's
 * time and whether the view follows the data (status.c puts them together
 * with the pause state, on every page) */
static void set_range_text(struct trace_view *t)
{
	char a[32], b[32], d[32];
	int64_t lo = gt_store_t_origin(S(t)), ct = layout_col2t(&t->m, t->col) - lo;
	layout_fmt_ts(ct < 0 ? -ct : ct, a, sizeof(a));
	snprintf(t->v.app->cursor, sizeof(t->v.app->cursor), "cursor %s%s", ct < 0 ? "-" : "+", a);
	t->v.app->follow = t->follow;
	if (t->marking) {
		int64_t m0 = t->mark_t0, m1 = t->marking == 2 ? t->mark_t1 :
			     layout_col2t(&t->m, t->col) + t->m.ns_per_col;
		if (m1 < m0) {
			int64_t x = m0;
			m0 = m1;
			m1 = x;
		}
		snprintf(t->v.app->range, sizeof(t->v.app->range), "mark %s..%s (%s)",
			 layout_fmt_rel(m0 - lo, a, sizeof(a)), layout_fmt_rel(m1 - lo, b, sizeof(b)),
			 layout_fmt_dur(m1 - m0, d, sizeof(d)));
		return;
	}
	int64_t v0 = t->m.t0_ns, span = (int64_t)t->m.cols * t->m.ns_per_col;
	/* a live ring (--ring) cut the time on screen: say so, not blank rows */
	int gone = gt_store_dropped(S(t), NULL) && gt_store_event_count(S(t)) &&
		   v0 + span <= gt_store_t_min(S(t));
	snprintf(t->v.app->range, sizeof(t->v.app->range), "view %s (%s)%s",
		 layout_fmt_rel(v0 - lo, a, sizeof(a)), layout_fmt_dur(span, d, sizeof(d)),
		 gone ? ", cut by the ring (End: newest)" : "");
}

/* lay out and draw the trace view into area */
static void trace_draw(struct view *v, struct lrect area)
{
	struct trace_view *t = (struct trace_view *)v;
	/* the step marks: found after the first frame is on screen (at 10 M
	   events that takes a second or two), then recomputed as the analysis
	   pages are (ui_due) */
	if (!t->drawn) {
		t->drawn = 1;
		v->app->again = 1;
	} else if ((v->due.dirty || ui_now_ms() >= t->steps_next_ms) && ui_due(v)) {
		double t0 = ui_now_ms();
		ui_busy(v->app, "finding the steps...");
		scan_steps(t);
		double now = ui_now_ms();
		t->steps_next_ms = now + 10 * (now - t0);
	}
	layout_trace(area, &t->lay);
	int cols = t->lay.cells.w > 0 ? t->lay.cells.w : 1;
	if (cols != t->m.cols) {
		/* a resize keeps the visible time span and the cursor's time */
		int64_t at = layout_col2t(&t->m, t->col);
		if (t->fitted)
			layout_tmap_rescale(&t->m, cols);
		else
			layout_tmap_resize(&t->m, cols);
		long c = layout_t2col(&t->m, at);
		t->col = c < 0 ? 0 : c >= cols ? cols - 1 : (int)c;
		if (!t->fitted && gt_store_event_count(S(t))) {
			layout_tmap_fit(&t->m, trace_view_t_lo(t), t_hi(t), cols);
			t->fitted = 1;
		}
	}
	if (cols > t->bk_cap) {
		free(t->bk);
		free(t->bk2);
		free(t->cat2);
		t->bk = malloc((size_t)cols * sizeof(*t->bk));
		t->bk2 = malloc((size_t)cols * sizeof(*t->bk2));
		t->cat2 = malloc((size_t)cols);
		t->bk_cap = t->bk && t->bk2 && t->cat2 ? cols : 0;
	}
	if (t->col >= cols)
		t->col = cols - 1;
	if (t->col < 0)
		t->col = 0;
	keep_row_visible(t);
	update_sel(t);
	set_range_text(t);
	if (!t->bk_cap)
		return;
	trace_draw_ruler(t);
	trace_draw_lanes(t);
	trace_draw_legend(t);
	trace_detail_draw(t);
}

/* move the view so column `c` (may be off screen) becomes visible */
void trace_view_cursor_to_col(struct trace_view *t, long c)
{
	int cols = t->m.cols;
	if (c < 0 || c >= cols) {
		layout_tmap_pan(&t->m, c - cols / 2);
		c = cols / 2;
	}
	t->col = (int)c;
}

void trace_view_goto(struct view *v, struct gt_ref r)
{
	struct trace_view *t = (struct trace_view *)v;
	if (!t || !ui_ref_ok(S(t), r))
		return;
	const struct gt_event *e = gt_store_ev(S(t), r);
	size_t row = lanes_find(&t->L, r.lane);
	const struct gt_depth *d = trace_view_depth(t, r.lane);
	/* an expanded lane: the depth row of the event, right below the lane */
	if (row != SIZE_MAX && d && r.idx < d->n && trace_view_level_of(t, row + 1 + d->depth[r.idx]) ==
	    d->depth[r.idx])
		row += 1 + d->depth[r.idx];
	if (row != SIZE_MAX)
		t->row = row;
	int cols = t->m.cols > 0 ? t->m.cols : 80;
	int64_t npc = e->dur_ns * 3 / cols;
	if (npc < 1)
		npc = 1;
	t->m.ns_per_col = npc;
	t->m.t0_ns = e->start_ns + e->dur_ns / 2 - (int64_t)(cols / 2) * npc;
	t->col = (int)layout_t2col(&t->m, e->start_ns + e->dur_ns / 2);
	if (t->col < 0 || t->col >= cols)
		t->col = cols / 2;
	t->sel = r;
	t->has_sel = t->pinned = 1;
	t->follow = 0;
	keep_row_visible(t);
}

void trace_view_goto_gpu(struct view *v, int32_t rank, int32_t gpu)
{
	struct trace_view *t = (struct trace_view *)v;
	if (!t || gpu < 0)
		return;
	/* the GPU's compute stream, else its first stream */
	uint32_t lane = UINT32_MAX;
	for (size_t i = 0; i < t->L.nall; i++) {
		const struct lanes_row *r = &t->L.all[i];
		if (r->kind != LROW_LANE || r->device != gpu || (rank >= 0 && r->rank != rank))
			continue;
		if (lane == UINT32_MAX || r->role == LROLE_COMPUTE)
			lane = r->lane;
		if (r->role == LROLE_COMPUTE)
			break;
	}
	if (lane == UINT32_MAX)
		return;
	size_t row = lanes_find(&t->L, lane);
	if (row == SIZE_MAX)
		return;
	t->row = row;
	t->pinned = 0;
	t->follow = 0;   /* a jump: the view stays on the evidence */
	keep_row_visible(t);
}

void trace_view_zoom_range(struct view *v, int64_t t0, int64_t t1)
{
	struct trace_view *t = (struct trace_view *)v;
	if (!t)
		return;
	int64_t pad = (t1 - t0) / 20, lo = t0 - pad, hi = t1 + pad;
	/* the margin never shows time before the capture (nor after it) */
	if (gt_store_event_count(S(t))) {
		if (lo < gt_store_t_min(S(t)) && t0 >= gt_store_t_min(S(t)))
			lo = gt_store_t_min(S(t));
		if (hi > gt_store_t_max(S(t)) && t1 <= gt_store_t_max(S(t)))
			hi = gt_store_t_max(S(t));
	}
	layout_tmap_fit(&t->m, lo, hi, t->m.cols);
	t->col = (int)layout_t2col(&t->m, t0);
	t->pinned = 0;
	t->follow = 0;
}

/* the trace view's keys (see trace_help); UI_* flags */
static int trace_key(struct view *v, int ch)
{
	struct trace_view *t = (struct trace_view *)v;
	int cols = t->m.cols, page = t->lay.cells.h > 1 ? t->lay.cells.h - 1 : 1;
	int moved = 1;
	switch (ch) {
	case KEY_LEFT: case 'h': trace_view_cursor_to_col(t, t->col - 1); break;
	case KEY_RIGHT: case 'l': trace_view_cursor_to_col(t, t->col + 1); break;
	case KEY_SLEFT: case 'H': trace_view_cursor_to_col(t, t->col - 8); break;
	case KEY_SRIGHT: case 'L': trace_view_cursor_to_col(t, t->col + 8); break;
	case KEY_UP: case 'k': if (t->row) t->row--; break;
	case KEY_DOWN: case 'j': if (t->row + 1 < t->L.nvis) t->row++; break;
	case KEY_PPAGE: t->row = t->row > (size_t)page ? t->row - (size_t)page : 0; break;
	case KEY_NPAGE:
		t->row += (size_t)page;
		if (t->row >= t->L.nvis)
			t->row = t->L.nvis ? t->L.nvis - 1 : 0;
		break;
	case 'a': layout_tmap_pan(&t->m, -(cols / 4 > 0 ? cols / 4 : 1)); break;
	case 'd': layout_tmap_pan(&t->m, cols / 4 > 0 ? cols / 4 : 1); break;
	case KEY_HOME: t->m.t0_ns = trace_view_t_lo(t); t->col = 0; break;
	case KEY_END:
		t->m.t0_ns = t_hi(t) - (int64_t)cols * t->m.ns_per_col;
		t->col = cols - 1;
		break;
	case 'w': case '+': case '=': layout_tmap_zoom(&t->m, t->col, 1, 2, max_npc(t)); break;
	case 's': case '-': case '_': layout_tmap_zoom(&t->m, t->col, 2, 1, max_npc(t)); break;
	case 'f': case '0':
		layout_tmap_fit(&t->m, trace_view_t_lo(t), t_hi(t), cols);
		break;
	case 'z': trace_nav_zoom_sel(t); return UI_HANDLED;
	case 'Z': trace_nav_zoom_step(t); break;
	case '[': trace_nav_lane_step(t, -1); return UI_HANDLED;
	case ']': trace_nav_lane_step(t, 1); return UI_HANDLED;
	case '\n': case '\r': case KEY_ENTER:
		/* Space is not here: it is the global pause key, everywhere */
		if (trace_view_lane_of(t, t->row) == UINT32_MAX)
			lanes_toggle(&t->L, t->row);
		else
			trace_nav_zoom_sel(t);
		return UI_HANDLED;
	case 'e': trace_nav_expand(t); return UI_HANDLED;
	case 'o': lanes_fold_all(&t->L, 1); t->row = t->top = 0; break;
	case 'O': lanes_fold_all(&t->L, 0); break;
	case 'c': {
		struct gt_ref peer;
		if (!t->has_sel || gt_store_corr_peer(S(t), t->sel, &peer))
			ui_msg(t->v.app, "no correlated launch/kernel for this event");
		else
			trace_view_goto(v, peer);
		return UI_HANDLED;
	}
	case '/': ui_prompt(v->app, v, "search from the cursor (regex, case-insensitive; Enter alone repeats): /", "", trace_nav_search_done); return UI_HANDLED;
	case 'n': trace_nav_search(t, 1); return UI_HANDLED;
	case 'N': trace_nav_search(t, -1); return UI_HANDLED;
	case 'g': ui_prompt(v->app, v, "go to time from start: ", "", trace_nav_goto_done); return UI_HANDLED;
	case 'm': trace_nav_mark(t); return UI_HANDLED;
	case 'M':
		if (t->marking == 2)
			trace_view_zoom_range(v, t->mark_t0, t->mark_t1);
		return UI_HANDLED;
	case 'F':
		t->follow = !t->follow;
		trace_data(v);
		return UI_HANDLED;
	default:
		moved = 0;
	}
	if (!moved)
		return UI_UNHANDLED;
	t->pinned = 0;
	if (ch != 'F')
		t->follow = 0;
	layout_tmap_clamp(&t->m, trace_view_t_lo(t), t_hi(t));
	return UI_HANDLED;
}

/* wheel zooms, drag pans, click selects (or folds on a group label) */
static int trace_mouse(struct view *v, const struct ui_mouse *ms)
{
	struct trace_view *t = (struct trace_view *)v;
	const struct lrect *c = &t->lay.cells, *lb = &t->lay.labels;
	int in_cells = ms->x >= c->x && ms->x < c->x + c->w && ms->y >= c->y && ms->y < c->y + c->h;
	if (ms->wheel) {
		int col = in_cells ? ms->x - c->x : t->col;
		layout_tmap_zoom(&t->m, col, ms->wheel < 0 ? 1 : 2, ms->wheel < 0 ? 2 : 1, max_npc(t));
		layout_tmap_clamp(&t->m, trace_view_t_lo(t), t_hi(t));
		return UI_HANDLED;
	}
	if (ms->drag_dx) {
		layout_tmap_pan(&t->m, -ms->drag_dx);
		layout_tmap_clamp(&t->m, trace_view_t_lo(t), t_hi(t));
		t->follow = 0;
		return UI_HANDLED;
	}
	if (ms->y >= c->y && ms->y < c->y + c->h && (ms->click || ms->press)) {
		size_t row = t->top + (size_t)(ms->y - c->y);
		if (row >= t->L.nvis)
			return UI_HANDLED;   /* below the rows: nothing to select */
		t->row = row;
		if (in_cells)
			t->col = ms->x - c->x;
		else if (ms->click && ms->x >= lb->x && ms->x < lb->x + lb->w) {
			uint32_t lane = trace_view_lane_of(t, t->row);
			if (lane == UINT32_MAX)
				lanes_toggle(&t->L, t->row);
			else if (gt_store_lane_at(S(t), lane)->key.type == GT_LANE_HOST)
				trace_nav_expand(t);   /* a host thread's label: its nesting */
		}
		t->pinned = 0;
		return UI_HANDLED;
	}
	return UI_UNHANDLED;
}

/* Esc: clear the mark; 0 when there is none */
static int trace_back(struct view *v)
{
	struct trace_view *t = (struct trace_view *)v;
	if (t->marking) {
		t->marking = 0;
		trace_area_clear(t);
		gt_table_free(t->mark_kernels);
		t->mark_kernels = NULL;
		return 1;
	}
	return 0;
}

/* free the view and everything it owns */
static void trace_free(struct view *v)
{
	struct trace_view *t = (struct trace_view *)v;
	trace_nav_depth_free(t);
	lanes_done(&t->L);
	if (t->has_re)
		regfree(&t->re);
	gt_table_free(t->mark_kernels);
	trace_area_clear(t);
	free(t->steps);
	free(t->bk);
	free(t->bk2);
	free(t->cat2);
	trace_draw_free(t);
	free(t);
}

static const struct view_ops trace_ops = {
	.help = trace_help,
	.draw = trace_draw,
	.key = trace_key,
	.mouse = trace_mouse,
	.data = trace_data,
	.back = trace_back,
	.free = trace_free,
};

struct view *trace_view_new(struct app *a)
{
	struct trace_view *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->v.ops = &trace_ops;
	t->v.app = a;
	t->m.cols = 1;
	t->m.ns_per_col = 1000;
	t->follow = (a->src->flags & UI_SRC_LIVE) != 0;
	if (lanes_build(&t->L, a->store)) {
		free(t);
		return NULL;
	}
	return &t->v;
}
