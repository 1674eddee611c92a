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
	free(a->extra_ns);
	memset(a, 0, sizeof(*a));
}

/* the windows' share of one slab [c0, c1) (the pass p covers it):
 * priority chain over the slots clipped to the slab, each category's time
 * added to its windows; the extra union's time likewise */
static int attr_slab(const struct analysis_pass *p, const unsigned *mask, int ncat, unsigned extra,
		     int64_t c0, int64_t c1, struct analysis_attr *out)
{
	struct interval_list slots = {0}, rest = {0}, cat = {0}, cost = {0};
	int rc = -ENOMEM;
	long nw = out->nw;
	int64_t a, b;
	for (long i = 0; i < nw; i++)
		if (analysis_win_clip(&out->win[i], c0, c1, &a, &b) && interval_push(&slots, a, b))
			goto out;
	if (!slots.n) {
		rc = 0;
		goto out;
	}
	for (int c = 0; c < ncat; c++) {
		if (c < ncat - 1) {   /* the slots this category covers, the rest go on */
			const struct interval_list *cp = analysis_pass_get(p, mask[c], 1, -1, &cat);
			if (!cp || interval_split(&slots, cp, &cost, &rest))
				goto out;
			interval_move(&slots, &rest);
		} else {
			interval_move(&cost, &slots);
		}
		for (long i = 0; i < nw; i++)
			if (analysis_win_clip(&out->win[i], c0, c1, &a, &b))
				out->cat_ns[i * ncat + c] += interval_len_in(&cost, a, b);
		interval_done(&cost);
	}
	if (extra) {
		const struct interval_list *xp = analysis_pass_get(p, extra, 1, -1, &cat);
		if (!xp)
			goto out;
		for (long i = 0; i < nw; i++)
			if (analysis_win_clip(&out->win[i], c0, c1, &a, &b))
				out->extra_ns[i] += interval_len_in(xp, a, b);
	}
	rc = 0;
out:
	interval_done(&slots);
	interval_done(&rest);
	interval_done(&cat);
	interval_done(&cost);
	return rc;
}

int analysis_attr_run(const struct gt_store *s, int32_t rank, const struct gt_steps_list *steps,
		 const struct gt_scope *sc, const struct analysis_pass *pass,
		 const unsigned *mask, int ncat, unsigned extra, struct analysis_attr *out)
{
	struct analysis_names nm = {0};
	struct analysis_pass own = {0};
	int64_t *cuts = NULL;
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
	out->extra_ns = calloc((size_t)nw, sizeof(*out->extra_ns));
	if (!out->cat_ns || !out->extra_ns)
		goto fail;
	int64_t t0 = out->win[0].t0, t1 = out->win[0].t1;
	for (long i = 1; i < nw; i++)
		if (out->win[i].t1 > t1)
			t1 = out->win[i].t1;
	int32_t gpu = sc ? sc->gpu : -1;
	/* the caller's pass when it covers the windows, else own ones: one
	 * over [t0, t1), or one per slab of a rank too big for the budget */
	if (pass && pass->has_host && pass->rank == rank && pass->gpu == gpu && pass->t0 <= t0 &&
	    pass->t1 >= t1) {
		rc = attr_slab(pass, mask, ncat, extra, t0, t1, out);
		goto done;
	}
	long ns = analysis_slabs(s, rank, gpu, 1, t0, t1, &cuts);
	if (ns < 0 || analysis_names_init(&nm, s))
		goto fail;
	for (long k = 0; k < ns; k++) {
		if (analysis_pass_build(s, rank, gpu, cuts[k], cuts[k + 1], 1, &nm, &own) ||
		    attr_slab(&own, mask, ncat, extra, cuts[k], cuts[k + 1], out))
			goto fail;
		analysis_pass_done(&own);
	}
	rc = 0;
	goto done;
fail:
	rc = -ENOMEM;
done:
	if (rc)
		analysis_attr_done(out);
	analysis_pass_done(&own);
	analysis_names_done(&nm);
	free(cuts);
	return rc;
}
