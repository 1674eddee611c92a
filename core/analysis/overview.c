/*
 * overview.c - one page like TensorBoard's overview (ANALYSES.md 7): run
 * environment, average step and breakdown, GPU utilization, top kernels,
 * the input verdict, and recommendations that cite their evidence.  The
 * thresholds of the recommendations are in overview_recs.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "anl.h"
#include "overview_priv.h"

void overview_result_done(struct overview_result *r)
{
	breakdown_result_done(&r->bd);
	pipeline_result_done(&r->pl);
	gputime_result_done(&r->gt);
	multigpu_result_done(&r->mg);
	free(r->recs);
	memset(r, 0, sizeof(*r));
}

static int cmp_kern(const void *a, const void *b)
{
	const struct overview_kernel *x = a, *y = b;
	return (x->total_ns < y->total_ns) - (x->total_ns > y->total_ns);
}

/* top kernels by total time over the scope's GPU lanes */
static int top_kernels(const struct gt_store *s, const struct gt_scope *sc,
		       struct overview_result *r)
{
	size_t ns = store_str_count(s);
	struct overview_kernel *acc = calloc(ns ? ns : 1, sizeof(*acc));
	if (!acc)
		return -ENOMEM;
	int64_t total = 0;
	for (size_t i = 0; i < store_lane_count(s); i++) {
		const struct gt_lane *l = store_lane_at(s, (uint32_t)i);
		if (l->key.type != GT_LANE_GPU || !((l->kinds_mask >> GT_EV_KERNEL) & 1))
			continue;
		if ((sc->rank >= 0 && anl_lane_rank(l) != sc->rank) ||
		    (sc->gpu >= 0 && l->key.device != sc->gpu))
			continue;
		size_t first, last;
		store_lane_range(l, sc->t0_ns, sc->t1_ns, &first, &last);
		for (size_t k = first; k < last; k++) {
			const struct gt_event *e = &l->ev[k];
			if (e->kind != GT_EV_KERNEL || e->name >= ns || e->start_ns < sc->t0_ns ||
			    e->start_ns >= sc->t1_ns)
				continue;
			acc[e->name].name = e->name;
			acc[e->name].count++;
			acc[e->name].total_ns += e->dur_ns;
			total += e->dur_ns;
		}
	}
	size_t n = 0;
	for (size_t i = 0; i < ns; i++)
		if (acc[i].count)
			acc[n++] = acc[i];
	qsort(acc, n, sizeof(*acc), cmp_kern);
	r->ntop = n < 10 ? n : 10;
	for (size_t i = 0; i < r->ntop; i++) {
		r->top[i] = acc[i];
		r->top[i].pct = total ? 100.0 * (double)acc[i].total_ns / (double)total : 0;
	}
	free(acc);
	return 0;
}

static void environment(const struct gt_store *s, const struct gt_scope *sc,
			struct overview_result *r)
{
	int32_t *ranks = NULL;
	long nr = anl_scope_ranks(s, sc, &ranks);
	r->ranks = nr > 0 ? (size_t)nr : 0;
	free(ranks);
	for (size_t i = 0; i < store_lane_count(s); i++) {
		const struct gt_lane *l = store_lane_at(s, (uint32_t)i);
		if (!l->n || (sc->rank >= 0 && anl_lane_rank(l) != sc->rank))
			continue;
		if (l->key.type == GT_LANE_GPU && (sc->gpu < 0 || l->key.device == sc->gpu))
			r->streams++;
		else if (l->key.type == GT_LANE_HOST)
			r->host_threads++;
	}
	r->gpus = r->gt.ngpus;
	r->events = store_event_count(s);
	r->t0_ns = store_t_min(s);
	r->t1_ns = store_t_max(s);
	const struct gt_drops *d = store_drops((struct gt_store *)s);
	r->dropped = d->cupti_dropped + d->buffers_declined + d->ring_overflow + d->import_skipped;
}

int overview_compute(const struct gt_store *s, const struct gt_scope *sc,
		     struct overview_result *out, char *err, size_t errlen)
{
	struct gt_scope all;
	struct steps_list sl = {0};
	struct anl_pass pass = {0};
	struct anl_names nm = {0};
	int32_t *ranks = NULL;
	int rc;
	memset(out, 0, sizeof(*out));
	if (!sc) {
		gt_scope_all(&all);
		sc = &all;
	}
	long nr = anl_scope_ranks(s, sc, &ranks);
	if (nr < 0) {
		rc = -ENOMEM;
		goto fail;
	}
	int32_t rank0 = nr > 0 ? ranks[0] : 0;
	free(ranks);
	if ((rc = steps_find(s, rank0, NULL, &sl, err, errlen)))
		goto fail;
	out->source = sl.source;
	out->nsteps = sl.n;
	/* one pass over rank 0's events in the scope feeds three analyses */
	if ((rc = anl_names_init(&nm, s)) ||
	    (rc = anl_pass_build(s, rank0, sc->gpu, sc->t0_ns, sc->t1_ns, 1, &nm, &pass)) ||
	    (rc = breakdown_compute_pass(s, rank0, &sl, sc, &out->bd, &pass, err, errlen)) ||
	    (rc = pipeline_compute_pass(s, rank0, &sl, sc, &out->pl, &pass, err, errlen)) ||
	    (rc = gputime_compute_pass(s, sc, &out->gt, &pass, err, errlen)) ||
	    (rc = multigpu_compute_pass(s, sc, &out->mg, &pass, err, errlen)) ||
	    (rc = top_kernels(s, sc, out)))
		goto fail;
	environment(s, sc, out);
	if ((rc = overview_recs(out)))
		goto fail;
	steps_list_done(&sl);
	anl_pass_done(&pass);
	anl_names_done(&nm);
	return 0;
fail:
	if (rc == -ENOMEM && err && errlen)
		snprintf(err, errlen, "overview: out of memory");
	steps_list_done(&sl);
	anl_pass_done(&pass);
	anl_names_done(&nm);
	overview_result_done(out);
	return rc;
}
