/*
 * overview_report.c - the "overview" report: environment, average step and
 * breakdown, utilization per GPU, top kernels, the input verdict and the
 * recommendations with their evidence.  With several ranks the breakdown is
 * over every rank's steps, the input verdict the worst rank's, and a table
 * gives each rank's average step, shares and verdict.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "gtrace/analysis.h"
#include "reports.h"
#include "tables.h"

static int kv(struct gt_table *t, const char *k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int kv(struct gt_table *t, const char *k, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	long r = gt_table_row(t);
	if (r < 0 || gt_table_set_str(t, (size_t)r, 0, k) || gt_table_set_str(t, (size_t)r, 1, buf))
		return -ENOMEM;
	return 0;
}

static struct gt_table *env_table(const struct overview_result *r)
{
	static const char *const cols[] = { "Item", "Value", NULL };
	struct gt_table *t = tables_new("overview", "Overview", cols);
	if (!t)
		return NULL;
	double avg = r->bd.avg_total_ns;
	char without[80] = "";
	if (r->ranks_with_steps && r->ranks_with_steps < r->nrk)
		snprintf(without, sizeof(without), " (%zu more without steps, left out)",
			 r->nrk - r->ranks_with_steps);
	int rc = kv(t, "Ranks", "%zu", r->ranks) || kv(t, "GPUs", "%zu", r->gpus) ||
		 kv(t, "GPU streams", "%zu", r->streams) || kv(t, "Host threads", "%zu", r->host_threads) ||
		 kv(t, "Events", "%llu", (unsigned long long)r->events) ||
		 kv(t, "Capture length", "%.3f ms", (double)(r->t1_ns - r->t0_ns) / 1e6) ||
		 kv(t, "Dropped records", "%llu", (unsigned long long)r->dropped) ||
		 (r->nrk > 1 && r->step_lo >= 0
			  ? kv(t, "Steps", "%zu over %zu ranks%s, numbered %lld-%lld (%s)", r->step_rows,
			       r->ranks_with_steps, without, (long long)r->step_lo, (long long)r->step_hi,
			       steps_source_name(r->source))
			  : r->nrk > 1 ? kv(t, "Steps", "none in any of %zu ranks: each rank's capture "
					    "counts as one step", r->nrk)
			  : kv(t, "Steps", "%zu (%s)", r->nsteps, steps_source_name(r->source))) ||
		 kv(t, "Average step", "%.1f us", avg / 1e3) ||
		 kv(t, "GPU utilization", "%.2f %%", r->bd.gpu_util_pct) ||
		 (r->nrk > 1 ? kv(t, "Input pipeline", "%s (%.1f %% input; worst rank, %d)",
				  pipeline_verdict_name(r->pl.verdict), r->pl.input_pct, r->pl.rank)
			     : kv(t, "Input pipeline", "%s (%.1f %% input)",
				  pipeline_verdict_name(r->pl.verdict), r->pl.input_pct));
	for (int c = 0; c < BD_NCAT && !rc; c++)
		rc = kv(t, breakdown_cat_name(c), "%.1f us (%.2f %%)", r->bd.avg_ns[c] / 1e3,
			avg > 0 ? 100.0 * r->bd.avg_ns[c] / avg : 0);
	if (!rc && r->nrk > 1 && !r->ranks_with_steps)
		rc = gt_table_note(t, "No steps in any of the %zu ranks: the breakdown averages each rank's "
				   "whole capture (PyTorch TensorBoard plugin); input pipeline of the worst "
				   "rank, %d; each rank in the Per rank table", r->nrk, r->pl.rank);
	else if (!rc && r->nrk > 1)
		rc = gt_table_note(t, "Breakdown of the average step over every step of %s%zu ranks%s "
				   "(PyTorch TensorBoard plugin); input pipeline of the worst rank, %d; each "
				   "rank in the Per rank table", r->ranks_with_steps == r->nrk ? "all " : "",
				   r->ranks_with_steps, without, r->pl.rank);
	else if (!rc)
		rc = gt_table_note(t, "Breakdown of rank %d's average step (PyTorch TensorBoard plugin)",
				   r->bd.rank);
	if (rc) {
		gt_table_free(t);
		return NULL;
	}
	return t;
}

/* one row per rank: its average step, breakdown shares and input verdict */
static struct gt_table *rank_table(const struct overview_result *r)
{
	static const char *const cols[] = {
		"Rank:i", "Steps:i", "Avg step (us):f:1", "Kernel %:p:2", "Communication %:p:2",
		"DataLoader %:p:2", "Input %:p:1", "Input verdict", NULL
	};
	struct gt_table *t = tables_new("overview_ranks", "Per rank", cols);
	for (size_t i = 0; t && i < r->nrk; i++) {
		const struct overview_rank *k = &r->rk[i];
		double avg = k->avg_step_ns > 0 ? k->avg_step_ns : 1;
		long row = gt_table_row(t);
		if (row < 0 || gt_table_set_str(t, (size_t)row, 7, k->no_steps ? "n/a (no steps)" :
						pipeline_verdict_name(k->verdict))) {
			gt_table_free(t);
			return NULL;
		}
		gt_table_set_int(t, (size_t)row, 0, k->rank);
		gt_table_set_int(t, (size_t)row, 1, k->step0 >= 0 ? (int64_t)k->nsteps : 0);
		if (k->no_steps)         /* its capture is no step: nothing to average */
			continue;
		gt_table_set_float(t, (size_t)row, 2, k->avg_step_ns / 1e3);
		gt_table_set_float(t, (size_t)row, 3, 100.0 * k->avg_ns[BD_KERNEL] / avg);
		gt_table_set_float(t, (size_t)row, 4, 100.0 * k->avg_ns[BD_COMM] / avg);
		gt_table_set_float(t, (size_t)row, 5, 100.0 * k->avg_ns[BD_DATALOADER] / avg);
		gt_table_set_float(t, (size_t)row, 6, k->input_pct);
	}
	if (t && gt_table_note(t, "Each rank's own average step and input pipeline verdict "
			       "(TensorFlow Profiler thresholds); a rank without steps while others "
			       "have them is left out of the averages and verdicts")) {
		gt_table_free(t);
		return NULL;
	}
	return t;
}

static struct gt_table *gpu_table(const struct overview_result *r)
{
	static const char *const cols[] = {
		"Rank:i", "GPU:i", "Busy (%):p:2", "Compute (%):p:2", "Idle (%):p:2", "Kernels:i", NULL
	};
	struct gt_table *t = tables_new("overview_gpus", "GPU utilization", cols);
	for (size_t i = 0; t && i < r->gt.ngpus; i++) {
		const struct gputime_gpu *g = &r->gt.gpus[i];
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

static struct gt_table *kern_table(const struct gt_store *s, const struct overview_result *r)
{
	static const char *const cols[] = {
		"Time (%):p:1", "Total Time (us):f:1", "Instances:i", "Name", NULL
	};
	struct gt_table *t = tables_new("overview_kernels", "Top kernels", cols);
	for (size_t i = 0; t && i < r->ntop; i++) {
		long row = gt_table_row(t);
		if (row < 0 || gt_table_set_str(t, (size_t)row, 3, store_str(s, r->top[i].name))) {
			gt_table_free(t);
			return NULL;
		}
		gt_table_set_float(t, (size_t)row, 0, r->top[i].pct);
		gt_table_set_float(t, (size_t)row, 1, (double)r->top[i].total_ns / 1e3);
		gt_table_set_int(t, (size_t)row, 2, (int64_t)r->top[i].count);
	}
	return t;
}

static struct gt_table *rec_table(const struct overview_result *r)
{
	static const char *const sev[] = { "info", "warn", "high" };
	static const char *const cols[] = { "Severity", "Kind", "Recommendation", "Evidence", NULL };
	struct gt_table *t = tables_new("overview_recs", "Recommendations", cols);
	for (size_t i = 0; t && i < r->nrecs; i++) {
		const struct overview_rec *x = &r->recs[i];
		char ev[96] = "";
		if (x->evidence == OVERVIEW_EV_STEPS && x->rank < 0)
			snprintf(ev, sizeof(ev), "every rank, steps %lld-%lld", (long long)x->step0,
				 (long long)x->step1);
		else if (x->evidence == OVERVIEW_EV_STEPS)
			snprintf(ev, sizeof(ev), "rank %d steps %lld-%lld", x->rank, (long long)x->step0,
				 (long long)x->step1);
		else if (x->evidence == OVERVIEW_EV_GPU)
			snprintf(ev, sizeof(ev), "rank %d GPU %d", x->rank, x->gpu);
		else if (x->evidence == OVERVIEW_EV_TIME)
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

int overview_report(const struct gt_store *s, const struct gt_scope *sc,
		    struct gt_report_out *out, char *err, size_t errlen)
{
	struct overview_result r;
	int rc = overview_compute(s, sc, &r, err, errlen);
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
	overview_result_done(&r);
	if (rc)
		snprintf(err, errlen, "overview: out of memory");
	return rc;
}

const struct gt_report gt_report_overview = {
	.name = "overview",
	.help = "environment, average step breakdown, GPU utilization, top kernels, input verdict and "
		"recommendations with evidence (TensorBoard overview; thresholds in docs/analyses.md)",
	.run = overview_report,
};
