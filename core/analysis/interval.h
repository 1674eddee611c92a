/*
 * interval.h - sorted, disjoint interval lists [a, b) in ns: the sweep-line
 * building block of the step analyses (breakdown, pipeline, gputime,
 * multigpu).  A list is always sorted by start with no two intervals
 * touching; empty intervals are never stored.
 */
#ifndef GTRACE_ANALYSIS_IVL_H
#define GTRACE_ANALYSIS_IVL_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/store.h"

struct interval {
	int64_t a, b;
};

struct interval_list {
	struct interval *v;
	size_t n, cap;
};

/* free the list's storage and empty it */
void interval_done(struct interval_list *l);
/* make room for n intervals in all; 0 or -ENOMEM */
int interval_reserve(struct interval_list *l, size_t n);
/* append [a, b) whose start is >= the last start; merges with the last one */
int interval_push(struct interval_list *l, int64_t a, int64_t b);
/* out = x | y, x & y, x - y (out must be empty and distinct) */
int interval_union(const struct interval_list *x, const struct interval_list *y, struct interval_list *out);
int interval_intersect(const struct interval_list *x, const struct interval_list *y, struct interval_list *out);
int interval_subtract(const struct interval_list *x, const struct interval_list *y, struct interval_list *out);
/* in = x & y and out = x - y in one walk (in, out empty and distinct) */
int interval_split(const struct interval_list *x, const struct interval_list *y, struct interval_list *in,
	      struct interval_list *out);
/* merge parts[0..np) into out (balanced pairwise rounds); frees the parts */
int interval_merge_parts(struct interval_list *parts, size_t np, struct interval_list *out);
/* total length */
int64_t interval_len(const struct interval_list *l);
/* length inside [t0, t1) (binary search) */
int64_t interval_len_in(const struct interval_list *l, int64_t t0, int64_t t1);
/* move src into dst (dst freed first) */
void interval_move(struct interval_list *dst, struct interval_list *src);

/* event filter for interval_collect: non-zero keeps the event */
typedef int (*interval_filter_fn)(const struct gt_event *e, void *ctx);

/* union of the events passing `keep` on the given lanes, clipped to
 * [t0, t1); lanes are merged as a balanced tree (O(n log lanes)) */
int interval_collect(const struct gt_store *s, const uint32_t *lanes, size_t nlanes,
		int64_t t0, int64_t t1, interval_filter_fn keep, void *ctx,
		struct interval_list *out);

/* category of an event for interval_collect_multi: 0..ncat-1, or -1 to skip */
typedef int (*interval_class_fn)(const struct gt_event *e, void *ctx);

/* one pass over the lanes: out[c] = union of the events of category c,
 * clipped to [t0, t1) (out[] must hold ncat lists, ncat <= 16) */
int interval_collect_multi(const struct gt_store *s, const uint32_t *lanes, size_t nlanes,
		      int64_t t0, int64_t t1, interval_class_fn cls, void *ctx, int ncat,
		      struct interval_list *out);

#endif
