/*
 * pipeline_view.c - the input pipeline page (TensorFlow Profiler's Input Pipeline
 * Analyzer, computed by core's gt_pipeline_compute): the verdict, a stacked
 * bar per step coloured by category, the worst steps and what to try.
 * Enter on a step zooms the trace view to it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "term.h"
#include "view.h"

struct pipeline_view {
	struct view v;
	int ok;
	int32_t rank;
	int rank_i, nranks;    /* R cycles through the ranks */
	struct gt_pipeline_result res;
	char advice[8][GT_PIPELINE_ADVICE_LEN];
	size_t nadvice;
	char err[160];
	size_t top, sel;
};

static const enum theme_role cat_role[GT_PL_NCAT] = {
	[GT_PL_COMPUTE] = TH_COMPUTE, [GT_PL_H2D] = TH_H2D, [GT_PL_D2D_COMM] = TH_NCCL,
	[GT_PL_OUTPUT] = TH_D2H, [GT_PL_HOST_WAIT] = TH_SYNC, [GT_PL_LAUNCH] = TH_API,
	[GT_PL_HOST_COMPUTE] = TH_RANGE, [GT_PL_OTHER] = TH_MEMSET,
};
static const char cat_glyph[GT_PL_NCAT] = { '#', '>', '%', '<', '!', '-', ':', '.' };

static const char *const pv_help[] = {
	"j k  Up Down  PgUp PgDn  Home End   choose a step",
	"Enter       zoom the trace view to the step",
	"R           next rank (several ranks)",
	"bars: one per step, length = step time, segments = categories",
	NULL
};

/* the pipeline analysis of the chosen rank (rank_i-th of the store's) and its advice */
static void compute(struct pipeline_view *p)
{
	ui_busy(p->v.app, "analysing the input pipeline...");
	if (p->ok)
		gt_pipeline_result_done(&p->res);
	p->ok = 0;
	p->err[0] = 0;
	int32_t *ranks = NULL;
	long nr = gt_steps_ranks(p->v.app->store, &ranks);
	p->nranks = nr > 0 ? (int)nr : 1;
	if (p->rank_i >= p->nranks)
		p->rank_i = 0;
	p->rank = nr > 0 ? ranks[p->rank_i] : 0;
	free(ranks);
	struct gt_scope sc;
	gt_scope_all(&sc);
	if (gt_pipeline_compute(p->v.app->store, p->rank, NULL, &sc, &p->res, p->err, sizeof(p->err)))
		return;
	p->ok = 1;
	p->nadvice = gt_pipeline_advice(&p->res, p->advice, 8);
}

/* one stacked bar of row r, `w` cells for max_ns */
static void bar(const struct gt_pipeline_row *row, int y, int x, int w, int64_t max_ns)
{
	if (max_ns <= 0 || w <= 0)
		return;
	int64_t len8 = row->total_ns * 8 * w / max_ns;
	int64_t acc = 0;
	int cell = 0;
	for (int c = 0; c < GT_PL_NCAT && cell < w; c++) {
		acc += row->cat_ns[c];
		int64_t end8 = row->total_ns ? acc * len8 / row->total_ns : 0;
		int endc = (int)((end8 + 4) / 8);
		attr_t a = theme_attr(cat_role[c]);
		char g[2] = { cat_glyph[c], 0 };
		attrset(a);
		for (; cell < endc && cell < w; cell++)
			term_glyph(y, x + cell, term_caps.colors ? (term_caps.utf8 ? "\u2588" : "#") : g);
		attrset(A_NORMAL);
	}
}

/* verdict, shares, legend, one stacked bar per step, worst steps, advice */
static void pv_draw(struct view *v, struct lrect r)
{
	struct pipeline_view *p = (struct pipeline_view *)v;
	if (ui_due(v))
		compute(p);
	if (!p->ok) {
		term_printf(r.y, r.x + 1, r.w - 2, theme_attr(TH_WARN), "input pipeline: %s",
			    p->err[0] ? p->err : "no data");
		return;
	}
	const struct gt_pipeline_result *res = &p->res;
	double cost_pct = 0;
	enum gt_pipeline_host_cost cost = gt_pipeline_host_cost(res, &cost_pct);
	char why[160];
	gt_pipeline_verdict_why(res, why, sizeof(why));
	term_printf(r.y, r.x + 1, r.w - 2, theme_attr(res->verdict >= GT_PL_MODERATELY ? TH_WARN : TH_GOOD),
		    "Verdict: %s (%s);  largest non-GPU cost: %s, %.1f%% of the step",
		    gt_pipeline_verdict_name(res->verdict), why, gt_pipeline_host_cost_name(cost), cost_pct);
	if (r.h < 2)
		return;
	term_printf(r.y + 1, r.x + 1, r.w - 2, 0,
		    "rank %d%s, %zu step%s: input %.1f%%  launch %.1f%%  all others %.1f%%  compute %.1f%%",
		    res->rank, p->nranks > 1 ? " (R: next rank)" : "", res->n, res->n == 1 ? "" : "s", res->input_pct, res->launch_pct, res->others_pct,
		    res->avg_pct[GT_PL_COMPUTE]);
	/* legend */
	int x = r.x + 1, y = r.y + 2;
	if (r.h > 4) {
		for (int c = 0; c < GT_PL_NCAT; c++) {
			char g[2] = { cat_glyph[c], 0 };
			const char *n = gt_pipeline_cat_name((enum gt_pipeline_cat)c);
			if (x + (int)strlen(n) + 9 > r.x + r.w && x > r.x + 1) {
				if (y + 1 >= r.y + r.h / 2)
					break;
				x = r.x + 1;
				y++;
			}
			attrset(theme_attr(cat_role[c]));
			mvaddstr(y, x, term_caps.colors ? (term_caps.utf8 ? "\u2588" : "#") : g);
			attrset(A_NORMAL);
			term_printf(y, x + 2, r.x + r.w - x - 2, theme_attr(TH_DIM), "%s %.1f%%", n,
				    res->avg_pct[c]);
			x += (int)strlen(n) + 10;
		}
		y++;
	}
	if (y < r.y + r.h)
		term_printf(y++, r.x + 1, r.w - 2, theme_attr(TH_HEADER), "%-11s %9s %6s  %s", "step", "time",
			    "input", "breakdown (Enter: show in trace)");
	/* bottom: worst steps and advice */
	int bottom = (int)p->nadvice + (res->nworst ? 2 : 1);
	if (bottom > (r.h - 3) / 2)
		bottom = (r.h - 3) / 2;
	int chart_h = r.y + r.h - y - bottom;
	int64_t max_ns = 1;
	for (size_t i = 0; i < res->n; i++)
		if (res->rows[i].total_ns > max_ns)
			max_ns = res->rows[i].total_ns;
	if (chart_h > 0) {
		if (p->sel >= res->n)
			p->sel = res->n ? res->n - 1 : 0;
		if (p->sel < p->top)
			p->top = p->sel;
		if (p->sel >= p->top + (size_t)chart_h)
			p->top = p->sel - (size_t)chart_h + 1;
		for (int i = 0; i < chart_h; i++) {
			size_t n = p->top + (size_t)i;
			if (n >= res->n)
				break;
			const struct gt_pipeline_row *row = &res->rows[n];
			char d[32];
			attr_t a = n == p->sel ? theme_attr(TH_SELECT) : 0;
			if (row->step < 0)       /* no steps: the whole capture is one row */
				term_printf(y + i, r.x + 1, 29, a, "%-11s %9s %5.1f%%", "capture",
					    layout_fmt_dur(row->total_ns, d, sizeof(d)), row->input_pct);
			else
				term_printf(y + i, r.x + 1, 29, a, "step %-6lld %9s %5.1f%%",
					    (long long)row->step, layout_fmt_dur(row->total_ns, d, sizeof(d)),
					    row->input_pct);
			bar(row, y + i, r.x + 31, r.w - 32, max_ns);
		}
		if (!res->n)
			term_put(y, r.x + 1, r.w - 2, theme_attr(TH_DIM), "no steps found");
		y += chart_h;
	}
	if (bottom <= 0)
		return;
	if (res->nworst && y < r.y + r.h && res->rows[res->worst[0]].step >= 0) {
		char line[256];
		int k = snprintf(line, sizeof(line), "Worst steps by input:");
		for (size_t i = 0; i < res->nworst && k > 0 && (size_t)k < sizeof(line); i++) {
			const struct gt_pipeline_row *row = &res->rows[res->worst[i]];
			k += snprintf(line + k, sizeof(line) - (size_t)k, "  step %lld (%.1f%%)",
				      (long long)row->step, row->input_pct);
		}
		term_put(y++, r.x + 1, r.w - 2, theme_attr(TH_HEADER), line);
	}
	if (y < r.y + r.h)
		term_put(y++, r.x + 1, r.w - 2, theme_attr(TH_HEADER), "What to try:");
	for (size_t i = 0; i < p->nadvice && y < r.y + r.h; i++)
		term_put(y++, r.x + 3, r.w - 4, 0, p->advice[i]);
}

/* move between steps; Enter zooms the trace view to one */
static int pv_key(struct view *v, int ch)
{
	struct pipeline_view *p = (struct pipeline_view *)v;
	size_t n = p->ok ? p->res.n : 0;
	switch (ch) {
	case KEY_UP: case 'k': if (p->sel) p->sel--; break;
	case KEY_DOWN: case 'j': if (p->sel + 1 < n) p->sel++; break;
	case KEY_PPAGE: p->sel = p->sel > 10 ? p->sel - 10 : 0; break;
	case KEY_NPAGE: p->sel = p->sel + 10 < n ? p->sel + 10 : (n ? n - 1 : 0); break;
	case KEY_HOME: p->sel = 0; break;
	case KEY_END: p->sel = n ? n - 1 : 0; break;
	case 'R':
		if (p->nranks > 1) {
			p->rank_i = (p->rank_i + 1) % p->nranks;
			p->v.due.dirty = 1;
		}
		break;
	case '\n': case '\r': case KEY_ENTER:
		if (p->sel < n) {
			trace_view_zoom_range(ui_page(v->app, "Trace"), p->res.rows[p->sel].t0_ns,
					  p->res.rows[p->sel].t1_ns);
			ui_show(v->app, "Trace");
		}
		break;
	default:
		return UI_UNHANDLED;
	}
	return UI_HANDLED;
}

/* free the page */
static void pv_free(struct view *v)
{
	struct pipeline_view *p = (struct pipeline_view *)v;
	if (p->ok)
		gt_pipeline_result_done(&p->res);
	free(p);
}

static const struct view_ops pv_ops = {
	.help = pv_help,
	.draw = pv_draw,
	.key = pv_key,
	.free = pv_free,
};

void pipeline_view_show_rank(struct view *v, int32_t rank)
{
	struct pipeline_view *p = (struct pipeline_view *)v;
	if (!p)
		return;
	int32_t *ranks = NULL;
	long nr = gt_steps_ranks(v->app->store, &ranks);
	for (long i = 0; i < nr; i++)
		if (ranks[i] == rank && (p->rank_i != (int)i || !p->ok)) {
			p->rank_i = (int)i;
			p->sel = p->top = 0;
			p->v.due.dirty = 1;
		}
	free(ranks);
}

struct view *pipeline_view_new(struct app *a)
{
	struct pipeline_view *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->v.ops = &pv_ops;
	p->v.app = a;
	return &p->v;
}
