/*
 * breakdown_report.c - the "breakdown" report: the TensorBoard plugin's
 * step-time breakdown table (us) per step then Average, its percentages and
 * GPU utilization, one pair of tables per rank in the scope.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "gtrace/analysis.h"
#include "reports.h"
#include "tables.h"
#include "anl.h"

static const char *const us_cols[] = {
	"Step", "Kernel (us):f:1", "Memcpy (us):f:1", "Memset (us):f:1",
	"Communication (us):f:1", "Runtime (us):f:1", "DataLoader (us):f:1",
	"CPU Exec (us):f:1", "Other (us):f:1", "Total (us):f:1", NULL
};
static const char *const pct_cols[] = {
	"Step", "Kernel (%):p:2", "Memcpy (%):p:2", "Memset (%):p:2",
	"Communication (%):p:2", "Runtime (%):p:2", "DataLoader (%):p:2",
	"CPU Exec (%):p:2", "Other (%):p:2", "Total (us):f:1", NULL
};

static int put_row(struct gt_table *t, const char *label, const double *v, double total, int pct)
{
	long r = gt_table_row(t);
	if (r < 0 || gt_table_set_str(t, (size_t)r, 0, label))
		return -ENOMEM;
	for (int c = 0; c < BD_NCAT; c++)
		gt_table_set_float(t, (size_t)r, (size_t)c + 1,
				   pct ? (total > 0 ? 100.0 * v[c] / total : 0) : v[c] / 1e3);
	gt_table_set_float(t, (size_t)r, BD_NCAT + 1, total / 1e3);
	return 0;
}

static int rank_tables(const struct gt_store *s, const struct gt_scope *sc, int32_t rank,
		       int multi, struct gt_report_out *out, char *err, size_t errlen)
{
	struct breakdown_result r;
	int rc = breakdown_compute(s, rank, NULL, sc, &r, err, errlen);
	if (rc)
		return rc;
	char title[128];
	snprintf(title, sizeof(title), "Step-time breakdown (PyTorch TensorBoard plugin)");
	if (multi)
		snprintf(title, sizeof(title), "Step-time breakdown, rank %d (PyTorch TensorBoard plugin)", rank);
	struct gt_table *t = tables_new("breakdown", title, us_cols);
	struct gt_table *tp = tables_new("breakdown_pct", "Step-time breakdown (% of step)", pct_cols);
	rc = (t && tp) ? 0 : -ENOMEM;
	for (size_t i = 0; i < r.n && !rc; i++) {
		char lab[32];
		double v[BD_NCAT];
		if (r.rows[i].step < 0)
			snprintf(lab, sizeof(lab), "all");
		else
			snprintf(lab, sizeof(lab), "%lld", (long long)r.rows[i].step);
		for (int c = 0; c < BD_NCAT; c++)
			v[c] = (double)r.rows[i].cat_ns[c];
		rc = put_row(t, lab, v, (double)r.rows[i].total_ns, 0);
		if (!rc)
			rc = put_row(tp, lab, v, (double)r.rows[i].total_ns, 1);
	}
	if (!rc && r.n) {
		rc = put_row(t, "Average", r.avg_ns, r.avg_total_ns, 0);
		if (!rc)
			rc = put_row(tp, "Average", r.avg_ns, r.avg_total_ns, 1);
	}
	if (!rc && r.n)
		rc = gt_table_note(t, "GPU Utilization: %.2f %% (time covered by any kernel / "
				   "total step time)", r.gpu_util_pct);
	if (!rc && !r.n)
		rc = gt_table_note(t, "No events in the scope");
	if (!rc)
		rc = gt_table_note(t, "Rank %d steps: %s%s", rank, steps_source_name(r.source),
				   r.source == STEPS_SRC_NONE ? " (whole scope as one window)" : "");
	if (!rc)
		rc = tables_scope_note(t, s, sc);
	breakdown_result_done(&r);
	if (!rc) {
		rc = gt_report_out_add(out, t);
		t = NULL;
		if (!rc)
			rc = gt_report_out_add(out, tp);
		tp = NULL;
	}
	gt_table_free(t);
	gt_table_free(tp);
	return rc;
}

int breakdown_report(const struct gt_store *s, const struct gt_scope *sc,
		     struct gt_report_out *out, char *err, size_t errlen)
{
	int32_t *ranks = NULL;
	long nr = anl_scope_ranks(s, sc, &ranks);
	int rc = nr < 0 ? -ENOMEM : 0;
	for (long i = 0; i < nr && !rc; i++)
		rc = rank_tables(s, sc, ranks[i], nr > 1, out, err, errlen);
	free(ranks);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "breakdown: out of memory");
	return rc;
}

const struct gt_report gt_report_breakdown = {
	.name = "breakdown",
	.help = "step-time breakdown Kernel > Memcpy > Memset > Communication > Runtime > "
		"DataLoader > CPU Exec > Other, per step and Average (PyTorch TensorBoard plugin)",
	.run = breakdown_report,
};
