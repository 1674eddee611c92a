/*
 * sim_priv.h - the simulator's private state, shared by core/sim/ only.
 *
 * A step is described by a plan: the list of work items every GPU runs,
 * in the order the host thread launches them (same list for every GPU).
 * An item is one CPU op + one runtime call on the rank's host thread and
 * one piece of GPU work on one of the GPU's three streams.
 *
 * Generating a step (sim_step.c) has three phases:
 *   1. host: per rank, the host thread issues every item of every GPU
 *      (round robin over GPUs, gated in the staggered scenario); GPU events
 *      get their earliest start (launch end + latency) and duration;
 *   2. GPU: per GPU, items in order on their streams (FIFO per stream,
 *      cross-stream waits through item deps); NCCL items are collectives
 *      over all GPUs of all ranks: they end together;
 *   3. host again: the end-of-step synchronize waits for the GPUs.
 * All times are ns on one axis.
 */
#ifndef GTRACE_SIM_PRIV_H
#define GTRACE_SIM_PRIV_H

#include <stdint.h>
#include "gtrace/sim.h"

enum { SIM_ST_COMPUTE = 0, SIM_ST_COPY = 1, SIM_ST_NCCL = 2, SIM_NSTREAMS = 3 };

/* stream ids (as CUDA/Kineto would number them) */
#define SIM_STREAM_COMPUTE 7
#define SIM_STREAM_COPY    13
#define SIM_STREAM_NCCL    21

/* item deps: wait for the current tail of these streams */
#define SIM_DEP_COMPUTE (1u << SIM_ST_COMPUTE)
#define SIM_DEP_COPY    (1u << SIM_ST_COPY)
#define SIM_DEP_NCCL    (1u << SIM_ST_NCCL)

/* item flags */
#define SIM_IT_STRAGGLE 0x1u   /* duration scaled on the straggler GPU */
#define SIM_IT_PLANTED  0x2u   /* duration is (a share of) the planted quantity q */

struct sim_item {
	uint8_t kind;        /* GT_EV_KERNEL / GT_EV_MEMCPY / GT_EV_MEMSET */
	uint8_t stream;      /* SIM_ST_* */
	uint8_t deps;        /* SIM_DEP_* */
	uint8_t sub;         /* copy kind */
	uint16_t evflags;    /* GT_EVF_* of the GPU event */
	uint16_t flags;      /* SIM_IT_* */
	uint32_t name;       /* GPU work name (string id) */
	uint32_t op;         /* CPU op name */
	uint32_t api;        /* runtime call name */
	uint64_t arg;        /* kconf | nccl << 32, or bytes */
	int64_t dur_ns;      /* nominal GPU duration */
	int64_t api_ns;      /* nominal runtime call duration */
	int64_t pre_ns;      /* nominal CPU op time before the call */
};

struct sim_plan {
	struct sim_item *it;
	size_t n, cap;
	int kernels;         /* compute-stream kernels per GPU per step */
};

struct sim_buf {
	struct gt_event *ev;
	size_t n, cap;
};

struct sim_gpu {
	uint32_t lane[SIM_NSTREAMS];
	double slow;                 /* compute duration multiplier */
	int64_t tail[SIM_NSTREAMS];  /* end of the last work per stream */
	int64_t gate_ns;             /* host may not launch before (staggered) */
	size_t next;                 /* next item to launch (phase 1) */
	struct sim_buf buf[SIM_NSTREAMS];
	size_t cur[SIM_NSTREAMS];    /* phase 2 cursors */
	size_t item;                 /* phase 2 item cursor */
	int64_t nccl_start;          /* phase 2: start of the pending collective */
};

struct sim_rank {
	int64_t pid;
	uint32_t host_lane;
	uint32_t corr, ext;
	int64_t t;                   /* host time where the next step starts */
	int64_t t_items;             /* host time after the step's last item */
	struct sim_buf host;
};

struct sim_rng {
	uint64_t s[4];
};

struct gt_sim {
	struct gt_sim_opts o;
	struct gt_store *st;
	struct sim_plan plan;
	struct sim_rank *rk;         /* ranks */
	struct sim_gpu *gpu;         /* ranks * gpus, rank-major */
	struct sim_rng rng;
	int steps, step;
	int64_t dl_ns;               /* DataLoader duration */
	int64_t q_ns;                /* planted quantity (comm, copies) */
	int64_t step_ns;             /* calibrated step without the plant */
	uint64_t events_per_step;
	int straggler;               /* global GPU index, -1 none */
	int calibrating;
	/* string ids */
	uint32_t s_dl, s_sync;
};

/* 1 when rank r gets the scenario's plant (every rank, or the one asked for) */
static inline int sim_planted(const struct gt_sim *sim, int r)
{
	return !(sim->o.flags & GT_SIM_F_ONE_RANK) || r == sim->o.scenario_rank;
}

/* DataLoader duration of a rank that is not input-bound */
#define SIM_DL_BASE_NS      300000

/* scenario constants (docs/simulator.md) */
#define SIM_STRAGGLER_PCT   18.0
#define SIM_INPUT_PCT       40.0
#define SIM_COMM_PCT        55.0
#define SIM_COPY_PCT        25.0
#define SIM_STAGGER_US      200.0
#define SIM_TINY_MAX_US     10.0

/* sim_plan.c: the items of one step for the options' scenario */
int sim_plan_build(struct gt_sim *sim);
void sim_plan_free(struct sim_plan *p);

/* sim_step.c: generate step number sim->step into the buffers (no emit) */
int sim_step_gen(struct gt_sim *sim);
/* reset host/GPU state and the PRNG to the start of the capture */
void sim_state_reset(struct gt_sim *sim);

/* xoshiro256** seeded with splitmix64 */
static inline uint64_t sim_rng_next(struct sim_rng *r)
{
	uint64_t *s = r->s;
	uint64_t x = s[1] * 5, res = ((x << 7) | (x >> 57)) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return res;
}

static inline void sim_rng_seed(struct sim_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++) {
		uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		r->s[i] = z ^ (z >> 31);
	}
}

/* uniform in [0, 1) */
static inline double sim_rng_unit(struct sim_rng *r)
{
	return (double)(sim_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* v * (1 + j * u), u uniform in [-1, 1) */
static inline int64_t sim_jitter(struct sim_rng *r, int64_t v, double j)
{
	return (int64_t)((double)v * (1.0 + j * (2.0 * sim_rng_unit(r) - 1.0)));
}

/* planted allocator records (sim_mem.c) */
#define SIM_MEM_ACT  ((int64_t)1 << 20)    /* per op of the first half, freed in the second */
#define SIM_MEM_PEAK ((int64_t)64 << 20)   /* in the last op of the first half, freed in it */
#define SIM_MEM_LEAK ((int64_t)8 << 20)    /* per step, never freed */
uint64_t sim_mem_events(const struct gt_sim_opts *o, uint64_t n_ops);
int sim_mem_step(struct gt_sim *sim);

#endif
