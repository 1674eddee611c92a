/*
 * overview_report.c - the "overview" report: environment, average step and
 * breakdown, utilization per GPU, top kernels, the input verdict and the
 * recommendations with their evidence.  With several ranks the breakdown is
 * over every rank's steps, the input verdict the worst rank's, and a table
 * gives each rank's average step, shares and verdict.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "gtrace/analysis.h"
#include "reports.h"
#include "tables.h"

/* the "overview" record: environment, steps, the average step's breakdown
 * (us and % of the step), utilization and the input verdict with the
 * largest non-GPU cost beside it; one row, numbers as numbers */
static const char *const env_cols[] = {
	"Ranks:i", "GPUs:i", "GPU streams:i", "Host threads:i", "Events:i",
	"Capture length (ms):f:3", "Dropped records:i", "Steps:i", "Step ranks:i",
	"First step:i", "Last step:i", "Step source", "Average step (us):f:1",
	"GPU utilization (%):p:2", "Input verdict", "Input (%):p:1", "Input verdict rank:i",
	"Largest non-GPU cost", "Largest non-GPU cost (%):p:1", NULL
};
#define ENV_NFIXED 19

static struct gt_table *env_table(const struct gt_overview_result *r)
{
	struct gt_table *t = tables_new("overview", "Overview", env_cols);
	if (!t)
		return NULL;
	t->flags |= GT_TABLE_RECORD;
	int rc = 0;
	for (int c = 0; c < GT_BD_NCAT && !rc; c++) {
		char nm[64];
		snprintf(nm, sizeof(nm), "%s (us)", gt_breakdown_cat_name(c));
		rc = gt_table_col(t, nm, GT_COL_FLOAT, 1) < 0;
		snprintf(nm, sizeof(nm), "%s (%%)", gt_breakdown_cat_name(c));
		rc = rc || gt_table_col(t, nm, GT_COL_PCT, 2) < 0;
	}
	long row = rc ? -1 : gt_table_row(t);
	if (row < 0)
		goto nomem;
	size_t w = (size_t)row;
	double avg = r->bd.avg_total_ns;
	double cost_pct = 0;
	enum gt_pipeline_host_cost cost = gt_pipeline_host_cost(&r->pl, &cost_pct);
	gt_table_set_int(t, w, 0, (int64_t)r->ranks);
	gt_table_set_int(t, w, 1, (int64_t)r->gpus);
	gt_table_set_int(t, w, 2, (int64_t)r->streams);
	gt_table_set_int(t, w, 3, (int64_t)r->host_threads);
	gt_table_set_int(t, w, 4, (int64_t)r->events);
	gt_table_set_float(t, w, 5, (double)(r->t1_ns - r->t0_ns) / 1e6);
	gt_table_set_int(t, w, 6, (int64_t)r->dropped);
	gt_table_set_int(t, w, 7, (int64_t)(r->nrk > 1 ? r->step_rows : r->nsteps));
	gt_table_set_int(t, w, 8, (int64_t)(r->nrk > 1 ? r->ranks_with_steps : r->nsteps > 0));
	if (r->step_lo >= 0) {
		gt_table_set_int(t, w, 9, r->step_lo);
		gt_table_set_int(t, w, 10, r->step_hi);
	}
	gt_table_set_float(t, w, 12, avg / 1e3);
	gt_table_set_float(t, w, 13, r->bd.gpu_util_pct);
	gt_table_set_float(t, w, 15, r->pl.input_pct);
	gt_table_set_int(t, w, 16, r->pl.rank);
	gt_table_set_float(t, w, 18, cost_pct);
	if (gt_table_set_str(t, w, 11, gt_steps_source_name(r->source)) ||
	    gt_table_set_str(t, w, 14, gt_pipeline_verdict_name(r->pl.verdict)) ||
	    gt_table_set_str(t, w, 17, gt_pipeline_host_cost_name(cost)))
		goto nomem;
	for (int c = 0; c < GT_BD_NCAT; c++) {
		gt_table_set_float(t, w, ENV_NFIXED + 2 * (size_t)c, r->bd.avg_ns[c] / 1e3);
		gt_table_set_float(t, w, ENV_NFIXED + 2 * (size_t)c + 1,
				   avg > 0 ? 100.0 * r->bd.avg_ns[c] / avg : 0);
	}
	char without[80] = "";
	if (r->ranks_with_steps && r->ranks_with_steps < r->nrk)
		snprintf(without, sizeof(without), " (%zu more without steps, left out)",
			 r->nrk - r->ranks_with_steps);
	if (r->nrk > 1 && !r->ranks_with_steps)
		rc = gt_table_note(t, "No steps in any of the %zu ranks: each rank's capture counts as "
				   "one step; the breakdown averages them (PyTorch TensorBoard plugin); "
				   "input pipeline of the worst rank, %d; each rank in the Per rank table",
				   r->nrk, r->pl.rank);
	else if (r->nrk > 1)
		rc = gt_table_note(t, "Breakdown of the average step over every step of %s%zu ranks%s "
				   "(PyTorch TensorBoard plugin); input pipeline of the worst rank, %d; each "
				   "rank in the Per rank table", r->ranks_with_steps == r->nrk ? "all " : "",
				   r->ranks_with_steps, without, r->pl.rank);
	else
		rc = gt_table_note(t, "Breakdown of rank %d's average step (PyTorch TensorBoard plugin)",
				   r->bd.rank);
	if (!rc)
		rc = gt_table_note(t, "Input pipeline: %s (TensorFlow Profiler thresholds, %.1f %% input); "
				   "the largest non-GPU cost is %s, %.1f %% of the step",
				   gt_pipeline_verdict_name(r->pl.verdict), r->pl.input_pct,
				   gt_pipeline_host_cost_name(cost), cost_pct);
	if (!rc)
		rc = gt_table_note(t, "Communication (us, %%) is exposed communication: collective time "
				   "not hidden under a kernel (the breakdown's priority); the multigpu "
				   "report's Comm/Step is total collective time");
	if (rc)
		goto nomem;
	return t;
nomem:
	gt_table_free(t);
	return NULL;
}

/* one row per rank: its average step, breakdown shares and input verdict */
static struct gt_table *rank_table(const struct gt_overview_result *r)
{
	static const char *const cols[] = {
		"Rank:i", "Steps:i", "Avg step (us):f:1", "Kernel %:p:2", "Exposed Comm %:p:2",
		"DataLoader %:p:2", "Input %:p:1", "Input verdict", "Largest non-GPU cost",
		"Largest non-GPU cost %:p:1", NULL
	};
	struct gt_table *t = tables_new("overview_ranks", "Per rank", cols);
	for (size_t i = 0; t && i < r->nrk; i++) {
		const struct gt_overview_rank *k = &r->rk[i];
		double avg = k->avg_step_ns > 0 ? k->avg_step_ns : 1;
		long row = gt_table_row(t);
		if (row < 0 || gt_table_set_str(t, (size_t)row, 7, k->no_steps ? "n/a (no steps)" :
						gt_pipeline_verdict_name(k->verdict))) {
			gt_table_free(t);
			return NULL;
		}
		gt_table_set_int(t, (size_t)row, 0, k->rank);
		gt_table_set_int(t, (size_t)row, 1, k->step0 >= 0 ? (int64_t)k->nsteps : 0);
		if (k->no_steps)         /* its capture is no step: nothing to average */
			continue;
		if (gt_table_set_str(t, (size_t)row, 8, gt_pipeline_host_cost_name(k->host_cost))) {
			gt_table_free(t);
			return NULL;
		}
		gt_table_set_float(t, (size_t)row, 9, k->host_cost_pct);
		gt_table_set_float(t, (size_t)row, 2, k->avg_step_ns / 1e3);
		gt_table_set_float(t, (size_t)row, 3, 100.0 * k->avg_ns[GT_BD_KERNEL] / avg);
		gt_table_set_float(t, (size_t)row, 4, 100.0 * k->avg_ns[GT_BD_COMM] / avg);
		gt_table_set_float(t, (size_t)row, 5, 100.0 * k->avg_ns[GT_BD_DATALOADER] / avg);
		gt_table_set_float(t, (size_t)row, 6, k->input_pct);
	}
	if (t && gt_table_note(t, "Each rank's own average step and input pipeline verdict "
			       "(TensorFlow Profiler thresholds) with its largest non-GPU cost; Exposed "
			       "Comm is collective time not under a kernel; a rank without steps "
			       "while others have them is left out of the averages and verdicts")) {
		gt_table_free(t);
		return NULL;
	}
	return t;
}

static struct gt_table *gpu_table(const struct gt_overview_result *r)
{
	static const char *const cols[] = {
		"Rank:i", "GPU:i", "Busy (%):p:2", "Compute (%):p:2", "Idle (%):p:2", "Kernels:i", NULL
	};
	struct gt_table *t = tables_new("overview_gpus", "GPU utilization", cols);
	for (size_t i = 0; t && i < r->gt.ngpus; i++) {
		const struct gt_gputime_gpu *g = &r->gt.gpus[i];
		long row = gt_table_row(t);
		if (row < 0) {
			gt_table_free(t);
			return NULL;
		}
		double sp = g->span_ns ? (double)g->span_ns : 1;
		gt_table_set_int(t, (size_t)row, 0, g->rank);
		gt_table_set_int(t, (size_t)row, 1, g->device);
		gt_table_set_float(t, (size_t)row, 2, 100.0 * (double)(g->span_ns - g->idle_ns) / sp);
		gt_table_set_float(t, (size_t)row, 3, 100.0 * (double)g->compute_ns / sp);
		gt_table_set_float(t, (size_t)row, 4, 100.0 * (double)g->idle_ns / sp);
		gt_table_set_int(t, (size_t)row, 5, (int64_t)g->kernels);
	}
	return t;
}

static struct gt_table *kern_table(const struct gt_store *s, const struct gt_overview_result *r)
{
	static const char *const cols[] = {
		"Time (%):p:1", "Total Time (us):f:1", "Instances:i", "Name", NULL
	};
	struct gt_table *t = tables_new("overview_kernels", "Top kernels", cols);
	for (size_t i = 0; t && i < r->ntop; i++) {
		long row = gt_table_row(t);
		if (row < 0 || gt_table_set_str(t, (size_t)row, 3, gt_store_str(s, r->top[i].name))) {
			gt_table_free(t);
			return NULL;
		}
		gt_table_set_float(t, (size_t)row, 0, r->top[i].pct);
		gt_table_set_float(t, (size_t)row, 1, (double)r->top[i].total_ns / 1e3);
		gt_table_set_int(t, (size_t)row, 2, (int64_t)r->top[i].count);
	}
	return t;
}

static struct gt_table *rec_table(const struct gt_overview_result *r)
{
	static const char *const sev[] = { "info", "warn", "high" };
	static const char *const cols[] = { "Severity", "Kind", "Recommendation", "Evidence", NULL };
	struct gt_table *t = tables_new("overview_recs", "Recommendations", cols);
	for (size_t i = 0; t && i < r->nrecs; i++) {
		const struct gt_overview_rec *x = &r->recs[i];
		char ev[96] = "";
		if (x->evidence == GT_OVERVIEW_EV_STEPS && x->rank < 0)
			snprintf(ev, sizeof(ev), "every rank, steps %lld-%lld", (long long)x->step0,
				 (long long)x->step1);
		else if (x->evidence == GT_OVERVIEW_EV_STEPS)
			snprintf(ev, sizeof(ev), "rank %d steps %lld-%lld", x->rank, (long long)x->step0,
				 (long long)x->step1);
		else if (x->evidence == GT_OVERVIEW_EV_GPU && x->step0 >= 0)
			snprintf(ev, sizeof(ev), "rank %d GPU %d, steps %lld-%lld", x->rank, x->gpu,
				 (long long)x->step0, (long long)x->step1);
		else if (x->evidence == GT_OVERVIEW_EV_GPU)
			snprintf(ev, sizeof(ev), "rank %d GPU %d", x->rank, x->gpu);
		else if (x->evidence == GT_OVERVIEW_EV_TIME)
			snprintf(ev, sizeof(ev), "%.3f-%.3f ms", (double)(x->t0_ns - r->t0_ns) / 1e6,
				 (double)(x->t1_ns - r->t0_ns) / 1e6);
		long row = gt_table_row(t);
		if (row < 0 || gt_table_set_str(t, (size_t)row, 0, sev[x->severity]) ||
		    gt_table_set_str(t, (size_t)row, 1, x->kind) ||
		    gt_table_set_str(t, (size_t)row, 2, x->text) ||
		    (ev[0] && gt_table_set_str(t, (size_t)row, 3, ev))) {
			gt_table_free(t);
			return NULL;
		}
	}
	if (t && !r->nrecs && gt_table_note(t, "No bottleneck found by the thresholds of docs/analyses.md")) {
		gt_table_free(t);
		return NULL;
	}
	return t;
}

int gt_overview_report(const struct gt_store *s, const struct gt_scope *sc,
		    struct gt_report_out *out, char *err, size_t errlen)
{
	struct gt_overview_result r;
	int rc = gt_overview_compute(s, sc, &r, err, errlen);
	if (rc)
		return rc;
	struct gt_table *t = env_table(&r);
	if (t && tables_scope_note(t, s, sc)) {
		gt_table_free(t);
		t = NULL;
	}
	rc = gt_report_out_add(out, t);
	if (!rc && r.nrk > 1)
		rc = gt_report_out_add(out, rank_table(&r));
	if (!rc)
		rc = gt_report_out_add(out, gpu_table(&r));
	if (!rc)
		rc = gt_report_out_add(out, kern_table(s, &r));
	if (!rc)
		rc = gt_report_out_add(out, rec_table(&r));
	gt_overview_result_done(&r);
	if (rc)
		snprintf(err, errlen, "overview: out of memory");
	return rc;
}

const struct gt_report gt_report_overview = {
	.name = "overview",
	.help = "environment, average step breakdown, GPU utilization, top kernels, input verdict and "
		"recommendations with evidence (TensorBoard overview; thresholds in docs/analyses.md)",
	.run = gt_overview_report,
};
