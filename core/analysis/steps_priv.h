/*
 * steps_priv.h - internals shared by steps.c, steps_widen.c, steps_infer.c:
 * the host span vector the step sources fill.
 */
#ifndef GTRACE_ANALYSIS_STEPS_PRIV_H
#define GTRACE_ANALYSIS_STEPS_PRIV_H

#include "gtrace/steps.h"

struct steps_host {
	int64_t t0, t1, number;   /* number -1 = use the ordinal */
	uint32_t name;
	unsigned flags;
};

struct steps_hv {
	struct steps_host *v;
	size_t n, cap;
};

int steps_hv_push(struct steps_hv *h, int64_t t0, int64_t t1, int64_t number,
		  uint32_t name, unsigned flags);
/* infer steps from the periodic kernel sequence of the busiest GPU lane */
int steps_infer(const struct gt_store *s, const uint32_t *gl, size_t ng, struct steps_hv *h);
/* device-side widening, per-GPU shares and tail dropping on a built list */
int steps_widen(const struct gt_store *s, struct gt_steps_list *out,
		const uint32_t *hl, size_t nh, const uint32_t *gl, size_t ng);
/* gt_steps_find without the cache (steps_cache.c wraps it) */
int steps_find_uncached(const struct gt_store *s, int32_t rank, const struct gt_steps_opts *o,
			struct gt_steps_list *out, char *err, size_t errlen);

#endif
