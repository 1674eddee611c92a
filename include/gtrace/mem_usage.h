/*
 * gtrace/mem_usage.h - memory usage over time from allocator records
 * (GT_EVF_MEMORY instants: Kineto [memory] events, the simulator's
 * planted allocations); docs/analyses.md "Memory".
 *
 * Allocated bytes of a (rank, device) at time t = the sum of the Bytes of
 * its records up to t, in time order (the allocations the profiler saw:
 * memory allocated before the trace started is not in it).  The peak is
 * the first record at which that sum is highest; its operator is the
 * innermost CPU op open on the record's thread at that time, its step the
 * step whose host span holds it.  Per step: allocated at the host span's
 * start and end, the peak inside, growth = end - start (a leak grows every
 * step).
 *
 * Total Allocated / Total Reserved (what the allocator held, the PyTorch
 * TensorBoard plugin's memory curve): the counter samples the Kineto
 * importer makes of a record's args of those names; their peaks are the
 * highest samples in scope.
 *
 * Scope: records whose time lies in [t0, t1) of sc->rank; sc->gpu keeps
 * that CUDA device (host memory stays, as host lanes do elsewhere).  The
 * running sum still starts at the trace start.
 */
#ifndef GTRACE_MEMU_H
#define GTRACE_MEMU_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/report.h"
#include "gtrace/store.h"

struct gt_mem_usage_step {
	int64_t number;
	int64_t start_bytes, end_bytes, peak_bytes;
};

struct gt_mem_usage_dev {
	int32_t rank;
	uint32_t device;            /* CUDA ordinal or GT_MEM_HOST */
	uint64_t records, allocs, frees;
	int64_t alloc_bytes, free_bytes;   /* free_bytes >= 0 */
	int64_t peak_bytes, end_bytes;
	int64_t peak_ns;            /* time of the peak record */
	uint32_t peak_op;           /* string id of its operator, 0 = none open */
	int64_t peak_step;          /* -1 = outside every step */
	struct gt_mem_usage_step *steps;
	size_t nsteps;
	/* the allocator's own Total Allocated / Total Reserved (newer Kineto
	   traces: counter samples of GT_EVF_MEMORY, sub 0 / 1, see event.h):
	   samples in scope, the first highest of each with its time, and for
	   Total Allocated's peak the operator and step as for peak_bytes */
	uint64_t total_samples[2];  /* 0 = none: the trace has no such arg */
	int64_t total_peak[2], total_peak_ns[2], total_end[2], total_end_ns[2];
	uint32_t total_peak_op;
	int64_t total_peak_step;    /* -1 = outside every step */
};

struct gt_mem_usage_result {
	struct gt_mem_usage_dev *dev;       /* by rank, then CUDA ordinal, host last */
	size_t n;
};

/* 0 or negative errno with a message */
int gt_mem_usage_compute(const struct gt_store *s, const struct gt_scope *sc, struct gt_mem_usage_result *out,
		 char *err, size_t errlen);
void gt_mem_usage_result_done(struct gt_mem_usage_result *r);

/* allocated bytes of (rank, device) sampled for a plot: out[i] = the highest
 * value in [t0 + i dt, t0 + (i + 1) dt) (the value carried in when no record
 * falls there); 0 or negative errno */
int gt_mem_usage_series(const struct gt_store *s, int32_t rank, uint32_t device, int64_t t0,
		int64_t dt, size_t n, int64_t *out);

#endif
