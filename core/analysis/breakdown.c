/*
 * breakdown.c - the PyTorch TensorBoard plugin's step-time breakdown
 * (docs/analyses.md §3): inside the step windows each instant goes to the first
 * category covering it, Kernel > Memcpy > Memset > Communication > Runtime >
 * DataLoader > CPU Exec > Other.  The attribution is anl_attr.c's, shared
 * with the input pipeline: this file holds the category table and the GPU
 * utilization (time covered by any kernel over the step time).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "anl.h"
#include "ivl.h"

static const char *const cat_names[BD_NCAT] = {
	"Kernel", "Memcpy", "Memset", "Communication", "Runtime",
	"DataLoader", "CPU Exec", "Other"
};

const char *breakdown_cat_name(enum breakdown_cat c)
{
	return (unsigned)c < BD_NCAT ? cat_names[c] : "?";
}

/* the fine classes (anl.h) that make up each category but the last */
static const unsigned cat_mask[BD_OTHER] = {
	ANL_FC_BIT(ANL_FC_KCOMP),
	ANL_FC_MEMCPY,
	ANL_FC_BIT(ANL_FC_MEMSET),
	ANL_FC_BIT(ANL_FC_KCOMM),
	ANL_FC_BIT(ANL_FC_RUNTIME) | ANL_FC_BIT(ANL_FC_RT_OTHER),   /* every runtime call */
	ANL_FC_BIT(ANL_FC_INPUT),
	ANL_FC_BIT(ANL_FC_CPU),
};

void breakdown_result_done(struct breakdown_result *r)
{
	free(r->rows);
	memset(r, 0, sizeof(*r));
}

int breakdown_compute_pass(const struct gt_store *s, int32_t rank,
			   const struct steps_list *steps, const struct gt_scope *sc,
			   struct breakdown_result *out, const struct anl_pass *pass,
			   char *err, size_t errlen)
{
	struct steps_list own = {0};
	struct anl_attr at;
	struct ivl_list tmp = {0};
	int rc = 0;
	memset(out, 0, sizeof(*out));
	out->rank = rank;
	if (!steps) {
		if ((rc = steps_find(s, rank, NULL, &own, err, errlen)))
			return rc;
		steps = &own;
	}
	out->source = steps->source;
	if (anl_attr_run(s, rank, steps, sc, pass, cat_mask, BD_NCAT, &at))
		goto nomem;
	long nw = at.nw;
	if (!nw)
		goto done;
	out->rows = calloc((size_t)nw, sizeof(*out->rows));
	/* GPU utilization: time covered by any kernel (compute or NCCL) */
	const struct ivl_list *anyk = anl_pass_get(at.pass, ANL_FC_BIT(ANL_FC_KCOMP) |
						   ANL_FC_BIT(ANL_FC_KCOMM), 1, -1, &tmp);
	if (!out->rows || !anyk)
		goto nomem;
	out->n = (size_t)nw;
	int64_t sum_any = 0, sum_total = 0;
	for (long i = 0; i < nw; i++) {
		struct breakdown_row *r = &out->rows[i];
		r->step = at.win[i].step;
		r->t0_ns = at.win[i].t0;
		r->t1_ns = at.win[i].t1;
		r->total_ns = at.win[i].t1 - at.win[i].t0;
		for (int c = 0; c < BD_NCAT; c++) {
			r->cat_ns[c] = at.cat_ns[i * BD_NCAT + c];
			out->avg_ns[c] += (double)r->cat_ns[c];
		}
		r->kernel_any_ns = ivl_len_in(anyk, r->t0_ns, r->t1_ns);
		sum_any += r->kernel_any_ns;
		sum_total += r->total_ns;
	}
	for (int c = 0; c < BD_NCAT; c++)
		out->avg_ns[c] /= (double)nw;
	out->avg_total_ns = (double)sum_total / (double)nw;
	out->gpu_util_pct = sum_total ? 100.0 * (double)sum_any / (double)sum_total : 0;
	goto done;
nomem:
	rc = -ENOMEM;
	if (err && errlen)
		snprintf(err, errlen, "breakdown: out of memory");
	breakdown_result_done(out);
done:
	ivl_done(&tmp);
	anl_attr_done(&at);
	steps_list_done(&own);
	return rc;
}

int breakdown_compute(const struct gt_store *s, int32_t rank, const struct steps_list *steps,
		      const struct gt_scope *sc, struct breakdown_result *out,
		      char *err, size_t errlen)
{
	return breakdown_compute_pass(s, rank, steps, sc, out, NULL, err, errlen);
}
