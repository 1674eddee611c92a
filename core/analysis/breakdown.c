/*
 * breakdown.c - the PyTorch TensorBoard plugin's step-time breakdown
 * (docs/analyses.md §3): inside the step windows each instant goes to the first
 * category covering it, Kernel > Memcpy > Memset > Communication > Runtime >
 * DataLoader > CPU Exec > Other.  The attribution is analysis_attr.c's, shared
 * with the input pipeline: this file holds the category table and the GPU
 * utilization (time covered by any kernel over the step time).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "analysis.h"
#include "interval.h"

static const char *const cat_names[GT_BD_NCAT] = {
	"Kernel", "Memcpy", "Memset", "Communication", "Runtime",
	"DataLoader", "CPU Exec", "Other"
};

const char *gt_breakdown_cat_name(enum gt_breakdown_cat c)
{
	return (unsigned)c < GT_BD_NCAT ? cat_names[c] : "?";
}

/* the fine classes (analysis.h) that make up each category but the last */
static const unsigned cat_mask[GT_BD_OTHER] = {
	ANALYSIS_FC_BIT(ANALYSIS_FC_KCOMP),
	ANALYSIS_FC_MEMCPY,
	ANALYSIS_FC_BIT(ANALYSIS_FC_MEMSET),
	ANALYSIS_FC_BIT(ANALYSIS_FC_KCOMM),
	ANALYSIS_FC_BIT(ANALYSIS_FC_RUNTIME) | ANALYSIS_FC_BIT(ANALYSIS_FC_RT_OTHER),   /* every runtime call */
	ANALYSIS_FC_BIT(ANALYSIS_FC_INPUT),
	ANALYSIS_FC_BIT(ANALYSIS_FC_CPU),
};

void gt_breakdown_result_done(struct gt_breakdown_result *r)
{
	free(r->rows);
	memset(r, 0, sizeof(*r));
}

int breakdown_compute_pass(const struct gt_store *s, int32_t rank,
			   const struct gt_steps_list *steps, const struct gt_scope *sc,
			   struct gt_breakdown_result *out, const struct analysis_pass *pass,
			   char *err, size_t errlen)
{
	struct gt_steps_list own = {0};
	struct analysis_attr at;
	int rc = 0;
	memset(out, 0, sizeof(*out));
	out->rank = rank;
	if (!steps) {
		if ((rc = gt_steps_find(s, rank, NULL, &own, err, errlen)))
			return rc;
		steps = &own;
	}
	out->source = steps->source;
	/* GPU utilization: time covered by any kernel (compute or NCCL) */
	if (analysis_attr_run(s, rank, steps, sc, pass, cat_mask, GT_BD_NCAT,
			      ANALYSIS_FC_BIT(ANALYSIS_FC_KCOMP) | ANALYSIS_FC_BIT(ANALYSIS_FC_KCOMM), &at))
		goto nomem;
	long nw = at.nw;
	if (!nw)
		goto done;
	out->rows = calloc((size_t)nw, sizeof(*out->rows));
	if (!out->rows)
		goto nomem;
	out->n = (size_t)nw;
	int64_t sum_any = 0, sum_total = 0;
	for (long i = 0; i < nw; i++) {
		struct gt_breakdown_row *r = &out->rows[i];
		r->step = at.win[i].step;
		r->t0_ns = at.win[i].t0;
		r->t1_ns = at.win[i].t1;
		r->total_ns = at.win[i].t1 - at.win[i].t0;
		for (int c = 0; c < GT_BD_NCAT; c++) {
			r->cat_ns[c] = at.cat_ns[i * GT_BD_NCAT + c];
			out->avg_ns[c] += (double)r->cat_ns[c];
		}
		r->kernel_any_ns = at.extra_ns[i];
		sum_any += r->kernel_any_ns;
		sum_total += r->total_ns;
	}
	for (int c = 0; c < GT_BD_NCAT; c++)
		out->avg_ns[c] /= (double)nw;
	out->avg_total_ns = (double)sum_total / (double)nw;
	out->gpu_util_pct = sum_total ? 100.0 * (double)sum_any / (double)sum_total : 0;
	goto done;
nomem:
	rc = -ENOMEM;
	if (err && errlen)
		snprintf(err, errlen, "breakdown: out of memory");
	gt_breakdown_result_done(out);
done:
	analysis_attr_done(&at);
	gt_steps_list_done(&own);
	return rc;
}

int gt_breakdown_compute(const struct gt_store *s, int32_t rank, const struct gt_steps_list *steps,
		      const struct gt_scope *sc, struct gt_breakdown_result *out,
		      char *err, size_t errlen)
{
	return breakdown_compute_pass(s, rank, steps, sc, out, NULL, err, errlen);
}
