/*
 * pipeline_report.c - the "pipeline" report: per-step stacked breakdown of
 * the input-pipeline categories (us), the verdict with the TensorFlow
 * Profiler's thresholds, the worst steps and what to try: one table
 * holding every rank of the scope, told apart by its Rank column.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "gtrace/analysis.h"
#include "reports.h"
#include "tables.h"
#include "analysis.h"

static const char *const cols[] = {
	"Rank:i", "Step:k", "Row", "Device Compute (us):f:1", "Input H2D (us):f:1",
	"Device-to-Device & Collectives (us):f:1", "Output D2H (us):f:1",
	"Input Host Wait (us):f:1", "Kernel Launch (us):f:1", "Host Compute (us):f:1",
	"All Others (us):f:1", "Total (us):f:1", "Input (%):p:1", NULL
};

/* one row: Rank, Step (null unless the row is one step), Row ("step",
 * "whole capture" for a step < 0, "average"), the categories (us), Total
 * (us), Input (%) */
static int put_row(struct gt_table *t, int32_t rank, int64_t step, int avg, const double *v,
		   double total, double in)
{
	long r = gt_table_row(t);
	if (r < 0 || gt_table_set_str(t, (size_t)r, 2, avg ? "average" : step < 0 ? "whole capture" : "step"))
		return -ENOMEM;
	gt_table_set_int(t, (size_t)r, 0, rank);
	if (!avg && step >= 0)
		gt_table_set_int(t, (size_t)r, 1, step);
	for (int c = 0; c < GT_PL_NCAT; c++)
		gt_table_set_float(t, (size_t)r, (size_t)c + 3, v[c] / 1e3);
	gt_table_set_float(t, (size_t)r, GT_PL_NCAT + 3, total / 1e3);
	gt_table_set_float(t, (size_t)r, GT_PL_NCAT + 4, in);
	return 0;
}

/* the verdict, launch and others levels, worst steps and advice of one
 * rank; each line starts with "Rank R: " when the table holds several */
static int notes(struct gt_table *t, const struct gt_pipeline_result *r, const char *who)
{
	static const char *const lv[] = { "low", "moderate", "high" };
	char adv[8][GT_PIPELINE_ADVICE_LEN];
	char why[160];
	gt_pipeline_verdict_why(r, why, sizeof(why));
	int rc = gt_table_note(t, "%sVerdict: %s (%s of step time; thresholds: HIGHLY >= 20 %% input, "
			       "MODERATELY >= 5 %%, POTENTIALLY when all others >= 3 %%)",
			       who, gt_pipeline_verdict_name(r->verdict), why);
	double cost_pct = 0;
	enum gt_pipeline_host_cost cost = gt_pipeline_host_cost(r, &cost_pct);
	if (!rc)
		rc = gt_table_note(t, "%sLargest non-GPU cost: %s, %.1f %% of the step", who,
				   gt_pipeline_host_cost_name(cost), cost_pct);
	if (!rc)
		rc = gt_table_note(t, "%sKernel launch: %.1f %% (%s); all others: %.1f %% (%s) "
				   "(moderate >= 3 %%, high >= 15 %%)", who, r->launch_pct, lv[r->launch_level],
				   r->others_pct, lv[r->others_level]);
	if (!rc && r->nworst && r->rows[r->worst[0]].step >= 0) {
		char buf[256];
		size_t o = 0;
		for (size_t i = 0; i < r->nworst && o < sizeof(buf); i++) {
			const struct gt_pipeline_row *w = &r->rows[r->worst[i]];
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%lld (%.1f %%)", i ? ", " : "",
					      (long long)w->step, w->input_pct);
		}
		rc = gt_table_note(t, "%sWorst steps by input: %s", who, buf);
	}
	size_t na = gt_pipeline_advice(r, adv, 8);
	for (size_t i = 0; i < na && !rc; i++)
		rc = gt_table_note(t, "%s%s", who, adv[i]);
	return rc;
}

/* rank's rows (steps, then Average) and notes into t */
static int rank_rows(const struct gt_store *s, const struct gt_scope *sc, int32_t rank,
		     int multi, struct gt_table *t, char *err, size_t errlen)
{
	struct gt_pipeline_result r;
	int rc = gt_pipeline_compute(s, rank, NULL, sc, &r, err, errlen);
	if (rc)
		return rc;
	char who[32] = "";
	if (multi)
		snprintf(who, sizeof(who), "Rank %d: ", rank);
	double sum[GT_PL_NCAT] = {0}, total = 0;
	for (size_t i = 0; i < r.n && !rc; i++) {
		double v[GT_PL_NCAT];
		for (int c = 0; c < GT_PL_NCAT; c++) {
			v[c] = (double)r.rows[i].cat_ns[c];
			sum[c] += v[c] / (double)r.n;
		}
		total += (double)r.rows[i].total_ns / (double)r.n;
		rc = put_row(t, rank, r.rows[i].step, 0, v, (double)r.rows[i].total_ns, r.rows[i].input_pct);
	}
	if (!rc && r.n)
		rc = put_row(t, rank, -1, 1, sum, total, r.input_pct);
	if (!rc)
		rc = r.n ? notes(t, &r, who) : gt_table_note(t, "%sNo events in the scope", who);
	gt_pipeline_result_done(&r);
	return rc;
}

/* one table, every rank's rows told apart by the Rank column */
int gt_pipeline_report(const struct gt_store *s, const struct gt_scope *sc,
		    struct gt_report_out *out, char *err, size_t errlen)
{
	int32_t *ranks = NULL;
	long nr = analysis_scope_ranks(s, sc, &ranks);
	struct gt_table *t = tables_new("pipeline", "Input pipeline analysis (TensorFlow Profiler)", cols);
	int rc = nr < 0 || !t ? -ENOMEM : 0;
	for (long i = 0; i < nr && !rc; i++)
		rc = rank_rows(s, sc, ranks[i], nr > 1, t, err, errlen);
	free(ranks);
	if (!rc)
		rc = gt_table_note(t, "Device-to-Device & Collectives is exposed: time not under device "
				   "compute or host-to-device input; the multigpu report's Comm/Step is "
				   "total collective time");
	if (!rc)
		rc = tables_scope_note(t, s, sc);
	if (!rc)
		rc = gt_report_out_add(out, t);
	else
		gt_table_free(t);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "pipeline: out of memory");
	return rc;
}

const struct gt_report gt_report_pipeline = {
	.name = "pipeline",
	.help = "input-pipeline analysis and verdict (HIGHLY/MODERATELY/POTENTIALLY/NOT input-bound) "
		"with the TensorFlow Profiler's Input Pipeline Analyzer thresholds",
	.run = gt_pipeline_report,
};
