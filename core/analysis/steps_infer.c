/*
 * steps_infer.c - steps from periodic device work when a trace has no step
 * annotation: on the GPU lane with the most kernels, the kernel name
 * sequence is searched for its period d, tried at each recurrence of the
 * first kernel's name (so one NCCL burst or one optimizer sequence per step
 * is found as well as any repeating pattern); a period is accepted when at
 * least 90 % of the names match their d-th successor.  Step k starts at
 * kernel k*d; the spans are flagged GT_EVF_INFERRED.
 */
#include <errno.h>
#include <stdlib.h>
#include "steps_priv.h"

#define INFER_MAX_TRIES 64
#define INFER_MAX_CHECK 20000

int steps_infer(const struct gt_store *s, const uint32_t *gl, size_t ng, struct steps_hv *h)
{
	const struct gt_lane *best = NULL;
	size_t best_k = 0;
	for (size_t k = 0; k < ng; k++) {
		const struct gt_lane *l = gt_store_lane_at(s, gl[k]);
		if (!((l->kinds_mask >> GT_EV_KERNEL) & 1))
			continue;
		size_t nk = 0;
		for (size_t i = 0; i < l->n; i++) {
			gt_store_read_walk(s, l, 0, i, l->n);
			nk += l->ev[i].kind == GT_EV_KERNEL;
		}
		if (nk > best_k) {
			best_k = nk;
			best = l;
		}
	}
	if (!best || best_k < 4)
		return 0;
	size_t *ki = malloc(best_k * sizeof(*ki));
	if (!ki)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < best->n; i++)
		if (best->ev[i].kind == GT_EV_KERNEL)
			ki[n++] = i;
	const struct gt_event *ev = best->ev;
	if (n < 4) {             /* cannot happen (best_k >= 4 kernels counted above) */
		free(ki);
		return 0;
	}
	uint32_t first = ev[ki[0]].name;
	size_t period = 0;
	int tries = 0;
	for (size_t d = 1; d <= n / 2 && tries < INFER_MAX_TRIES; d++) {
		if (ev[ki[d]].name != first)
			continue;
		tries++;
		size_t m = n - d < INFER_MAX_CHECK ? n - d : INFER_MAX_CHECK, same = 0;
		for (size_t i = 0; i < m; i++)
			same += ev[ki[i]].name == ev[ki[i + d]].name;
		if (same * 10 >= m * 9) {
			period = d;
			break;
		}
	}
	int rc = 0;
	if (period) {
		int64_t num = 0;
		for (size_t b = 0; b < n && !rc; b += period, num++) {
			int64_t t0 = ev[ki[b]].start_ns, t1;
			if (b + period < n) {
				t1 = ev[ki[b + period]].start_ns;
			} else {
				t1 = t0;
				for (size_t i = b; i < n; i++)
					if (gt_event_end(&ev[ki[i]]) > t1)
						t1 = gt_event_end(&ev[ki[i]]);
			}
			rc = steps_hv_push(h, t0, t1, num, 0, GT_EVF_INFERRED);
		}
	}
	free(ki);
	return rc;
}
