/*
 * breakdown_report.c - the "breakdown" report: the TensorBoard plugin's
 * step-time breakdown table (us) per step then Average, its percentages and
 * GPU utilization: two tables (us, %) holding every rank of the scope,
 * told apart by their Rank column.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "reports.h"
#include "tables.h"
#include "analysis.h"

static const char *const us_cols[] = {
	"Rank:i", "Step:k", "Row", "Kernel (us):f:1", "Memcpy (us):f:1", "Memset (us):f:1",
	"Communication (us):f:1", "Runtime (us):f:1", "DataLoader (us):f:1",
	"CPU Exec (us):f:1", "Other (us):f:1", "Total (us):f:1", NULL
};
static const char *const pct_cols[] = {
	"Rank:i", "Step:k", "Row", "Kernel (%):p:2", "Memcpy (%):p:2", "Memset (%):p:2",
	"Communication (%):p:2", "Runtime (%):p:2", "DataLoader (%):p:2",
	"CPU Exec (%):p:2", "Other (%):p:2", "Total (us):f:1", NULL
};

/* one row: Rank, Step (null unless the row is one step), Row (what the
 * row is: "step", "whole capture" without steps, "average"), the categories
 * (us or % of total), Total (us); step < 0 with kind "step" is the whole
 * capture */
static int put_row(struct gt_table *t, int32_t rank, int64_t step, const char *kind,
		   const double *v, double total, int pct)
{
	long r = gt_table_row(t);
	if (r < 0)
		return -ENOMEM;
	int whole = step < 0 && !strcmp(kind, "step");
	if (gt_table_set_str(t, (size_t)r, 2, whole ? "whole capture" : kind))
		return -ENOMEM;
	gt_table_set_int(t, (size_t)r, 0, rank);
	if (step >= 0)
		gt_table_set_int(t, (size_t)r, 1, step);
	for (int c = 0; c < GT_BD_NCAT; c++)
		gt_table_set_float(t, (size_t)r, (size_t)c + 3,
				   pct ? (total > 0 ? 100.0 * v[c] / total : 0) : v[c] / 1e3);
	gt_table_set_float(t, (size_t)r, GT_BD_NCAT + 3, total / 1e3);
	return 0;
}

/* rank's rows (steps, then Average) into t (us) and tp (%), its notes into t */
static int rank_rows(const struct gt_store *s, const struct gt_scope *sc, int32_t rank,
		     struct gt_table *t, struct gt_table *tp, char *err, size_t errlen)
{
	struct gt_breakdown_result r;
	int rc = gt_breakdown_compute(s, rank, NULL, sc, &r, err, errlen);
	if (rc)
		return rc;
	for (size_t i = 0; i < r.n && !rc; i++) {
		double v[GT_BD_NCAT];
		for (int c = 0; c < GT_BD_NCAT; c++)
			v[c] = (double)r.rows[i].cat_ns[c];
		rc = put_row(t, rank, r.rows[i].step, "step", v, (double)r.rows[i].total_ns, 0);
		if (!rc)
			rc = put_row(tp, rank, r.rows[i].step, "step", v, (double)r.rows[i].total_ns, 1);
	}
	if (!rc && r.n) {
		rc = put_row(t, rank, -1, "average", r.avg_ns, r.avg_total_ns, 0);
		if (!rc)
			rc = put_row(tp, rank, -1, "average", r.avg_ns, r.avg_total_ns, 1);
	}
	if (!rc && r.n)
		rc = gt_table_note(t, "Rank %d GPU Utilization: %.2f %% (time covered by any kernel / "
				   "total step time)", rank, r.gpu_util_pct);
	if (!rc && !r.n)
		rc = gt_table_note(t, "Rank %d: no events in the scope", rank);
	if (!rc)
		rc = gt_table_note(t, "Rank %d steps: %s%s", rank, gt_steps_source_name(r.source),
				   r.source == GT_STEPS_SRC_NONE ? " (whole scope as one window)" : "");
	gt_breakdown_result_done(&r);
	return rc;
}

/* two tables, every rank's rows in each, told apart by the Rank column:
 * breakdown (us) and breakdown_pct (% of the step) */
int gt_breakdown_report(const struct gt_store *s, const struct gt_scope *sc,
		     struct gt_report_out *out, char *err, size_t errlen)
{
	int32_t *ranks = NULL;
	long nr = analysis_scope_ranks(s, sc, &ranks);
	struct gt_table *t = tables_new("breakdown", "Step-time breakdown (PyTorch TensorBoard plugin)",
					us_cols);
	struct gt_table *tp = tables_new("breakdown_pct", "Step-time breakdown (% of step)", pct_cols);
	int rc = nr < 0 || !t || !tp ? -ENOMEM : 0;
	for (long i = 0; i < nr && !rc; i++)
		rc = rank_rows(s, sc, ranks[i], t, tp, err, errlen);
	free(ranks);
	if (!rc)
		rc = gt_table_note(t, "Communication is exposed communication: collective time not under a "
				   "kernel, copy or memset (the categories' priority); the multigpu "
				   "report's Comm/Step is the total");
	if (!rc)
		rc = tables_scope_note(t, s, sc);
	rc = tables_out_pair(out, rc, t, tp);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "breakdown: out of memory");
	return rc;
}

const struct gt_report gt_report_breakdown = {
	.name = "breakdown",
	.help = "step-time breakdown Kernel > Memcpy > Memset > Communication > Runtime > "
		"DataLoader > CPU Exec > Other, per step and Average (PyTorch TensorBoard plugin)",
	.run = gt_breakdown_report,
};
