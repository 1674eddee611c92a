/*
 * analysis_attr.c - priority attribution over step windows, the one pass behind
 * the step-time breakdown (docs/analyses.md §3) and the input pipeline (§4).
 *
 * A category table is an ordered list of fine-class masks (enum analysis_fc,
 * analysis.h).  Each instant of a rank's step windows in the scope goes to the
 * first category whose classes cover it; the instants no category covers go
 * to one last category (the rest: "Other", "All others").  Each category is
 * an interval union taken from one shared pass (analysis_pass.c); the chain is
 * differences of those unions with the window slots left, so the cost is
 * linear in the intervals.  The two analyses differ only in their tables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analysis.h"
#include "interval.h"

void analysis_attr_done(struct analysis_attr *a)
{
	free(a->win);
	free(a->cat_ns);
	analysis_pass_done(&a->own);
	analysis_names_done(&a->nm);
	memset(a, 0, sizeof(*a));
}

/* the rank's pass over [t0, t1): the caller's when it covers that, else own */
static int use_pass(const struct gt_store *s, int32_t rank, int32_t gpu, int64_t t0, int64_t t1,
		    const struct analysis_pass *pass, struct analysis_attr *a)
{
	if (pass && pass->has_host && pass->rank == rank && pass->gpu == gpu && pass->t0 <= t0 &&
	    pass->t1 >= t1) {
		a->pass = pass;
		return 0;
	}
	if (analysis_names_init(&a->nm, s) || analysis_pass_build(s, rank, gpu, t0, t1, 1, &a->nm, &a->own))
		return -ENOMEM;
	a->pass = &a->own;
	return 0;
}

int analysis_attr_run(const struct gt_store *s, int32_t rank, const struct gt_steps_list *steps,
		 const struct gt_scope *sc, const struct analysis_pass *pass,
		 const unsigned *mask, int ncat, struct analysis_attr *out)
{
	struct interval_list slots = {0}, rest = {0}, cat = {0}, cost = {0};
	int rc = -ENOMEM;
	memset(out, 0, sizeof(*out));
	out->ncat = ncat;
	long nw = analysis_windows(s, rank, steps, sc, &out->win);
	if (nw < 0)
		goto fail;
	out->nw = nw;
	if (!nw)
		return 0;
	out->cat_ns = calloc((size_t)nw * (size_t)ncat, sizeof(*out->cat_ns));
	if (!out->cat_ns)
		goto fail;
	int64_t t0 = out->win[0].t0, t1 = out->win[0].t1;
	for (long i = 0; i < nw; i++) {
		if (interval_push(&slots, out->win[i].t0, out->win[i].t1))
			goto fail;
		if (out->win[i].t1 > t1)
			t1 = out->win[i].t1;
	}
	if (use_pass(s, rank, sc ? sc->gpu : -1, t0, t1, pass, out))
		goto fail;
	for (int c = 0; c < ncat; c++) {
		if (c < ncat - 1) {   /* the slots this category covers, the rest go on */
			const struct interval_list *cp = analysis_pass_get(out->pass, mask[c], 1, -1, &cat);
			if (!cp || interval_split(&slots, cp, &cost, &rest))
				goto fail;
			interval_move(&slots, &rest);
		} else {
			interval_move(&cost, &slots);
		}
		for (long i = 0; i < nw; i++)
			out->cat_ns[i * ncat + c] = interval_len_in(&cost, out->win[i].t0, out->win[i].t1);
		interval_done(&cost);
	}
	rc = 0;
	goto done;
fail:
	analysis_attr_done(out);
done:
	interval_done(&slots);
	interval_done(&rest);
	interval_done(&cat);
	interval_done(&cost);
	return rc;
}
