/*
 * multigpu_report.c - the "multigpu" report: per-GPU step compute, skew and
 * straggler, collective share and overlap, staggered starts, and copies
 * recurring at the same place every step.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "gtrace/analysis.h"
#include "reports.h"
#include "tables.h"

static struct gt_table *gpu_table(const struct gt_multigpu_result *r)
{
	static const char *const cols[] = {
		"Rank:i", "GPU:i", "Steps Slowest:i", "Skew (%):p:1", "Compute/Step (us):f:1",
		"Comm/Step (us):f:1", "Comm Share (%):p:1", "Comm Overlap (%):p:1",
		"Stagger Avg (us):f:1", "Stagger Max (us):f:1", "Stagger (%):p:2", "Parallel (%):p:1",
		"Comm/Expected (x):f:2", NULL
	};
	struct gt_table *t = tables_new("multigpu", "Multi-GPU health (TensorFlow GPU performance guide)",
					cols);
	for (size_t i = 0; t && i < r->ngpus; i++) {
		const struct gt_multigpu_gpu *g = &r->gpus[i];
		long row = gt_table_row(t);
		if (row < 0)
			goto nomem;
		size_t w = (size_t)row;
		gt_table_set_int(t, w, 0, g->rank);
		gt_table_set_int(t, w, 1, g->device);
		gt_table_set_int(t, w, 2, g->slowest);
		gt_table_set_float(t, w, 3, g->skew_pct);
		gt_table_set_float(t, w, 4, g->mean_compute_ns / 1e3);
		gt_table_set_float(t, w, 5, g->mean_comm_ns / 1e3);
		gt_table_set_float(t, w, 6, g->comm_share_pct);
		if (g->mean_comm_ns > 0)
			gt_table_set_float(t, w, 7, g->comm_overlap_pct);
		gt_table_set_float(t, w, 8, g->stagger_mean_ns / 1e3);
		gt_table_set_float(t, w, 9, g->stagger_max_ns / 1e3);
		gt_table_set_float(t, w, 10, g->stagger_pct);
		if (g->parallel_pct >= 0)
			gt_table_set_float(t, w, 11, g->parallel_pct);
		if (r->expected_comm_ns > 0 && g->mean_comm_ns > 0)
			gt_table_set_float(t, w, 12, g->comm_vs_expected);
	}
	if (!t)
		return NULL;
	int rc;
	if (r->separate_runs)
		rc = gt_table_note(t, "No straggler verdict: the ranks are separate runs (no time overlap or "
				   "different world sizes), not one job; compare them with gtrace diff A B");
	else if (r->straggler >= 0)
		rc = gt_table_note(t, "Straggler: rank %d GPU %d, compute %.1f %% above the other GPUs' mean, "
				   "slowest in %u of %zu steps", r->gpus[r->straggler].rank,
				   r->gpus[r->straggler].device, r->straggler_pct,
				   r->gpus[r->straggler].slowest, r->ncompared);
	else
		rc = gt_table_note(t, "No straggler: no GPU is the slowest in more than half of %zu steps",
				   r->nsteps);
	if (!rc)
		rc = gt_table_note(t, "Steps matched by number across ranks; mean step %.1f us; skew = "
				   "compute excess over the other GPUs' mean in the steps a GPU was slowest; "
				   "stagger = first kernel of the step after the earliest GPU's of its rank; parallel = how much "
				   "of the rank's GPU busy time overlaps (0 %% = sequential execution)",
				   r->mean_step_ns / 1e3);
	if (!rc)
		rc = gt_table_note(t, "Comm/Step is total collective time per step (overlapped or not); "
				   "Comm Overlap is the part under compute kernels; the breakdown's and the "
				   "overview's Communication is the exposed part only");
	if (!rc && r->expected_comm_ns > 0)
		rc = gt_table_note(t, "Expected all-reduce time: %.1f us per step (%llu parameter bytes at "
				   "%.6g GB/s); Comm/Expected = collective time per step over it",
				   r->expected_comm_ns / 1e3, (unsigned long long)r->param_bytes,
				   r->link_gbps);
	else if (!rc)
		rc = gt_table_note(t, "Expected all-reduce time: give --param-bytes and --link-gbps");
	if (!rc)
		return t;
nomem:
	gt_table_free(t);
	return NULL;
}

static struct gt_table *copy_table(const struct gt_multigpu_result *r)
{
	static const char *const cols[] = {
		"Rank:i", "GPU:i", "Kind", "Bytes:i", "Nth:i", "Steps:i", "Avg (us):f:1",
		"Offset in Step (us):f:1", NULL
	};
	struct gt_table *t = tables_new("multigpu_copies", "Copies recurring at the same place every step",
					cols);
	for (size_t i = 0; t && i < r->ncopies; i++) {
		const struct gt_multigpu_copy *c = &r->copies[i];
		long row = gt_table_row(t);
		if (row < 0 || gt_table_set_str(t, (size_t)row, 2, gt_copy_kind_name(c->kind)))
			goto nomem;
		size_t w = (size_t)row;
		gt_table_set_int(t, w, 0, c->rank);
		gt_table_set_int(t, w, 1, c->device);
		gt_table_set_int(t, w, 3, (int64_t)c->bytes);
		gt_table_set_int(t, w, 4, c->ordinal + 1);
		gt_table_set_int(t, w, 5, c->steps);
		gt_table_set_float(t, w, 6, c->mean_ns / 1e3);
		gt_table_set_float(t, w, 7, c->mean_offset_ns / 1e3);
	}
	if (t && !gt_table_note(t, "Copy time: %.1f %% of GPU step time", r->copy_share_pct))
		return t;
nomem:
	gt_table_free(t);
	return NULL;
}

int gt_multigpu_report(const struct gt_store *s, const struct gt_scope *sc,
		    struct gt_report_out *out, char *err, size_t errlen)
{
	struct gt_multigpu_result r;
	int rc = gt_multigpu_compute(s, sc, &r, err, errlen);
	if (rc)
		return rc;
	struct gt_table *t = gpu_table(&r);
	if (t && tables_scope_note(t, s, sc)) {
		gt_table_free(t);
		t = NULL;
	}
	rc = gt_report_out_add(out, t);
	if (!rc)
		rc = gt_report_out_add(out, copy_table(&r));
	gt_multigpu_result_done(&r);
	if (rc)
		snprintf(err, errlen, "multigpu: out of memory");
	return rc;
}

const struct gt_report gt_report_multigpu = {
	.name = "multigpu",
	.help = "per-GPU step compute and straggler skew, collective share and overlap, staggered "
		"step starts, recurring copies (TensorFlow GPU performance guide checklist)",
	.run = gt_multigpu_report,
};
