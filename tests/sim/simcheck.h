/*
 * simcheck.h - helpers of the simulator tests: generate a capture and
 * measure it directly from its events (no analysis code involved).
 */
#ifndef SIMCHECK_H
#define SIMCHECK_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/sim.h"
#include "gtrace/store.h"

struct span {
	int64_t s, e;
	uint64_t n;      /* step number (STEP arg) */
};

/* generate into a new finished store (asserts success) */
struct gt_store *simcheck_gen(enum gt_sim_scenario sc, int gpus, int ranks, int steps, uint64_t seed,
			      struct gt_sim_truth *t);
/* lane id of rank r's host thread / of (rank r, GPU g, stream id); UINT32_MAX if none */
uint32_t simcheck_host_lane(const struct gt_store *s, int r);
uint32_t simcheck_gpu_lane(const struct gt_store *s, int r, int g, int64_t stream);
/* rank r's step spans in order; returns count (caller frees *out) */
size_t simcheck_steps(const struct gt_store *s, int r, struct span **out);
/* index of the step whose span contains t, or -1 */
long simcheck_step_of(const struct span *sp, size_t n, int64_t t);
/* sum of durations of events on lane with kind (0 = any) starting in [t0, t1) */
int64_t simcheck_sum(const struct gt_store *s, uint32_t lane, int kind, int64_t t0, int64_t t1);
/* checks every structural rule (sorted lanes, correlation, steps); cr_assert inside */
void simcheck_valid(const struct gt_store *s, const struct gt_sim_truth *t);

#endif
