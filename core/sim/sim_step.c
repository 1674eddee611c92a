/*
 * sim_step.c - generate one training step of every rank and GPU into the
 * per-lane buffers (phases in sim_priv.h).
 *
 * Host thread of a rank, per step:
 *   ProfilerStep#N [ DataLoader __next__ | items: (CPU op [launch]) ... |
 *   cudaStreamSynchronize until every GPU of the rank is done ]
 * Each item: CPU op of pre + call + post, the call (runtime, GT_EVF_LAUNCH,
 * a fresh correlation id), and its GPU work that may start 1-3 us after
 * the call returns, once its stream and its dependencies are free.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "sim_priv.h"

#define US 1000

static struct gt_event *buf_push(struct sim_buf *b)
{
	if (b->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 1024;
		struct gt_event *ne = realloc(b->ev, nc * sizeof(*ne));
		if (!ne)
			return NULL;
		b->ev = ne;
		b->cap = nc;
	}
	return &b->ev[b->n++];
}

void sim_state_reset(struct gt_sim *sim)
{
	int64_t t0 = sim->o.t0_ns ? sim->o.t0_ns : 1700000000000000000ll;
	sim_rng_seed(&sim->rng, sim->o.seed);
	for (int r = 0; r < sim->o.ranks; r++) {
		struct sim_rank *rk = &sim->rk[r];
		rk->t = t0 + (int64_t)r * 37 * US;
		rk->corr = rk->ext = 0;
		rk->host.n = 0;
	}
	for (int k = 0; k < sim->o.ranks * sim->o.gpus; k++) {
		struct sim_gpu *g = &sim->gpu[k];
		for (int s = 0; s < SIM_NSTREAMS; s++) {
			g->tail[s] = 0;
			g->buf[s].n = 0;
		}
	}
	sim->step = 0;
}

/* phase 1: the host thread of rank r issues item i of GPU g at *t */
static int issue(struct gt_sim *sim, struct sim_rank *rk, struct sim_gpu *gp, size_t i, int64_t *t)
{
	const struct sim_item *it = &sim->plan.it[i];
	struct sim_rng *rng = &sim->rng;
	uint64_t u = sim_rng_next(rng);
	int64_t op_start = *t;
	int64_t api_start = op_start + sim_jitter(rng, it->pre_ns, 0.25);
	int64_t api_dur = sim_jitter(rng, it->api_ns, 0.2);
	int64_t api_end = api_start + api_dur;
	int64_t op_end = api_end + 1000 + (int64_t)(u & 1023);
	uint32_t ext = ++rk->ext, corr = ++rk->corr;

	struct gt_event *op = buf_push(&rk->host);
	struct gt_event *call = buf_push(&rk->host);
	struct gt_event *g = buf_push(&gp->buf[it->stream]);
	if (!op || !call || !g)
		return -ENOMEM;
	*op = (struct gt_event){ .start_ns = op_start, .dur_ns = op_end - op_start,
				 .name = it->op, .lane = rk->host_lane, .ext = ext,
				 .kind = GT_EV_CPU_OP };
	*call = (struct gt_event){ .start_ns = api_start, .dur_ns = api_dur, .name = it->api,
				   .lane = rk->host_lane, .corr = corr, .ext = ext,
				   .kind = GT_EV_RUNTIME, .flags = GT_EVF_LAUNCH };
	int64_t dur;
	if (it->kind == GT_EV_MEMCPY)
		dur = sim_jitter(rng, it->dur_ns, 0.01);
	else
		dur = sim_jitter(rng, it->dur_ns, 0.03);
	if (it->flags & SIM_IT_STRAGGLE)
		dur = (int64_t)((double)dur * gp->slow);
	/* start holds the earliest start until phase 2 */
	*g = (struct gt_event){ .start_ns = api_end + 1000 + (int64_t)((u >> 10) % 2000),
				.dur_ns = dur, .arg = it->arg, .name = it->name,
				.lane = gp->lane[it->stream], .corr = corr, .ext = ext,
				.kind = it->kind, .sub = it->sub, .flags = it->evflags };
	*t = op_end + 500 + (int64_t)((u >> 21) % 1000);
	return 0;
}

/* phase 1 for rank r: returns the host time after the last item */
static int host_phase(struct gt_sim *sim, int r, int64_t *t_out)
{
	struct sim_rank *rk = &sim->rk[r];
	struct sim_gpu *gp = &sim->gpu[(size_t)r * sim->o.gpus];
	int G = sim->o.gpus;
	size_t n = sim->plan.n;
	char name[32];
	int64_t t = rk->t;

	snprintf(name, sizeof(name), "ProfilerStep#%d", sim->step);
	struct gt_event *st = buf_push(&rk->host);
	if (!st)
		return -ENOMEM;
	*st = (struct gt_event){ .start_ns = t, .name = gt_store_intern_cstr(sim->st, name),
				 .lane = rk->host_lane, .ext = ++rk->ext, .kind = GT_EV_STEP,
				 .arg = (uint64_t)sim->step };
	t += 2 * US;
	struct gt_event *dl = buf_push(&rk->host);
	if (!dl)
		return -ENOMEM;
	*dl = (struct gt_event){ .start_ns = t,
				 .dur_ns = sim_jitter(&sim->rng, sim_planted(sim, r) ? sim->dl_ns :
						      SIM_DL_BASE_NS, 0.02),
				 .name = sim->s_dl, .lane = rk->host_lane, .ext = ++rk->ext,
				 .kind = GT_EV_CPU_OP, .flags = GT_EVF_DATALOADER };
	t += dl->dur_ns + 3 * US;

	if (sim->o.scenario != GT_SIM_STAGGERED || !sim_planted(sim, r)) {
		for (size_t i = 0; i < n; i++)
			for (int g = 0; g < G; g++)
				if (issue(sim, rk, &gp[g], i, &t))
					return -ENOMEM;
		*t_out = t;
		return 0;
	}
	/* staggered: GPU g may not start before gate g; among open GPUs the
	 * one with the fewest items issued goes first (lowest index on ties) */
	for (int g = 0; g < G; g++) {
		gp[g].gate_ns = t + (int64_t)(g * SIM_STAGGER_US * US);
		gp[g].next = 0;
	}
	for (size_t left = n * (size_t)G; left; left--) {
		int best = -1;
		int64_t min_gate = INT64_MAX;
		for (int g = 0; g < G; g++) {
			if (gp[g].next == n)
				continue;
			if (gp[g].gate_ns > t) {
				if (gp[g].gate_ns < min_gate)
					min_gate = gp[g].gate_ns;
				continue;
			}
			if (best < 0 || gp[g].next < gp[best].next)
				best = g;
		}
		if (best < 0) {
			t = min_gate;
			left++;
			continue;
		}
		if (issue(sim, rk, &gp[best], gp[best].next++, &t))
			return -ENOMEM;
	}
	*t_out = t;
	return 0;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* phase 2 for one GPU: run items until the next collective or the end;
 * returns 1 when it stopped at a collective (start in gp->nccl_start) */
static int gpu_advance(struct gt_sim *sim, struct sim_gpu *gp)
{
	const struct sim_item *its = sim->plan.it;
	while (gp->item < sim->plan.n) {
		const struct sim_item *it = &its[gp->item];
		struct gt_event *e = &gp->buf[it->stream].ev[gp->cur[it->stream]];
		int64_t s = max64(e->start_ns, gp->tail[it->stream]);
		for (int d = 0; d < SIM_NSTREAMS; d++)
			if (it->deps & (1u << d))
				s = max64(s, gp->tail[d]);
		if (it->stream == SIM_ST_NCCL) {
			gp->nccl_start = s;
			return 1;
		}
		e->start_ns = s;
		gp->tail[it->stream] = s + e->dur_ns;
		gp->cur[it->stream]++;
		gp->item++;
	}
	return 0;
}

static void gpu_phase(struct gt_sim *sim)
{
	int n = sim->o.ranks * sim->o.gpus;
	for (int k = 0; k < n; k++) {
		struct sim_gpu *gp = &sim->gpu[k];
		gp->item = 0;
		for (int s = 0; s < SIM_NSTREAMS; s++)
			gp->cur[s] = 0;
	}
	for (;;) {
		int waiting = 0;
		int64_t s_max = INT64_MIN;
		for (int k = 0; k < n; k++) {
			waiting += gpu_advance(sim, &sim->gpu[k]);
			s_max = max64(s_max, sim->gpu[k].nccl_start);
		}
		if (!waiting)
			return;
		/* every GPU is at the same collective: it ends together */
		struct sim_gpu *g0 = &sim->gpu[0];
		int64_t end = s_max + g0->buf[SIM_ST_NCCL].ev[g0->cur[SIM_ST_NCCL]].dur_ns;
		for (int k = 0; k < n; k++) {
			struct sim_gpu *gp = &sim->gpu[k];
			struct gt_event *e = &gp->buf[SIM_ST_NCCL].ev[gp->cur[SIM_ST_NCCL]++];
			e->start_ns = gp->nccl_start;
			e->dur_ns = end - gp->nccl_start + (int64_t)(sim_rng_next(&sim->rng) % 1500);
			gp->tail[SIM_ST_NCCL] = e->start_ns + e->dur_ns;
			gp->item++;
			gp->nccl_start = INT64_MIN;
		}
	}
}

int sim_step_gen(struct gt_sim *sim)
{
	int R = sim->o.ranks, G = sim->o.gpus;
	for (int k = 0; k < R * G; k++) {
		sim->gpu[k].nccl_start = INT64_MIN;
		for (int s = 0; s < SIM_NSTREAMS; s++)
			sim->gpu[k].buf[s].n = 0;
	}
	for (int r = 0; r < R; r++) {
		sim->rk[r].host.n = 0;
		int rc = host_phase(sim, r, &sim->rk[r].t_items);
		if (rc)
			return rc;
	}
	gpu_phase(sim);
	for (int r = 0; r < R; r++) {
		struct sim_rank *rk = &sim->rk[r];
		int64_t gpu_end = 0;
		for (int g = 0; g < G; g++)
			for (int s = 0; s < SIM_NSTREAMS; s++)
				gpu_end = max64(gpu_end, sim->gpu[r * G + g].tail[s]);
		int64_t t = rk->t_items;
		int64_t end = max64(t + 3 * US, gpu_end + 2 * US);
		struct gt_event *sy = buf_push(&rk->host);
		if (!sy)
			return -ENOMEM;
		*sy = (struct gt_event){ .start_ns = t, .dur_ns = end - t, .name = sim->s_sync,
					 .lane = rk->host_lane, .corr = ++rk->corr,
					 .kind = GT_EV_RUNTIME };
		struct gt_event *st = &rk->host.ev[0];
		st->dur_ns = end + 4 * US - st->start_ns;
		rk->t = end + 4 * US + 15 * US + (int64_t)(sim_rng_next(&sim->rng) % (10 * US));
	}
	return 0;
}
