/*
 * gtrace/steps.h - training steps of a capture, per rank (docs/analyses.md §2).
 *
 * Sources, first that yields steps for the rank: GT_EV_STEP spans (Kineto
 * ProfilerStep#N, the gtrace step annotation), NVTX ranges matching the step
 * pattern (default ^(ProfilerStep#|step|train_step|iteration)), else steps
 * inferred from the periodic kernel sequence of the busiest GPU stream
 * (flagged GT_EVF_INFERRED).
 *
 * Device-side widening follows the PyTorch TensorBoard plugin: a host step
 * [s, e] becomes [max(previous end, s), max(e, end of the last GPU activity
 * launched by a runtime call lying wholly inside [s, e])]; trailing steps that
 * launched nothing are dropped, and so is a last step that launched under
 * 80 % of the previous step's GPU activities (cut off by the capture end).
 */
#ifndef GTRACE_STEPS_H
#define GTRACE_STEPS_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/store.h"

enum gt_steps_source {
	GT_STEPS_SRC_NONE = 0,    /* no steps found */
	GT_STEPS_SRC_ANNOT,       /* GT_EV_STEP spans other than ProfilerStep (gtrace annotation) */
	GT_STEPS_SRC_NVTX,        /* NVTX ranges matching the pattern */
	GT_STEPS_SRC_INFERRED,    /* periodic device work */
	GT_STEPS_SRC_PROFSTEP     /* Kineto ProfilerStep#N spans */
};

/* one GPU's share of a step */
struct gt_steps_gpu {
	int32_t device;         /* device ordinal */
	uint32_t acts;          /* GPU activities of the step on this GPU */
	int64_t first_ns;       /* start of its first activity, INT64_MAX = none */
	int64_t last_ns;        /* end of its last activity, INT64_MIN = none */
};

struct gt_steps_step {
	int64_t number;         /* N of ProfilerStep#N, trailing number of the name, or ordinal */
	int32_t rank;
	uint32_t name;          /* string id of the source span (0 for inferred) */
	int64_t host_t0_ns, host_t1_ns;  /* host span */
	int64_t t0_ns, t1_ns;   /* device-widened window */
	uint32_t acts;          /* GPU activities launched inside the host span */
	unsigned flags;         /* GT_EVF_INFERRED */
	struct gt_steps_gpu *gpu;  /* ngpus entries (same order as the list's gpus) */
};

struct gt_steps_list {
	int32_t rank;
	enum gt_steps_source source;
	int widened;            /* 1 when device-side widening applied */
	struct gt_steps_step *v;   /* sorted by window start */
	size_t n;
	int32_t *gpus;          /* device ordinals of the rank that have GPU lanes */
	size_t ngpus;
	size_t dropped;         /* trailing steps dropped (no work / cut off) */
	struct gt_steps_gpu *gpu_mem;  /* storage behind v[i].gpu */
};

struct gt_steps_opts {
	const char *pattern;    /* POSIX extended regex for NVTX step names; NULL = default */
	unsigned flags;
};

#define GT_STEPS_DEFAULT_PATTERN "^(ProfilerStep#|step|train_step|iteration)"

/* steps of one rank (ranks of -1 count as 0); an empty list (source NONE) is
 * not an error; 0 or negative errno with a message */
int gt_steps_find(const struct gt_store *s, int32_t rank, const struct gt_steps_opts *o,
	       struct gt_steps_list *out, char *err, size_t errlen);
void gt_steps_list_done(struct gt_steps_list *l);
/* gt_steps_find keeps the last few results per (store, rank, pattern), checked
 * against a fingerprint of the store's lanes (a live store that grew misses);
 * thread-safe.  Drop them all: */
void gt_steps_cache_clear(void);

/* ranks present in the store (sorted, -1 mapped to 0); returns the count,
 * *out malloc'ed (NULL when none), negative errno on failure */
long gt_steps_ranks(const struct gt_store *s, int32_t **out);

/* ---- steps as time windows (steps_scope.c: the one place that does it) ---- */
struct gt_scope;
/* step st's window inside the scope: 1 and [*t0_ns, *t1_ns) when the step
 * counts (its number is sc->step when that is set, and its window overlaps
 * [sc->t0_ns, sc->t1_ns): clipped to it; an empty step inside the range
 * counts), else 0.  sc NULL = the whole trace */
int gt_steps_window(const struct gt_steps_step *st, const struct gt_scope *sc, int64_t *t0_ns,
		 int64_t *t1_ns);
/* window of step `step` (its number) over all ranks: earliest start, latest
 * end; 0 or -ENOENT */
int gt_steps_range(const struct gt_store *s, int64_t step, int64_t *t0_ns, int64_t *t1_ns);
/* the scope a report runs on: *in (NULL = everything) with its range
 * narrowed to step in->step's window over all ranks (gt_steps_range) when a
 * step is set; in and out may be the same.  0, or -ENOENT with "no step N
 * in the trace" in err */
int gt_steps_scope(const struct gt_store *s, const struct gt_scope *in, struct gt_scope *out,
		char *err, size_t errlen);

const char *gt_steps_source_name(enum gt_steps_source src);

#endif
