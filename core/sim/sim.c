/*
 * sim.c - the simulator's API: options, set-up (ranks, devices, lanes,
 * metadata), calibration of the planted quantities, step iteration and
 * the whole-capture wrapper.
 *
 * Calibration: the planted share p of a scenario (input, comm, copies) is
 * reached by generating two steps without the plant, measuring their mean
 * step time T, and sizing the plant q so that q / (T + q) = p (every plant
 * is serialized with the rest of the step, so it adds to the step time).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim_priv.h"

#define US 1000

static const char *const scen_names[GT_SIM_SCENARIO_COUNT] = {
	[GT_SIM_BALANCED] = "balanced",       [GT_SIM_INPUT_BOUND] = "input-bound",
	[GT_SIM_LAUNCH_BOUND] = "launch-bound", [GT_SIM_STRAGGLER] = "straggler",
	[GT_SIM_COMM_BOUND] = "comm-bound",   [GT_SIM_COPY_HEAVY] = "copy-heavy",
	[GT_SIM_STAGGERED] = "staggered",
};

int gt_sim_scenario_parse(const char *name)
{
	for (int i = 0; i < GT_SIM_SCENARIO_COUNT; i++)
		if (name && !strcmp(name, scen_names[i]))
			return i;
	return -1;
}

const char *gt_sim_scenario_name(enum gt_sim_scenario s)
{
	return (unsigned)s < GT_SIM_SCENARIO_COUNT ? scen_names[s] : "unknown";
}

const char *gt_sim_scenario_list(void)
{
	return "balanced, input-bound, launch-bound, straggler, comm-bound, copy-heavy, staggered";
}

void gt_sim_free(struct gt_sim *sim)
{
	if (!sim)
		return;
	if (sim->rk)
		for (int r = 0; r < sim->o.ranks; r++)
			free(sim->rk[r].host.ev);
	if (sim->gpu)
		for (int k = 0; k < sim->o.ranks * sim->o.gpus; k++)
			for (int s = 0; s < SIM_NSTREAMS; s++)
				free(sim->gpu[k].buf[s].ev);
	free(sim->rk);
	free(sim->gpu);
	sim_plan_free(&sim->plan);
	free(sim);
}

static int check_opts(struct gt_sim_opts *o, char *err, size_t errlen)
{
	if (o->ranks == 0)
		o->ranks = 1;
	if (o->gpus == 0)
		o->gpus = o->ranks > 1 ? 1 : 4;
	if (o->seed == 0)
		o->seed = 1;
	if (o->gpus < 1 || o->gpus > 64) {
		snprintf(err, errlen, "--gpus must be 1..64 (got %d)", o->gpus);
		return -EINVAL;
	}
	if (o->ranks < 1 || o->ranks > 1024 || o->ranks * o->gpus > 4096) {
		snprintf(err, errlen, "--ranks must be 1..1024 with at most 4096 GPUs in all (got %d)",
			 o->ranks);
		return -EINVAL;
	}
	if (o->steps < 0) {
		snprintf(err, errlen, "--steps must be positive (got %d)", o->steps);
		return -EINVAL;
	}
	if ((unsigned)o->scenario >= GT_SIM_SCENARIO_COUNT) {
		snprintf(err, errlen, "unknown scenario %d (valid: %s)", (int)o->scenario,
			 gt_sim_scenario_list());
		return -EINVAL;
	}
	if (o->flags & GT_SIM_F_ONE_RANK) {
		if (o->scenario_rank < 0 || o->scenario_rank >= o->ranks) {
			snprintf(err, errlen, "--scenario-rank must be 0..%d (got %d)", o->ranks - 1,
				 o->scenario_rank);
			return -EINVAL;
		}
		if (o->scenario != GT_SIM_BALANCED && o->scenario != GT_SIM_INPUT_BOUND &&
		    o->scenario != GT_SIM_STRAGGLER && o->scenario != GT_SIM_STAGGERED) {
			snprintf(err, errlen, "--scenario-rank: %s is planted in every rank (a collective "
				 "or the shared step plan); one rank works for input-bound, straggler and "
				 "staggered", gt_sim_scenario_name(o->scenario));
			return -EINVAL;
		}
	}
	return 0;
}

static int setup_world(struct gt_sim *sim)
{
	struct gt_store *s = sim->st;
	char buf[64];
	sim->s_dl = gt_store_intern_cstr(s, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
	sim->s_sync = gt_store_intern_cstr(s, "cudaStreamSynchronize");
	uint32_t dev_name = gt_store_intern_cstr(s, "NVIDIA H100 80GB HBM3");
	static const int64_t sid[SIM_NSTREAMS] = { SIM_STREAM_COMPUTE, SIM_STREAM_COPY, SIM_STREAM_NCCL };
	static const char *const sname[SIM_NSTREAMS] = { "compute", "copy", "nccl" };
	for (int r = 0; r < sim->o.ranks; r++) {
		struct sim_rank *rk = &sim->rk[r];
		rk->pid = 41230 + (int64_t)r * 7;
		snprintf(buf, sizeof(buf), "sim-node-%d", r);
		struct gt_rank gr = { r, rk->pid, gt_store_intern_cstr(s, buf), 0, 0, sim->o.ranks, 0 };
		if (gt_store_rank(s, &gr))
			return -ENOMEM;
		struct gt_lane_key hk = { GT_LANE_HOST, r, -1, rk->pid, rk->pid };
		rk->host_lane = gt_store_lane(s, &hk);
		if (rk->host_lane == UINT32_MAX)
			return -ENOMEM;
		snprintf(buf, sizeof(buf), "thread %lld (python)", (long long)rk->pid);
		gt_store_lane_set_name(s, rk->host_lane, buf);
		for (int g = 0; g < sim->o.gpus; g++) {
			struct sim_gpu *gp = &sim->gpu[r * sim->o.gpus + g];
			struct gt_device d = { r, g, dev_name, 132, 85520809984ull, 9, 0 };
			if (gt_store_device(s, &d))
				return -ENOMEM;
			gp->slow = 1.0;
			for (int k = 0; k < SIM_NSTREAMS; k++) {
				struct gt_lane_key gk = { GT_LANE_GPU, r, g, rk->pid, sid[k] };
				gp->lane[k] = gt_store_lane(s, &gk);
				if (gp->lane[k] == UINT32_MAX)
					return -ENOMEM;
				snprintf(buf, sizeof(buf), "stream %lld (%s)", (long long)sid[k], sname[k]);
				gt_store_lane_set_name(s, gp->lane[k], buf);
			}
		}
	}
	if (sim->o.scenario == GT_SIM_STRAGGLER) {
		/* last GPU of rank 0 (or of the one rank planted) */
		int r = sim->o.flags & GT_SIM_F_ONE_RANK ? sim->o.scenario_rank : 0;
		sim->straggler = r * sim->o.gpus + sim->o.gpus - 1;
		sim->gpu[sim->straggler].slow = 1.0 + SIM_STRAGGLER_PCT / 100.0;
	} else {
		sim->straggler = -1;
	}
	return 0;
}

/* size the planted quantity from two steps generated without it */
static int calibrate(struct gt_sim *sim)
{
	const int64_t base_dl = SIM_DL_BASE_NS;
	sim->dl_ns = base_dl;
	sim->q_ns = 0;
	sim->calibrating = 1;
	int rc = sim_plan_build(sim);
	if (rc)
		return rc;
	sim_state_reset(sim);
	int64_t sum = 0;
	for (int k = 0; k < 2; k++) {
		sim->step = k;
		if ((rc = sim_step_gen(sim)))
			return rc;
		for (int r = 0; r < sim->o.ranks; r++)
			sum += sim->rk[r].host.ev[0].dur_ns;
	}
	int64_t T = sum / (2 * sim->o.ranks);
	sim->step_ns = T;
	switch (sim->o.scenario) {
	case GT_SIM_INPUT_BOUND: {
		double p = SIM_INPUT_PCT / 100.0;
		sim->dl_ns = (int64_t)(p / (1.0 - p) * (double)(T - base_dl));
		break;
	}
	case GT_SIM_COMM_BOUND:
		sim->q_ns = (int64_t)(SIM_COMM_PCT / (100.0 - SIM_COMM_PCT) * (double)T);
		break;
	case GT_SIM_COPY_HEAVY:
		sim->q_ns = (int64_t)(SIM_COPY_PCT / (100.0 - SIM_COPY_PCT) * (double)T);
		break;
	default:
		break;
	}
	sim->calibrating = 0;
	if ((rc = sim_plan_build(sim)))
		return rc;
	sim_state_reset(sim);
	return 0;
}

static int set_meta(struct gt_sim *sim)
{
	struct gt_store *s = sim->st;
	char buf[256];
	struct gt_sim_truth t;
	gt_sim_truth_get(sim, &t);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)sim->o.seed);
	int rc = gt_store_meta_set(s, "source", "gtrace sim");
	rc = rc ? rc : gt_store_meta_set(s, "scenario", gt_sim_scenario_name(sim->o.scenario));
	rc = rc ? rc : gt_store_meta_set(s, "seed", buf);
	snprintf(buf, sizeof(buf),
		 "scenario=%s straggler_rank=%d straggler_gpu=%d straggler_pct=%.0f input_pct=%.0f "
		 "comm_pct=%.0f copy_pct=%.0f stagger_us=%.0f tiny_kernel_max_us=%.0f",
		 gt_sim_scenario_name(t.scenario), t.straggler_rank, t.straggler_gpu, t.straggler_pct,
		 t.input_pct, t.comm_pct, t.copy_pct, t.stagger_us, t.tiny_kernel_max_us);
	size_t n = strlen(buf);
	if (t.scenario_rank >= 0 && n < sizeof(buf))   /* not in the default output */
		snprintf(buf + n, sizeof(buf) - n, " scenario_rank=%d", t.scenario_rank);
	rc = rc ? rc : gt_store_meta_set(s, "sim.truth", buf);
	return rc;
}

struct gt_sim *gt_sim_new(const struct gt_sim_opts *o, struct gt_store *s, char *err, size_t errlen)
{
	struct gt_sim *sim = calloc(1, sizeof(*sim));
	if (!sim) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	sim->o = *o;
	sim->st = s;
	if (check_opts(&sim->o, err, errlen)) {
		free(sim);
		return NULL;
	}
	int R = sim->o.ranks, G = sim->o.gpus;
	sim->rk = calloc((size_t)R, sizeof(*sim->rk));
	sim->gpu = calloc((size_t)R * G, sizeof(*sim->gpu));
	if (!sim->rk || !sim->gpu || setup_world(sim) || calibrate(sim) || set_meta(sim)) {
		snprintf(err, errlen, "out of memory");
		gt_sim_free(sim);
		return NULL;
	}
	uint64_t n = sim->plan.n;
	sim->events_per_step = (uint64_t)R * (3 + 3 * n * (uint64_t)G +
					       sim_mem_events(&sim->o, n * (uint64_t)G));
	uint64_t steps = sim->o.steps ? (uint64_t)sim->o.steps : 20;
	if (sim->o.events) {
		steps = (sim->o.events + sim->events_per_step / 2) / sim->events_per_step;
		if (steps < 1)
			steps = 1;
		if (sim->o.steps && steps < (uint64_t)sim->o.steps)
			steps = (uint64_t)sim->o.steps;
	}
	/* correlation ids are 32-bit per rank */
	if (steps > (uint64_t)INT32_MAX || steps * (n * (uint64_t)G + 2) >= UINT32_MAX) {
		snprintf(err, errlen, "too many events asked for (%llu steps of %llu events)",
			 (unsigned long long)steps, (unsigned long long)sim->events_per_step);
		gt_sim_free(sim);
		return NULL;
	}
	sim->steps = (int)steps;
	return sim;
}

int gt_sim_step_count(const struct gt_sim *sim)
{
	return sim->steps;
}

long gt_sim_next_step(struct gt_sim *sim, gt_sim_emit_fn emit, void *ctx)
{
	if (sim->step >= sim->steps)
		return 0;
	int rc = sim_step_gen(sim);
	if (!rc && (sim->o.flags & (GT_SIM_F_MEMORY | GT_SIM_F_MEMLEAK)))
		rc = sim_mem_step(sim);
	if (rc)
		return rc;
	long total = 0;
	for (int r = 0; r < sim->o.ranks; r++) {
		struct sim_rank *rk = &sim->rk[r];
		if (emit(ctx, rk->host.ev, rk->host.n))
			return -ECANCELED;
		total += (long)rk->host.n;
		for (int g = 0; g < sim->o.gpus; g++) {
			struct sim_gpu *gp = &sim->gpu[r * sim->o.gpus + g];
			for (int k = 0; k < SIM_NSTREAMS; k++) {
				if (gp->buf[k].n && emit(ctx, gp->buf[k].ev, gp->buf[k].n))
					return -ECANCELED;
				total += (long)gp->buf[k].n;
			}
		}
	}
	sim->step++;
	return total;
}

void gt_sim_truth_get(const struct gt_sim *sim, struct gt_sim_truth *t)
{
	memset(t, 0, sizeof(*t));
	t->scenario = sim->o.scenario;
	t->gpus = sim->o.gpus;
	t->ranks = sim->o.ranks;
	t->steps = sim->steps;
	t->kernels_per_step = sim->plan.kernels;
	t->events_per_step = sim->events_per_step;
	t->events = sim->events_per_step * (uint64_t)sim->steps;
	t->scenario_rank = sim->o.flags & GT_SIM_F_ONE_RANK ? sim->o.scenario_rank : -1;
	t->straggler_rank = sim->straggler >= 0 ? sim->straggler / sim->o.gpus : -1;
	t->straggler_gpu = sim->straggler >= 0 ? sim->straggler % sim->o.gpus : -1;
	t->step_base_ns = sim->step_ns;
	t->step_ns = sim->step_ns;
	t->stream_compute = SIM_STREAM_COMPUTE;
	t->stream_copy = SIM_STREAM_COPY;
	t->stream_nccl = SIM_STREAM_NCCL;
	if (sim->o.flags & (GT_SIM_F_MEMORY | GT_SIM_F_MEMLEAK)) {
		uint64_t h = sim->plan.n * (uint64_t)sim->o.gpus / 2;
		int leak = !!(sim->o.flags & GT_SIM_F_MEMLEAK);
		t->mem_leak_bytes = leak ? SIM_MEM_LEAK : 0;
		t->mem_peak_bytes = (int64_t)h * SIM_MEM_ACT + SIM_MEM_PEAK +
				    (leak ? (int64_t)sim->steps * SIM_MEM_LEAK : 0);
		t->mem_peak_op = h ? sim->plan.it[(h - 1) / (uint64_t)sim->o.gpus].op : 0;
		t->mem_peak_step = leak ? sim->steps - 1 : 0;
	}
	switch (sim->o.scenario) {
	case GT_SIM_STRAGGLER:
		t->straggler_pct = SIM_STRAGGLER_PCT;
		break;
	case GT_SIM_INPUT_BOUND:
		t->input_pct = SIM_INPUT_PCT;
		t->step_ns = sim->step_ns - 300 * US + sim->dl_ns;
		break;
	case GT_SIM_COMM_BOUND:
		t->comm_pct = SIM_COMM_PCT;
		t->step_ns = sim->step_ns + sim->q_ns;
		break;
	case GT_SIM_COPY_HEAVY:
		t->copy_pct = SIM_COPY_PCT;
		t->step_ns = sim->step_ns + sim->q_ns;
		break;
	case GT_SIM_STAGGERED:
		t->stagger_us = SIM_STAGGER_US;
		break;
	case GT_SIM_LAUNCH_BOUND:
		t->tiny_kernel_max_us = SIM_TINY_MAX_US;
		break;
	default:
		break;
	}
}

struct add_ctx {
	struct gt_store *s;
	int rc;
};

static int add_events(void *ctx, const struct gt_event *ev, size_t n)
{
	struct add_ctx *c = ctx;
	for (size_t i = 0; i < n; i++)
		if ((c->rc = gt_store_add(c->s, &ev[i])))
			return 1;
	return 0;
}

/* reserve each lane's final size so appends never move the arrays */
static int reserve_lanes(struct gt_sim *sim)
{
	size_t per[SIM_NSTREAMS] = { 0 };
	for (size_t i = 0; i < sim->plan.n; i++)
		per[sim->plan.it[i].stream]++;
	size_t steps = (size_t)sim->steps, G = (size_t)sim->o.gpus;
	for (int r = 0; r < sim->o.ranks; r++) {
		if (gt_store_reserve(sim->st, sim->rk[r].host_lane, steps * (3 + 2 * sim->plan.n * G)))
			return -ENOMEM;
		for (size_t g = 0; g < G; g++)
			for (int k = 0; k < SIM_NSTREAMS; k++)
				if (gt_store_reserve(sim->st, sim->gpu[r * G + g].lane[k], steps * per[k]))
					return -ENOMEM;
	}
	return 0;
}

int gt_sim_generate_truth(const struct gt_sim_opts *o, struct gt_store *s, struct gt_sim_truth *t,
		       char *err, size_t errlen)
{
	struct gt_sim *sim = gt_sim_new(o, s, err, errlen);
	if (!sim)
		return -EINVAL;
	struct add_ctx c = { s, 0 };
	int rc = reserve_lanes(sim);
	long n = 0;
	while (!rc && (n = gt_sim_next_step(sim, add_events, &c)) > 0)
		;
	if (!rc && n < 0)
		rc = c.rc ? c.rc : (int)n;
	if (!rc)
		rc = gt_store_finish(s);
	if (rc)
		snprintf(err, errlen, "simulator: %s", strerror(-rc));
	else if (t)
		gt_sim_truth_get(sim, t);
	gt_sim_free(sim);
	return rc;
}

int gt_sim_generate(const struct gt_sim_opts *o, struct gt_store *s, char *err, size_t errlen)
{
	return gt_sim_generate_truth(o, s, NULL, err, errlen);
}
