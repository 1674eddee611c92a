/*
 * breakdown.c - the PyTorch TensorBoard plugin's step-time breakdown
 * (docs/analyses.md §3): inside the step windows each instant goes to the first
 * category covering it, Kernel > Memcpy > Memset > Communication > Runtime >
 * DataLoader > CPU Exec > Other.  Each category is an interval union of its
 * events (ivl_collect); the priority chain is intersections and differences
 * of those unions with the remaining window slots, so the cost is linear in
 * the events of the windows.
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
	struct anl_pass own_pass = {0};
	struct steps_list own = {0};
	struct anl_win *win = NULL;
	struct ivl_list slots = {0}, cost[BD_NCAT], cat[BD_NCAT], anyk = {0}, rest = {0};
	struct anl_names nm = {0};
	int rc = 0;
	memset(cost, 0, sizeof(cost));
	memset(cat, 0, sizeof(cat));
	memset(out, 0, sizeof(*out));
	out->rank = rank;
	if (!steps) {
		if ((rc = steps_find(s, rank, NULL, &own, err, errlen)))
			return rc;
		steps = &own;
	}
	out->source = steps->source;
	long nw = anl_windows(s, rank, steps, sc, &win);
	if (nw < 0 || anl_names_init(&nm, s))
		goto nomem;
	if (!nw)
		goto done;
	out->rows = calloc((size_t)nw, sizeof(*out->rows));
	if (!out->rows)
		goto nomem;
	out->n = (size_t)nw;
	for (long i = 0; i < nw; i++)
		if (ivl_push(&slots, win[i].t0, win[i].t1))
			goto nomem;
	int64_t T0 = win[0].t0, T1 = win[0].t1;
	for (long i = 1; i < nw; i++)
		if (win[i].t1 > T1)
			T1 = win[i].t1;
	int32_t gpu = sc ? sc->gpu : -1;
	if (!pass || !pass->has_host || pass->rank != rank || pass->gpu != gpu || pass->t0 > T0 || pass->t1 < T1) {
		if (anl_pass_build(s, rank, gpu, T0, T1, 1, &nm, &own_pass))
			goto nomem;
		pass = &own_pass;
	}
	const struct ivl_list *cp[BD_OTHER];
	for (int c = 0; c < BD_OTHER; c++)
		if (!(cp[c] = anl_pass_get(pass, cat_mask[c], 1, -1, &cat[c])))
			goto nomem;
	for (int c = 0; c < BD_OTHER; c++) {   /* the slots left go to the first category */
		if (ivl_split(&slots, cp[c], &cost[c], &rest))
			goto nomem;
		ivl_move(&slots, &rest);
	}
	ivl_move(&cost[BD_OTHER], &slots);
	if (ivl_union(cp[BD_KERNEL], cp[BD_COMM], &anyk))
		goto nomem;
	int64_t sum_any = 0, sum_total = 0;
	for (long i = 0; i < nw; i++) {
		struct breakdown_row *r = &out->rows[i];
		r->step = win[i].step;
		r->t0_ns = win[i].t0;
		r->t1_ns = win[i].t1;
		r->total_ns = win[i].t1 - win[i].t0;
		for (int c = 0; c < BD_NCAT; c++) {
			r->cat_ns[c] = ivl_len_in(&cost[c], r->t0_ns, r->t1_ns);
			out->avg_ns[c] += (double)r->cat_ns[c];
		}
		r->kernel_any_ns = ivl_len_in(&anyk, r->t0_ns, r->t1_ns);
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
	for (int c = 0; c < BD_NCAT; c++) {
		ivl_done(&cost[c]);
		ivl_done(&cat[c]);
	}
	ivl_done(&slots);
	ivl_done(&anyk);
	ivl_done(&rest);
	anl_names_done(&nm);
	free(win);
	anl_pass_done(&own_pass);
	steps_list_done(&own);
	return rc;
}

int breakdown_compute(const struct gt_store *s, int32_t rank, const struct steps_list *steps,
		      const struct gt_scope *sc, struct breakdown_result *out,
		      char *err, size_t errlen)
{
	return breakdown_compute_pass(s, rank, steps, sc, out, NULL, err, errlen);
}
