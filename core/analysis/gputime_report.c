/*
 * gputime_report.c - the "gputime" report: HTA temporal breakdown (CSV
 * Rank,GPU,Idle (us),Compute (us),Non-compute (us),Span (us) then
 * percentages), idle time per stream by category with the queue length,
 * communication/compute overlap and kernel launch statistics.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "gtrace/analysis.h"
#include "reports.h"
#include "tables.h"

static double us(int64_t ns)
{
	return (double)ns / 1e3;
}

static double pct(double a, double b)
{
	return b > 0 ? 100.0 * a / b : 0;
}

static struct gt_table *temporal(const struct gt_gputime_result *r)
{
	static const char *const cols[] = {
		"Rank:i", "GPU:i", "Idle (us):f:1", "Compute (us):f:1", "Non-compute (us):f:1",
		"Span (us):f:1", "Idle (%):p:2", "Compute (%):p:2", "Non-compute (%):p:2", NULL
	};
	struct gt_table *t = tables_new("gputime", "GPU temporal breakdown (Holistic Trace Analysis)", cols);
	for (size_t i = 0; t && i < r->ngpus; i++) {
		const struct gt_gputime_gpu *g = &r->gpus[i];
		long row = gt_table_row(t);
		if (row < 0) {
			gt_table_free(t);
			return NULL;
		}
		size_t w = (size_t)row;
		double sp = (double)g->span_ns;
		gt_table_set_int(t, w, 0, g->rank);
		gt_table_set_int(t, w, 1, g->device);
		gt_table_set_float(t, w, 2, us(g->idle_ns));
		gt_table_set_float(t, w, 3, us(g->compute_ns));
		gt_table_set_float(t, w, 4, us(g->noncompute_ns));
		gt_table_set_float(t, w, 5, us(g->span_ns));
		gt_table_set_float(t, w, 6, pct((double)g->idle_ns, sp));
		gt_table_set_float(t, w, 7, pct((double)g->compute_ns, sp));
		gt_table_set_float(t, w, 8, pct((double)g->noncompute_ns, sp));
	}
	if (t && gt_table_note(t, "span = last kernel end - first kernel start; idle = span - "
			       "busy; compute = non-communication kernels (HTA definitions)")) {
		gt_table_free(t);
		return NULL;
	}
	return t;
}

static struct gt_table *streams(const struct gt_gputime_result *r)
{
	static const char *const cols[] = {
		"Rank:i", "GPU:i", "Stream:i", "Gaps:i", "Host Wait (us):f:1", "Kernel Wait (us):f:1",
		"Other Idle (us):f:1", "Queue Max:i", "Queue Mean:f:2", "At 1024 (us):f:1", NULL
	};
	struct gt_table *t = tables_new("gputime_idle", "Idle time per stream and queue length (HTA)", cols);
	for (size_t i = 0; t && i < r->nstreams; i++) {
		const struct gt_gputime_stream *st = &r->streams[i];
		long row = gt_table_row(t);
		if (row < 0) {
			gt_table_free(t);
			return NULL;
		}
		size_t w = (size_t)row;
		gt_table_set_int(t, w, 0, st->rank);
		gt_table_set_int(t, w, 1, st->device);
		gt_table_set_int(t, w, 2, st->stream);
		gt_table_set_int(t, w, 3, (int64_t)st->gaps);
		gt_table_set_float(t, w, 4, us(st->host_wait_ns));
		gt_table_set_float(t, w, 5, us(st->kernel_wait_ns));
		gt_table_set_float(t, w, 6, us(st->other_ns));
		gt_table_set_int(t, w, 7, st->queue_max);
		gt_table_set_float(t, w, 8, st->queue_mean);
		gt_table_set_float(t, w, 9, us(st->at_max_ns));
	}
	if (t && gt_table_note(t, "host wait: the next launch call started after the previous "
			       "activity ended; kernel wait: gap < 30 us; queue = launched - completed")) {
		gt_table_free(t);
		return NULL;
	}
	return t;
}

static struct gt_table *launches(const struct gt_gputime_result *r)
{
	static const char *const cols[] = {
		"Rank:i", "GPU:i", "Kernels:i", "Comm (us):f:1", "Comm Overlap (%):p:2",
		"Launch Avg (us):f:2", "Launch Med (us):f:2", "GPU Avg (us):f:2", "GPU Med (us):f:2",
		"Delay Avg (us):f:2", "Delay Med (us):f:2", "Delay Max (us):f:1",
		"Short Kernels:i", "Under 10 us (%):p:1", "Runtime > 50 us:i", "Delay > 100 us:i", NULL
	};
	struct gt_table *t = tables_new("gputime_launch",
					"Kernel launch statistics and communication overlap (HTA)", cols);
	for (size_t i = 0; t && i < r->ngpus; i++) {
		const struct gt_gputime_gpu *g = &r->gpus[i];
		long row = gt_table_row(t);
		if (row < 0) {
			gt_table_free(t);
			return NULL;
		}
		size_t w = (size_t)row;
		gt_table_set_int(t, w, 0, g->rank);
		gt_table_set_int(t, w, 1, g->device);
		gt_table_set_int(t, w, 2, (int64_t)g->kernels);
		gt_table_set_float(t, w, 3, us(g->comm_ns));
		if (g->comm_ns)
			gt_table_set_float(t, w, 4, pct((double)g->comm_overlap_ns, (double)g->comm_ns));
		if (g->launches) {
			double n = (double)g->launches;
			gt_table_set_float(t, w, 5, (double)g->cpu_launch_sum_ns / n / 1e3);
			gt_table_set_float(t, w, 6, us(g->cpu_launch_med_ns));
			gt_table_set_float(t, w, 9, (double)g->delay_sum_ns / n / 1e3);
			gt_table_set_float(t, w, 10, us(g->delay_med_ns));
			gt_table_set_float(t, w, 11, us(g->delay_max_ns));
			gt_table_set_int(t, w, 12, (int64_t)g->short_kernels);
			gt_table_set_int(t, w, 14, (int64_t)g->runtime_outliers);
			gt_table_set_int(t, w, 15, (int64_t)g->delay_outliers);
		}
		if (g->kernels) {
			gt_table_set_float(t, w, 7, (double)g->gpu_dur_sum_ns / (double)g->kernels / 1e3);
			gt_table_set_float(t, w, 8, us(g->gpu_dur_med_ns));
			gt_table_set_float(t, w, 13, pct((double)g->under_10us, (double)g->kernels));
		}
	}
	if (t && (gt_table_note(t, "delay = GPU start - launch call end (floored at 0); short kernels run "
				"shorter than their launch call; runtime outliers: launch calls over 50 us") ||
		  gt_table_note(t, "Comm is total communication kernel time (overlapped or not); Comm "
				"Overlap the share of it under compute kernels"))) {
		gt_table_free(t);
		return NULL;
	}
	return t;
}

int gt_gputime_report(const struct gt_store *s, const struct gt_scope *sc,
		   struct gt_report_out *out, char *err, size_t errlen)
{
	struct gt_gputime_result r;
	int rc = gt_gputime_compute(s, sc, &r, err, errlen);
	if (rc)
		return rc;
	struct gt_table *t = temporal(&r);
	if (t && tables_scope_note(t, s, sc)) {
		gt_table_free(t);
		t = NULL;
	}
	rc = gt_report_out_add(out, t);
	if (!rc)
		rc = gt_report_out_add(out, streams(&r));
	if (!rc)
		rc = gt_report_out_add(out, launches(&r));
	gt_gputime_result_done(&r);
	if (rc)
		snprintf(err, errlen, "gputime: out of memory");
	return rc;
}

const struct gt_report gt_report_gputime = {
	.name = "gputime",
	.help = "GPU temporal breakdown, idle time per stream, comm/compute overlap, kernel launch "
		"statistics and queue length (Holistic Trace Analysis definitions)",
	.run = gt_gputime_report,
};
