/*
 * simplant.h - a simulator pair with a planted per-step change, for the
 * per-step comparison's tests (analysis_diff, tui-opsstepcmp): the same
 * balanced run (1 GPU, one seed) twice, the second with one step's
 * DataLoader longer by extra_ns and everything after it in that step and in
 * every later step started extra_ns later.  The truth: that step's
 * DataLoader and Total grow by exactly extra_ns, every other category of
 * every step is unchanged (the DataLoader runs before the step's first
 * launch, with the GPU idle: nothing of a higher category overlaps it).
 */
#ifndef GTRACE_TESTS_SIMPLANT_H
#define GTRACE_TESTS_SIMPLANT_H

#include <stdint.h>
#include "gtrace/store.h"

/* the run into s (new, finished on return): `steps` steps, seed 7, every
 * event off_ns later than the simulator puts it (two runs that never
 * overlap in time open as separate runs); with extra_ns > 0 the plant in
 * the step_k-th step (from 0).  Returns the
 * planted step's number (its ProfilerStep arg), -1 without a plant, or
 * -2 on an error (message in err) */
int64_t simplant_run(struct gt_store *s, int steps, int step_k, int64_t extra_ns, int64_t off_ns,
		     char *err, size_t errlen);

#endif
