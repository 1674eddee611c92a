/*
 * operators_view_cmp.c - the Operators page's compare mode (c): `gtrace
 * diff`'s tables of the store's two lowest ranks (two runs opened together,
 * `gtrace open A B`), one per value of o->cmp:
 *   1 operators, 2 kernels  (Enter: both runs' instances, operators_view_calls.c)
 *   3 step breakdown: the average aligned step, per category
 *   4 steps side by side: each aligned step of both runs per category
 *     (Enter: the trace view over that step of both runs)
 *   5 overview verdicts: both overviews' figures and recommendations
 * Pages 3 and 4 are the rows of one table (diff_breakdown) told apart by
 * its Row column; the steps are aligned by core's gt_diff_steps_compute,
 * the rule `gtrace diff` uses, and kept for the drill-down's windows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/diff.h"
#include "operators_view.h"

const char *operators_view_cmp_name(int cmp)
{
	static const char *const what[OPV_CMP_N] = { "", "operators", "kernels", "step breakdown",
						     "steps side by side", "overview verdicts" };
	return cmp > 0 && cmp < OPV_CMP_N ? what[cmp] : "";
}

int operators_view_cmp_ranks(struct operators_view *o)
{
	const struct gt_store *s = o->v.app->store;
	int32_t a = INT32_MAX, b = INT32_MAX;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		int32_t r = gt_store_lane_at(s, (uint32_t)i)->key.rank;
		if (r < a) {
			b = a;
			a = r;
		} else if (r > a && r < b) {
			b = r;
		}
	}
	o->cmp_ra = a;
	o->cmp_rb = b;
	return b != INT32_MAX;
}

void operators_view_cmp_free(struct operators_view *o)
{
	if (o->has_steps)
		gt_diff_steps_done(&o->steps);
	o->has_steps = 0;
}

long operators_view_cmp_compute(struct operators_view *o)
{
	operators_view_cmp_free(o);
	if (!operators_view_cmp_ranks(o)) {
		snprintf(o->err, sizeof(o->err), "compare: the store has one rank (open two runs: "
			 "gtrace open A B)");
		return -1;
	}
	struct gt_diff_opts d = { .rank = o->cmp_ra, .rank_b = o->cmp_rb, .flags = GT_DIFF_F_RANK_B };
	const struct gt_store *s = o->v.app->store;
	if (o->cmp == 3 || o->cmp == 4) {
		if (gt_diff_steps_compute(s, s, &d, &o->steps, o->err, sizeof(o->err)))
			return -1;
		o->has_steps = 1;
		if (gt_diff_steps_table(&o->steps, &o->out)) {
			snprintf(o->err, sizeof(o->err), "compare: out of memory");
			return -1;
		}
		return 0;
	}
	static const char *const rep[OPV_CMP_N] = { "", "ops", "kernels", "", "", "overview" };
	if (gt_diff_run(s, s, rep[o->cmp % OPV_CMP_N], &d, &o->out, o->err, sizeof(o->err)))
		return -1;
	if (o->cmp != 5)
		return 0;
	long k = gt_report_out_find(&o->out, "diff_verdicts");
	if (k < 0)
		snprintf(o->err, sizeof(o->err), "compare: no overview of a run");
	return k;
}

/* the string cell (row, column called name) of o->tb, NULL when none */
static const char *str_cell(const struct operators_view *o, size_t row, const char *name)
{
	for (size_t c = 0; o->tb && c < o->tb->ncols; c++)
		if (!strcmp(o->tb->cols[c].name, name))
			return gt_table_is_null(o->tb, row, c) ? NULL : gt_table_cell(o->tb, row, c)->s;
	return NULL;
}

int operators_view_cmp_keep(const struct operators_view *o, size_t row)
{
	if (o->cmp != 3 && o->cmp != 4)
		return 1;
	const char *k = str_cell(o, row, "Row");
	int step = k && !strcmp(k, "step");
	return o->cmp == 4 ? step : !step;
}

void operators_view_cmp_enter(struct operators_view *o)
{
	struct app *a = o->v.app;
	if (o->cmp != 4) {
		ui_msg(a, o->cmp == 3 ? "Enter: the average step has no events (c: the steps side by "
				      "side, Enter there)" : "Enter: a verdict has no events to list");
		return;
	}
	int sc = o->tb ? gt_table_col_with(o->tb, GT_COLF_ID) : -1;   /* Step, the baseline's */
	if (sc < 0 || o->st.sel >= o->nrows || !o->has_steps)
		return;
	size_t row = o->rows[o->st.sel];
	long k = gt_diff_steps_find(&o->steps, gt_table_is_null(o->tb, row, (size_t)sc) ? -1 :
				    gt_table_cell(o->tb, row, (size_t)sc)->i);
	if (k < 0)
		return;
	const struct gt_breakdown_row *x = &o->steps.a.rows[o->steps.ia + (size_t)k];
	const struct gt_breakdown_row *y = &o->steps.b.rows[o->steps.ib + (size_t)k];
	int64_t t0 = x->t0_ns < y->t0_ns ? x->t0_ns : y->t0_ns;
	int64_t t1 = x->t1_ns > y->t1_ns ? x->t1_ns : y->t1_ns;
	struct view *tv = ui_page(a, "Trace");
	trace_view_zoom_range(tv, t0, t1);
	ui_show(a, "Trace");
	ui_msg(a, "step %lld: r%d baseline %.3f ms, step %lld: r%d experiment %.3f ms (5: back)",
	       (long long)x->step, o->cmp_ra, (double)(x->t1_ns - x->t0_ns) / 1e6,
	       (long long)y->step, o->cmp_rb, (double)(y->t1_ns - y->t0_ns) / 1e6);
}
