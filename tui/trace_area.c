/*
 * trace_area.c - the trace view's area selection (Perfetto's area selection):
 * a time range over the lanes between the rows of the two `m` presses.
 * On fixing it, one pass over the events of those lanes that overlap the
 * range gives the aggregate: events, busy time per lane (union), and the
 * names with the most time, each event clipped to the range (Perfetto's
 * "wall duration" of a slice in an area).  Drawn in the detail pane.
 *
 * Lanes: a lane row or a depth row gives its lane; a folded group row all
 * the lanes under it; an unfolded group row none (its rows are in the area
 * themselves).  Each lane once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "term.h"
#include "trace_view.h"
#include "demangle.h"

void trace_area_clear(struct trace_view *t)
{
	free(t->area_lanes);
	t->area_lanes = NULL;
	t->narea = 0;
	t->area_events = 0;
	t->area_busy_ns = 0;
	t->area_ntop = 0;
}

/* append lane to the area unless it is there already; 0 or -1 (memory) */
static int add_lane(struct trace_view *t, uint32_t lane, size_t *cap)
{
	for (size_t i = 0; i < t->narea; i++)
		if (t->area_lanes[i] == lane)
			return 0;
	if (t->narea == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		uint32_t *p = realloc(t->area_lanes, nc * sizeof(*p));
		if (!p)
			return -1;
		t->area_lanes = p;
		*cap = nc;
	}
	t->area_lanes[t->narea++] = lane;
	return 0;
}

/* the lanes of visible rows a..b (either order) */
static int collect_lanes(struct trace_view *t, size_t a, size_t b)
{
	size_t cap = 0;
	if (a > b) {
		size_t x = a;
		a = b;
		b = x;
	}
	for (size_t v = a; v <= b && v < t->L.nvis; v++) {
		const struct lanes_row *r = &t->L.all[t->L.vis[v]];
		if (r->kind >= LROW_LANE) {
			if (add_lane(t, r->lane, &cap))
				return -1;
		} else if (r->folded) {
			for (size_t i = t->L.vis[v] + 1; i < r->end && i < t->L.nall; i++)
				if (t->L.all[i].kind == LROW_LANE && add_lane(t, t->L.all[i].lane, &cap))
					return -1;
		}
	}
	return 0;
}

/* by total time, largest first */
static int name_cmp(const void *pa, const void *pb)
{
	const struct trace_area_name *x = pa, *y = pb;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

int trace_area_compute(struct trace_view *t, size_t row_a, size_t row_b)
{
	const struct gt_store *s = t->v.app->store;
	trace_area_clear(t);
	if (collect_lanes(t, row_a, row_b) || !t->narea) {
		trace_area_clear(t);
		return -1;
	}
	int64_t t0 = t->mark_t0, t1 = t->mark_t1;
	size_t ns = gt_store_str_count(s);
	struct trace_area_name *acc = calloc(ns ? ns : 1, sizeof(*acc));
	if (!acc) {
		trace_area_clear(t);
		return -1;
	}
	for (size_t k = 0; k < t->narea; k++) {
		const struct gt_lane *l = gt_store_lane_at(s, t->area_lanes[k]);
		size_t f, la;
		gt_store_lane_range(l, t0, t1, &f, &la);
		for (size_t i = f; i < la; i++) {
			const struct gt_event *e = &l->ev[i];
			int64_t a = e->start_ns > t0 ? e->start_ns : t0;
			int64_t b = gt_event_end(e) < t1 ? gt_event_end(e) : t1;
			/* overlapping the range (an instant inside it counts, 0 ns) */
			if (b < a || (b == a && (e->start_ns < t0 || e->start_ns >= t1)))
				continue;
			t->area_events++;
			if (e->name < ns) {
				acc[e->name].name = e->name;
				acc[e->name].count++;
				acc[e->name].total_ns += b - a;
			}
		}
		t->area_busy_ns += gt_store_lane_busy(l, t0, t1);
	}
	qsort(acc, ns ? ns : 1, sizeof(*acc), name_cmp);
	for (size_t i = 0; i < ns && acc[i].count && t->area_ntop < TRACE_AREA_TOP; i++)
		t->area_top[t->area_ntop++] = acc[i];
	free(acc);
	return 0;
}

void trace_area_draw(struct trace_view *t, const struct lrect *r)
{
	const struct gt_store *s = t->v.app->store;
	int64_t lo = gt_store_t_origin(s), span = t->mark_t1 - t->mark_t0;
	char a[32], b[32], c[32], d[32];
	double share = span > 0 ? 100.0 * (double)t->area_busy_ns / ((double)span * (double)t->narea) : 0;
	term_printf(r->y, r->x + 1, r->w - 2, theme_attr(TH_HEADER),
		    "area %s .. %s (%s), %zu lanes: %llu events, busy %s (%.1f%% of %zu lanes x %s)  [M zooms, Esc clears]",
		    layout_fmt_rel(t->mark_t0 - lo, a, sizeof(a)), layout_fmt_rel(t->mark_t1 - lo, b, sizeof(b)),
		    layout_fmt_dur(span, c, sizeof(c)), t->narea, (unsigned long long)t->area_events,
		    layout_fmt_dur(t->area_busy_ns, d, sizeof(d)), share, t->narea, c);
	if (r->h < 2)
		return;
	term_put(r->y + 1, r->x + 1, r->w - 2, theme_attr(TH_DIM),
		 "names by time in the area (each event clipped to it): total, count, average");
	/* two columns of names when the pane is wide */
	int per_col = r->h - 2, ncol = r->w >= 160 ? 2 : 1, cw = (r->w - 2) / ncol;
	for (size_t i = 0; i < t->area_ntop && per_col > 0; i++) {
		int col = (int)i / per_col;
		if (col >= ncol)
			break;
		const struct trace_area_name *n = &t->area_top[i];
		char nm[256];
		demangle_name(gt_store_str(s, n->name), nm, sizeof(nm));
		term_printf(r->y + 2 + (int)i % per_col, r->x + 1 + col * cw, cw - 1, 0,
			    "%10s  %8llu x  %9s  %s", layout_fmt_dur(n->total_ns, a, sizeof(a)),
			    (unsigned long long)n->count,
			    layout_fmt_dur(n->total_ns / (int64_t)(n->count ? n->count : 1), b, sizeof(b)), nm);
	}
	if (!t->area_ntop && r->h > 2)
		term_put(r->y + 2, r->x + 1, r->w - 2, theme_attr(TH_DIM), "no events in the area");
}
