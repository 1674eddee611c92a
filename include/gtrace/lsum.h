/*
 * gtrace/lsum.h - the per-lane summary: for every lane, at a few levels of
 * time buckets (width base_ns x 4^k from origin_ns), the union busy time,
 * the count of events starting in the bucket and the longest event
 * overlapping it (its name, kind/sub/flags and duration).  Written with the
 * events in a .gtrace file (summary chunks, docs/file-format.md) so that a
 * zoomed-out frame of the trace view is drawn from it without touching the
 * events (docs/store.md "Summary").  Buckets are sparse: only those with a
 * busy, counted or dominant event are kept, sorted by bucket number.
 */
#ifndef GTRACE_LSUM_H
#define GTRACE_LSUM_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/store.h"

#define GT_LSUM_MAXLEV 16

struct gt_lsum_ent {
	uint32_t idx;          /* bucket number at its level: [origin + idx w, + w) */
	uint32_t count;        /* events starting in it (saturating) */
	int64_t busy_ns;       /* union busy time within the bucket */
	int64_t dom_dur;       /* duration of the longest overlapping event */
	uint32_t dom_name;     /* its name (string id) */
	uint32_t dom_kfs;      /* its kind | sub << 8 | flags << 16 */
};

struct gt_lsum_lane {
	size_t n[GT_LSUM_MAXLEV];
	struct gt_lsum_ent *e[GT_LSUM_MAXLEV];
};

struct gt_lsum_pager;

struct gt_lsum {
	int64_t origin_ns;     /* bucket 0 starts here */
	int64_t base_ns;       /* width of level 0 (a power of two) */
	int nlev;              /* 1..GT_LSUM_MAXLEV levels, width base << 2k */
	size_t nlanes;
	struct gt_lsum_lane *lane;
	struct gt_lsum_pager *pager;   /* paged levels (lsum_page.c), or NULL */
};

/* one page of a paged level: the entries of lanes [lane0, lane0 + nlanes)
 * in buckets [b0, b0 + nb) of one level, loaded when a row needs it.  A
 * paged level has no entries in gt_lsum_lane (n[level] is 0): its pages
 * are its slabs of time (pages of one slab share b0 and nb, lanes
 * ascending and disjoint). */
struct gt_lsum_page {
	uint64_t key;          /* the loader's (a file offset) */
	uint32_t level, lane0, nlanes, b0, nb;
	/* when loaded: lane lane0 + i holds e[at[i] .. at[i + 1]) (both malloc'd,
	 * freed by the pager); NULL when not */
	struct gt_lsum_ent *e;
	uint32_t *at;
	uint64_t used;         /* LRU stamp */
};
/* fill pg->e and pg->at (entries rising, within the page's lanes, level
 * and buckets); 0 or a negative errno (the page stays unloaded) */
typedef int (*gt_lsum_load_fn)(void *ctx, struct gt_lsum_page *pg);

/* an empty summary with the given geometry for nlanes lanes; NULL on no memory */
struct gt_lsum *gt_lsum_new(int64_t origin_ns, int64_t base_ns, int nlev, size_t nlanes);
void gt_lsum_free(struct gt_lsum *m);
/* width of level k */
static inline int64_t gt_lsum_width(const struct gt_lsum *m, int k)
{
	return m->base_ns << (2 * k);
}

/* the summary of store s (lanes in any order; events need not be sorted):
 * geometry chosen from the store's span and event count (about 16 events a
 * finest bucket on an average lane).  *m = NULL for an empty store.  0 or
 * -ENOMEM */
int gt_lsum_build(const struct gt_store *s, struct gt_lsum **m);

/* 1 when a row of columns dt wide on lane is drawn from m (a level at most
 * dt / 2 wide exists), 0 otherwise */
int gt_lsum_applies(const struct gt_lsum *m, uint32_t lane, int64_t dt);

/* fill ncols buckets [t0 + c dt, + dt) of lane from the summary, as
 * gt_store_lane_buckets does from events, at the coarsest level at most dt / 2
 * wide: busy time of buckets cut by a column edge is shared in proportion,
 * a bucket's count goes to the column holding its start, its dominant
 * event to every column it overlaps.  out[c].dominant is SIZE_MAX (no event
 * index); kfs[c] is the dominant's kind | sub << 8 | flags << 16 and
 * name[c] its name, or UINT32_MAX when the column has none (either may be
 * NULL).  Returns 1, or 0 when gt_lsum_applies says no (nothing written)
 * or a page the row needs failed to load (gt_lsum_page_stats says why).
 * Paged levels are read under the pager's lock: any thread may draw. */
int gt_lsum_buckets(const struct gt_lsum *m, uint32_t lane, int64_t t0, int64_t dt, int ncols,
		 struct gt_bucket *out, uint32_t *kfs, uint32_t *name);

/* make levels of m paged: pages[0..n) (copied; any order) loaded by
 * load(ctx, page) when a row needs them; done(ctx) when m is freed (either
 * may be NULL).  Checks the pages: levels exist and hold no resident
 * entries, lanes exist, slabs of a level do not overlap and share their
 * width, lanes within a slab are disjoint.  0, -ENOMEM or -EINVAL
 * (nothing changed; done is not called) */
int gt_lsum_set_pages(struct gt_lsum *m, const struct gt_lsum_page *pages, size_t n,
		      gt_lsum_load_fn load, void (*done)(void *ctx), void *ctx);
/* at most this many bytes of pages stay loaded (least recently used go
 * first; a row's own pages always load): default 256 MiB */
void gt_lsum_set_cap(struct gt_lsum *m, size_t bytes);
/* bytes of m held in memory now: resident levels, loaded pages, scratch */
size_t gt_lsum_resident(const struct gt_lsum *m);
/* pages loaded so far (reloads count), pages loaded now, pages in all, and
 * the first load error (0 if none): for tests, benches and the status */
void gt_lsum_page_stats(const struct gt_lsum *m, size_t *loads, size_t *loaded, size_t *pages,
			int *err);

/* the summary attached to a store (read from its file), or NULL */
const struct gt_lsum *gt_store_summary(const struct gt_store *s);
/* attach m to s (s owns it; the old one is freed).  gt_store_add and
 * gt_store_shift_rank drop it: it describes the events it was built from */
void gt_store_set_summary(struct gt_store *s, struct gt_lsum *m);

/* the span and event count of a store read by gt_file_read_head (its
 * events not loaded): what gt_store_t_min, gt_store_t_max and gt_store_event_count
 * say until the events arrive (its lanes hold none) */
void gt_store_set_span(struct gt_store *s, int64_t t_min, int64_t t_max, size_t n_events);
/* exchange the contents of two stores (each keeps its address): a store
 * loaded on another thread replaces the one the viewer holds */
void gt_store_swap(struct gt_store *a, struct gt_store *b);

#endif
