/*
 * overview.c - one page like TensorBoard's overview (docs/analyses.md §7): run
 * environment, average step and breakdown, GPU utilization, top kernels,
 * the input verdict, and recommendations that cite their evidence.  The
 * thresholds of the recommendations are in overview_recs.c.
 *
 * Every rank in scope gets its breakdown and input verdict (one pass over
 * its events feeds breakdown, pipeline and GPU time); the result holds them
 * per rank, the breakdown averaged over every rank's steps and the input
 * pipeline of the worst rank, so a slow DataLoader on any rank shows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "analysis.h"
#include "overview_priv.h"

void gt_overview_result_done(struct gt_overview_result *r)
{
	gt_breakdown_result_done(&r->bd);
	gt_pipeline_result_done(&r->pl);
	gt_gputime_result_done(&r->gt);
	gt_multigpu_result_done(&r->mg);
	free(r->rk);
	free(r->recs);
	memset(r, 0, sizeof(*r));
}

static int cmp_kern(const void *a, const void *b)
{
	const struct gt_overview_kernel *x = a, *y = b;
	return (x->total_ns < y->total_ns) - (x->total_ns > y->total_ns);
}

/* top kernels by total time over the scope's GPU lanes */
static int top_kernels(const struct gt_store *s, const struct gt_scope *sc,
		       struct gt_overview_result *r)
{
	size_t ns = gt_store_str_count(s);
	struct gt_overview_kernel *acc = calloc(ns ? ns : 1, sizeof(*acc));
	if (!acc)
		return -ENOMEM;
	int64_t total = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type != GT_LANE_GPU || !((l->kinds_mask >> GT_EV_KERNEL) & 1))
			continue;
		if ((sc->rank >= 0 && l->key.rank != sc->rank) ||
		    (sc->gpu >= 0 && l->key.device != sc->gpu))
			continue;
		size_t first, last;
		gt_store_lane_range(l, sc->t0_ns, sc->t1_ns, &first, &last);
		for (size_t k = first; k < last; k++) {
			gt_store_read_walk(s, l, first, k, last);
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
			struct gt_overview_result *r)
{
	int32_t *ranks = NULL;
	long nr = analysis_scope_ranks(s, sc, &ranks);
	r->ranks = nr > 0 ? (size_t)nr : 0;
	free(ranks);
	size_t rank_events = 0;   /* events of the scope's rank (one rank asked) */
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (!l->n || (sc->rank >= 0 && l->key.rank != sc->rank))
			continue;
		rank_events += l->n;
		if (l->key.type == GT_LANE_GPU && l->key.pid >= 0 && l->key.id >= 0 &&
		    (sc->gpu < 0 || l->key.device == sc->gpu))
			r->streams++;   /* a CUDA stream; not an annotation or sync lane (pid < 0) */
		else if (l->key.type == GT_LANE_HOST && l->key.pid >= 0 && l->key.id > 0)
			r->host_threads++;       /* an OS thread: a process and a thread id */
		else if (l->key.type == GT_LANE_HOST)
			r->host_other++;         /* a pseudo-lane (negative or no pid/tid) */
	}
	r->gpus = r->gt.ngpus;
	r->events = sc->rank >= 0 ? rank_events : gt_store_event_count(s);
	r->t0_ns = gt_store_t_min(s);
	r->t1_ns = gt_store_t_max(s);
	const struct gt_drops *d = gt_store_drops((struct gt_store *)s);
	r->dropped = gt_store_drops_lost(d);
}

/* append one rank's GPU time result to the overview's (then frees it) */
static int gputime_append(struct gt_gputime_result *dst, struct gt_gputime_result *src)
{
	if (!dst->gpus && !dst->streams) {
		*dst = *src;
		memset(src, 0, sizeof(*src));
		return 0;
	}
	struct gt_gputime_gpu *g = realloc(dst->gpus, (dst->ngpus + src->ngpus + 1) * sizeof(*g));
	if (g)
		dst->gpus = g;
	struct gt_gputime_stream *st = realloc(dst->streams,
					    (dst->nstreams + src->nstreams + 1) * sizeof(*st));
	if (st)
		dst->streams = st;
	if (!g || !st) {
		gt_gputime_result_done(src);
		return -ENOMEM;
	}
	memcpy(dst->gpus + dst->ngpus, src->gpus, src->ngpus * sizeof(*g));
	memcpy(dst->streams + dst->nstreams, src->streams, src->nstreams * sizeof(*st));
	dst->ngpus += src->ngpus;
	dst->nstreams += src->nstreams;
	gt_gputime_result_done(src);
	return 0;
}

/* one rank's summary from its breakdown and pipeline */
static void rank_summary(const struct gt_breakdown_result *bd, const struct gt_pipeline_result *pl,
			 struct gt_overview_rank *o)
{
	memset(o, 0, sizeof(*o));
	o->rank = bd->rank;
	o->nsteps = bd->n;
	o->step0 = o->step1 = -1;
	if (bd->n) {
		o->step0 = bd->rows[0].step;
		o->step1 = bd->rows[bd->n - 1].step;
		o->t0_ns = bd->rows[0].t0_ns;
		o->t1_ns = bd->rows[bd->n - 1].t1_ns;
	}
	o->avg_step_ns = bd->avg_total_ns;
	memcpy(o->avg_ns, bd->avg_ns, sizeof(o->avg_ns));
	o->gpu_util_pct = bd->gpu_util_pct;
	o->verdict = pl->verdict;
	o->input_pct = pl->input_pct;
	o->host_wait_pct = pl->avg_pct[GT_PL_HOST_WAIT];
	o->h2d_pct = pl->avg_pct[GT_PL_H2D];
	o->others_pct = pl->others_pct;
	o->launch_pct = pl->launch_pct;
	o->host_cost = gt_pipeline_host_cost(pl, &o->host_cost_pct);
	o->launch_level = pl->launch_level;
}

/* sums of every rank's breakdown rows, for the all-ranks averages: real
 * steps in [1], the whole-scope row of a rank without steps in [0] (used
 * only when no rank has steps) */
struct bd_sum {
	double cat[GT_BD_NCAT], total, kernel_any;
	size_t rows;
};

struct rank_acc {
	struct bd_sum sum[2];
	int pl_stepped;          /* out->pl comes from a rank with steps */
};

static void bd_add(struct bd_sum *sums, const struct gt_breakdown_result *bd)
{
	for (size_t i = 0; i < bd->n; i++) {
		struct bd_sum *a = &sums[bd->rows[i].step >= 0];
		for (int c = 0; c < GT_BD_NCAT; c++)
			a->cat[c] += (double)bd->rows[i].cat_ns[c];
		a->total += (double)bd->rows[i].total_ns;
		a->kernel_any += (double)bd->rows[i].kernel_any_ns;
		a->rows++;
	}
}

/* the breakdown's averages over every rank's rows (one rank: unchanged) */
static void bd_average(const struct bd_sum *sums, size_t nranks, struct gt_breakdown_result *bd)
{
	const struct bd_sum *a = sums[1].rows ? &sums[1] : &sums[0];
	if (nranks < 2 || !a->rows)
		return;
	for (int c = 0; c < GT_BD_NCAT; c++)
		bd->avg_ns[c] = a->cat[c] / (double)a->rows;
	bd->avg_total_ns = a->total / (double)a->rows;
	bd->gpu_util_pct = a->total > 0 ? 100.0 * a->kernel_any / a->total : 0;
}

/* which steps the averages cover over all ranks; ranks without steps are
 * marked when another rank has some */
static void step_span(struct gt_overview_result *out, const struct bd_sum *sums)
{
	out->step_lo = out->step_hi = -1;
	out->step_rows = out->nrk > 1 ? (sums[1].rows ? sums[1].rows : sums[0].rows) : out->bd.n;
	const struct gt_overview_rank *first = NULL;
	for (size_t i = 0; i < out->nrk; i++) {
		const struct gt_overview_rank *k = &out->rk[i];
		if (k->step0 < 0)
			continue;
		if (!first) {
			first = k;
			out->step_lo = k->step0;
			out->step_hi = k->step1;
			out->steps_t0_ns = k->t0_ns;
			out->steps_t1_ns = k->t1_ns;
			continue;
		}
		if (k->step0 != first->step0 || k->step1 != first->step1 || k->nsteps != first->nsteps)
			out->steps_vary = 1;
		out->step_lo = k->step0 < out->step_lo ? k->step0 : out->step_lo;
		out->step_hi = k->step1 > out->step_hi ? k->step1 : out->step_hi;
		out->steps_t0_ns = k->t0_ns < out->steps_t0_ns ? k->t0_ns : out->steps_t0_ns;
		out->steps_t1_ns = k->t1_ns > out->steps_t1_ns ? k->t1_ns : out->steps_t1_ns;
	}
	for (size_t i = 0; first && i < out->nrk; i++) {
		out->rk[i].no_steps = out->rk[i].step0 < 0;
		out->ranks_with_steps += !out->rk[i].no_steps;
	}
}

/* 1 when pipeline a is worse than b: higher verdict, then more input */
static int pl_worse(const struct gt_pipeline_result *a, const struct gt_pipeline_result *b)
{
	if (a->verdict != b->verdict)
		return a->verdict > b->verdict;
	return a->input_pct > b->input_pct;
}

/* one rank: steps, one pass over its events, breakdown, pipeline and GPU
 * time; the first rank's pass is kept in *pass0 for the multi-GPU analysis
 * (none for a rank too big for the memory budget: see analysis_slabs) */
static int one_rank(const struct gt_store *s, const struct gt_scope *sc, int32_t rank,
		    size_t idx, struct analysis_names *nm, struct analysis_pass *pass0, struct rank_acc *acc,
		    struct gt_overview_result *out, char *err, size_t errlen)
{
	struct gt_steps_list sl = {0};
	struct analysis_pass own = {0};
	struct analysis_pass *pass = idx == 0 ? pass0 : &own;
	struct gt_breakdown_result bd = {0};
	struct gt_pipeline_result pl = {0};
	struct gt_gputime_result gt = {0};
	struct gt_scope rs = *sc;
	rs.rank = sc->rank >= 0 ? sc->rank : rank;   /* GPU time of this rank only */
	int rc;
	/* one pass shared by the analyses when the rank fits the budget; else
	 * each goes through the rank in slabs of its own */
	long ns = analysis_slabs(s, rank, sc->gpu, 1, sc->t0_ns, sc->t1_ns, NULL);
	if (ns < 0)
		return -ENOMEM;
	if ((rc = gt_steps_find(s, rank, NULL, &sl, err, errlen)) ||
	    (ns == 1 && (rc = analysis_pass_build(s, rank, sc->gpu, sc->t0_ns, sc->t1_ns, 1, nm, pass))) ||
	    (rc = breakdown_compute_pass(s, rank, &sl, sc, &bd, ns == 1 ? pass : NULL, err, errlen)) ||
	    (rc = pipeline_compute_pass(s, rank, &sl, sc, &pl, ns == 1 ? pass : NULL, err, errlen)) ||
	    (rc = gputime_compute_pass(s, &rs, &gt, ns == 1 ? pass : NULL, err, errlen)) ||
	    (rc = gputime_append(&out->gt, &gt)))
		goto done;
	if (idx == 0) {
		out->source = sl.source;
		out->nsteps = sl.n;
	} else if (out->source == GT_STEPS_SRC_NONE && sl.n) {
		out->source = sl.source;     /* the first rank with steps says where from */
	}
	rank_summary(&bd, &pl, &out->rk[idx]);
	bd_add(acc->sum, &bd);
	if (idx == 0) {
		out->bd = bd;
		memset(&bd, 0, sizeof(bd));
	}
	/* the worst rank's pipeline; a rank with steps before one without */
	int stepped = out->rk[idx].step0 >= 0;
	if (idx == 0 || (stepped && !acc->pl_stepped) ||
	    (stepped == acc->pl_stepped && pl_worse(&pl, &out->pl))) {
		gt_pipeline_result_done(&out->pl);
		out->pl = pl;
		memset(&pl, 0, sizeof(pl));
		acc->pl_stepped = stepped;
	}
done:
	gt_breakdown_result_done(&bd);
	gt_pipeline_result_done(&pl);
	gt_gputime_result_done(&gt);
	gt_steps_list_done(&sl);
	analysis_pass_done(&own);
	return rc;
}

int gt_overview_compute(const struct gt_store *s, const struct gt_scope *sc,
		     struct gt_overview_result *out, char *err, size_t errlen)
{
	struct gt_scope all;
	struct analysis_pass pass0 = {0};
	struct analysis_names nm = {0};
	struct rank_acc acc = {0};
	int32_t *ranks = NULL, rank0 = 0;
	int rc;
	memset(out, 0, sizeof(*out));
	if (!sc) {
		gt_scope_all(&all);
		sc = &all;
	}
	long nr = analysis_scope_ranks(s, sc, &ranks);
	if (nr < 0) {
		rc = -ENOMEM;
		goto fail;
	}
	if (nr == 0) {           /* nothing in scope: rank 0's (empty) analyses */
		free(ranks);
		ranks = &rank0;
		nr = 1;
	}
	out->rk = calloc((size_t)nr, sizeof(*out->rk));
	if (!out->rk || (rc = analysis_names_init(&nm, s))) {
		rc = -ENOMEM;
		goto fail;
	}
	out->nrk = (size_t)nr;
	for (long i = 0; i < nr; i++)
		if ((rc = one_rank(s, sc, ranks[i], (size_t)i, &nm, &pass0, &acc, out, err, errlen)))
			goto fail;
	bd_average(acc.sum, (size_t)nr, &out->bd);
	step_span(out, acc.sum);
	/* the first rank's pass serves its GPUs in the multi-GPU analysis */
	if ((rc = multigpu_compute_pass(s, sc, &out->mg, pass0.devs ? &pass0 : NULL, err, errlen)) ||
	    (rc = top_kernels(s, sc, out)))
		goto fail;
	environment(s, sc, out);
	if ((rc = overview_recs(out)))
		goto fail;
	if (ranks != &rank0)
		free(ranks);
	analysis_pass_done(&pass0);
	analysis_names_done(&nm);
	return 0;
fail:
	if (rc == -ENOMEM && err && errlen)
		snprintf(err, errlen, "overview: out of memory");
	if (ranks != &rank0)
		free(ranks);
	analysis_pass_done(&pass0);
	analysis_names_done(&nm);
	gt_overview_result_done(out);
	return rc;
}
