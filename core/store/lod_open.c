/*
 * lod_open.c - per coarse-index entry, the events still open at its start
 * (issue 16: a host lane's column colour without a long walk back).
 *
 * The innermost event at t is the last event (in start order) that covers
 * t.  For a column between nested calls it is the step enclosing them,
 * which may start hundreds of thousands of events before t: walking back
 * to it faults in cold cache-file pages far from the window.  Instead,
 * per superblock j (events [S_j, S_j + 4096), first start T_j), the lane
 * keeps the LOD_OPEN last events before S_j whose end is after T_j, with
 * their ends, and an upper bound of the ends of the open events it does
 * not keep.  Any event before S_j covering a t >= T_j, t > T_j, is open at
 * T_j (it starts at or before T_j and ends after t), so the walk back stops
 * at S_j and the answer is the last kept event ending after t, or none when
 * the bound is <= t; otherwise the walk goes on below the kept ones.
 */
#include <stdlib.h>
#include "store_priv.h"

#define B GT_LOD_BLOCK
#define SUPER ((size_t)GT_LOD_TOP * GT_LOD_BLOCK)

/* list j from list j - 1 and the events of superblock j - 1 */
static void open_step(const struct gt_lane *l, size_t j, struct lod_open *o)
{
	const struct lod_open *p = &l->top_open[j - 1];
	int64_t T = l->top_start[j];
	size_t lo = (j - 1) * SUPER, i = j * SUPER;
	o->n = 0;
	o->lost_end = INT64_MIN;
	while (i-- > lo) {
		if (i % B == B - 1 && l->blk_maxend[i / B] <= T)
			return;   /* nothing at or before i is open at T */
		int64_t e = gt_event_end(&l->ev[i]);
		if (e <= T)
			continue;
		if (o->n == LOD_OPEN) {
			/* the running max end bounds every end at or before i */
			o->lost_end = l->blk_maxend[i / B];
			return;
		}
		o->idx[o->n] = (uint32_t)i;
		o->end[o->n++] = e;
	}
	for (uint32_t k = 0; k < p->n; k++) {
		if (p->end[k] <= T)
			continue;
		if (o->n == LOD_OPEN) {
			o->lost_end = l->blk_maxend[p->idx[k] / B];
			return;
		}
		o->idx[o->n] = p->idx[k];
		o->end[o->n++] = p->end[k];
	}
	if (p->lost_end > T)
		o->lost_end = p->lost_end;
}

int lod_open_build(struct gt_lane *l)
{
	if (l->n_top > l->cap_open) {
		size_t cap = l->n_top + l->n_top / 2 + 4;
		struct lod_open *a = realloc(l->top_open, cap * sizeof(*a));
		if (!a)
			return -1;
		l->top_open = a;
		l->cap_open = cap;
	}
	/* list j reads events before S_j only: those of the lists built
	 * before are unchanged (a rebuild from 0 clears n_open) */
	for (size_t j = l->n_open; j < l->n_top; j++) {
		if (j == 0) {
			l->top_open[0].n = 0;
			l->top_open[0].lost_end = INT64_MIN;
		} else {
			open_step(l, j, &l->top_open[j]);
		}
	}
	/* the last list's superblock may still grow: its list does not change
	 * (it reads the superblock before), so all n_top lists stay valid */
	l->n_open = l->n_top;
	return 0;
}

size_t lod_open_floor(const struct gt_lane *l, int64_t t, size_t k)
{
	if (!k || !l->top_open)
		return 0;
	size_t j = (k - 1) / SUPER;
	if (j == 0 || j >= l->n_open || t <= l->top_start[j])
		return 0;
	return j * SUPER;
}

size_t lod_open_find(const struct gt_lane *l, int64_t t, size_t S, size_t *below)
{
	const struct lod_open *o = &l->top_open[S / SUPER];
	for (uint32_t q = 0; q < o->n; q++)
		if (o->end[q] > t)
			return o->idx[q];
	*below = o->lost_end > t ? (o->n ? o->idx[o->n - 1] : S) : 0;
	return SIZE_MAX;
}
