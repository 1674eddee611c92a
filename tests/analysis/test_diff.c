/*
 * test_diff.c - `gtrace diff` in core (gtrace/diff.h) on planted truths:
 *  - the per-name table on hand-made items (join, deltas, means, appeared /
 *    disappeared, order by absolute delta);
 *  - simulator pairs with the same seed and one planted change:
 *    balanced vs input-bound (a DataLoader of 40 % of the experiment's step:
 *    the DataLoader row carries the whole change), balanced vs straggler
 *    (2 GPUs, GPU 1's compute kernels 18 % longer: every compute kernel
 *    name's time grows by 9 % over the two GPUs, counts unchanged);
 *  - a simulator pair with a planted per-step change (simplant.h: one
 *    step's DataLoader 5 ms longer): that step's DataLoader and Total rows
 *    carry exactly +5,000 us, every other row of every step 0; the steps
 *    and their windows found again (gt_diff_steps_find);
 *  - step alignment: step=N pairs from N, a missing step is an error;
 *  - GT_DIFF_F_RANK_B: two runs merged in one store as ranks compare as the
 *    two files do.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/diff.h"
#include "gtrace/load.h"
#include "gtrace/sim.h"
#include "gtrace/store.h"
#include "../testdata.h"
#include "simplant.h"

static const struct gt_table *table(const struct gt_report_out *o, const char *name)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->tables[i]->name, name))
			return o->tables[i];
	cr_assert_fail("no table %s", name);
	return NULL;
}

static long col(const struct gt_table *t, const char *name)
{
	for (size_t c = 0; c < t->ncols; c++)
		if (!strcmp(t->cols[c].name, name))
			return (long)c;
	cr_assert_fail("no column %s", name);
	return -1;
}

/* the row of diff_breakdown with Row `kind` and Category `cat` (step: the
 * baseline's step number, -1 for the average) */
static long bd_row(const struct gt_table *t, const char *kind, int64_t step, const char *cat)
{
	long ck = col(t, "Row"), cc = col(t, "Category"), cs = col(t, "Step");
	for (size_t r = 0; r < t->nrows; r++)
		if (!strcmp(gt_table_cell(t, r, (size_t)ck)->s, kind) &&
		    !strcmp(gt_table_cell(t, r, (size_t)cc)->s, cat) &&
		    (step < 0 ? gt_table_is_null(t, r, (size_t)cs)
			      : gt_table_cell(t, r, (size_t)cs)->i == step))
			return (long)r;
	return -1;
}

static long row(const struct gt_table *t, const char *cat)
{
	return bd_row(t, "average", -1, cat);
}

/* rows of diff_breakdown with Row `kind` */
static size_t rows_of_kind(const struct gt_table *t, const char *kind)
{
	size_t n = 0;
	long ck = col(t, "Row");
	for (size_t r = 0; r < t->nrows; r++)
		n += !strcmp(gt_table_cell(t, r, (size_t)ck)->s, kind);
	return n;
}

/* the first aligned step pair of diff_breakdown: baseline's and experiment's step */
static void first_pair(const struct gt_table *t, int64_t *sa, int64_t *sb)
{
	long ck = col(t, "Row");
	for (size_t r = 0; r < t->nrows; r++)
		if (!strcmp(gt_table_cell(t, r, (size_t)ck)->s, "step")) {
			*sa = gt_table_cell(t, r, (size_t)col(t, "Step"))->i;
			*sb = gt_table_cell(t, r, (size_t)col(t, "Experiment Step"))->i;
			return;
		}
	cr_assert_fail("no step row");
}

static double fval(const struct gt_table *t, long r, const char *c)
{
	cr_assert_geq(r, 0);
	long k = col(t, c);
	cr_assert(!gt_table_is_null(t, (size_t)r, (size_t)k), "%s is n/a", c);
	return t->cols[k].type == GT_COL_INT ? (double)gt_table_cell(t, (size_t)r, (size_t)k)->i
					    : gt_table_cell(t, (size_t)r, (size_t)k)->f;
}

Test(analysis_diff, names_table_planted)
{
	struct gt_diff_item a[] = { { "k_same", 10, { 1000000 } }, { "k_gone", 2, { 50000 } },
				 { "k_slower", 4, { 400000 } } };
	struct gt_diff_item b[] = { { "k_slower", 4, { 4400000 } }, { "k_new", 1, { 70000 } },
				 { "k_same", 10, { 1000000 } } };
	static const char *const fig[] = { "Time" };
	struct gt_table *t = gt_diff_names_table("d", "d", a, 3, b, 3, fig, 1);
	cr_assert_not_null(t);
	cr_assert_eq(t->nrows, 4);
	/* |deltas|: k_slower 4000 us, k_new 70, k_gone 50, k_same 0 */
	cr_expect_str_eq(gt_table_cell(t, 0, 0)->s, "k_slower");
	cr_expect_str_eq(gt_table_cell(t, 1, 0)->s, "k_new");
	cr_expect_str_eq(gt_table_cell(t, 2, 0)->s, "k_gone");
	cr_expect_str_eq(gt_table_cell(t, 3, 0)->s, "k_same");
	cr_expect_float_eq(fval(t, 0, "Delta Time (us)"), 4000.0, 1e-9);
	cr_expect_float_eq(fval(t, 0, "Baseline Mean Time (us)"), 100.0, 1e-9);
	cr_expect_float_eq(fval(t, 0, "Experiment Mean Time (us)"), 1100.0, 1e-9);
	cr_expect_float_eq(fval(t, 0, "Delta Mean Time (us)"), 1000.0, 1e-9);
	cr_expect_str_eq(gt_table_cell(t, 1, col(t, "Change"))->s, "appeared");
	cr_expect(gt_table_is_null(t, 1, (size_t)col(t, "Baseline Time (us)")));
	cr_expect_float_eq(fval(t, 1, "Delta Count"), 1.0, 1e-9);
	cr_expect_str_eq(gt_table_cell(t, 2, col(t, "Change"))->s, "disappeared");
	cr_expect_float_eq(fval(t, 2, "Delta Time (us)"), -50.0, 1e-9);
	cr_expect_str_eq(gt_table_cell(t, 3, col(t, "Change"))->s, "");
	gt_table_free(t);
}

static struct gt_store *sim(enum gt_sim_scenario sc, int gpus, int steps)
{
	struct gt_store *s = gt_store_new();
	char err[256];
	struct gt_sim_opts o = { .gpus = gpus, .steps = steps, .scenario = sc, .seed = 7 };
	cr_assert_eq(gt_sim_generate(&o, s, err, sizeof(err)), 0, "%s", err);
	return s;
}

Test(analysis_diff, sim_input_bound_dataloader_row, .timeout = 60)
{
	struct gt_store *a = sim(GT_SIM_BALANCED, 1, 8), *b = sim(GT_SIM_INPUT_BOUND, 1, 8);
	struct gt_diff_opts o = { .rank = -1 };
	struct gt_report_out out = { 0 };
	char err[256];
	cr_assert_eq(gt_diff_run(a, b, "breakdown", &o, &out, err, sizeof(err)), 0, "%s", err);
	const struct gt_table *t = table(&out, "diff_breakdown");
	long dl = row(t, "DataLoader"), tot = row(t, "Total");
	double exp_dl = fval(t, dl, "Experiment (us)"), exp_tot = fval(t, tot, "Experiment (us)");
	/* planted: 40 % of the experiment's step (docs/simulator.md), within 2 points */
	cr_expect(fabs(100.0 * exp_dl / exp_tot - 40.0) < 2.0, "DataLoader %.1f %% of step",
		  100.0 * exp_dl / exp_tot);
	/* the plant is serial with the step: the DataLoader delta is the total delta
	   (the rest moves by the +-3 % noise only) */
	double d_dl = fval(t, dl, "Delta (us)"), d_tot = fval(t, tot, "Delta (us)");
	cr_expect(d_dl > 0 && fabs(d_dl - d_tot) < 0.05 * d_tot, "DataLoader +%.0f, total +%.0f",
		  d_dl, d_tot);
	for (size_t r = 0; r + 1 < GT_BD_NCAT + 1; r++)
		if ((long)r != dl)
			cr_expect(fabs(fval(t, (long)r, "Delta (us)")) < 0.1 * d_dl, "%s",
				  gt_table_cell(t, r, 2)->s);
	/* every aligned step side by side: 8 steps x (8 categories + Total) */
	cr_expect_eq(rows_of_kind(t, "step"), 8 * (GT_BD_NCAT + 1));
	cr_expect_eq(t->nrows, 9 * (GT_BD_NCAT + 1));
	gt_report_out_done(&out);
	gt_store_free(a);
	gt_store_free(b);
}

Test(analysis_diff, sim_planted_step, .timeout = 60)
{
	struct gt_store *a = gt_store_new(), *b = gt_store_new();
	char err[256];
	cr_assert_eq(simplant_run(a, 6, 0, 0, 0, err, sizeof(err)), -1, "%s", err);
	int64_t st = simplant_run(b, 6, 3, 5000000, 0, err, sizeof(err));
	cr_assert_geq(st, 0, "%s", err);
	struct gt_diff_opts o = { .rank = -1 };
	struct gt_report_out out = { 0 };
	cr_assert_eq(gt_diff_run(a, b, "breakdown", &o, &out, err, sizeof(err)), 0, "%s", err);
	const struct gt_table *t = table(&out, "diff_breakdown");
	long ck = col(t, "Row"), cs = col(t, "Step"), cc = col(t, "Category");
	size_t steps = 0;
	for (size_t r = 0; r < t->nrows; r++) {
		cr_assert(!gt_table_is_null(t, r, (size_t)ck), "Row in every row");
		if (strcmp(gt_table_cell(t, r, (size_t)ck)->s, "step"))
			continue;
		int64_t s_a = gt_table_cell(t, r, (size_t)cs)->i;
		const char *cat = gt_table_cell(t, r, (size_t)cc)->s;
		int hit = s_a == st && (!strcmp(cat, "DataLoader") || !strcmp(cat, "Total"));
		double d = fval(t, (long)r, "Delta (us)");
		cr_expect(fabs(d - (hit ? 5000.0 : 0.0)) < 1e-6, "step %lld %s: delta %.3f",
			  (long long)s_a, cat, d);
		cr_expect_eq(fval(t, (long)r, "Experiment Step"), (double)s_a);
		steps += !strcmp(cat, "Total");
	}
	cr_expect_eq(steps, 6);
	/* the average: the plant over the 6 aligned steps */
	cr_expect(fabs(fval(t, row(t, "DataLoader"), "Delta (us)") - 5000.0 / 6) < 0.06);
	gt_report_out_done(&out);
	/* the aligned pair of the planted step, its windows 5 ms apart in length */
	struct gt_diff_steps d;
	cr_assert_eq(gt_diff_steps_compute(a, b, &o, &d, err, sizeof(err)), 0, "%s", err);
	long k = gt_diff_steps_find(&d, st);
	cr_assert_geq(k, 0);
	const struct gt_breakdown_row *x = &d.a.rows[d.ia + (size_t)k], *y = &d.b.rows[d.ib + (size_t)k];
	cr_expect_eq(x->step, st);
	cr_expect_eq(y->step, st);
	cr_expect_eq((y->t1_ns - y->t0_ns) - (x->t1_ns - x->t0_ns), 5000000);
	cr_expect_eq(gt_diff_steps_find(&d, 1000), -1);
	gt_diff_steps_done(&d);
	gt_store_free(a);
	gt_store_free(b);
}

Test(analysis_diff, sim_straggler_kernels, .timeout = 60)
{
	struct gt_store *a = sim(GT_SIM_BALANCED, 2, 6), *b = sim(GT_SIM_STRAGGLER, 2, 6);
	struct gt_diff_opts o = { .rank = -1 };
	struct gt_report_out out = { 0 };
	char err[256];
	cr_assert_eq(gt_diff_run(a, b, "kernels", &o, &out, err, sizeof(err)), 0, "%s", err);
	const struct gt_table *t = table(&out, "diff_kernels");
	size_t checked = 0;
	for (size_t r = 0; r < t->nrows; r++) {
		const char *n = gt_table_cell(t, r, 0)->s;
		cr_expect_str_eq(gt_table_cell(t, r, col(t, "Change"))->s, "", "%s", n);
		cr_expect_eq(fval(t, (long)r, "Delta Count"), 0.0, "%s", n);
		if (strstr(n, "nccl") || fval(t, (long)r, "Baseline Count") < 100)
			continue;
		double q = fval(t, (long)r, "Experiment Time (us)") / fval(t, (long)r, "Baseline Time (us)");
		cr_expect(fabs(q - 1.09) < 0.015, "%s: x%.4f", n, q);
		checked++;
	}
	cr_expect_gt(checked, 5);
	gt_report_out_done(&out);
	gt_store_free(a);
	gt_store_free(b);
}

Test(analysis_diff, align_step, .timeout = 60)
{
	struct gt_store *a = sim(GT_SIM_BALANCED, 1, 6), *b = sim(GT_SIM_BALANCED, 1, 4);
	struct gt_diff_opts o = { .rank = -1 };
	struct gt_report_out out = { 0 };
	char err[256];
	cr_assert_eq(gt_diff_run(a, b, "breakdown", &o, &out, err, sizeof(err)), 0, "%s", err);
	const struct gt_table *ts = table(&out, "diff_breakdown");
	size_t n_first = rows_of_kind(ts, "step") / (GT_BD_NCAT + 1);
	cr_expect_geq(n_first, 3);
	int64_t s0, s0b;
	first_pair(ts, &s0, &s0b);
	cr_expect_eq(s0, s0b);
	gt_report_out_done(&out);
	/* from the second step on: one pair fewer, starting there in both runs */
	o.align = GT_DIFF_ALIGN_STEP;
	o.step = s0 + 1;
	cr_assert_eq(gt_diff_run(a, b, "breakdown", &o, &out, err, sizeof(err)), 0, "%s", err);
	ts = table(&out, "diff_breakdown");
	cr_expect_eq(rows_of_kind(ts, "step"), (n_first - 1) * (GT_BD_NCAT + 1));
	int64_t s1, s1b;
	first_pair(ts, &s1, &s1b);
	cr_expect_eq(s1, s0 + 1);
	cr_expect_eq(s1b, s0 + 1);
	gt_report_out_done(&out);
	o.step = 1000;
	cr_expect_eq(gt_diff_run(a, b, "breakdown", &o, &out, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "step 1000") != NULL, "%s", err);
	gt_report_out_done(&out);
	/* start: each run as one window */
	o.align = GT_DIFF_ALIGN_START;
	cr_assert_eq(gt_diff_run(a, b, "breakdown", &o, &out, err, sizeof(err)), 0, "%s", err);
	ts = table(&out, "diff_breakdown");
	cr_expect_eq(ts->nrows, GT_BD_NCAT + 1);
	cr_expect_eq(rows_of_kind(ts, "whole run"), GT_BD_NCAT + 1);
	cr_expect(gt_table_is_null(ts, 0, (size_t)col(ts, "Step")));
	gt_report_out_done(&out);
	cr_expect_eq(gt_diff_run(a, b, "nope", &o, &out, err, sizeof(err)), -EINVAL);
	gt_store_free(a);
	gt_store_free(b);
}

/* a store loaded from the given testdata files (several: merged as ranks) */
static struct gt_store *load_td(const char *const *rel, size_t n)
{
	const char *td = getenv("GTRACE_TESTDATA");
	char p[4][1024];
	const char *paths[4];
	for (size_t i = 0; i < n; i++) {
		snprintf(p[i], sizeof(p[i]), "%s/%s", td ? td : "../shared/testdata", rel[i]);
		paths[i] = p[i];
	}
	struct gt_store *s;
	char err[256];
	struct gt_load_opts lo = { .flags = GT_LOAD_QUIET };
	cr_assert_eq(gt_load(paths, n, &lo, &s, err, sizeof(err)), 0, "%s", err);
	return s;
}

/* GT_DIFF_F_RANK_B: the two ResNet-50 runs opened together (one store, ranks 0
 * and 1, as `gtrace open A B` holds them) compare as the two files do
 * (`gtrace diff A B`, checked against the plugin's rules in cli_diff): every
 * cell of the breakdown, kernels and ops tables */
Test(analysis_diff, ranks_of_one_store, .timeout = 180)
{
	const char *rel[2] = { "kineto/resnet50_num_workers_0.pt.trace.json.gz",
			       "kineto/resnet50_num_workers_4.pt.trace.json.gz" };
	td_need(rel[0]);
	td_need(rel[1]);
	struct gt_store *a = load_td(&rel[0], 1), *b = load_td(&rel[1], 1), *m = load_td(rel, 2);
	static const char *const rep[] = { "breakdown", "kernels", "ops" };
	for (size_t k = 0; k < 3; k++) {
		struct gt_diff_opts o2 = { .rank = -1 };
		struct gt_diff_opts o1 = { .rank = 0, .rank_b = 1, .flags = GT_DIFF_F_RANK_B };
		struct gt_report_out x = { 0 }, y = { 0 };
		char err[256];
		cr_assert_eq(gt_diff_run(a, b, rep[k], &o2, &x, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(gt_diff_run(m, m, rep[k], &o1, &y, err, sizeof(err)), 0, "%s", err);
		const struct gt_table *tx = x.tables[0], *ty = y.tables[0];
		cr_assert_str_eq(tx->name, ty->name);
		cr_assert_eq(tx->nrows, ty->nrows, "%s: %zu rows, %zu", rep[k], tx->nrows, ty->nrows);
		cr_assert_gt(tx->nrows, 5);
		for (size_t r = 0; r < tx->nrows; r++)
			for (size_t c = 0; c < tx->ncols; c++) {
				cr_assert_eq(gt_table_is_null(tx, r, c), gt_table_is_null(ty, r, c));
				if (gt_table_is_null(tx, r, c))
					continue;
				const union gt_cell *u = gt_table_cell(tx, r, c), *v = gt_table_cell(ty, r, c);
				if (tx->cols[c].type == GT_COL_STR)
					cr_assert_str_eq(u->s, v->s, "%s row %zu", rep[k], r);
				else if (tx->cols[c].type == GT_COL_INT)
					cr_assert_eq(u->i, v->i, "%s row %zu col %zu", rep[k], r, c);
				else
					cr_assert_float_eq(u->f, v->f, 1e-6, "%s row %zu col %zu", rep[k],
							   r, c);
			}
		if (k == 0) {   /* the DataLoader row carries the change (cli_diff: -58,076 us) */
			long dl = row(ty, "DataLoader");
			cr_expect(fabs(fval(ty, dl, "Delta (us)") + 58076) < 1.0, "%.1f",
				  fval(ty, dl, "Delta (us)"));
		}
		gt_report_out_done(&x);
		gt_report_out_done(&y);
	}
	/* the overviews side by side: the merged store's rank 0 / rank 1 figures
	   are each file's (events, average step, verdicts), not the store's */
	struct gt_diff_opts o2 = { .rank = -1 };
	struct gt_diff_opts o1 = { .rank = 0, .rank_b = 1, .flags = GT_DIFF_F_RANK_B };
	struct gt_report_out x = { 0 }, y = { 0 };
	char err[256];
	cr_assert_eq(gt_diff_run(a, b, "overview", &o2, &x, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(gt_diff_run(m, m, "overview", &o1, &y, err, sizeof(err)), 0, "%s", err);
	const struct gt_table *vx = table(&x, "diff_verdicts"), *vy = table(&y, "diff_verdicts");
	static const char *const figs[] = { "Events", "Average step (us)", "Input verdict",
					    "GPU utilization (%)", NULL };
	for (size_t f = 0; figs[f]; f++) {
		long rx = -1, ry = -1;
		for (size_t r = 0; r < vx->nrows; r++)
			if (!strcmp(gt_table_cell(vx, r, 0)->s, figs[f]))
				rx = (long)r;
		for (size_t r = 0; r < vy->nrows; r++)
			if (!strcmp(gt_table_cell(vy, r, 0)->s, figs[f]))
				ry = (long)r;
		cr_assert(rx >= 0 && ry >= 0, "%s", figs[f]);
		for (size_t c = 1; c <= 2; c++)
			cr_expect_str_eq(gt_table_cell(vx, (size_t)rx, c)->s,
					 gt_table_cell(vy, (size_t)ry, c)->s, "%s", figs[f]);
	}
	gt_report_out_done(&x);
	gt_report_out_done(&y);
	gt_store_free(a);
	gt_store_free(b);
	gt_store_free(m);
}
