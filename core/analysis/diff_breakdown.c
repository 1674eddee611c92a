/*
 * diff_breakdown.c - `gtrace diff --report breakdown`: both runs' step-time
 * breakdowns (gt_breakdown_compute, the TensorBoard plugin's rules), steps
 * aligned as gtrace/diff.h says, the average aligned step compared per
 * category and the aligned steps side by side.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "gtrace/diff.h"
#include "diff_priv.h"
#include "tables.h"

/* the breakdown of one run; 0 or negative errno */
static int run_breakdown(const struct gt_store *s, int32_t rank, const struct gt_diff_opts *o,
			 struct gt_breakdown_result *r, char *err, size_t errlen)
{
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_steps_list none = { .rank = rank, .source = GT_STEPS_SRC_NONE };
	return gt_breakdown_compute(s, rank, o->align == GT_DIFF_ALIGN_START ? &none : NULL, &sc, r,
				 err, errlen);
}

/* index of the first aligned row; -1 when step is missing */
static long first_row(const struct gt_breakdown_result *r, const struct gt_diff_opts *o)
{
	if (o->align != GT_DIFF_ALIGN_STEP)
		return 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->rows[i].step == o->step)
			return (long)i;
	return -1;
}

static const char *const step_cols[] = {
	"Baseline Step:i", "Experiment Step:i", "Baseline (us):f:1", "Experiment (us):f:1",
	"Delta (us):f:1", "Kernel Delta (us):f:1", "Memcpy Delta (us):f:1",
	"Memset Delta (us):f:1", "Communication Delta (us):f:1", "Runtime Delta (us):f:1",
	"DataLoader Delta (us):f:1", "CPU Exec Delta (us):f:1", "Other Delta (us):f:1", NULL
};

static const char *const avg_cols[] = {
	"Category", "Baseline (us):f:1", "Experiment (us):f:1", "Delta (us):f:1",
	"Delta (%):p:2", NULL
};

static int avg_row(struct gt_table *t, const char *cat, double a_ns, double b_ns)
{
	long r = gt_table_row(t);
	if (r < 0 || gt_table_set_str(t, (size_t)r, 0, cat))
		return -ENOMEM;
	gt_table_set_float(t, (size_t)r, 1, a_ns / 1e3);
	gt_table_set_float(t, (size_t)r, 2, b_ns / 1e3);
	gt_table_set_float(t, (size_t)r, 3, (b_ns - a_ns) / 1e3);
	if (a_ns > 0)
		gt_table_set_float(t, (size_t)r, 4, 100.0 * (b_ns - a_ns) / a_ns);
	return 0;
}

static int tables(const struct gt_breakdown_result *ra, const struct gt_breakdown_result *rb,
		  size_t ia, size_t ib, size_t np, struct gt_report_out *out)
{
	struct gt_table *t = tables_new("diff_breakdown", "Step-time breakdown of the average "
					"aligned step: baseline vs experiment", avg_cols);
	struct gt_table *ts = tables_new("diff_steps", "Aligned steps side by side", step_cols);
	int rc = t && ts ? 0 : -ENOMEM;
	double sa[GT_BD_NCAT + 1] = { 0 }, sb[GT_BD_NCAT + 1] = { 0 };
	for (size_t k = 0; k < np && !rc; k++) {
		const struct gt_breakdown_row *x = &ra->rows[ia + k], *y = &rb->rows[ib + k];
		long r = gt_table_row(ts);
		if (r < 0) {
			rc = -ENOMEM;
			break;
		}
		if (x->step >= 0)
			gt_table_set_int(ts, (size_t)r, 0, x->step);
		if (y->step >= 0)
			gt_table_set_int(ts, (size_t)r, 1, y->step);
		gt_table_set_float(ts, (size_t)r, 2, (double)x->total_ns / 1e3);
		gt_table_set_float(ts, (size_t)r, 3, (double)y->total_ns / 1e3);
		gt_table_set_float(ts, (size_t)r, 4, (double)(y->total_ns - x->total_ns) / 1e3);
		for (int c = 0; c < GT_BD_NCAT; c++) {
			gt_table_set_float(ts, (size_t)r, (size_t)c + 5,
					   (double)(y->cat_ns[c] - x->cat_ns[c]) / 1e3);
			sa[c] += (double)x->cat_ns[c];
			sb[c] += (double)y->cat_ns[c];
		}
		sa[GT_BD_NCAT] += (double)x->total_ns;
		sb[GT_BD_NCAT] += (double)y->total_ns;
	}
	for (int c = 0; c <= GT_BD_NCAT && !rc; c++)
		rc = avg_row(t, c < GT_BD_NCAT ? gt_breakdown_cat_name((enum gt_breakdown_cat)c) : "Total",
			     sa[c] / (double)np, sb[c] / (double)np);
	if (!rc) {
		const struct gt_breakdown_row *a0 = &ra->rows[ia], *b0 = &rb->rows[ib];
		if (a0->step >= 0 && b0->step >= 0)
			rc = gt_table_note(t, "Average of %zu aligned steps: baseline %lld..%lld, "
					   "experiment %lld..%lld", np, (long long)a0->step,
					   (long long)ra->rows[ia + np - 1].step, (long long)b0->step,
					   (long long)rb->rows[ib + np - 1].step);
		else
			rc = gt_table_note(t, "Whole runs compared from their start (no steps aligned)");
	}
	return tables_out_pair(out, rc, t, ts);
}

/* one run's breakdown, for a thread */
struct job {
	const struct gt_store *s;
	const struct gt_diff_opts *o;
	struct gt_breakdown_result r;
	int rc;
	char err[256];
};

static void *job_run(void *arg)
{
	struct job *j = arg;
	j->rc = run_breakdown(j->s, diff_rank(j->s, j->o), j->o, &j->r, j->err, sizeof(j->err));
	return NULL;
}

int diff_breakdown(const struct gt_store *a, const struct gt_store *b, const struct gt_diff_opts *o,
		   struct gt_report_out *out, char *err, size_t errlen)
{
	/* the experiment on a second thread while this one does the baseline */
	struct gt_diff_opts oa = diff_side(o, 0), ob = diff_side(o, 1);
	struct job ja = { .s = a, .o = &oa }, jb = { .s = b, .o = &ob };
	diff_run_both(job_run, &ja, &jb);
	struct gt_breakdown_result ra = ja.r, rb = jb.r;
	int rc = ja.rc ? ja.rc : jb.rc;
	if (rc)
		snprintf(err, errlen, "%s", ja.rc ? ja.err : jb.err);
	long ia = rc ? 0 : first_row(&ra, o), ib = rc ? 0 : first_row(&rb, o);
	if (!rc && (ia < 0 || ib < 0)) {
		snprintf(err, errlen, "step %lld is not in the %s run", (long long)o->step,
			 ia < 0 ? "baseline" : "experiment");
		rc = -EINVAL;
	}
	size_t np = 0;
	if (!rc) {
		size_t la = ra.n - (size_t)ia, lb = rb.n - (size_t)ib;
		np = la < lb ? la : lb;
		if (!np) {
			snprintf(err, errlen, "no step of the %s run to compare",
				 la ? "experiment" : "baseline");
			rc = -EINVAL;
		}
	}
	if (!rc && (rc = tables(&ra, &rb, (size_t)ia, (size_t)ib, np, out)))
		snprintf(err, errlen, "diff: out of memory");
	gt_breakdown_result_done(&ra);
	gt_breakdown_result_done(&rb);
	return rc;
}
