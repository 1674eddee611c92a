/*
 * gtrace/kernel_stats.h - duration statistics per name over a scope: the numbers
 * of the kernel table (nsys `cuda_gpu_kern_sum`), and with other options of
 * the memory, API and NVTX tables.  Used by `gtrace stats` and the viewer's
 * kernel page.
 *
 * Scope rules: an event counts when its START lies in [sc->t0_ns, sc->t1_ns);
 * sc->gpu keeps GPU lanes of that device ordinal (host lanes are kept: host
 * threads belong to no GPU); sc->rank keeps lanes of that rank (an unknown
 * rank, -1, counts as rank 0).  sc->step is not applied here: callers turn
 * a step into t0/t1 first.
 *
 * Statistics: Avg is the mean; Med the exact median (for an even count the
 * mean of the two middle values); StdDev the sample standard deviation
 * (divides by n - 1; 0 for one instance), as nsys stats computes them.
 */
#ifndef GTRACE_KSTATS_H
#define GTRACE_KSTATS_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/report.h"
#include "gtrace/store.h"

enum gt_kernel_stats_group {
	GT_KERNEL_STATS_BY_NAME = 0,      /* one row per name */
	GT_KERNEL_STATS_BY_NAME_KIND,     /* one row per (name, event kind) */
	GT_KERNEL_STATS_BY_COPY_KIND      /* one row per copy kind, memset as GT_KERNEL_STATS_CLS_MEMSET */
};

#define GT_KERNEL_STATS_CLS_MEMSET GT_COPY_KIND_COUNT  /* cls of the memset row (BY_COPY_KIND) */
#define GT_KERNEL_STATS_WANT_BYTES 0x1u                /* also statistics of arg as bytes */
#define GT_KERNEL_STATS_MAX_GPUS 64

/* windows (e.g. steps) of one rank: n pairs [t[2i], t[2i+1]), sorted by
 * start and not overlapping */
struct gt_kernel_stats_windows {
	int32_t rank;
	const int64_t *t;
	size_t n;
};

struct gt_kernel_stats_opts {
	uint32_t kinds_mask;     /* bits (1u << GT_EV_*) counted; 0 = kernels only */
	int group;               /* enum gt_kernel_stats_group */
	unsigned flags;          /* GT_KERNEL_STATS_WANT_BYTES */
	/* optional: rows get in_windows_ns, the time of their instances that
	 * start inside a window of their lane's rank */
	const struct gt_kernel_stats_windows *win;
	size_t nwin;
};

struct gt_kernel_stats_row {
	uint32_t name;           /* string id (0 for BY_COPY_KIND) */
	uint32_t cls;            /* event kind (BY_NAME_KIND) or copy kind (BY_COPY_KIND) */
	uint64_t count;
	int64_t total_ns, min_ns, max_ns;
	double avg_ns, med_ns, stddev_ns;
	double pct;              /* share of the result's total time, percent */
	/* GT_KERNEL_STATS_WANT_BYTES: the events' arg as bytes */
	uint64_t bytes_total;
	int64_t bytes_min, bytes_max;
	double bytes_avg, bytes_med, bytes_stddev;
	int bytes_total_sat;     /* the total is beyond uint64: bytes_total is UINT64_MAX, n/a */
	uint32_t kconf;          /* most common launch configuration id, 0 = unknown */
	uint32_t nkconf;         /* distinct launch configurations seen */
	int tc;                  /* 1 when the name suggests Tensor Core use */
	uint64_t gpu_mask;       /* bit i: the result's gpus[i] ran it */
	int64_t in_windows_ns;   /* with opts->win: duration of instances starting in a window */
};

struct gt_kernel_stats_gpu {
	int32_t rank, device;
};

struct gt_kernel_stats_result {
	struct gt_kernel_stats_row *rows; /* sorted by total_ns descending, then name */
	size_t nrows;
	uint64_t count;          /* events counted */
	int64_t total_ns;        /* sum of their durations */
	struct gt_kernel_stats_gpu gpus[GT_KERNEL_STATS_MAX_GPUS]; /* GPU lanes' (rank, device), first seen */
	size_t ngpus;
	int gpus_overflow;       /* more than GT_KERNEL_STATS_MAX_GPUS distinct GPUs */
};

/* compute the rows; 0 or negative errno with a message.  o may be NULL
 * (kernels by name).  Free with gt_kernel_stats_result_done. */
int gt_kernel_stats_compute(const struct gt_store *s, const struct gt_scope *sc,
		   const struct gt_kernel_stats_opts *o, struct gt_kernel_stats_result *r,
		   char *err, size_t errlen);
void gt_kernel_stats_result_done(struct gt_kernel_stats_result *r);

enum gt_kernel_stats_order {
	GT_KERNEL_STATS_ORDER_TIME = 0,       /* by start time */
	GT_KERNEL_STATS_ORDER_DUR_DESC        /* longest first */
};

/* the instances (lane, index) of one name among the kinds of kinds_mask
 * (0 = kernels) in scope, in the given order; *out is malloc'ed (free it).
 * 0 or negative errno. */
int gt_kernel_stats_instances(const struct gt_store *s, const struct gt_scope *sc,
		     uint32_t name, uint32_t kinds_mask, enum gt_kernel_stats_order order,
		     struct gt_ref **out, size_t *n);

/* 1 when the lane passes the scope's gpu and rank filters */
int gt_kernel_stats_lane_in_scope(const struct gt_lane *l, const struct gt_scope *sc);
/* indices [*first, *last) of the lane's events whose start lies in [t0, t1) */
void gt_kernel_stats_lane_starts(const struct gt_lane *l, int64_t t0, int64_t t1,
			size_t *first, size_t *last);

/* 1 when a kernel name suggests Tensor Core use (hmma, gmma, xmma, 16816...) */
int gt_kernel_stats_is_tensor_core(const char *name);
/* "0,1,3" (one rank) or "0:0,1:0" (rank:gpu) for a row's gpu_mask */
void gt_kernel_stats_gpus_str(const struct gt_kernel_stats_result *r, uint64_t mask, char *buf, size_t len);
/* median of v[0..n) by quickselect (reorders v); for even n the mean of the
 * two middle values; 0 for n == 0 */
double gt_kernel_stats_median(int64_t *v, size_t n);

#endif
