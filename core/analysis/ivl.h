/*
 * ivl.h - sorted, disjoint interval lists [a, b) in ns: the sweep-line
 * building block of the step analyses (breakdown, pipeline, gputime,
 * multigpu).  A list is always sorted by start with no two intervals
 * touching; empty intervals are never stored.
 */
#ifndef GTRACE_ANALYSIS_IVL_H
#define GTRACE_ANALYSIS_IVL_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/store.h"

struct ivl {
	int64_t a, b;
};

struct ivl_list {
	struct ivl *v;
	size_t n, cap;
};

/* free the list's storage and empty it */
void ivl_done(struct ivl_list *l);
/* make room for n intervals in all; 0 or -ENOMEM */
int ivl_reserve(struct ivl_list *l, size_t n);
/* append [a, b) whose start is >= the last start; merges with the last one */
int ivl_push(struct ivl_list *l, int64_t a, int64_t b);
/* out = x | y, x & y, x - y (out must be empty and distinct) */
int ivl_union(const struct ivl_list *x, const struct ivl_list *y, struct ivl_list *out);
int ivl_intersect(const struct ivl_list *x, const struct ivl_list *y, struct ivl_list *out);
int ivl_subtract(const struct ivl_list *x, const struct ivl_list *y, struct ivl_list *out);
/* in = x & y and out = x - y in one walk (in, out empty and distinct) */
int ivl_split(const struct ivl_list *x, const struct ivl_list *y, struct ivl_list *in,
	      struct ivl_list *out);
/* merge parts[0..np) into out (balanced pairwise rounds); frees the parts */
int ivl_merge_parts(struct ivl_list *parts, size_t np, struct ivl_list *out);
/* total length */
int64_t ivl_len(const struct ivl_list *l);
/* length inside [t0, t1) (binary search) */
int64_t ivl_len_in(const struct ivl_list *l, int64_t t0, int64_t t1);
/* move src into dst (dst freed first) */
void ivl_move(struct ivl_list *dst, struct ivl_list *src);

/* event filter for ivl_collect: non-zero keeps the event */
typedef int (*ivl_filter_fn)(const struct gt_event *e, void *ctx);

/* union of the events passing `keep` on the given lanes, clipped to
 * [t0, t1); lanes are merged as a balanced tree (O(n log lanes)) */
int ivl_collect(const struct gt_store *s, const uint32_t *lanes, size_t nlanes,
		int64_t t0, int64_t t1, ivl_filter_fn keep, void *ctx,
		struct ivl_list *out);

/* category of an event for ivl_collect_multi: 0..ncat-1, or -1 to skip */
typedef int (*ivl_class_fn)(const struct gt_event *e, void *ctx);

/* one pass over the lanes: out[c] = union of the events of category c,
 * clipped to [t0, t1) (out[] must hold ncat lists, ncat <= 16) */
int ivl_collect_multi(const struct gt_store *s, const uint32_t *lanes, size_t nlanes,
		      int64_t t0, int64_t t1, ivl_class_fn cls, void *ctx, int ncat,
		      struct ivl_list *out);

#endif
