/*
 * operators_view_calls.c - the calls of one row of the Operators page (an
 * operator, an operator with these input shapes or this call stack, or a
 * delta row in compare mode: the instances of both runs), from the report's
 * drill-down hook (drill.c), longest first or in time order; K lists the
 * GPU work one call launched (runtime calls inside it on its thread, joined
 * to their kernels, copies, memsets by correlation).  Enter shows the
 * selected event in the trace view.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/ops.h"
#include "term.h"
#include "drill.h"
#include "operators_view.h"

/* the instances of the listed row (found again by its key in the current
 * table) from the report's drill-down hook over the page's scope: the
 * "ops" report's for the operator tables, in compare mode the "ops" or
 * "kernels" report's once per run (scope rank cmp_ra, then cmp_rb); in the
 * chosen order, with their total */
static void load_calls(struct operators_view *o)
{
	const struct gt_store *s = o->v.app->store;
	free(o->calls);
	o->calls = NULL;
	o->ncalls = o->top = o->sel = 0;
	o->calls_total_ns = 0;
	o->calls_n_ra = o->calls_n_rb = 0;
	const struct gt_report *rep = gt_report_find(o->calls_kernels ? "kernels" : "ops");
	long row = o->tb ? drill_row(o->tb, o->calls_row) : -1;
	if (row < 0)
		return;
	struct gt_scope sc;
	gt_scope_all(&sc);
	if (!o->cmp) {
		sc.flags |= (unsigned)o->group << GT_OPS_SCOPE_GROUP_SHIFT;   /* as compute() ran it */
		if (drill_load(s, rep, &sc, o->tb, (size_t)row, o->calls_by_time, &o->calls, &o->ncalls))
			o->ncalls = 0;
	} else {
		/* both runs: the baseline's instances, then the experiment's */
		struct gt_ref *b = NULL;
		size_t nb = 0;
		sc.rank = o->cmp_ra;
		int rc = drill_load(s, rep, &sc, o->tb, (size_t)row, 0, &o->calls, &o->calls_n_ra);
		sc.rank = o->cmp_rb;
		if (!rc)
			rc = drill_load(s, rep, &sc, o->tb, (size_t)row, 0, &b, &nb);
		struct gt_ref *v = rc ? NULL : realloc(o->calls, (o->calls_n_ra + nb + 1) * sizeof(*v));
		if (!v) {
			free(o->calls);
			free(b);
			o->calls = NULL;
			o->calls_n_ra = 0;
			return;
		}
		if (nb)
			memcpy(v + o->calls_n_ra, b, nb * sizeof(*v));
		free(b);
		o->calls = v;
		o->calls_n_rb = nb;
		o->ncalls = o->calls_n_ra + nb;
		drill_sort(s, o->calls, o->ncalls, o->calls_by_time);
	}
	for (size_t i = 0; i < o->ncalls; i++)
		o->calls_total_ns += gt_store_ev(s, o->calls[i])->dur_ns;
}

/* the GPU work launched by runtime calls inside calls[sel] on its thread,
 * in time order */
static void load_work(struct operators_view *o)
{
	const struct gt_store *s = o->v.app->store;
	free(o->work);
	o->work = NULL;
	o->nwork = o->wtop = o->wsel = 0;
	o->work_total_ns = 0;
	if (o->sel >= o->ncalls || !ui_ref_ok(s, o->calls[o->sel]))
		return;
	struct gt_ref c = o->calls[o->sel];
	const struct gt_lane *l = gt_store_lane_at(s, c.lane);
	int64_t end = l->ev[c.idx].start_ns + l->ev[c.idx].dur_ns;
	size_t cap = 0;
	for (size_t j = c.idx + 1; j < l->n && l->ev[j].start_ns < end; j++) {
		struct gt_ref g;
		if (!l->ev[j].corr || gt_store_corr_peer(s, (struct gt_ref){ c.lane, (uint32_t)j }, &g))
			continue;
		if (gt_store_lane_at(s, g.lane)->key.type != GT_LANE_GPU)
			continue;
		if (drill_push(&o->work, &o->nwork, &cap, g))
			return;
		o->work_total_ns += gt_store_ev(s, g)->dur_ns;
	}
	drill_sort(s, o->work, o->nwork, 1);
}

void operators_view_calls_open(struct operators_view *o)
{
	load_calls(o);
	o->mode = 1;
}

void operators_view_calls_refresh(struct operators_view *o)
{
	const struct gt_store *s = o->v.app->store;
	/* remember the selected call and work item by lane key and start: refs
	   taken before the update are read from the lists' own copies */
	struct gt_lane_key ck = { 0 }, wk = { 0 };
	int64_t ct = 0, wt = 0;
	int have_c = 0, have_w = 0;
	size_t csel = o->sel, wsel = o->wsel;
	if (o->sel < o->ncalls && ui_ref_ok(s, o->calls[o->sel])) {
		ck = gt_store_lane_at(s, o->calls[o->sel].lane)->key;
		ct = gt_store_ev(s, o->calls[o->sel])->start_ns;
		have_c = 1;
	}
	if (o->mode == 2 && o->wsel < o->nwork && ui_ref_ok(s, o->work[o->wsel])) {
		wk = gt_store_lane_at(s, o->work[o->wsel].lane)->key;
		wt = gt_store_ev(s, o->work[o->wsel])->start_ns;
		have_w = 1;
	}
	load_calls(o);
	o->sel = have_c ? drill_same(s, o->calls, o->ncalls, &ck, ct, csel) :
		(csel < o->ncalls ? csel : 0);
	if (o->mode == 2) {
		load_work(o);
		o->wsel = have_w ? drill_same(s, o->work, o->nwork, &wk, wt, wsel) :
			(wsel < o->nwork ? wsel : 0);
	}
}

/* keep sel within [top, top + rows) */
static void list_scroll(size_t sel, size_t *top, int rows)
{
	if (rows < 1)
		rows = 1;
	if (sel < *top)
		*top = sel;
	if (sel >= *top + (size_t)rows)
		*top = sel - (size_t)rows + 1;
}

/* one list of events: a title, a heading, rows with the selected one highlighted */
static void draw_list(const struct operators_view *o, struct lrect r, const struct gt_ref *v, size_t n,
		      size_t *top, size_t sel, const char *title, int show_name)
{
	const struct gt_store *s = o->v.app->store;
	term_put(r.y, r.x + 1, r.w - 2, theme_attr(TH_HEADER), title);
	if (r.h < 3)
		return;
	term_printf(r.y + 1, r.x + 1, r.w - 2, theme_attr(TH_HEADER), "%8s  %-14s %10s  %s",
		    "#", "start", "duration", show_name ? "where  name" : "where");
	int rows = r.h - 2;
	list_scroll(sel, top, rows);
	for (int i = 0; i < rows && *top + (size_t)i < n; i++) {
		size_t k = *top + (size_t)i;
		if (!ui_ref_ok(s, v[k]))
			continue;
		const struct gt_lane *l = gt_store_lane_at(s, v[k].lane);
		const struct gt_event *e = &l->ev[v[k].idx];
		char ts[32], d[32], where[64];
		layout_fmt_ts(e->start_ns - gt_store_t_origin(s), ts, sizeof(ts));
		layout_fmt_dur(e->dur_ns, d, sizeof(d));
		if (l->key.type == GT_LANE_GPU)
			snprintf(where, sizeof(where), "r%d GPU %d stream %lld", l->key.rank,
				 l->key.device, (long long)l->key.id);
		else
			snprintf(where, sizeof(where), "r%d thread %lld", l->key.rank, (long long)l->key.id);
		term_printf(r.y + 2 + i, r.x + 1, r.w - 2, theme_attr(k == sel ? TH_SELECT : TH_NORMAL),
			    "%8zu  %-14s %10s  %s%s%s%*s", k + 1, ts, d, where, show_name ? "  " : "",
			    show_name ? gt_store_str(s, e->name) : "", r.w, "");
	}
}

void operators_view_calls_draw(struct operators_view *o, struct lrect r)
{
	char title[512], tot[32];
	if (o->mode == 2) {
		layout_fmt_dur(o->work_total_ns, tot, sizeof(tot));
		snprintf(title, sizeof(title), "GPU work of call %zu of %s  |  %zu launched, %s  |  "
			 "Enter: show in trace  Esc: back", o->sel + 1, o->calls_name, o->nwork, tot);
		draw_list(o, r, o->work, o->nwork, &o->wtop, o->wsel, title, 1);
		return;
	}
	layout_fmt_dur(o->calls_total_ns, tot, sizeof(tot));
	if (o->cmp) {
		snprintf(title, sizeof(title), "%s of %s  |  r%d baseline %zu, r%d experiment %zu  |  "
			 "by %s  |  Enter: show in trace%s  Esc: back",
			 o->calls_kernels ? "instances" : "calls", o->calls_name, o->cmp_ra,
			 o->calls_n_ra, o->cmp_rb, o->calls_n_rb,
			 o->calls_by_time ? "time" : "duration",
			 o->calls_kernels ? "" : "  K: its GPU work");
		draw_list(o, r, o->calls, o->ncalls, &o->top, o->sel, title, 0);
		return;
	}
	snprintf(title, sizeof(title), "calls of %s%s  |  %zu calls, host total %s  |  by %s  |  "
		 "Enter: show in trace  K: its GPU work  Esc: back", o->calls_name,
		 !o->calls_keyed ? "" : o->group == GT_OPS_BY_SHAPE ? " (these input shapes)" :
		 " (this call stack)", o->ncalls, tot, o->calls_by_time ? "time" : "duration");
	draw_list(o, r, o->calls, o->ncalls, &o->top, o->sel, title, 0);
}

/* move *sel by delta within [0, n) */
static void list_move(size_t *sel, size_t n, long delta)
{
	if (!n) {
		*sel = 0;
		return;
	}
	long x = (long)*sel + delta;
	*sel = x < 0 ? 0 : (x >= (long)n ? n - 1 : (size_t)x);
}

int operators_view_calls_key(struct operators_view *o, int ch)
{
	size_t *sel = o->mode == 2 ? &o->wsel : &o->sel;
	size_t n = o->mode == 2 ? o->nwork : o->ncalls;
	switch (ch) {
	case KEY_UP: case 'k': list_move(sel, n, -1); break;
	case KEY_DOWN: case 'j': list_move(sel, n, 1); break;
	case KEY_PPAGE: list_move(sel, n, -10); break;
	case KEY_NPAGE: list_move(sel, n, 10); break;
	case KEY_HOME: list_move(sel, n, -(long)n); break;
	case KEY_END: list_move(sel, n, (long)n); break;
	case 'd': case 'T':
		if (o->mode == 1 && o->calls_by_time != (ch == 'T')) {
			o->calls_by_time = ch == 'T';
			drill_sort(o->v.app->store, o->calls, o->ncalls, o->calls_by_time);
			o->top = o->sel = 0;
		}
		break;
	case 'K':
		if (o->mode == 1 && o->sel < o->ncalls && !o->calls_kernels) {
			load_work(o);
			o->mode = 2;
		}
		break;
	case '\n': case '\r': case KEY_ENTER: {
		const struct gt_ref *v = o->mode == 2 ? o->work : o->calls;
		if (*sel < n && ui_ref_ok(o->v.app->store, v[*sel])) {
			trace_view_goto(ui_page(o->v.app, "Trace"), v[*sel]);
			ui_show(o->v.app, "Trace");
		}
		break;
	}
	default:
		return UI_UNHANDLED;
	}
	return UI_HANDLED;
}

void operators_view_calls_free(struct operators_view *o)
{
	free(o->calls);
	free(o->work);
	o->calls = o->work = NULL;
	o->ncalls = o->nwork = 0;
}
