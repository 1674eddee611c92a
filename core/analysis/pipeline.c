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
 * The attribution is anl_attr.c's, shared with the step-time breakdown:
 * this file holds the category table, the verdict and the advice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "anl.h"
#include "ivl.h"

static const char *const cat_names[PL_NCAT] = {
	"Device compute", "Input: host-to-device", "Device-to-device & collectives",
	"Output: device-to-host", "Input: host wait", "Kernel launch",
	"Host compute", "All others"
};

const char *pipeline_cat_name(enum pipeline_cat c)
{
	return (unsigned)c < PL_NCAT ? cat_names[c] : "?";
}

const char *pipeline_verdict_name(enum pipeline_verdict v)
{
	switch (v) {
	case PL_HIGHLY: return "HIGHLY input-bound";
	case PL_MODERATELY: return "MODERATELY input-bound";
	case PL_POTENTIALLY: return "POTENTIALLY input-bound (I/O or Python)";
	default: return "NOT input-bound";
	}
}

/* the fine classes (anl.h) that make up each category but the last */
static const unsigned cat_mask[PL_OTHER] = {
	ANL_FC_BIT(ANL_FC_KCOMP) | ANL_FC_BIT(ANL_FC_MEMSET),
	ANL_FC_BIT(ANL_FC_H2D),
	ANL_FC_BIT(ANL_FC_KCOMM) | ANL_FC_BIT(ANL_FC_COPY),
	ANL_FC_BIT(ANL_FC_D2H),
	ANL_FC_BIT(ANL_FC_INPUT),
	ANL_FC_BIT(ANL_FC_RUNTIME) | ANL_FC_BIT(ANL_FC_DRIVER),     /* launch calls only */
	ANL_FC_BIT(ANL_FC_CPU) | ANL_FC_BIT(ANL_FC_RT_OTHER) | ANL_FC_BIT(ANL_FC_DRV_OTHER),
};

void pipeline_result_done(struct pipeline_result *r)
{
	free(r->rows);
	memset(r, 0, sizeof(*r));
}

static int level(double pct)
{
	return pct >= 15.0 ? 2 : pct >= 3.0 ? 1 : 0;
}

static void classify(struct pipeline_result *out, const double *sum, double total)
{
	for (int c = 0; c < PL_NCAT; c++)
		out->avg_pct[c] = total > 0 ? 100.0 * sum[c] / total : 0;
	out->input_pct = out->avg_pct[PL_H2D] + out->avg_pct[PL_HOST_WAIT];
	out->launch_pct = out->avg_pct[PL_LAUNCH];
	out->others_pct = out->avg_pct[PL_HOST_COMPUTE] + out->avg_pct[PL_OTHER];
	out->launch_level = level(out->launch_pct);
	out->others_level = level(out->others_pct);
	if (out->input_pct >= 20.0)
		out->verdict = PL_HIGHLY;
	else if (out->input_pct >= 5.0)
		out->verdict = PL_MODERATELY;
	else if (out->others_pct >= 3.0)
		out->verdict = PL_POTENTIALLY;
	else
		out->verdict = PL_NOT;
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
			   const struct steps_list *steps, const struct gt_scope *sc,
			   struct pipeline_result *out, const struct anl_pass *pass,
			   char *err, size_t errlen)
{
	struct steps_list own = {0};
	struct anl_attr at;
	double sum[PL_NCAT] = {0}, total = 0;
	int rc = 0;
	memset(out, 0, sizeof(*out));
	out->rank = rank;
	if (!steps) {
		if ((rc = steps_find(s, rank, NULL, &own, err, errlen)))
			return rc;
		steps = &own;
	}
	if (anl_attr_run(s, rank, steps, sc, pass, cat_mask, PL_NCAT, &at))
		goto nomem;
	long nw = at.nw;
	if (!nw)
		goto done;
	out->rows = calloc((size_t)nw, sizeof(*out->rows));
	if (!out->rows)
		goto nomem;
	out->n = (size_t)nw;
	for (long i = 0; i < nw; i++) {
		struct pipeline_row *r = &out->rows[i];
		r->step = at.win[i].step;
		r->t0_ns = at.win[i].t0;
		r->t1_ns = at.win[i].t1;
		r->total_ns = r->t1_ns - r->t0_ns;
		for (int c = 0; c < PL_NCAT; c++) {
			r->cat_ns[c] = at.cat_ns[i * PL_NCAT + c];
			sum[c] += (double)r->cat_ns[c];
		}
		total += (double)r->total_ns;
		r->input_pct = r->total_ns ? 100.0 * (double)(r->cat_ns[PL_H2D] + r->cat_ns[PL_HOST_WAIT]) /
					     (double)r->total_ns : 0;
	}
	classify(out, sum, total);
	goto done;
nomem:
	rc = -ENOMEM;
	if (err && errlen)
		snprintf(err, errlen, "pipeline: out of memory");
	pipeline_result_done(out);
done:
	anl_attr_done(&at);
	steps_list_done(&own);
	return rc;
}

int pipeline_compute(const struct gt_store *s, int32_t rank, const struct steps_list *steps,
		     const struct gt_scope *sc, struct pipeline_result *out,
		     char *err, size_t errlen)
{
	return pipeline_compute_pass(s, rank, steps, sc, out, NULL, err, errlen);
}

enum pipeline_host_cost pipeline_host_cost(const struct pipeline_result *r, double *pct)
{
	double v[4] = { r->input_pct, r->avg_pct[PL_LAUNCH], r->avg_pct[PL_HOST_COMPUTE],
			r->avg_pct[PL_OTHER] };
	int best = 0;
	for (int i = 1; i < 4; i++)
		if (v[i] > v[best])
			best = i;
	if (pct)
		*pct = v[best];
	return (enum pipeline_host_cost)best;
}

int pipeline_verdict_why(const struct pipeline_result *r, char *buf, size_t len)
{
	if (r->verdict == PL_POTENTIALLY)
		return snprintf(buf, len, "input %.1f %%; all others (host compute + unaccounted) "
				"%.1f %% >= 3 %%", r->input_pct, r->others_pct);
	return snprintf(buf, len, "input %.1f %%", r->input_pct);
}

const char *pipeline_host_cost_name(enum pipeline_host_cost c)
{
	static const char *const names[] = { "input", "kernel launch",
					     "host compute (Python, CPU ops)", "unaccounted host time" };
	return (unsigned)c < 4 ? names[c] : "?";
}

size_t pipeline_advice(const struct pipeline_result *r, char lines[][PIPELINE_ADVICE_LEN],
		       size_t max)
{
	size_t n = 0;
#define ADD(...) do { if (n < max) snprintf(lines[n++], PIPELINE_ADVICE_LEN, __VA_ARGS__); } while (0)
	if (r->verdict >= PL_MODERATELY) {
		ADD("Input takes %.1f %% of the step (host wait %.1f %%, host-to-device %.1f %%):",
		    r->input_pct, r->avg_pct[PL_HOST_WAIT], r->avg_pct[PL_H2D]);
		ADD("- load in parallel: raise DataLoader num_workers (tf.data: num_parallel_calls)");
		ADD("- prefetch the next batches (prefetch_factor, tf.data prefetch) so loading overlaps compute");
		ADD("- cache decoded samples and use a faster data format (e.g. WebDataset, FFCV, TFRecord)");
		if (r->avg_pct[PL_H2D] >= 1.0)
			ADD("- use pinned memory (pin_memory=True) and non_blocking copies for host-to-device input");
	} else if (r->verdict == PL_POTENTIALLY) {
		ADD("%.1f %% of the step is 'all others' (host compute %.1f %%, unaccounted %.1f %%): "
		    "likely I/O or Python; profile the host side", r->others_pct,
		    r->avg_pct[PL_HOST_COMPUTE], r->avg_pct[PL_OTHER]);
	} else {
		ADD("The input pipeline is not the bottleneck (%.1f %% input)", r->input_pct);
	}
	if (r->launch_level)
		ADD("Kernel launch is %s (%.1f %% of the step): fuse small ops (torch.compile, XLA) "
		    "or capture CUDA graphs", r->launch_level == 2 ? "high" : "moderate", r->launch_pct);
#undef ADD
	return n;
}
