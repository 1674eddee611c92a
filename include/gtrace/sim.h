/*
 * gtrace/sim.h - the simulator: a synthetic data-parallel trainer with a
 * planted bottleneck per scenario (docs/simulator.md says what and how much).
 *
 * The generator is step-driven so it serves three users: `gtrace sim -o`
 * (whole capture to a file), the live synthetic source (a step at a time at
 * a given rate) and the tests/benchmarks (straight into a store).
 * Deterministic for a given seed and options.
 */
#ifndef GTRACE_SIM_H
#define GTRACE_SIM_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/store.h"

enum gt_sim_scenario {
	GT_SIM_BALANCED = 0,
	GT_SIM_INPUT_BOUND,
	GT_SIM_LAUNCH_BOUND,
	GT_SIM_STRAGGLER,
	GT_SIM_COMM_BOUND,
	GT_SIM_COPY_HEAVY,
	GT_SIM_STAGGERED,
	GT_SIM_SCENARIO_COUNT
};

struct gt_sim_opts {
	int gpus;              /* GPUs per rank, default 1 when ranks > 1 else 4 */
	int ranks;             /* processes, default 1 */
	int steps;             /* training steps, default 20 (grown to reach events) */
	enum gt_sim_scenario scenario;
	uint64_t events;       /* target event count, 0 = whatever steps give */
	uint64_t seed;         /* default 1 */
	int64_t t0_ns;         /* time of the first event, 0 = a fixed epoch */
	unsigned flags;        /* SIM_F_* */
	int scenario_rank;     /* with GT_SIM_F_ONE_RANK: the only rank that gets the plant */
};

/* plant the scenario in rank o->scenario_rank only (the others run the
 * balanced step); for input-bound, straggler and staggered (balanced plants
 * nothing); the others are collectives or the shared step plan: -EINVAL.
 * Without the flag every rank gets it (the default). */
#define GT_SIM_F_ONE_RANK 0x1u
/* planted allocator records on device 0 of every rank (docs/simulator.md
 * "Memory"): a peak in the middle op of each step; with MEMLEAK also
 * 8 MiB per step never freed.  Without these flags no record is written. */
#define GT_SIM_F_MEMORY  0x2u
#define GT_SIM_F_MEMLEAK 0x4u

/* "balanced" -> GT_SIM_BALANCED ...; -1 when unknown */
int gt_sim_scenario_parse(const char *name);
const char *gt_sim_scenario_name(enum gt_sim_scenario s);

struct gt_sim;

/* emit: called with a batch of events whose ids refer to the store given to
 * gt_sim_new (strings, lanes, kconf are interned there); return non-zero to stop */
typedef int (*gt_sim_emit_fn)(void *ctx, const struct gt_event *ev, size_t n);

struct gt_sim *gt_sim_new(const struct gt_sim_opts *o, struct gt_store *s, char *err, size_t errlen);
void gt_sim_free(struct gt_sim *sim);
/* generate the next step for every rank and GPU; returns events emitted,
 * 0 when all steps are done, negative on error */
long gt_sim_next_step(struct gt_sim *sim, gt_sim_emit_fn emit, void *ctx);
/* steps the options ask for (after growing them to reach o->events) */
int gt_sim_step_count(const struct gt_sim *sim);

/* whole capture into a store (finished); 0 or negative errno */
int gt_sim_generate(const struct gt_sim_opts *o, struct gt_store *s, char *err, size_t errlen);

/* "balanced, input-bound, ..." (for messages) */
const char *gt_sim_scenario_list(void);

/* What a scenario planted (docs/simulator.md), for tests of the analyses.
 * Percentages are of the step (ProfilerStep#N span) time; 0 = not planted. */
struct gt_sim_truth {
	enum gt_sim_scenario scenario;
	int scenario_rank;          /* the rank planted (GT_SIM_F_ONE_RANK), -1 = every rank */
	int gpus, ranks, steps;     /* GPUs per rank, ranks, steps generated */
	int kernels_per_step;       /* compute-stream kernels per GPU per step */
	uint64_t events_per_step;   /* all ranks and GPUs */
	uint64_t events;            /* events_per_step * steps */
	int straggler_rank;         /* -1 = none */
	int straggler_gpu;          /* device ordinal within straggler_rank, -1 = none */
	double straggler_pct;       /* its compute kernels take this much longer, % */
	double input_pct;           /* DataLoader share of the step, % (of the planted ranks) */
	double comm_pct;            /* NCCL AllReduce share of the step, % */
	double copy_pct;            /* planted (activation offload) memcpy share, % */
	double stagger_us;          /* GPU k's first kernel of a step starts k * this after GPU 0's */
	double tiny_kernel_max_us;  /* launch-bound: every compute kernel is shorter */
	int64_t step_ns;            /* nominal step time (calibrated, with the plant) */
	int64_t step_base_ns;       /* step time measured without the plant */
	int64_t stream_compute, stream_copy, stream_nccl;  /* stream ids of the lanes */
	/* GT_SIM_F_MEMORY / GT_SIM_F_MEMLEAK (device 0 of each rank; 0 when not asked) */
	int64_t mem_peak_bytes;     /* the highest allocated bytes (in the last step with a leak) */
	uint32_t mem_peak_op;       /* string id of the CPU op the peak is in */
	int64_t mem_peak_step;      /* ProfilerStep number of the peak's step */
	int64_t mem_leak_bytes;     /* growth of allocated bytes per step */
};

void gt_sim_truth_get(const struct gt_sim *sim, struct gt_sim_truth *t);
/* gt_sim_generate that also reports the truth */
int gt_sim_generate_truth(const struct gt_sim_opts *o, struct gt_store *s, struct gt_sim_truth *t,
		       char *err, size_t errlen);

#endif
