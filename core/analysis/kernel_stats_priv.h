/*
 * kernel_stats_priv.h - what kernel_stats.c (accumulating one group per name) and
 * kernel_stats_par.c (planning, threads, merging) share.
 */
#ifndef GTRACE_ANALYSIS_KSTATS_PRIV_H
#define GTRACE_ANALYSIS_KSTATS_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/kernel_stats.h"

#define NCAND 8  /* launch configurations tracked exactly per group */

struct vec {
	int64_t *v;
	size_t n, cap;
};

struct acc {
	uint64_t key;
	struct vec dur, bytes;
	struct vec dur2, bytes2; /* the second scan thread's values (after merging) */
	uint32_t cand[NCAND], cand_n[NCAND];
	uint32_t ncand, last;
	uint32_t nkconf_extra;   /* configurations beyond NCAND (not counted for the mode) */
	uint64_t gpu_mask;
	int64_t win_ns;          /* duration of instances starting in a window */
};

struct spill;

struct ctx {
	const struct gt_store *s;
	struct spill *sp;        /* home of the big vectors under a memory budget, or NULL */
	const struct gt_kernel_stats_opts *o;
	uint32_t nclass;
	uint32_t *slot;          /* key -> acc index + 1 */
	size_t nkeys;
	struct acc *accs;
	size_t nacc, capacc;
};

/* index of the lane's GPU in r->gpus (adding it), -1 when host or overflow */
int kernel_stats_gpu_slot(struct gt_kernel_stats_result *r, const struct gt_lane *l);
/* count one launch configuration for the group's mode */
void kernel_stats_count_kconf(struct acc *a, uint32_t k);
/* the accumulator of key, created on first use; NULL on ENOMEM */
struct acc *kernel_stats_get_acc(struct ctx *c, uint64_t key);
/* accumulate events [first, last) of one lane (windows wt/wn or NULL); 0 or -ENOMEM */
int kernel_stats_scan(struct ctx *c, const struct gt_lane *l, size_t first, size_t last,
		uint64_t gbit, const int64_t *wt, size_t wn);
/* qsort_r order of rows: total time desc, count desc, name, class */
int kernel_stats_row_cmp(const void *pa, const void *pb, void *arg);
/* turn an accumulator into a row, freeing its vectors */
void kernel_stats_finish_row(const struct ctx *c, struct acc *a, struct gt_kernel_stats_row *row);

/* exact median of the values of nseg (1 or 2) arrays taken together; may
 * reorder them; NaN when out of memory.  Arrays in sp are read a block at
 * a time, each announced to it (spill_touch) */
double kernel_stats_median_segs(struct spill *sp, int64_t *const *v, const size_t *n, int nseg);

/* values a pass handles between two announcements to the spill (8 MiB) */
#define KS_BLOCK ((size_t)1 << 20)
/* end of the block of values starting at b in [0, n) */
static inline size_t kernel_stats_blk_end(size_t b, size_t n)
{
	return n - b < KS_BLOCK ? n : b + KS_BLOCK;
}
/* announce a pass over n values at v when they live in sp */
void kernel_stats_touch(struct spill *sp, const int64_t *v, size_t n);
/* free a vector, from the heap or sp */
void kernel_stats_vec_free(struct spill *sp, struct vec *v);

#endif
