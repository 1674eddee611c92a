/*
 * kernel_stats_sel.c - exact medians without a full sort: quickselect (median of
 * three pivots) for small arrays; for large ones a histogram pass over the
 * top bits of (value - min) finds the bucket holding the middle, one pass
 * gathers that bucket and quickselect finishes inside it.  O(n).
 */
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "kernel_stats_priv.h"
#include "../util/sortx.h"

/* max of v[0..n) */
static int64_t max_of(const int64_t *v, size_t n)
{
	int64_t m = v[0];
	for (size_t i = 1; i < n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

/* the k-th smallest (and, when lower is set, the (k-1)-th) by one
 * histogram pass over the top RADIX_BITS of (v - min), one pass gathering
 * the bucket holding k, then quickselect on that bucket only */
#define RADIX_BITS 11
static int64_t radix_select(int64_t *v, size_t n, size_t k, int64_t *lower)
{
	int64_t mn = v[0], mx = v[0];
	for (size_t i = 1; i < n; i++) {
		mn = v[i] < mn ? v[i] : mn;
		mx = v[i] > mx ? v[i] : mx;
	}
	uint64_t range = (uint64_t)mx - (uint64_t)mn;
	if (range == 0) {
		if (lower)
			*lower = mn;
		return mn;
	}
	int bits = 64 - __builtin_clzll(range);
	int shift = bits > RADIX_BITS ? bits - RADIX_BITS : 0;
	uint32_t hist[1u << RADIX_BITS] = { 0 };
	for (size_t i = 0; i < n; i++)
		hist[((uint64_t)v[i] - (uint64_t)mn) >> shift]++;
	size_t below = 0, bk = 0;
	while (below + hist[bk] <= k)
		below += hist[bk++];
	/* gather the bucket to the front of v (order of v does not matter) */
	size_t m = 0;
	int64_t prev_max = INT64_MIN;     /* largest value of the lower buckets */
	for (size_t i = 0; i < n; i++) {
		uint64_t d = ((uint64_t)v[i] - (uint64_t)mn) >> shift;
		if (d == bk) {
			int64_t t = v[m];
			v[m++] = v[i];
			v[i] = t;
		} else if (d < bk && v[i] > prev_max) {
			prev_max = v[i];
		}
	}
	size_t kk = k - below;
	int64_t r = sortx_select_i64(v, m, kk);
	if (lower)
		*lower = kk > 0 ? max_of(v, kk) : prev_max;
	return r;
}

double gt_kernel_stats_median(int64_t *v, size_t n)
{
	if (n == 0)
		return 0;
	size_t k = n / 2;
	if (n < 4096) {
		int64_t hi = sortx_select_i64(v, n, k);
		if (n & 1)
			return (double)hi;
		/* after selection every v[0..k) <= v[k]: the lower middle is their max */
		return ((double)max_of(v, k) + (double)hi) / 2.0;
	}
	int64_t lo, hi = radix_select(v, n, k, (n & 1) ? NULL : &lo);
	if (n & 1)
		return (double)hi;
	return ((double)lo + (double)hi) / 2.0;
}


double kernel_stats_median_segs(int64_t *const *v, const size_t *n, int nseg)
{
	if (nseg == 2 && n[1] == 0)
		nseg = 1;
	if (nseg == 2 && n[0] == 0) {
		v++;
		n++;
		nseg = 1;
	}
	if (nseg <= 1)
		return nseg ? gt_kernel_stats_median(v[0], n[0]) : 0;
	size_t total = n[0] + n[1], k = total / 2;
	if (total < 4096) {
		int64_t *t = malloc(total * sizeof(*t));
		if (!t)
			return NAN;
		memcpy(t, v[0], n[0] * sizeof(*t));
		memcpy(t + n[0], v[1], n[1] * sizeof(*t));
		double m = gt_kernel_stats_median(t, total);
		free(t);
		return m;
	}
	/* the histogram of radix_select over both arrays, then the bucket holding
	 * the middle gathered into one small array */
	int64_t mn = v[0][0], mx = v[0][0];
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < n[s]; i++) {
			mn = v[s][i] < mn ? v[s][i] : mn;
			mx = v[s][i] > mx ? v[s][i] : mx;
		}
	uint64_t range = (uint64_t)mx - (uint64_t)mn;
	if (range == 0)
		return (double)mn;
	int bits = 64 - __builtin_clzll(range);
	int shift = bits > RADIX_BITS ? bits - RADIX_BITS : 0;
	uint32_t hist[1u << RADIX_BITS] = { 0 };
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < n[s]; i++)
			hist[((uint64_t)v[s][i] - (uint64_t)mn) >> shift]++;
	size_t below = 0, bk = 0;
	while (below + hist[bk] <= k)
		below += hist[bk++];
	int64_t *t = malloc(hist[bk] * sizeof(*t));
	if (!t)
		return NAN;
	size_t m = 0;
	int64_t prev_max = INT64_MIN;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < n[s]; i++) {
			uint64_t d = ((uint64_t)v[s][i] - (uint64_t)mn) >> shift;
			if (d == bk)
				t[m++] = v[s][i];
			else if (d < bk && v[s][i] > prev_max)
				prev_max = v[s][i];
		}
	size_t kk = k - below;
	int64_t hi = sortx_select_i64(t, m, kk);
	int64_t lo = kk > 0 ? max_of(t, kk) : prev_max;
	free(t);
	if (total & 1)
		return (double)hi;
	return ((double)lo + (double)hi) / 2.0;
}
