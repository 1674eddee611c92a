/*
 * store_prefetch.c - read-ahead of the cache-file pages a frame's queries
 * will touch (issue 16: zoomed-in frames with a cold page cache).
 *
 * Under a memory budget a lane's events and index live in the store's cache
 * file; a frame's queries fault them in one synchronous disk read at a time,
 * lane after lane (a binary search alone touches log2 pages).
 * gt_store_prefetch asks the kernel for all of them first, in two rounds
 * over the frame's lanes (MADV_WILLNEED: read-ahead on the file, queued
 * without waiting for it):
 *   1. from the lane's coarse index (on the heap: no file page touched), the
 *      block keys (blk_start, blk_maxend) of the superblocks of GT_LOD_TOP
 *      blocks that overlap the window;
 *   2. from those keys (the reads of round 1 complete while round 2 walks
 *      the lanes in the same order), the blocks the queries read events
 *      of: where the first event still running at t0 is (a long event may
 *      start far before the window: the events between are not read), and
 *      from the start at t0 to the start at t1; their busy prefix and the
 *      argmax pyramid's entries over them (every column queries it).
 * The disk then works on every lane's pages at once, and round 2 asks only
 * for pages that hold events the frame draws (a block either side).
 */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include "store_priv.h"

#define B GT_LOD_BLOCK

/* advise bytes [off, off + len) of the array p when the cache file holds it */
static size_t advise(const struct gt_store *s, const void *p, size_t off, size_t len)
{
	static size_t pg;
	if (!p || !len || !store_arena_owns(s->arena, p))
		return 0;
	if (!pg) {
		long v = sysconf(_SC_PAGESIZE);
		pg = v > 0 ? (size_t)v : 4096;
	}
	uintptr_t a = (uintptr_t)p + off, a0 = a & ~(uintptr_t)(pg - 1), e = a + len;
	if (madvise((void *)a0, e - a0, MADV_WILLNEED))
		return 0;
	return e - a0;
}

static int prefetchable(const struct gt_store *s, const struct gt_lane *l)
{
	return s->arena && l->n && l->blk_maxend && l->n_top && l->n_indexed == l->n;
}

/* round 1: blocks [*b0, *b1) of the superblocks around [t0, t1) */
static void super_range(const struct gt_lane *l, int64_t t0, int64_t t1, size_t *b0, size_t *b1)
{
	size_t nb = (l->n + B - 1) / B;
	*b0 = lod_top_from_maxend(l, t0);
	*b0 = *b0 >= GT_LOD_TOP ? *b0 - GT_LOD_TOP : 0;    /* busy up to t0 reads the block before */
	*b1 = lod_top_from_start(l, t1) / B + 2 * GT_LOD_TOP;  /* the galloping search probes past */
	if (*b1 > nb)
		*b1 = nb;
}

/* first block in [lo, hi) whose key is >= t (hi if none) */
static size_t first_ge(const int64_t *key, size_t lo, size_t hi, int64_t t)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (key[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* the events and busy prefix of blocks [b0, b1) */
static size_t advise_blocks(const struct gt_store *s, const struct gt_lane *l, size_t b0,
			    size_t b1)
{
	size_t e0 = b0 * B, e1 = b1 * B < l->n ? b1 * B : l->n;
	if (e0 >= e1)
		return 0;
	return advise(s, l->ev, e0 * sizeof(*l->ev), (e1 - e0) * sizeof(*l->ev)) +
	       advise(s, l->blk_busy, b0 * sizeof(int64_t), (b1 - b0) * sizeof(int64_t));
}

/* the argmax pyramid entries the range_argmax of a frame's columns over
 * events [e0, e1) read: each column's query reads the entries at both of
 * its ends at each level, and the columns' ends fall anywhere in the
 * window, so every entry over it (the top level whole).  A level has a
 * sixteenth of the entries of the one below: all of them together are
 * less than a tenth of the window's event bytes, which are asked for
 * anyway. */
static size_t advise_pyramid(const struct gt_store *s, const struct gt_lane *l, size_t e0,
			     size_t e1)
{
	size_t n = 0, d = B;
	for (int k = 0; k < l->n_lvl; k++, d *= B) {
		size_t k0 = k + 1 == l->n_lvl ? 0 : e0 / d, k1 = (e1 + d - 1) / d + 1;
		if (k1 > l->lvl_n[k])
			k1 = l->lvl_n[k];
		if (k0 >= k1)
			continue;
		n += advise(s, l->lvl_max[k], k0 * sizeof(uint32_t), (k1 - k0) * sizeof(uint32_t));
		n += advise(s, l->lvl_dur[k], k0 * sizeof(int64_t), (k1 - k0) * sizeof(int64_t));
	}
	return n;
}

/* a host column's innermost event is, between nested calls, one of the
 * ranges open at its superblock's start (lod_open.c), far before the
 * window: the events kept for the superblocks of blocks [b0, b1) (64 at
 * most) */
static size_t advise_open(const struct gt_store *s, const struct gt_lane *l, size_t b0,
			  size_t b1)
{
	size_t n = 0, j0 = b0 / GT_LOD_TOP, j1 = b1 / GT_LOD_TOP + 1;
	if (j1 > l->n_open)
		j1 = l->n_open;
	if (j1 > j0 + 64)
		j1 = j0 + 64;
	for (size_t j = j0; j < j1; j++)
		for (uint32_t q = 0; q < l->top_open[j].n; q++)
			n += advise(s, l->ev, l->top_open[j].idx[q] * sizeof(*l->ev), sizeof(*l->ev));
	return n;
}

/* round 2 for one lane: from its block keys within [lo, hi), the blocks
 * whose events the queries over [t0, t1) read: the first still running at
 * t0 (and the 256 events the dominant's fallback scans), the blocks from
 * the start at t0 to the start at t1 (a block either side), the pyramid */
static size_t advise_window(const struct gt_store *s, const struct gt_lane *l, int64_t t0,
			    int64_t t1, size_t lo, size_t hi)
{
	size_t bm = first_ge(l->blk_maxend, lo, hi, t0);
	size_t bs0 = first_ge(l->blk_start, lo, hi, t0), bs1 = first_ge(l->blk_start, lo, hi, t1);
	bs0 = bs0 > lo ? bs0 - 1 : lo;
	bs1 = bs1 + 1 < hi ? bs1 + 1 : hi;
	if (bm >= hi)   /* nothing runs at or after t0: the searches still read the last block */
		return advise_blocks(s, l, bs0, bs1);
	size_t m1 = bm + 256 / B + 1 < hi ? bm + 256 / B + 1 : hi, n = 0;
	size_t m0 = bm > lo ? bm - 1 : lo;
	if (m1 >= bs0)
		n += advise_blocks(s, l, m0 < bs0 ? m0 : bs0, bs1 > m1 ? bs1 : m1);
	else
		n += advise_blocks(s, l, m0, m1) + advise_blocks(s, l, bs0, bs1);
	n += advise_pyramid(s, l, bm * B, bs1 * B);
	if (l->key.type == GT_LANE_HOST && l->n_lvl > 0) {
		/* a host column's innermost event walks back to the range
		 * enclosing it over the block keys and longest durations
		 * (gt_store_lane_event_at): those of 64 K events before */
		size_t w0 = bs0 > 4096 ? bs0 - 4096 : 0;
		n += advise(s, l->blk_start, w0 * sizeof(int64_t), (bs0 - w0) * sizeof(int64_t));
		n += advise(s, l->blk_maxend, w0 * sizeof(int64_t), (bs0 - w0) * sizeof(int64_t));
		n += advise(s, l->lvl_dur[0], w0 * sizeof(int64_t), (bs0 - w0) * sizeof(int64_t));
		n += advise_open(s, l, bs0, bs1);
	}
	return n;
}

size_t gt_store_prefetch(const struct gt_store *s, const uint32_t *lanes, size_t n, int64_t t0,
			 int64_t t1)
{
	size_t bytes = 0;
	if (!s->arena || t1 < t0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (lanes[i] >= s->n_lanes)
			continue;
		const struct gt_lane *l = s->lanes[lanes[i]];
		if (!prefetchable(s, l))
			continue;
		size_t b0, b1;
		super_range(l, t0, t1, &b0, &b1);
		bytes += advise(s, l->blk_start, b0 * sizeof(int64_t), (b1 - b0) * sizeof(int64_t));
		bytes += advise(s, l->blk_maxend, b0 * sizeof(int64_t), (b1 - b0) * sizeof(int64_t));
	}
	for (size_t i = 0; i < n; i++) {
		if (lanes[i] >= s->n_lanes)
			continue;
		const struct gt_lane *l = s->lanes[lanes[i]];
		if (!prefetchable(s, l))
			continue;
		size_t lo, hi;
		super_range(l, t0, t1, &lo, &hi);
		if (lo < hi)
			bytes += advise_window(s, l, t0, t1, lo, hi);
	}
	return bytes;
}
