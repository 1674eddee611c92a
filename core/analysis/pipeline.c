/*
 * pipeline.c - the TensorFlow Profiler's Input Pipeline Analyzer on a
 * step trace (docs/analyses.md §4).  Each instant of a step window goes to the
 * first category covering it: device compute > host-to-device input >
 * device-to-device/collectives > output (D2H) > host waiting for input
 * (DataLoader ranges) > kernel launch (kernel and graph launch calls) >
 * host compute (CPU ops, Python, the other runtime and driver calls:
 * allocation, synchronization, copies) > all others.  Input = H2D + host wait.  The run is HIGHLY
 * input-bound at >= 20 % input, MODERATELY at >= 5 %, POTENTIALLY (I/O or
 * Python) when below that but all-others (host compute + unknown) >= 3 %.
 * The attribution is analysis_attr.c's, shared with the step-time breakdown:
 * this file holds the category table, the verdict and the advice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "analysis.h"
#include "interval.h"

static const char *const cat_names[GT_PL_NCAT] = {
	"Device compute", "Input: host-to-device", "Device-to-device & collectives",
	"Output: device-to-host", "Input: host wait", "Kernel launch",
	"Host compute", "All others"
};

const char *gt_pipeline_cat_name(enum gt_pipeline_cat c)
{
	return (unsigned)c < GT_PL_NCAT ? cat_names[c] : "?";
}

const char *gt_pipeline_verdict_name(enum gt_pipeline_verdict v)
{
	switch (v) {
	case GT_PL_HIGHLY: return "HIGHLY input-bound";
	case GT_PL_MODERATELY: return "MODERATELY input-bound";
	case GT_PL_POTENTIALLY: return "POTENTIALLY input-bound (I/O or Python)";
	default: return "NOT input-bound";
	}
}

/* the fine classes (analysis.h) that make up each category but the last */
static const unsigned cat_mask[GT_PL_OTHER] = {
	ANALYSIS_FC_BIT(ANALYSIS_FC_KCOMP) | ANALYSIS_FC_BIT(ANALYSIS_FC_MEMSET),
	ANALYSIS_FC_BIT(ANALYSIS_FC_H2D),
	ANALYSIS_FC_BIT(ANALYSIS_FC_KCOMM) | ANALYSIS_FC_BIT(ANALYSIS_FC_COPY),
	ANALYSIS_FC_BIT(ANALYSIS_FC_D2H),
	ANALYSIS_FC_BIT(ANALYSIS_FC_INPUT),
	ANALYSIS_FC_BIT(ANALYSIS_FC_RUNTIME) | ANALYSIS_FC_BIT(ANALYSIS_FC_DRIVER),     /* launch calls only */
	ANALYSIS_FC_BIT(ANALYSIS_FC_CPU) | ANALYSIS_FC_BIT(ANALYSIS_FC_RT_OTHER) | ANALYSIS_FC_BIT(ANALYSIS_FC_DRV_OTHER),
};

void gt_pipeline_result_done(struct gt_pipeline_result *r)
{
	free(r->rows);
	memset(r, 0, sizeof(*r));
}

static int level(double pct)
{
	return pct >= 15.0 ? 2 : pct >= 3.0 ? 1 : 0;
}

static void classify(struct gt_pipeline_result *out, const double *sum, double total)
{
	for (int c = 0; c < GT_PL_NCAT; c++)
		out->avg_pct[c] = total > 0 ? 100.0 * sum[c] / total : 0;
	out->input_pct = out->avg_pct[GT_PL_H2D] + out->avg_pct[GT_PL_HOST_WAIT];
	out->launch_pct = out->avg_pct[GT_PL_LAUNCH];
	out->others_pct = out->avg_pct[GT_PL_HOST_COMPUTE] + out->avg_pct[GT_PL_OTHER];
	out->launch_level = level(out->launch_pct);
	out->others_level = level(out->others_pct);
	if (out->input_pct >= 20.0)
		out->verdict = GT_PL_HIGHLY;
	else if (out->input_pct >= 5.0)
		out->verdict = GT_PL_MODERATELY;
	else if (out->others_pct >= 3.0)
		out->verdict = GT_PL_POTENTIALLY;
	else
		out->verdict = GT_PL_NOT;
	/* worst steps by input share */
	for (size_t k = 0; k < 3 && k < out->n; k++) {
		size_t best = SIZE_MAX;
		for (size_t i = 0; i < out->n; i++) {
			int taken = 0;
			for (size_t j = 0; j < k; j++)
				taken |= out->worst[j] == i;
			if (!taken && (best == SIZE_MAX || out->rows[i].input_pct > out->rows[best].input_pct))
				best = i;
		}
		out->worst[k] = best;
		out->nworst = k + 1;
	}
}

int pipeline_compute_pass(const struct gt_store *s, int32_t rank,
			   const struct gt_steps_list *steps, const struct gt_scope *sc,
			   struct gt_pipeline_result *out, const struct analysis_pass *pass,
			   char *err, size_t errlen)
{
	struct gt_steps_list own = {0};
	struct analysis_attr at;
	double sum[GT_PL_NCAT] = {0}, total = 0;
	int rc = 0;
	memset(out, 0, sizeof(*out));
	out->rank = rank;
	if (!steps) {
		if ((rc = gt_steps_find(s, rank, NULL, &own, err, errlen)))
			return rc;
		steps = &own;
	}
	if (analysis_attr_run(s, rank, steps, sc, pass, cat_mask, GT_PL_NCAT, 0, &at))
		goto nomem;
	long nw = at.nw;
	if (!nw)
		goto done;
	out->rows = calloc((size_t)nw, sizeof(*out->rows));
	if (!out->rows)
		goto nomem;
	out->n = (size_t)nw;
	for (long i = 0; i < nw; i++) {
		struct gt_pipeline_row *r = &out->rows[i];
		r->step = at.win[i].step;
		r->t0_ns = at.win[i].t0;
		r->t1_ns = at.win[i].t1;
		r->total_ns = r->t1_ns - r->t0_ns;
		for (int c = 0; c < GT_PL_NCAT; c++) {
			r->cat_ns[c] = at.cat_ns[i * GT_PL_NCAT + c];
			sum[c] += (double)r->cat_ns[c];
		}
		total += (double)r->total_ns;
		r->input_pct = r->total_ns ? 100.0 * (double)(r->cat_ns[GT_PL_H2D] + r->cat_ns[GT_PL_HOST_WAIT]) /
					     (double)r->total_ns : 0;
	}
	classify(out, sum, total);
	goto done;
nomem:
	rc = -ENOMEM;
	if (err && errlen)
		snprintf(err, errlen, "pipeline: out of memory");
	gt_pipeline_result_done(out);
done:
	analysis_attr_done(&at);
	gt_steps_list_done(&own);
	return rc;
}

int gt_pipeline_compute(const struct gt_store *s, int32_t rank, const struct gt_steps_list *steps,
		     const struct gt_scope *sc, struct gt_pipeline_result *out,
		     char *err, size_t errlen)
{
	return pipeline_compute_pass(s, rank, steps, sc, out, NULL, err, errlen);
}

enum gt_pipeline_host_cost gt_pipeline_host_cost(const struct gt_pipeline_result *r, double *pct)
{
	double v[4] = { r->input_pct, r->avg_pct[GT_PL_LAUNCH], r->avg_pct[GT_PL_HOST_COMPUTE],
			r->avg_pct[GT_PL_OTHER] };
	int best = 0;
	for (int i = 1; i < 4; i++)
		if (v[i] > v[best])
			best = i;
	if (pct)
		*pct = v[best];
	return (enum gt_pipeline_host_cost)best;
}

int gt_pipeline_verdict_why(const struct gt_pipeline_result *r, char *buf, size_t len)
{
	if (r->verdict == GT_PL_POTENTIALLY)
		return snprintf(buf, len, "input %.1f %%; all others (host compute + unaccounted) "
				"%.1f %% >= 3 %%", r->input_pct, r->others_pct);
	return snprintf(buf, len, "input %.1f %%", r->input_pct);
}

const char *gt_pipeline_host_cost_name(enum gt_pipeline_host_cost c)
{
	static const char *const names[] = { "input", "kernel launch",
					     "host compute (Python, CPU ops)", "unaccounted host time" };
	return (unsigned)c < 4 ? names[c] : "?";
}

size_t gt_pipeline_advice(const struct gt_pipeline_result *r, char lines[][GT_PIPELINE_ADVICE_LEN],
		       size_t max)
{
	size_t n = 0;
#define ADD(...) do { if (n < max) snprintf(lines[n++], GT_PIPELINE_ADVICE_LEN, __VA_ARGS__); } while (0)
	if (r->verdict >= GT_PL_MODERATELY) {
		ADD("Input takes %.1f %% of the step (host wait %.1f %%, host-to-device %.1f %%):",
		    r->input_pct, r->avg_pct[GT_PL_HOST_WAIT], r->avg_pct[GT_PL_H2D]);
		ADD("- load in parallel: raise DataLoader num_workers (tf.data: num_parallel_calls)");
		ADD("- prefetch the next batches (prefetch_factor, tf.data prefetch) so loading overlaps compute");
		ADD("- cache decoded samples and use a faster data format (e.g. WebDataset, FFCV, TFRecord)");
		if (r->avg_pct[GT_PL_H2D] >= 1.0)
			ADD("- use pinned memory (pin_memory=True) and non_blocking copies for host-to-device input");
	} else if (r->verdict == GT_PL_POTENTIALLY) {
		ADD("%.1f %% of the step is 'all others' (host compute %.1f %%, unaccounted %.1f %%): "
		    "likely I/O or Python; profile the host side", r->others_pct,
		    r->avg_pct[GT_PL_HOST_COMPUTE], r->avg_pct[GT_PL_OTHER]);
	} else {
		ADD("The input pipeline is not the bottleneck (%.1f %% input)", r->input_pct);
	}
	if (r->launch_level)
		ADD("Kernel launch is %s (%.1f %% of the step): fuse small ops (torch.compile, XLA) "
		    "or capture CUDA graphs", r->launch_level == 2 ? "high" : "moderate", r->launch_pct);
#undef ADD
	return n;
}
