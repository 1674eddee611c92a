/*
 * kernel_stats_sel.c - exact medians without a full sort: quickselect (median of
 * three pivots) for small arrays; for large ones a histogram pass over the
 * top bits of (value - min) finds the bucket holding the middle, one pass
 * gathers that bucket, and the same again inside it until it is small
 * enough for quickselect.  O(n).  Arrays in a spill (under a memory budget)
 * are passed over a block at a time, each block announced to it.
 */
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "analysis.h"
#include "kernel_stats_priv.h"
#include "../util/sortx.h"
#include "../util/spill.h"

/* max of v[0..n) */
static int64_t max_of(const int64_t *v, size_t n)
{
	int64_t m = v[0];
	for (size_t i = 1; i < n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

static int64_t select_k(struct spill *sp, int64_t *v, size_t n, size_t k, int64_t *lower);

/* the smallest and largest of v[0..n) (n > 0), a block at a time, each
 * announced to the spill when v lives there */
static void min_max(struct spill *sp, const int64_t *v, size_t n, int64_t *mn, int64_t *mx)
{
	*mn = *mx = v[0];
	for (size_t b = 0; b < n; b = kernel_stats_blk_end(b, n)) {
		size_t e = kernel_stats_blk_end(b, n);
		kernel_stats_touch(sp, v + b, e - b);
		for (size_t i = b; i < e; i++) {
			*mn = v[i] < *mn ? v[i] : *mn;
			*mx = v[i] > *mx ? v[i] : *mx;
		}
	}
}

/* the k-th smallest (and, when lower is set, the (k-1)-th) by one
 * histogram pass over the top RADIX_BITS of (v - min), one pass gathering
 * the bucket holding k to the front, then the same inside that bucket
 * (quickselect once it is small).  Passes go a block at a time, each
 * announced to the spill when v lives there (the gather touches the front
 * as well as the block: twice the block) */
#define RADIX_BITS 11
static int64_t radix_select(struct spill *sp, int64_t *v, size_t n, size_t k, int64_t *lower)
{
	int64_t mn, mx;
	min_max(sp, v, n, &mn, &mx);
	uint64_t range = (uint64_t)mx - (uint64_t)mn;
	if (range == 0) {
		if (lower)
			*lower = mn;
		return mn;
	}
	int bits = 64 - __builtin_clzll(range);
	int shift = bits > RADIX_BITS ? bits - RADIX_BITS : 0;
	uint32_t hist[1u << RADIX_BITS] = { 0 };
	for (size_t b = 0; b < n; b = kernel_stats_blk_end(b, n)) {
		size_t e = kernel_stats_blk_end(b, n);
		kernel_stats_touch(sp, v + b, e - b);
		for (size_t i = b; i < e; i++)
			hist[((uint64_t)v[i] - (uint64_t)mn) >> shift]++;
	}
	size_t below = 0, bk = 0;
	while (below + hist[bk] <= k)
		below += hist[bk++];
	/* gather the bucket to the front of v (order of v does not matter) */
	size_t m = 0;
	int64_t prev_max = INT64_MIN;     /* largest value of the lower buckets */
	for (size_t b = 0; b < n; b = kernel_stats_blk_end(b, n)) {
		size_t e = kernel_stats_blk_end(b, n);
		kernel_stats_touch(sp, v + b, 2 * (e - b));
		for (size_t i = b; i < e; i++) {
			uint64_t d = ((uint64_t)v[i] - (uint64_t)mn) >> shift;
			if (d == bk) {
				int64_t t = v[m];
				v[m++] = v[i];
				v[i] = t;
			} else if (d < bk && v[i] > prev_max) {
				prev_max = v[i];
			}
		}
	}
	size_t kk = k - below;
	int64_t lo, r = select_k(sp, v, m, kk, lower && kk > 0 ? &lo : NULL);
	if (lower)
		*lower = kk > 0 ? lo : prev_max;
	return r;
}

/* selection in an array of a spill without writing to it: a write makes
 * a dropped page dirty, to be written back to the disk (a gather over a
 * quarter of a GPU's launch figures cost more than the rest of its
 * report).  The range [lo, hi] holding the k-th is narrowed by histograms
 * of SPILL_BITS over it until it holds at most SPILL_GATHER values, which
 * are copied to the heap; usually three passes, all reads */
#define SPILL_BITS 16
#define SPILL_GATHER ((size_t)1 << 18)
static int64_t spill_select(struct spill *sp, int64_t *v, size_t n, size_t k, int64_t *lower)
{
	int64_t lo, hi;
	min_max(sp, v, n, &lo, &hi);
	size_t below = 0, in = n;     /* values under lo, values in [lo, hi] */
	uint32_t *hist = NULL;
	while (lo < hi && in > SPILL_GATHER) {
		if (!hist && !(hist = malloc(sizeof(*hist) << SPILL_BITS)))
			return radix_select(sp, v, n, k, lower);   /* out of memory: in place */
		uint64_t range = (uint64_t)hi - (uint64_t)lo;
		int bits = 64 - __builtin_clzll(range);
		int sh = bits > SPILL_BITS ? bits - SPILL_BITS : 0;
		memset(hist, 0, sizeof(*hist) << SPILL_BITS);
		for (size_t b = 0; b < n; b = kernel_stats_blk_end(b, n)) {
			size_t e = kernel_stats_blk_end(b, n);
			kernel_stats_touch(sp, v + b, e - b);
			for (size_t i = b; i < e; i++)
				if (v[i] >= lo && v[i] <= hi)
					hist[((uint64_t)v[i] - (uint64_t)lo) >> sh]++;
		}
		size_t bk = 0;
		while (below + hist[bk] <= k)
			below += hist[bk++];
		in = hist[bk];
		uint64_t off = (uint64_t)bk << sh, top = off + (((uint64_t)1 << sh) - 1);
		hi = (int64_t)((uint64_t)lo + (top < range ? top : range));
		lo = (int64_t)((uint64_t)lo + off);
	}
	free(hist);
	/* gather [lo, hi] (lo == hi: nothing to gather) and the largest value
	 * under lo, the (k-1)-th when the k-th is the range's smallest */
	int64_t *t = lo < hi ? malloc((in ? in : 1) * sizeof(*t)) : NULL;
	int64_t prev = INT64_MIN;
	size_t m = 0;
	if (lo < hi && !t)
		return radix_select(sp, v, n, k, lower);   /* out of memory: in place */
	if (t || (lower && k == below))
		for (size_t b = 0; b < n; b = kernel_stats_blk_end(b, n)) {
			size_t e = kernel_stats_blk_end(b, n);
			kernel_stats_touch(sp, v + b, e - b);
			for (size_t i = b; i < e; i++) {
				if (v[i] < lo)
					prev = v[i] > prev ? v[i] : prev;
				else if (t && v[i] <= hi)
					t[m++] = v[i];
			}
		}
	int64_t r = lo, lw = lo;
	if (t) {
		r = select_k(NULL, t, m, k - below, k > below ? &lw : NULL);
		free(t);
	}
	if (lower)
		*lower = k > below ? lw : prev;
	return r;
}

/* the k-th smallest of v[0..n) (and the (k-1)-th in *lower, k > 0) */
static int64_t select_k(struct spill *sp, int64_t *v, size_t n, size_t k, int64_t *lower)
{
	if (n >= 4096 && sp && spill_owns(sp, v))
		return spill_select(sp, v, n, k, lower);
	if (n >= 4096)
		return radix_select(sp, v, n, k, lower);
	int64_t r = sortx_select_i64(v, n, k);
	/* after selection every v[0..k) <= v[k]: the lower one is their max */
	if (lower)
		*lower = max_of(v, k);
	return r;
}

static double median_of(struct spill *sp, int64_t *v, size_t n)
{
	if (n == 0)
		return 0;
	size_t k = n / 2;
	int64_t lo, hi = select_k(sp, v, n, k, (n & 1) ? NULL : &lo);
	if (n & 1)
		return (double)hi;
	return ((double)lo + (double)hi) / 2.0;
}

int64_t analysis_median_i64_spill(struct spill *sp, int64_t *v, size_t n)
{
	if (n == 0)
		return 0;
	int64_t lo, hi = select_k(sp, v, n, n / 2, (n & 1) ? NULL : &lo);
	return (n & 1) ? hi : lo + (hi - lo) / 2;
}

double gt_kernel_stats_median(int64_t *v, size_t n)
{
	return median_of(NULL, v, n);
}

double kernel_stats_median_segs(struct spill *sp, int64_t *const *v, const size_t *n, int nseg)
{
	if (nseg == 2 && n[1] == 0)
		nseg = 1;
	if (nseg == 2 && n[0] == 0) {
		v++;
		n++;
		nseg = 1;
	}
	if (nseg <= 1)
		return nseg ? median_of(sp, v[0], n[0]) : 0;
	size_t total = n[0] + n[1], k = total / 2;
	if (total < 4096) {
		int64_t *t = malloc(total * sizeof(*t));
		if (!t)
			return NAN;
		memcpy(t, v[0], n[0] * sizeof(*t));
		memcpy(t + n[0], v[1], n[1] * sizeof(*t));
		double m = median_of(NULL, t, total);
		free(t);
		return m;
	}
	/* the histogram of radix_select over both arrays, then the bucket holding
	 * the middle gathered into one array (in the spill when big) */
	int64_t mn = v[0][0], mx = v[0][0];
	for (int s = 0; s < 2; s++)
		for (size_t b = 0; b < n[s]; b = kernel_stats_blk_end(b, n[s])) {
			size_t e = kernel_stats_blk_end(b, n[s]);
			kernel_stats_touch(sp, v[s] + b, e - b);
			for (size_t i = b; i < e; i++) {
				mn = v[s][i] < mn ? v[s][i] : mn;
				mx = v[s][i] > mx ? v[s][i] : mx;
			}
		}
	uint64_t range = (uint64_t)mx - (uint64_t)mn;
	if (range == 0)
		return (double)mn;
	int bits = 64 - __builtin_clzll(range);
	int shift = bits > RADIX_BITS ? bits - RADIX_BITS : 0;
	uint32_t hist[1u << RADIX_BITS] = { 0 };
	for (int s = 0; s < 2; s++)
		for (size_t b = 0; b < n[s]; b = kernel_stats_blk_end(b, n[s])) {
			size_t e = kernel_stats_blk_end(b, n[s]);
			kernel_stats_touch(sp, v[s] + b, e - b);
			for (size_t i = b; i < e; i++)
				hist[((uint64_t)v[s][i] - (uint64_t)mn) >> shift]++;
		}
	size_t below = 0, bk = 0;
	while (below + hist[bk] <= k)
		below += hist[bk++];
	size_t tbytes = (hist[bk] ? hist[bk] : 1) * sizeof(int64_t);
	int in_spill = sp && tbytes >= KS_BLOCK * sizeof(int64_t);
	int64_t *t = in_spill ? spill_alloc(sp, tbytes) : NULL;
	if (!t) {
		in_spill = 0;      /* no spill, or its disk is full: the heap */
		t = malloc(tbytes);
	}
	if (!t)
		return NAN;
	size_t m = 0;
	int64_t prev_max = INT64_MIN;
	for (int s = 0; s < 2; s++)
		for (size_t b = 0; b < n[s]; b = kernel_stats_blk_end(b, n[s])) {
			size_t e = kernel_stats_blk_end(b, n[s]);
			kernel_stats_touch(sp, v[s] + b, e - b);
			if (in_spill)
				spill_touch(sp, (e - b) * sizeof(*t));
			for (size_t i = b; i < e; i++) {
				uint64_t d = ((uint64_t)v[s][i] - (uint64_t)mn) >> shift;
				if (d == bk)
					t[m++] = v[s][i];
				else if (d < bk && v[s][i] > prev_max)
					prev_max = v[s][i];
			}
		}
	size_t kk = k - below;
	int64_t lo, hi = select_k(in_spill ? sp : NULL, t, m, kk, kk > 0 ? &lo : NULL);
	if (kk == 0)
		lo = prev_max;
	if (in_spill)
		spill_release(sp, t, tbytes);
	else
		free(t);
	if (total & 1)
		return (double)hi;
	return ((double)lo + (double)hi) / 2.0;
}
