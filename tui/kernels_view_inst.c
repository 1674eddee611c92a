/*
 * kernels_view_inst.c - the instances of one kernel (or copy, or collective),
 * from the report's drill-down hook (drill.c): a duration histogram
 * (log-spaced bins, computed once on open) and the list sorted by duration
 * or by time; Enter shows one in the trace view.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "term.h"
#include "kernels_view.h"
#include "drill.h"

/* the instances of the kept row (found again by its key in the current
 * table) from the report's drill-down hook, in the chosen order */
static void load(struct kernels_view *k)
{
	free(k->inst);
	k->inst = NULL;
	k->ninst = 0;
	struct gt_scope sc;
	gt_scope_all(&sc);
	sc.gpu = k->gpu;
	long row = k->tb ? drill_row(k->tb, k->inst_key) : -1;
	if (row < 0 || drill_load(k->v.app->store, k->rep, &sc, k->tb, (size_t)row, k->inst_by_time,
				  &k->inst, &k->ninst))
		k->ninst = 0;
	k->inst_top = k->inst_sel = 0;
}

/* total, min, max and the log-spaced duration histogram of the instances */
static void histogram(struct kernels_view *k)
{
	const struct gt_store *s = k->v.app->store;
	k->inst_total_ns = 0;
	k->inst_min_ns = INT64_MAX;
	k->inst_max_ns = 0;
	for (size_t i = 0; i < k->ninst; i++) {
		int64_t d = gt_store_ev(s, k->inst[i])->dur_ns;
		k->inst_total_ns += d;
		if (d < k->inst_min_ns)
			k->inst_min_ns = d;
		if (d > k->inst_max_ns)
			k->inst_max_ns = d;
	}
	memset(k->hist, 0, sizeof(k->hist));
	k->nhist = 0;
	if (!k->ninst)
		return;
	double lo = log((double)(k->inst_min_ns > 0 ? k->inst_min_ns : 1));
	double hi = log((double)(k->inst_max_ns > 0 ? k->inst_max_ns : 1)) + 1e-9;
	int nb = 12;
	if (k->inst_max_ns - k->inst_min_ns < nb)
		nb = (int)(k->inst_max_ns - k->inst_min_ns) + 1;
	if (nb < 1)
		nb = 1;
	/* log-spaced edges; an edge that prints as the one before it (1.85ms,
	   1.85ms) is dropped, merging the bins, so no bin reads x..x */
	char prev[32], cur[32];
	int n = 0;
	k->hist_edge_ns[0] = k->inst_min_ns;
	layout_fmt_dur(k->inst_min_ns, prev, sizeof(prev));
	for (int e = 1; e <= nb; e++) {
		int64_t x = e == nb ? k->inst_max_ns : (int64_t)llround(exp(lo + (hi - lo) * e / nb));
		layout_fmt_dur(x, cur, sizeof(cur));
		if (!strcmp(cur, prev)) {
			if (e == nb && n > 0)
				k->hist_edge_ns[n] = x;   /* the last bin reaches the maximum */
			continue;
		}
		k->hist_edge_ns[++n] = x;
		memcpy(prev, cur, sizeof(prev));
	}
	if (n == 0)
		k->hist_edge_ns[++n] = k->inst_max_ns;   /* one bin: every instance alike */
	k->nhist = n;
	/* bin b holds [edge b, edge b+1); the last one also its upper edge */
	for (size_t i = 0; i < k->ninst; i++) {
		int64_t d = gt_store_ev(s, k->inst[i])->dur_ns;
		int b = 0;
		while (b + 1 < n && d >= k->hist_edge_ns[b + 1])
			b++;
		k->hist[b]++;
	}
}

void kernels_view_inst_open(struct kernels_view *k)
{
	if (!k->tb || !k->nrows)
		return;
	if (!k->rep || !k->rep->instances) {
		ui_msg(k->v.app, "the %s table has no instances to list", k->rep ? k->rep->name : "");
		return;
	}
	size_t row = k->rows[k->st.sel];
	drill_key(k->tb, row, k->inst_key, sizeof(k->inst_key));
	drill_title(k->tb, row, k->inst_title, sizeof(k->inst_title));
	load(k);
	histogram(k);
	k->inst_open = 1;
}

void kernels_view_inst_refresh(struct kernels_view *k)
{
	const struct gt_store *s = k->v.app->store;
	/* the selected event by what survives a re-sort of its lane: lane and start */
	struct gt_ref was = { UINT32_MAX, 0 };
	int64_t was_t = 0;
	size_t top = k->inst_top, sel = k->inst_sel;
	if (sel < k->ninst && ui_ref_ok(s, k->inst[sel])) {
		was = k->inst[sel];
		was_t = gt_store_ev(s, was)->start_ns;
	}
	load(k);
	histogram(k);
	k->inst_top = top;
	k->inst_sel = sel < k->ninst ? sel : (k->ninst ? k->ninst - 1 : 0);
	if (was.lane == UINT32_MAX)
		return;
	for (size_t i = 0; i < k->ninst; i++)
		if (k->inst[i].lane == was.lane && gt_store_ev(s, k->inst[i])->start_ns == was_t) {
			k->inst_sel = i;
			break;
		}
}

void kernels_view_inst_draw(struct kernels_view *k, struct lrect r)
{
	const struct gt_store *s = k->v.app->store;
	char a[32], b[32], c[32], d[32];
	term_printf(r.y, r.x + 1, r.w - 2, theme_attr(TH_TITLE), "instances of %s", k->inst_title);
	if (r.h < 3)
		return;
	double avg = k->ninst ? (double)k->inst_total_ns / (double)k->ninst : 0;
	term_printf(r.y + 1, r.x + 1, r.w - 2, 0,
		    "%zu instances  total %s  avg %s  min %s  max %s  |  sorted by %s (d/T)  Esc back",
		    k->ninst, layout_fmt_dur(k->inst_total_ns, a, sizeof(a)),
		    layout_fmt_dur((int64_t)avg, b, sizeof(b)),
		    layout_fmt_dur(k->ninst ? k->inst_min_ns : 0, c, sizeof(c)),
		    layout_fmt_dur(k->inst_max_ns, d, sizeof(d)), k->inst_by_time ? "time" : "duration");
	int y = r.y + 2;
	/* histogram: up to a third of the height */
	int hrows = k->nhist;
	if (hrows > (r.h - 4) / 3)
		hrows = (r.h - 4) / 3;
	if (hrows > 0) {
		int per = (k->nhist + hrows - 1) / hrows;
		uint64_t maxc = 1;
		for (int i = 0; i < k->nhist; i += per) {
			uint64_t sum = 0;
			for (int j = i; j < i + per && j < k->nhist; j++)
				sum += k->hist[j];
			if (sum > maxc)
				maxc = sum;
		}
		int barw = r.w - 33;
		for (int i = 0; i < k->nhist && y < r.y + r.h; i += per) {
			uint64_t sum = 0;
			for (int j = i; j < i + per && j < k->nhist; j++)
				sum += k->hist[j];
			int e = i + per < k->nhist ? i + per : k->nhist;
			layout_fmt_dur(k->hist_edge_ns[i], a, sizeof(a));
			layout_fmt_dur(k->hist_edge_ns[e], b, sizeof(b));
			if (!strcmp(a, b))   /* every instance alike: one value */
				term_printf(y, r.x + 1, 28, theme_attr(TH_DIM), "%9s  %-9s %7llu", a, "",
					    (unsigned long long)sum);
			else
				term_printf(y, r.x + 1, 28, theme_attr(TH_DIM), "%9s..%-9s %7llu", a, b,
					    (unsigned long long)sum);
			if (barw > 0)
				term_hbar(y, r.x + 31, barw, theme_attr(TH_COMPUTE),
					  (int64_t)((double)sum / (double)maxc * barw * 8));
			y++;
		}
	}
	if (y >= r.y + r.h)
		return;
	term_printf(y++, r.x + 1, r.w - 2, theme_attr(TH_HEADER), "%8s  %12s  %10s  %s", "#",
		    "start", "duration", "where (Enter: show in trace)");
	int body = r.y + r.h - y;
	if (body <= 0)
		return;
	if (k->inst_sel < k->inst_top)
		k->inst_top = k->inst_sel;
	if (k->inst_sel >= k->inst_top + (size_t)body)
		k->inst_top = k->inst_sel - (size_t)body + 1;
	int64_t lo = gt_store_t_origin(s);
	for (int i = 0; i < body; i++) {
		size_t n = k->inst_top + (size_t)i;
		if (n >= k->ninst)
			break;
		if (!ui_ref_ok(s, k->inst[n]))
			continue;
		const struct gt_event *e = gt_store_ev(s, k->inst[n]);
		const struct gt_lane *l = gt_store_lane_at(s, k->inst[n].lane);
		attr_t at = n == k->inst_sel ? theme_attr(TH_SELECT) : 0;
		if (at)
			term_fill((struct lrect){ r.x, y + i, r.w, 1 }, at);
		term_printf(y + i, r.x + 1, r.w - 2, at, "%8zu  %12s  %10s  rank %d GPU %d stream %lld",
			    n + 1, layout_fmt_ts(e->start_ns - lo, a, sizeof(a)),
			    layout_fmt_dur(e->dur_ns, b, sizeof(b)), l->key.rank,
			    l->key.device, (long long)l->key.id);
	}
}

int kernels_view_inst_key(struct kernels_view *k, int ch)
{
	size_t n = k->ninst;
	switch (ch) {
	case KEY_UP: case 'k': if (k->inst_sel) k->inst_sel--; break;
	case KEY_DOWN: case 'j': if (k->inst_sel + 1 < n) k->inst_sel++; break;
	case KEY_PPAGE: k->inst_sel = k->inst_sel > 10 ? k->inst_sel - 10 : 0; break;
	case KEY_NPAGE: k->inst_sel = k->inst_sel + 10 < n ? k->inst_sel + 10 : (n ? n - 1 : 0); break;
	case KEY_HOME: k->inst_sel = 0; break;
	case KEY_END: k->inst_sel = n ? n - 1 : 0; break;
	case 'd': k->inst_by_time = 0; load(k); break;
	case 'T': k->inst_by_time = 1; load(k); break;
	case '\n': case '\r': case KEY_ENTER:
		if (k->inst_sel < n) {
			trace_view_goto(ui_page(k->v.app, "Trace"), k->inst[k->inst_sel]);
			ui_show(k->v.app, "Trace");
		}
		break;
	default:
		return UI_UNHANDLED;
	}
	return UI_HANDLED;
}
