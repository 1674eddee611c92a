/*
 * truth.h - the stand-in trainer's ground truth (cudaemu_trainer --out,
 * docs/capture.md "The emulator"), read by the emulator's tests.
 *
 * Lines: `#` header (pid, devices, window), W (a piece of work), G (a graph
 * node kernel), N (an NVTX range), F (a forked child), S (the emulated
 * CUPTI's own counts), Y (a synchronization call), C (one copy of a
 * batched copy call), K (the Kineto-like second client's counts, with
 * --kineto-at), O (which callback pair got a correlation id's records,
 * appended at exit with --kineto-at), X (NVTX extension calls, with
 * --nvtx-ext), A (an allocation or free, with --allocs), P (a pool call,
 * with --pools).  Unknown line
 * types are an error.
 */
#ifndef GTRACE_TESTS_CUDAEMU_TRUTH_H
#define GTRACE_TESTS_CUDAEMU_TRUTH_H

#include <stddef.h>
#include <stdint.h>

/* one piece of work and its launch call (W) */
struct truth_w {
	int kind, device;
	unsigned stream, corr, tid;
	unsigned long long api_start, api_end, start, end, bytes;
	unsigned grid[3], block[3];
	char name[64];
	int foreign;             /* records on another client's clock: 1 work, 2 launch */
	int bad_ts;              /* its record's timestamps: 1 zero, 2 end before start */
	int seen, seen_api;      /* for the tests: found (or in which round) */
};

/* one kernel node of a graph replay (G) */
struct truth_g {
	int device;
	unsigned stream, corr, tid, graph, node;
	unsigned long long api_start, api_end, start, end;
	char name[64];
	int seen, seen_api;
};

/* one NVTX range (N) */
struct truth_n {
	unsigned tid, depth;
	unsigned long long start, end;
	int seen;
};

/* one synchronization call (Y): stream 0 = the whole device
 * (cudaDeviceSynchronize), else cudaStreamSynchronize of that stream;
 * start..end is the time the call waited */
struct truth_y {
	int device;
	unsigned stream, corr, tid;
	unsigned long long api_start, api_end, start, end;
	int seen, seen_api;
};

/* one copy of a batched copy call (C): index in the batch, its own times
 * and bytes, copy kind (CUpti_ActivityMemcpyKind) */
struct truth_c {
	int device;
	unsigned stream, corr, tid, index, copy_kind;
	unsigned long long api_start, api_end, start, end, bytes;
	int seen;
};

/* one allocation or free (A, --allocs): op 1 cuMemAlloc, 2 cuMemFree; ts
 * the time its MEMORY2 record carries */
struct truth_a {
	int device, op;
	unsigned corr, tid;
	unsigned long long ts, bytes;
};

/* one pool call (P, --pools): op 1 cuMemPoolCreate, 2 cuMemAllocFromPoolAsync,
 * 3 cuMemFreeAsync, 4 cuMemPoolTrimTo, 5 cuMemPoolDestroy; ts the time of
 * its CUPTI record; size and used the pool's size and utilized bytes after */
struct truth_p {
	int device, op;
	unsigned corr;
	unsigned long long ts, pool, size, used;
};

struct truth {
	struct truth_w *w;
	size_t n;
	struct truth_g *g;
	size_t n_g;
	struct truth_n *nv;
	size_t n_nv;
	struct truth_y *y;
	size_t n_y;
	struct truth_c *c;
	size_t n_c;
	struct truth_a *a;
	size_t n_a;
	struct truth_p *p;
	size_t n_p;
	struct truth_w **idx;        /* by correlation id (truth_by_corr) */
	uint32_t max_corr;
	long pid;
	int devices;
	unsigned long long window[2];    /* first launch start, last work end */
	unsigned long long records, dropped, refused;
	/* of the records, API records of the trainer's chatty calls (a
	 * capture leaves them out: those CUPTI writes before the capture
	 * turns them off, capture/convert.h) */
	unsigned long long call_records;
	int have_stats;
	/* S line, since the second-client emulation: buffers requested from
	 * one callback pair and completed to another, buffers CUPTI held at
	 * cuptiFinalize (~0ull when the line has no such fields) */
	unsigned long long handed_over, abandoned;
	/* K line (--kineto-at): buffers the second client never gave out, and
	 * its own records; have_kineto 0 without the line */
	unsigned long long kineto_unknown, kineto_records;
	int have_kineto;
	/* O lines (--kineto-at): owner[corr] for corr < n_owner, low 4 bits the
	 * pair that got the work's records, high 4 bits the launch's (1, 2, ..
	 * in registration order; 0 never delivered, 15 abandoned); 0 beyond */
	uint8_t *owner;
	size_t n_owner;
	/* X line (--nvtx-ext): extension calls made, and handled by the
	 * emulated CUPTI; ext_calls -1 without the line */
	int ext_calls;
	unsigned long long ext_handled;
	int forks;                   /* forked children */
	int fork_bad_status;         /* the first child that exited non-zero (status), 0 */
	unsigned long long fork_max_ms;  /* the slowest child, fork to reaped */
};

/* read the truth file at path into t (zeroed first); 0, or -1 with a
 * one-line reason in err (t then holds what was read: truth_free it) */
int truth_read(const char *path, struct truth *t, char *err, size_t errlen);
/* frees what truth_read allocated */
void truth_free(struct truth *t);
/* the W entry of a correlation id (indexed on first use); NULL for ids of
 * calls without a W line */
struct truth_w *truth_by_corr(struct truth *t, uint32_t corr);

#endif
