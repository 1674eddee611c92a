/*
 * trace_counter.c - a counter track's row in the trace view: a sparkline of its
 * samples (GT_EV_COUNTER, the value a double in arg) over the visible time
 * window, each column the highest value the counter holds in its time
 * slice (the last sample before the slice carried in, as a counter holds
 * its value until the next sample), scaled to the track's highest sample
 * over the whole capture (so panning does not rescale), the column of that
 * peak in the warning colour.  The memory totals (Total Allocated /
 * Total Reserved per device, docs/import.md) are such tracks.
 */
#include <math.h>
#include <string.h>
#include "term.h"
#include "trace_view.h"

/* the value of sample e */
static double val(const struct gt_event *e)
{
	double v;
	memcpy(&v, &e->arg, sizeof(v));
	return isfinite(v) ? v : 0;
}

double trace_counter_peak(const struct gt_lane *l, int64_t *at_ns)
{
	double hi = 0;
	*at_ns = INT64_MIN;
	for (size_t i = 0; i < l->n; i++) {
		if (l->ev[i].kind != GT_EV_COUNTER)
			continue;
		double v = val(&l->ev[i]);
		if (*at_ns == INT64_MIN || v > hi) {
			hi = v;
			*at_ns = l->ev[i].start_ns;
		}
	}
	return hi;
}

void trace_counter_draw(struct trace_view *t, int y, const struct gt_lane *l, int cursor)
{
	const struct lrect *c = &t->lay.cells;
	int64_t peak_ns;
	double hi = trace_counter_peak(l, &peak_ns);
	long peak_col = peak_ns == INT64_MIN ? -1 : layout_t2col(&t->m, peak_ns);
	int64_t t0 = layout_col2t(&t->m, 0);
	size_t a, b;
	gt_store_lane_range(l, t0, layout_col2t(&t->m, c->w), &a, &b);
	/* the value held at the window's left edge: the last sample before it */
	double cur = 0;
	int have = 0;
	for (size_t i = a; i-- > 0;)
		if (l->ev[i].kind == GT_EV_COUNTER) {
			cur = val(&l->ev[i]);
			have = 1;
			break;
		}
	size_t i = a;
	for (int x = 0; x < c->w; x++) {
		int64_t end = layout_col2t(&t->m, x + 1);
		double top = cur;
		int any = have;
		for (; i < b && l->ev[i].start_ns < end; i++) {
			if (l->ev[i].kind != GT_EV_COUNTER)
				continue;
			cur = val(&l->ev[i]);
			top = any && top > cur ? top : cur;
			any = have = 1;
		}
		int is_cur = cursor && x == t->col;
		if (!any && !is_cur)
			continue;
		double u = hi > 0 && any ? top / hi : 0;
		attrset(theme_attr(is_cur ? TH_CURSOR : x == peak_col ? TH_WARN : TH_COMPUTE));
		term_glyph(y, c->x + x, any ? term_spark(u < 0 ? 0 : u) : " ");
	}
	attrset(A_NORMAL);
}
