/*
 * diff_breakdown.c - `gtrace diff --report breakdown`: one table,
 * diff_breakdown, from the aligned steps (diff_steps.c).  Long form, one
 * row per (step, category): first the average aligned step (Step n/a, Row
 * "average"), then each aligned pair (Step = the baseline's step number,
 * Row "step", Experiment Step = its partner); with GT_DIFF_ALIGN_START one
 * pair only, Row "whole run".  Categories Kernel ... Other then Total, each
 * with Baseline (us), Experiment (us), Delta (us) and Delta (% of the
 * baseline, n/a when the baseline is 0).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "gtrace/diff.h"
#include "diff_priv.h"
#include "tables.h"

static const char *const cols[] = {
	"Step:k", "Row", "Category", "Experiment Step:k", "Baseline (us):f:1",
	"Experiment (us):f:1", "Delta (us):f:1", "Delta (%):p:2", NULL
};

/* the GT_BD_NCAT + 1 rows (categories, Total) of one step pair or of the
 * average: va / vb hold the categories then the total, in ns */
static int put_rows(struct gt_table *t, int64_t step_a, int64_t step_b, const char *kind,
		    const double *va, const double *vb)
{
	for (int c = 0; c <= GT_BD_NCAT; c++) {
		long r = gt_table_row(t);
		const char *cat = c < GT_BD_NCAT ? gt_breakdown_cat_name((enum gt_breakdown_cat)c)
						 : "Total";
		if (r < 0 || gt_table_set_str(t, (size_t)r, 1, kind) ||
		    gt_table_set_str(t, (size_t)r, 2, cat))
			return -ENOMEM;
		if (step_a >= 0)
			gt_table_set_int(t, (size_t)r, 0, step_a);
		if (step_b >= 0)
			gt_table_set_int(t, (size_t)r, 3, step_b);
		gt_table_set_float(t, (size_t)r, 4, va[c] / 1e3);
		gt_table_set_float(t, (size_t)r, 5, vb[c] / 1e3);
		gt_table_set_float(t, (size_t)r, 6, (vb[c] - va[c]) / 1e3);
		if (va[c] > 0)
			gt_table_set_float(t, (size_t)r, 7, 100.0 * (vb[c] - va[c]) / va[c]);
	}
	return 0;
}

/* a breakdown row's categories then total, in ns */
static void row_ns(const struct gt_breakdown_row *x, double *v)
{
	for (int c = 0; c < GT_BD_NCAT; c++)
		v[c] = (double)x->cat_ns[c];
	v[GT_BD_NCAT] = (double)x->total_ns;
}

int gt_diff_steps_table(const struct gt_diff_steps *d, struct gt_report_out *out)
{
	struct gt_table *t = tables_new("diff_breakdown", "Step-time breakdown: baseline vs "
					"experiment, the average aligned step then each aligned step",
					cols);
	if (!t)
		return -ENOMEM;
	gt_table_col_flags(t, 0, GT_COLF_KEY);
	gt_table_col_flags(t, 1, GT_COLF_KEY);
	gt_table_col_flags(t, 2, GT_COLF_NAME | GT_COLF_KEY);
	double sa[GT_BD_NCAT + 1] = { 0 }, sb[GT_BD_NCAT + 1] = { 0 };
	double xa[GT_BD_NCAT + 1], xb[GT_BD_NCAT + 1];
	for (size_t k = 0; k < d->n; k++) {
		row_ns(&d->a.rows[d->ia + k], xa);
		row_ns(&d->b.rows[d->ib + k], xb);
		for (int c = 0; c <= GT_BD_NCAT; c++) {
			sa[c] += xa[c] / (double)d->n;
			sb[c] += xb[c] / (double)d->n;
		}
	}
	const struct gt_breakdown_row *a0 = &d->a.rows[d->ia], *b0 = &d->b.rows[d->ib];
	int whole = a0->step < 0 || b0->step < 0;
	/* the average first (the headline), unless the one pair is the whole runs */
	int rc = whole ? 0 : put_rows(t, -1, -1, "average", sa, sb);
	for (size_t k = 0; k < d->n && !rc; k++) {
		const struct gt_breakdown_row *x = &d->a.rows[d->ia + k], *y = &d->b.rows[d->ib + k];
		row_ns(x, xa);
		row_ns(y, xb);
		rc = put_rows(t, x->step, y->step, whole ? "whole run" : "step", xa, xb);
	}
	if (!rc && !whole)
		rc = gt_table_note(t, "Average of %zu aligned steps: baseline %lld..%lld, "
				   "experiment %lld..%lld", d->n, (long long)a0->step,
				   (long long)d->a.rows[d->ia + d->n - 1].step, (long long)b0->step,
				   (long long)d->b.rows[d->ib + d->n - 1].step);
	if (!rc && whole)
		rc = gt_table_note(t, "Whole runs compared from their start (no steps aligned)");
	if (rc) {
		gt_table_free(t);
		return rc;
	}
	return gt_report_out_add(out, t);
}

int diff_breakdown(const struct gt_store *a, const struct gt_store *b, const struct gt_diff_opts *o,
		   struct gt_report_out *out, char *err, size_t errlen)
{
	struct gt_diff_steps d;
	int rc = gt_diff_steps_compute(a, b, o, &d, err, errlen);
	if (rc)
		return rc;
	if ((rc = gt_diff_steps_table(&d, out)))
		snprintf(err, errlen, "diff: out of memory");
	gt_diff_steps_done(&d);
	return rc;
}
