/*
 * simcheck.c - generation and direct measurement helpers for the
 * simulator tests (see simcheck.h).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "simcheck.h"

struct gt_store *simcheck_gen(enum gt_sim_scenario sc, int gpus, int ranks, int steps, uint64_t seed,
			      struct gt_sim_truth *t)
{
	struct gt_sim_opts o = { 0 };
	char err[256] = "";
	o.scenario = sc;
	o.gpus = gpus;
	o.ranks = ranks;
	o.steps = steps;
	o.seed = seed;
	struct gt_store *s = gt_store_new();
	cr_assert_not_null(s);
	int rc = gt_sim_generate_truth(&o, s, t, err, sizeof(err));
	cr_assert_eq(rc, 0, "gt_sim_generate: %s", err);
	return s;
}

uint32_t simcheck_host_lane(const struct gt_store *s, int r)
{
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type == GT_LANE_HOST && l->key.rank == r)
			return (uint32_t)i;
	}
	return UINT32_MAX;
}

uint32_t simcheck_gpu_lane(const struct gt_store *s, int r, int g, int64_t stream)
{
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type == GT_LANE_GPU && l->key.rank == r && l->key.device == g &&
		    l->key.id == stream)
			return (uint32_t)i;
	}
	return UINT32_MAX;
}

size_t simcheck_steps(const struct gt_store *s, int r, struct span **out)
{
	const struct gt_lane *l = gt_store_lane_at(s, simcheck_host_lane(s, r));
	cr_assert_not_null(l);
	size_t n = 0;
	struct span *sp = calloc(l->n + 1, sizeof(*sp));
	cr_assert_not_null(sp);
	for (size_t i = 0; i < l->n; i++)
		if (l->ev[i].kind == GT_EV_STEP)
			sp[n++] = (struct span){ l->ev[i].start_ns, gt_event_end(&l->ev[i]), l->ev[i].arg };
	*out = sp;
	return n;
}

long simcheck_step_of(const struct span *sp, size_t n, int64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (sp[mid].s <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || t >= sp[lo - 1].e)
		return -1;
	return (long)lo - 1;
}

int64_t simcheck_sum(const struct gt_store *s, uint32_t lane, int kind, int64_t t0, int64_t t1)
{
	const struct gt_lane *l = gt_store_lane_at(s, lane);
	int64_t sum = 0;
	for (size_t i = 0; i < l->n; i++)
		if ((!kind || l->ev[i].kind == kind) && l->ev[i].start_ns >= t0 && l->ev[i].start_ns < t1)
			sum += l->ev[i].dur_ns;
	return sum;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void check_unique(uint32_t *v, size_t n, const char *what, int r)
{
	qsort(v, n, sizeof(*v), cmp_u32);
	for (size_t i = 1; i < n; i++)
		cr_assert_neq(v[i], v[i - 1], "rank %d: %s corr id %u twice", r, what, v[i]);
}

/* GPU work of one lane: launched by a call on the same rank that ends
 * before it starts, inside the same step span as the GPU work */
static void check_gpu_lane(const struct gt_store *s, const struct gt_lane *l,
			   const struct span *sp, size_t nsp, int world)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct gt_event *e = &l->ev[i];
		cr_assert(gt_event_is_gpu(e), "non-GPU event kind %d on a GPU lane", e->kind);
		cr_assert_neq(e->corr, 0u);
		struct gt_ref ref;
		cr_assert_eq(gt_store_corr_find(s, l->key.rank, e->corr, 0, &ref), 0,
			     "rank %d corr %u: no launch", l->key.rank, e->corr);
		const struct gt_event *call = gt_store_ev(s, ref);
		cr_assert_eq(gt_store_lane_at(s, ref.lane)->key.rank, l->key.rank);
		cr_assert_eq(call->kind, GT_EV_RUNTIME);
		cr_assert(call->flags & GT_EVF_LAUNCH);
		cr_assert_leq(gt_event_end(call), e->start_ns, "launch ends after its GPU work starts");
		long k = simcheck_step_of(sp, nsp, call->start_ns);
		cr_assert_geq(k, 0, "launch outside every step");
		cr_assert_leq(gt_event_end(call), sp[k].e);
		cr_assert_geq(e->start_ns, sp[k].s);
		cr_assert_leq(gt_event_end(e), sp[k].e, "GPU work ends after its step");
		if (e->kind == GT_EV_KERNEL) {
			const struct gt_kconf *kc = gt_store_kconf_at(s, gt_event_kconf(e));
			cr_assert_not_null(kc, "kernel without launch configuration");
			cr_assert_gt(kc->grid[0] * kc->block[0], 0u);
			if (e->flags & GT_EVF_NCCL) {
				const struct gt_nccl *nc = gt_store_nccl_at(s, gt_event_nccl(e));
				cr_assert_not_null(nc, "NCCL kernel without collective arguments");
				cr_assert_str_eq(gt_store_str(s, nc->collective), "allreduce");
				cr_assert_eq(nc->group_size, (uint32_t)world);
				cr_assert_gt(nc->in_nelems, 0u);
				cr_assert_eq(strncmp(gt_store_str(s, e->name), "ncclDevKernel_AllReduce", 23), 0);
			}
		} else if (e->kind == GT_EV_MEMCPY) {
			cr_assert(e->sub == GT_COPY_H2D || e->sub == GT_COPY_D2H);
			cr_assert_gt(e->arg, 0u);
		}
	}
}

void simcheck_valid(const struct gt_store *s, const struct gt_sim_truth *t)
{
	cr_assert_eq(gt_store_event_count(s), t->events);
	cr_assert_eq(gt_store_rank_count(s), (size_t)t->ranks);
	cr_assert_eq(gt_store_device_count(s), (size_t)(t->ranks * t->gpus));
	cr_assert_str_eq(gt_store_meta_get(s, "source"), "gtrace sim");
	cr_assert_str_eq(gt_store_meta_get(s, "scenario"), gt_sim_scenario_name(t->scenario));
	const struct gt_device *d = gt_store_device_at(s, 0);
	cr_assert_str_eq(gt_store_str(s, d->name), "NVIDIA H100 80GB HBM3");
	cr_assert_eq(d->sm_count, 132u);
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		cr_assert_neq(l->name, 0u, "unnamed lane");
		for (size_t k = 0; k < l->n; k++) {
			cr_assert_geq(l->ev[k].dur_ns, 0);
			if (k)
				cr_assert_geq(l->ev[k].start_ns, l->ev[k - 1].start_ns, "lane not sorted");
		}
	}
	for (int r = 0; r < t->ranks; r++) {
		struct span *sp;
		size_t nsp = simcheck_steps(s, r, &sp);
		cr_assert_eq(nsp, (size_t)t->steps);
		for (size_t k = 0; k < nsp; k++) {
			cr_assert_eq(sp[k].n, k);
			if (k)
				cr_assert_geq(sp[k].s, sp[k - 1].e, "steps overlap");
		}
		const struct gt_lane *h = gt_store_lane_at(s, simcheck_host_lane(s, r));
		uint32_t *corr = malloc((h->n + 1) * sizeof(*corr));
		size_t nc = 0, ndl = 0;
		for (size_t k = 0; k < h->n; k++) {
			const struct gt_event *e = &h->ev[k];
			if (e->flags & GT_EVF_DATALOADER) {
				ndl++;
				cr_assert_eq(e->kind, GT_EV_CPU_OP);
				cr_assert_str_eq(gt_store_str(s, e->name),
						 "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
			}
			if (e->kind == GT_EV_STEP) {
				char want[32];
				snprintf(want, sizeof(want), "ProfilerStep#%llu", (unsigned long long)e->arg);
				cr_assert_str_eq(gt_store_str(s, e->name), want);
				continue;
			}
			long st = simcheck_step_of(sp, nsp, e->start_ns);
			cr_assert_geq(st, 0, "host event outside every step");
			cr_assert_leq(gt_event_end(e), sp[st].e);
			if (e->kind == GT_EV_RUNTIME)
				corr[nc++] = e->corr;
		}
		cr_assert_eq(ndl, nsp);
		check_unique(corr, nc, "runtime", r);
		nc = 0;
		size_t cap = h->n + 1;
		for (int g = 0; g < t->gpus; g++) {
			int64_t sid[3] = { t->stream_compute, t->stream_copy, t->stream_nccl };
			for (int k = 0; k < 3; k++) {
				const struct gt_lane *l = gt_store_lane_at(s, simcheck_gpu_lane(s, r, g, sid[k]));
				cr_assert_not_null(l);
				check_gpu_lane(s, l, sp, nsp, t->ranks * t->gpus);
				for (size_t i = 0; i < l->n && nc < cap; i++)
					corr[nc++] = l->ev[i].corr;
			}
		}
		check_unique(corr, nc, "GPU", r);
		free(corr);
		free(sp);
	}
}
