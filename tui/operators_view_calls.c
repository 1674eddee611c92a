/*
 * operators_view_calls.c - the calls of one operator (every framework operator
 * event of that name on the host threads, a call nested in a call of the
 * same name left out as the operator table merges it), longest first or in
 * time order; K lists the GPU work one call launched (runtime calls inside
 * it on its thread, joined to their kernels, copies, memsets by
 * correlation).  Enter shows the selected event in the trace view.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/ops.h"
#include "term.h"
#include "operators_view.h"

static const struct gt_store *sort_store;
static int sort_by_time;

/* longest first, or earliest first; then lane and index */
static int ref_cmp(const void *pa, const void *pb)
{
	const struct gt_ref *a = pa, *b = pb;
	const struct gt_event *x = gt_store_ev(sort_store, *a), *y = gt_store_ev(sort_store, *b);
	if (sort_by_time) {
		if (x->start_ns != y->start_ns)
			return x->start_ns < y->start_ns ? -1 : 1;
	} else if (x->dur_ns != y->dur_ns) {
		return x->dur_ns > y->dur_ns ? -1 : 1;
	}
	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	return a->idx < b->idx ? -1 : (a->idx > b->idx);
}

/* append r to v (cap doubled as needed); 0 or -1 on no memory */
static int push(struct gt_ref **v, size_t *n, size_t *cap, struct gt_ref r)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct gt_ref *nv = realloc(*v, nc * sizeof(*nv));
		if (!nv)
			return -1;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = r;
	return 0;
}

/* the calls of calls_name, in the chosen order, and their total */
static void load_calls(struct operators_view *o)
{
	const struct gt_store *s = o->v.app->store;
	free(o->calls);
	o->calls = NULL;
	o->ncalls = o->top = o->sel = 0;
	o->calls_total_ns = 0;
	uint32_t id = gt_store_str_find(s, o->calls_name, strlen(o->calls_name));
	if (id == UINT32_MAX)
		return;
	size_t cap = 0;
	o->calls_n_ra = o->calls_n_rb = 0;
	int kind = o->calls_kernels ? GT_EV_KERNEL : GT_EV_CPU_OP;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type != (kind == GT_EV_KERNEL ? GT_LANE_GPU : GT_LANE_HOST) ||
		    !(l->kinds_mask & (1u << kind)))
			continue;
		if (o->cmp && l->key.rank != o->cmp_ra && l->key.rank != o->cmp_rb)
			continue;
		int64_t cover_end = INT64_MIN;   /* end of the last call kept on this thread */
		for (size_t j = 0; j < l->n; j++) {
			const struct gt_event *e = &l->ev[j];
			if (e->kind != kind || e->name != id)
				continue;
			if (o->calls_keyed && (o->group == GT_OPS_BY_SHAPE ? gt_ops_event_shape(e) :
					       gt_ops_event_stack(e)) != o->calls_key)
				continue;
			if (e->start_ns < cover_end && e->start_ns + e->dur_ns <= cover_end)
				continue;   /* inside a call of the same name */
			if (push(&o->calls, &o->ncalls, &cap, (struct gt_ref){ (uint32_t)i, (uint32_t)j }))
				return;
			if (o->cmp) {
				o->calls_n_ra += l->key.rank == o->cmp_ra;
				o->calls_n_rb += l->key.rank == o->cmp_rb;
			}
			cover_end = e->start_ns + e->dur_ns;
			o->calls_total_ns += e->dur_ns;
		}
	}
	sort_store = s;
	sort_by_time = o->calls_by_time;
	if (o->ncalls)
		qsort(o->calls, o->ncalls, sizeof(*o->calls), ref_cmp);
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
		if (push(&o->work, &o->nwork, &cap, g))
			return;
		o->work_total_ns += gt_store_ev(s, g)->dur_ns;
	}
	sort_store = s;
	sort_by_time = 1;
	if (o->nwork)
		qsort(o->work, o->nwork, sizeof(*o->work), ref_cmp);
}

void operators_view_calls_open(struct operators_view *o)
{
	load_calls(o);
	o->mode = 1;
}

/* the index in v[0..n) of the event on lane key k starting at t, else keep */
static size_t find_same(const struct gt_store *s, const struct gt_ref *v, size_t n,
			const struct gt_lane_key *k, int64_t t, size_t keep)
{
	for (size_t i = 0; i < n; i++) {
		const struct gt_lane *l = gt_store_lane_at(s, v[i].lane);
		if (l->ev[v[i].idx].start_ns == t && !memcmp(&l->key, k, sizeof(*k)))
			return i;
	}
	return keep < n ? keep : (n ? n - 1 : 0);
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
	o->sel = have_c ? find_same(s, o->calls, o->ncalls, &ck, ct, csel) :
		(csel < o->ncalls ? csel : 0);
	if (o->mode == 2) {
		load_work(o);
		o->wsel = have_w ? find_same(s, o->work, o->nwork, &wk, wt, wsel) :
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
		layout_fmt_ts(e->start_ns - gt_store_t_min(s), ts, sizeof(ts));
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
			load_calls(o);
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
