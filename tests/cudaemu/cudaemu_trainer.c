/*
 * cudaemu_trainer.c - a stand-in trainer on the emulated driver: T threads,
 * each on one device (thread % devices) and two streams of its own, submit
 * kernels (C distinct names and launch configurations), copies and memsets
 * (and, not in the truth, the chatty API calls a capture should leave out),
 * then wait for the device and exit.  Every piece of work it submitted is
 * written to the ground-truth file (the driver's own answer of what ran,
 * when, with which correlation id), so a capture can be compared exactly.
 * Runs as a plain process too (no CUDA_INJECTION64_PATH: nothing injected).
 *
 *   cudaemu_trainer --out TRUTH [--threads T] [--work N] [--configs C]
 *                   [--dur-ns D] [--gap-us G] [--fork N] [--rate R]
 *                   [--tail-ms M] [--graphs N] [--tsc-at I] [--bad-ts N]
 *                   [--cupti LIB] [--nvtx D] [--graph-every K] [--syncs K]
 *                   [--batches K] [--kineto-at I[,J]] [--kineto-finalize]
 *                   [--nvtx-ext N] [--fork-calls] [--collectives N [--coll-ms P]]
 *                   [--allocs K] [--pools K]
 *
 * Truth file (TSV): a '#' header line with pid, devices and the window
 * (first API call start, last work end); one line per piece of work:
 *   W kind device stream corr tid api_start api_end start end bytes
 *     gx gy gz bx by bz name
 * (kind 1 kernel, 2 memcpy, 3 memset); with the emulated CUPTI loaded, a
 * last line `S records R dropped D refused F` of its own counters.
 * --rate R: submissions paced to R per second over all threads.  --out -:
 * no truth kept (for long runs); the header and S lines go to stdout.
 * --graphs N: each thread also replays a CUDA graph of 5 kernels N times
 * (graph id 1000 + thread); a line per node: `G device stream corr tid
 * api_start api_end graph_id node start end name` (all nodes share the
 * cudaGraphLaunch's correlation id).
 * --tsc-at I: at its I-th submission, thread 0 does what torch.profiler's
 * Kineto does in the same process: installs its own CUPTI clock (a TSC-like
 * count, 1.5 ticks per ns of CLOCK_MONOTONIC_RAW) with
 * cuptiActivityRegisterTimestampCallback.  Every W line has an 18th column:
 * bit 0 set when the work's record carries that clock, bit 1 the launch's.
 * --bad-ts N: of every N kernels, one is recorded by CUPTI with zero
 * timestamps and one with its end before its start (19th W column: 1, 2).
 * --tail-ms M: each thread's last kernel runs M ms and the trainer exits
 * without waiting for the device (the capture's exit flush meets work
 * still running).
 * --cupti LIB: dlopen LIB (e.g. the emulator's libcupti.so.12) before
 * cuInit, as a framework linked with its own CUPTI maps it; the CUPTI the
 * trainer asks for its counters is that one (default libcupti.so.13).
 * --nvtx D: after its work each thread opens D nested NVTX ranges
 * (nvtxRangePushA, the NVTX v3 code compiled in: NVTX_INJECTION64_PATH
 * names the tool) named nvtx_range_<depth> and closes them; a line
 * `N tid depth start end` per range, times as its marker records carry
 * them (the emulated CUPTI's cudaemu_cupti_marker_ns), 0 when no CUPTI
 * took NVTX.
 * --kineto-at I[,J]: at its I-th submission thread 0 does what
 * torch.profiler's Kineto does when a profile starts in the same process:
 * cuptiSubscribe (refused while another tool holds CUPTI; Kineto goes on),
 * cuptiActivityRegisterCallbacks with its own buffers (taking over the one
 * callback pair), cuptiActivityEnable of its kinds; at its J-th (default
 * I + work/4) what it does when the profile ends: cuptiActivityDisable of
 * those kinds, cuptiActivityFlushAll(FORCED) and, with --kineto-finalize,
 * cuptiFinalize.  Its completion callback counts buffers it never gave
 * out (it ignores them, as Kineto does) and the records of its own: a line
 * `K unknown U records R`.  At exit, after the capture library's own exit
 * flush, lines `O corr owner` are appended for every correlation id up to
 * the highest in the truth: cudaemu_cupti_owner, which callback pair got
 * the work's (low 4 bits) and the launch's (high 4 bits) records.
 * --nvtx-ext N: the main thread calls nvtxMemHeapRegister (NVTX's memory
 * extension, its v3 code compiled in: the extension's first call loads
 * NVTX_INJECTION64_PATH and calls InitializeInjectionNvtxExtension) N
 * times; a line `X calls N handled H`, H the emulated CUPTI's count.
 * --fork-calls: each forked child, before it exits, makes an NVTX range
 * (nvtxRangePushA "child_range", nvtxRangePop: its first NVTX call, so
 * NVTX initializes in the child) and calls cuInit (CUDA_ERROR_NOT_INITIALIZED
 * in a child of an initialized process: its exit status is 0 only then).
 * --graph-every K: each thread also replays its graph after every K-th
 * piece of work (G lines as for --graphs).  Each thread instantiates its
 * graph (cudaemu_graph_instantiate) when it starts, before its work: the
 * emulated CUPTI traces the graph's kernels only if kernels were traced
 * then.
 * --syncs K: after every K-th piece of work the thread synchronizes,
 * alternately the whole device (cudaDeviceSynchronize) and its stream
 * (cudaStreamSynchronize); a line `Y device stream corr tid api_start
 * api_end start end` each (stream 0: the device).
 * --batches K: after every K-th piece of work a batched copy
 * (cudaMemcpyBatchAsync) of 6 copies, 3 H2D, 2 D2H, 1 H2D, on the thread's
 * stream; a line per copy: `C device stream corr tid api_start api_end
 * start end bytes copy_kind index`.
 * --allocs K: after every K-th piece of work the thread allocates device
 * memory (cuMemAlloc_v2, j-th time (1 + j % 4) MiB + 4096 * thread bytes)
 * and, from the third time on, frees (cuMemFree_v2) what it allocated two
 * times before; the last two stay allocated.  A line per call:
 * `A device corr tid ts bytes op` (op 1 allocation, 2 free; ts the time
 * of the MEMORY2 record, inside the call).
 * --pools K: after every K-th piece of work the thread allocates from its
 * own pool of the stream-ordered allocator (made with cuMemPoolCreate, release
 * threshold (4 + thread) MiB, the first time): j-th time cuMemAllocFromPoolAsync
 * of (1 + j % 3) MiB + 4096 * (thread + 1) bytes, from the third time on
 * cuMemFreeAsync of what it allocated two times before, and every fourth time
 * cuMemPoolTrimTo(pool, 0); when its work is done it trims the pool to 0 and
 * destroys it.  A line per call: `P device op ts pool size used corr` (op 1
 * create, 2 allocation, 3 free, 4 trim, 5 destroy; ts the time of its CUPTI
 * record, inside the call; size and utilized bytes of the pool after it, the
 * driver's truth: a pool grows in 2 MiB pieces, CUDAEMU_POOL_GRAIN).
 * --fork N: while the threads submit, the main thread forks N DataLoader-
 * like children that exit at once with exit(0) (atexit handlers run); a
 * line `F pid status ms` each (exit status, ms from fork to reaped).
 * --collectives N: a thread launches N NCCL all-reduce kernels
 * (ncclDevKernel_AllReduce_Sum_f32_RING_LL, device 0, stream 63), each
 * ending on a multiple of P ms (--coll-ms, default 20) of the true
 * CLOCK_REALTIME, as a collective waits for its slowest peer: trainers
 * started together as stand-in nodes share those instants.  With
 * GTRACE_TEST_CLOCK_OFFSET_NS the whole process (driver, CUPTI, capture
 * library) reads a CLOCK_REALTIME off by that much (cudaemu_cuda.c), a node
 * with a wrong clock; GTRACE_HOSTNAME names its host (capture library).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cupti.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include "cudaemu.h"

static struct {
	int threads, work, configs;
	int64_t dur_ns;
	int gap_us;
	int forks;
	int tail_ms;
	const char *cupti;       /* the CUPTI library's name (--cupti) */
	int graphs;
	int graph_every, syncs, batches;
	int allocs;              /* --allocs K */
	int pools;               /* --pools K */
	int nvtx;                /* nesting depth of each thread's NVTX ranges */
	int tsc_at;
	int bad_ts;
	int kineto_at, kineto_stop, kineto_fin;
	int nvtx_ext;
	int fork_calls;
	const char *out_path;
	uint32_t max_corr;       /* highest correlation id in the truth */
	double rate;
	int keep;                /* truth kept (not --out -) */
	int colls, coll_ms;      /* --collectives N, --coll-ms P */
	FILE *out;
	pthread_mutex_t lock;
	uint64_t first, last;
} tr = { .threads = 4, .work = 2000, .configs = 50, .dur_ns = 3000, .tsc_at = -1, .keep = 1,
	 .kineto_at = -1, .kineto_stop = -1,
	 .lock = PTHREAD_MUTEX_INITIALIZER, .first = UINT64_MAX };

/* LeakSanitizer asks this before its exit check: a forked child exits
 * holding its parent's threads' memory (those threads do not exist in
 * it), which is not a leak of the trainer's */
static volatile int forked_child;
int __lsan_is_turned_off(void) __attribute__((visibility("default")));
int __lsan_is_turned_off(void)
{
	return forked_child;
}

/* a TSC-like clock, as a profiler in the process would install */
static uint64_t CUPTIAPI tsc_clock(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) * 3 / 2;
}

static void install_tsc(void)
{
	void *cupti = dlopen(tr.cupti ? tr.cupti : "libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	CUptiResult (*reg)(CUpti_TimestampCallbackFunc) = NULL;
	if (cupti)
		*(void **)&reg = dlsym(cupti, "cuptiActivityRegisterTimestampCallback");
	if (reg)
		reg(tsc_clock);
}

/* ---- a Kineto-like second CUPTI client (--kineto-at) ---- */

#define KIN_BUF_BYTES (256u << 10)
#define KIN_MAX_BUFS 4096

static struct {
	void *cupti;
	pthread_mutex_t lock;
	uint8_t *bufs[KIN_MAX_BUFS];     /* handed to CUPTI, not back yet */
	int n;
	unsigned long long unknown, records;
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
	int (*owner)(uint32_t);
} kin = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const CUpti_ActivityKind kin_kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
	CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	CUPTI_ACTIVITY_KIND_OVERHEAD,
};

static void CUPTIAPI kin_requested(uint8_t **b, size_t *size, size_t *max)
{
	*max = 0;
	*b = aligned_alloc(8, KIN_BUF_BYTES);
	*size = *b ? KIN_BUF_BYTES : 0;
	pthread_mutex_lock(&kin.lock);
	if (*b && kin.n < KIN_MAX_BUFS)
		kin.bufs[kin.n++] = *b;
	pthread_mutex_unlock(&kin.lock);
}

static void CUPTIAPI kin_completed(CUcontext c, uint32_t s, uint8_t *b, size_t size, size_t valid)
{
	(void)c;
	(void)s;
	(void)size;
	pthread_mutex_lock(&kin.lock);
	int mine = 0;
	for (int i = 0; i < kin.n && !mine; i++) {
		if (kin.bufs[i] == b) {
			kin.bufs[i] = kin.bufs[--kin.n];
			mine = 1;
		}
	}
	if (!mine) {
		/* a buffer it never gave out: Kineto logs it and leaves it */
		kin.unknown++;
		pthread_mutex_unlock(&kin.lock);
		return;
	}
	CUpti_Activity *r = NULL;
	while (kin.next && kin.next(b, valid, &r) == CUPTI_SUCCESS)
		kin.records++;
	pthread_mutex_unlock(&kin.lock);
	free(b);
}

static void *kin_sym(const char *name)
{
	void *f = kin.cupti ? dlsym(kin.cupti, name) : NULL;
	if (!f) {
		fprintf(stderr, "cudaemu_trainer: --kineto: no %s\n", name);
		abort();
	}
	return f;
}

static void CUPTIAPI kin_sub_cb(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
	(void)ud;
	(void)d;
	(void)id;
	(void)data;
}

/* a profile starts: subscribe (may be refused), take the callbacks, enable */
static void kineto_start(void)
{
	kin.cupti = dlopen(tr.cupti ? tr.cupti : "libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	*(void **)&kin.next = kin_sym("cuptiActivityGetNextRecord");
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*enable)(CUpti_ActivityKind);
	*(void **)&subscribe = kin_sym("cuptiSubscribe");
	*(void **)&reg = kin_sym("cuptiActivityRegisterCallbacks");
	*(void **)&enable = kin_sym("cuptiActivityEnable");
	CUpti_SubscriberHandle sub;
	subscribe(&sub, (CUpti_CallbackFunc)kin_sub_cb, NULL);   /* refused: Kineto goes on */
	reg(kin_requested, kin_completed);
	for (size_t k = 0; k < sizeof(kin_kinds) / sizeof(kin_kinds[0]); k++)
		enable(kin_kinds[k]);
}

/* the profile ends: disable its kinds, forced flush, maybe finalize */
static void kineto_end(void)
{
	CUptiResult (*disable)(CUpti_ActivityKind);
	CUptiResult (*flush)(uint32_t);
	*(void **)&disable = kin_sym("cuptiActivityDisable");
	*(void **)&flush = kin_sym("cuptiActivityFlushAll");
	for (size_t k = 0; k < sizeof(kin_kinds) / sizeof(kin_kinds[0]); k++)
		disable(kin_kinds[k]);
	flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (tr.kineto_fin) {
		CUptiResult (*fin)(void);
		*(void **)&fin = kin_sym("cuptiFinalize");
		fin();
	}
}

/* atexit, registered before cuInit so that it runs after the capture
 * library's exit flush: which callback pair got each id's records */
static void owners_at_exit(void)
{
	void *c = dlopen(tr.cupti ? tr.cupti : "libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	if (c)
		*(void **)&kin.owner = dlsym(c, "cudaemu_cupti_owner");
	FILE *f = tr.out_path ? fopen(tr.out_path, "a") : NULL;
	if (!f || !kin.owner) {
		if (f)
			fclose(f);
		return;
	}
	for (uint32_t corr = 1; corr <= tr.max_corr; corr++)
		fprintf(f, "O\t%u\t%d\n", corr, kin.owner(corr));
	fclose(f);
}

static void put(const struct cudaemu_work *w)
{
	fprintf(tr.out, "W\t%d\t%d\t%u\t%u\t%u\t%llu\t%llu\t%llu\t%llu\t%llu\t%u\t%u\t%u\t%u\t%u\t%u\t%s\t%d\t%d\n",
		w->kind, w->device, w->stream, w->corr, w->tid,
		(unsigned long long)w->api_start_ns, (unsigned long long)w->api_end_ns,
		(unsigned long long)w->start_ns, (unsigned long long)w->end_ns,
		(unsigned long long)w->bytes, w->grid[0], w->grid[1], w->grid[2],
		w->block[0], w->block[1], w->block[2], w->name ? w->name : "-", w->foreign_clock, w->bad_ts);
	if (w->corr > tr.max_corr)
		tr.max_corr = w->corr;
}

/* --collectives N: N all-reduce kernels on device 0, each ending on a
 * multiple of P ms of the true CLOCK_REALTIME, as a collective ends when
 * its slowest peer arrives: trainers started together on several
 * "nodes" share these instants whatever clock each node has
 * (GTRACE_TEST_CLOCK_OFFSET_NS shifts this process's clock, see
 * cudaemu_cuda.c; the true time is the node's minus it) */
static void *coll_main(void *arg)
{
	(void)arg;
	const char *e = getenv("GTRACE_TEST_CLOCK_OFFSET_NS");
	int64_t off = e && *e ? strtoll(e, NULL, 10) : 0;
	uint64_t p = (uint64_t)tr.coll_ms * 1000000u;
	struct cudaemu_work *c = calloc((size_t)tr.colls, sizeof(*c));
	if (!c)
		abort();
	for (int k = 0; k < tr.colls; k++) {
		uint64_t now = cudaemu_now_ns() - (uint64_t)off;   /* true time */
		uint64_t at = (now + p / 2) / p * p + p;          /* a grid instant ahead */
		uint64_t launch = at - p / 2;
		if (launch > now) {
			struct timespec ts = { (time_t)((launch - now) / 1000000000u),
					       (long)((launch - now) % 1000000000u) };
			nanosleep(&ts, NULL);
		}
		struct cudaemu_work *w = &c[k];
		w->kind = CUDAEMU_KERNEL;
		w->device = 0;
		w->stream = 63;
		w->name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
		w->grid[0] = 24;
		w->grid[1] = w->grid[2] = 1;
		w->block[0] = 256;
		w->block[1] = w->block[2] = 1;
		w->dur_ns = 100000;
		w->end_at_ns = at + (uint64_t)off;                 /* on this node's clock */
		if (cudaemu_submit(w) != 0)
			abort();
	}
	pthread_mutex_lock(&tr.lock);
	for (int k = 0; k < tr.colls && tr.keep; k++)
		put(&c[k]);
	pthread_mutex_unlock(&tr.lock);
	free(c);
	return NULL;
}

/* D nested NVTX ranges on this thread, then their truth lines */
static void nvtx_ranges(int depth)
{
	uint64_t (*marker_ns)(void) = NULL;
	void *cupti = dlopen(tr.cupti ? tr.cupti : "libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	if (cupti)
		*(void **)&marker_ns = dlsym(cupti, "cudaemu_cupti_marker_ns");
	uint64_t *t = calloc((size_t)depth * 2 + 1, sizeof(*t));
	if (!t)
		abort();
	char name[32];
	for (int d = 0; d < depth; d++) {
		snprintf(name, sizeof(name), "nvtx_range_%d", d);
		nvtxRangePushA(name);
		t[2 * d] = marker_ns ? marker_ns() : 0;
	}
	for (int d = depth; d-- > 0;) {
		nvtxRangePop();
		t[2 * d + 1] = marker_ns ? marker_ns() : 0;
	}
	unsigned tid = (unsigned)syscall(SYS_gettid);
	pthread_mutex_lock(&tr.lock);
	for (int d = 0; d < depth && tr.keep; d++)
		fprintf(tr.out, "N\t%u\t%d\t%llu\t%llu\n", tid, d, (unsigned long long)t[2 * d],
			(unsigned long long)t[2 * d + 1]);
	pthread_mutex_unlock(&tr.lock);
	free(t);
}

/* what a thread does besides its W work (--graph-every, --syncs,
 * --batches), kept for the truth */
struct batch {
	struct cudaemu_work w;
	uint64_t bytes[6];
	uint8_t kinds[6];
};

struct extras {
	struct cudaemu_work *g;  /* graph replays (also those of --graphs) */
	int n_g;
	struct cudaemu_work *y;  /* synchronizations */
	int n_y;
	struct batch *b;         /* batched copies */
	int n_b;
	struct cudaemu_work *a;  /* allocations and frees */
	int n_a, n_alloc;
	struct cudaemu_work *p;  /* pool calls (--pools) */
	int n_p, n_palloc;
	uint64_t pool;           /* the thread's pool (0: none yet) */
};

/* one pool call of kind on the thread's pool; aborts when the driver refuses */
static struct cudaemu_work *pool_call(struct extras *ex, int kind, int device, uint32_t stream,
				      uint64_t bytes)
{
	struct cudaemu_work *p = &ex->p[ex->n_p++];
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->device = device;
	p->stream = stream;
	p->pool = ex->pool;
	p->bytes = bytes;
	return p;
}

/* --pools: the j-th allocation from the thread's pool (made the first time),
 * the free of the allocation two times before, every fourth time a trim */
static void pool_extras(struct extras *ex, int t, int device, uint32_t stream)
{
	int j = ex->n_palloc++;
	if (!ex->pool) {
		struct cudaemu_work *c = pool_call(ex, CUDAEMU_POOL_CREATE, device, stream, 0);
		c->threshold = (uint64_t)(4 + t) << 20;
		if (cudaemu_submit(c) != 0)
			abort();
		ex->pool = c->pool;
	}
	uint64_t b = ((uint64_t)(1 + j % 3) << 20) + 4096u * (uint64_t)(t + 1);
	if (cudaemu_submit(pool_call(ex, CUDAEMU_POOL_ALLOC, device, stream, b)) != 0)
		abort();
	for (int k = ex->n_p - 2, seen = 0; j >= 2 && k >= 0; k--) {
		if (ex->p[k].kind != CUDAEMU_POOL_ALLOC || ++seen < 2)
			continue;
		struct cudaemu_work *f = pool_call(ex, CUDAEMU_POOL_FREE, device, stream, ex->p[k].bytes);
		f->address = ex->p[k].address;
		if (cudaemu_submit(f) != 0)
			abort();
		break;
	}
	if (j % 4 == 3 && cudaemu_submit(pool_call(ex, CUDAEMU_POOL_TRIM, device, stream, 0)) != 0)
		abort();
}

/* submit one replay of thread t's graph */
static void graph_replay(struct cudaemu_work *w, int t, int device, uint32_t stream)
{
	memset(w, 0, sizeof(*w));
	w->kind = CUDAEMU_GRAPH;
	w->device = device;
	w->stream = stream;
	w->nodes = 5;
	w->graph_id = 1000u + (uint32_t)t;
	w->name = "emu_graph_node_kernel";
	w->grid[0] = 64;
	w->grid[1] = w->grid[2] = 1;
	w->block[0] = 256;
	w->block[1] = w->block[2] = 1;
	w->dur_ns = 1500;
	if (cudaemu_submit(w) != 0)
		abort();
}

/* after piece of work i (on device, stream) of thread t */
static void extras(struct extras *ex, int t, int i, int device, uint32_t stream)
{
	if (tr.graph_every && i % tr.graph_every == tr.graph_every - 1)
		graph_replay(&ex->g[ex->n_g++], t, device, stream);
	if (tr.syncs && i % tr.syncs == tr.syncs - 1) {
		struct cudaemu_work *y = &ex->y[ex->n_y];
		memset(y, 0, sizeof(*y));
		y->kind = CUDAEMU_SYNC;
		y->device = device;
		y->stream = ex->n_y % 2 ? stream : 0;   /* 0: the whole device */
		if (cudaemu_submit(y) != 0)
			abort();
		ex->n_y++;
	}
	if (tr.allocs && i % tr.allocs == tr.allocs - 1) {
		int j = ex->n_alloc++;
		struct cudaemu_work *m = &ex->a[ex->n_a++];
		memset(m, 0, sizeof(*m));
		m->kind = CUDAEMU_MEMALLOC;
		m->device = device;
		m->bytes = ((uint64_t)(1 + j % 4) << 20) + 4096u * (uint64_t)t;
		if (cudaemu_submit(m) != 0)
			abort();
		for (int k = ex->n_a - 2, seen = 0; j >= 2 && k >= 0; k--) {
			/* the allocation of two times before */
			if (ex->a[k].kind != CUDAEMU_MEMALLOC || ++seen < 2)
				continue;
			struct cudaemu_work *f = &ex->a[ex->n_a++];
			memset(f, 0, sizeof(*f));
			f->kind = CUDAEMU_MEMFREE;
			f->device = device;
			f->address = ex->a[k].address;
			f->bytes = ex->a[k].bytes;
			if (cudaemu_submit(f) != 0)
				abort();
			break;
		}
	}
	if (tr.pools && i % tr.pools == tr.pools - 1)
		pool_extras(ex, t, device, stream);
	if (tr.batches && i % tr.batches == tr.batches - 1) {
		static const uint8_t kinds[6] = {
			CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
			CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH,
			CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
		};
		struct batch *b = &ex->b[ex->n_b++];
		memset(b, 0, sizeof(*b));
		for (int k = 0; k < 6; k++) {
			b->kinds[k] = kinds[k];
			b->bytes[k] = 1024u << (k + i % 3);
		}
		b->w.kind = CUDAEMU_MEMCPY_BATCH;
		b->w.device = device;
		b->w.stream = stream;
		b->w.copies = 6;
		b->w.copy_bytes = b->bytes;
		b->w.copy_kinds = b->kinds;
		b->w.dur_ns = 800;
		if (cudaemu_submit(&b->w) != 0)
			abort();
	}
}

/* the Y, C, A and P truth lines (tr.lock held) */
static void put_extras(const struct extras *ex)
{
	for (int k = 0; k < ex->n_p && tr.keep; k++) {
		const struct cudaemu_work *p = &ex->p[k];
		fprintf(tr.out, "P\t%d\t%d\t%llu\t%llu\t%llu\t%llu\t%u\n", p->device,
			p->kind - CUDAEMU_POOL_CREATE + 1, (unsigned long long)p->start_ns,
			(unsigned long long)p->pool, (unsigned long long)p->pool_size,
			(unsigned long long)p->pool_used, p->corr);
	}
	for (int k = 0; k < ex->n_a && tr.keep; k++) {
		const struct cudaemu_work *m = &ex->a[k];
		fprintf(tr.out, "A\t%d\t%u\t%u\t%llu\t%llu\t%d\n", m->device, m->corr, m->tid,
			(unsigned long long)m->start_ns, (unsigned long long)m->bytes,
			m->kind == CUDAEMU_MEMALLOC ? 1 : 2);
	}
	for (int k = 0; k < ex->n_y && tr.keep; k++) {
		const struct cudaemu_work *y = &ex->y[k];
		fprintf(tr.out, "Y\t%d\t%u\t%u\t%u\t%llu\t%llu\t%llu\t%llu\n", y->device, y->stream,
			y->corr, y->tid, (unsigned long long)y->api_start_ns,
			(unsigned long long)y->api_end_ns, (unsigned long long)y->start_ns,
			(unsigned long long)y->end_ns);
	}
	for (int k = 0; k < ex->n_b && tr.keep; k++) {
		const struct cudaemu_work *w = &ex->b[k].w;
		for (uint32_t c = 0; c < w->copies; c++) {
			uint64_t s0 = w->start_ns + (uint64_t)c * ((uint64_t)w->dur_ns + 1);
			fprintf(tr.out, "C\t%d\t%u\t%u\t%u\t%llu\t%llu\t%llu\t%llu\t%llu\t%u\t%u\n",
				w->device, w->stream, w->corr, w->tid,
				(unsigned long long)w->api_start_ns, (unsigned long long)w->api_end_ns,
				(unsigned long long)s0, (unsigned long long)(s0 + (uint64_t)w->dur_ns),
				(unsigned long long)w->copy_bytes[c], w->copy_kinds[c], c);
		}
		if (w->end_ns > tr.last)
			tr.last = w->end_ns;
	}
}

static void *thread_main(void *arg)
{
	int t = (int)(intptr_t)arg;
	int ndev = cudaemu_device_count();
	size_t keep = tr.keep ? (size_t)tr.work : 1;
	struct cudaemu_work *done = calloc(keep, sizeof(*done));
	char (*names)[48] = calloc(keep, 48);
	if (!done || !names)
		abort();
	unsigned seed = 12345u + (unsigned)t;
	if (tr.graphs || tr.graph_every)
		cudaemu_graph_instantiate(1000u + (uint32_t)t);
	struct extras ex = { 0 };
	size_t n_extra = (size_t)tr.work + 1;
	if (tr.graph_every || tr.syncs || tr.batches || tr.allocs || tr.pools) {
		ex.g = calloc((size_t)tr.graphs + n_extra, sizeof(*ex.g));
		ex.y = calloc(n_extra, sizeof(*ex.y));
		ex.b = calloc(n_extra, sizeof(*ex.b));
		ex.a = calloc(2 * n_extra, sizeof(*ex.a));
		ex.p = calloc(4 * n_extra + 4, sizeof(*ex.p));
		if (!ex.g || !ex.y || !ex.b || !ex.a || !ex.p)
			abort();
	}
	uint64_t t0 = cudaemu_now_ns();
	double per_ns = tr.rate > 0 ? tr.rate / tr.threads / 1e9 : 0;
	for (int i = 0; i < tr.work; i++) {
		size_t slot = tr.keep ? (size_t)i : 0;
		struct cudaemu_work *w = &done[slot];
		memset(w, 0, sizeof(*w));
		if (per_ns > 0) {
			uint64_t due = t0 + (uint64_t)((double)i / per_ns), now = cudaemu_now_ns();
			if (due > now + 50000) {
				struct timespec ts = { 0, (long)(due - now) };
				nanosleep(&ts, NULL);
			}
		}
		w->device = t % ndev;
		w->stream = 1 + (uint32_t)(t / ndev) * 2 + (uint32_t)(i & 1);
		w->dur_ns = tr.dur_ns + (int64_t)(rand_r(&seed) % 2000);
		if (i % 10 == 8) {
			w->kind = CUDAEMU_MEMCPY;
			w->bytes = 4096u << (i % 7);
			w->copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
			w->src_kind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
			w->dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		} else if (i % 10 == 9) {
			w->kind = CUDAEMU_MEMSET;
			w->bytes = 1024u << (i % 5);
		} else {
			int c = rand_r(&seed) % tr.configs;
			w->kind = CUDAEMU_KERNEL;
			snprintf(names[slot], 48, "emu_kernel_%d", c % 97);
			w->name = names[slot];
			w->grid[0] = 1 + (uint32_t)c;
			w->grid[1] = 1 + (uint32_t)(c % 3);
			w->grid[2] = 1;
			w->block[0] = 128;
			w->block[1] = 1 + (uint32_t)(c % 2);
			w->block[2] = 1;
		}
		if (tr.bad_ts && w->kind == CUDAEMU_KERNEL && i % tr.bad_ts < 2)
			w->bad_ts = 1 + i % tr.bad_ts;
		if (t == 0 && i == tr.tsc_at)
			install_tsc();
		if (t == 0 && i == tr.kineto_at)
			kineto_start();
		if (t == 0 && i == tr.kineto_stop)
			kineto_end();
		if (tr.tail_ms && i == tr.work - 1) {
			w->kind = CUDAEMU_KERNEL;
			w->name = "emu_tail_kernel";
			w->grid[0] = w->grid[1] = w->grid[2] = 1;
			w->block[0] = 32;
			w->block[1] = w->block[2] = 1;
			w->dur_ns = (int64_t)tr.tail_ms * 1000000;
		}
		if (cudaemu_submit(w) != 0)
			abort();
		if (i % 5 == 0) {
			/* the chatty calls frameworks make around launches (not in
			 * the truth: a capture should leave them out) */
			static const struct { uint32_t cbid; uint8_t driver; } chatty[] = {
				{ CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000, 0 },
				{ CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute, 1 },
				{ CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes, 1 },
				{ CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute, 1 },
			};
			for (size_t c = 0; c < sizeof(chatty) / sizeof(chatty[0]); c++) {
				struct cudaemu_work call;
				memset(&call, 0, sizeof(call));
				call.kind = CUDAEMU_CALL;
				call.cbid = chatty[c].cbid;
				call.driver = chatty[c].driver;
				call.stream = 1;
				cudaemu_submit(&call);
			}
		}
		extras(&ex, t, i, w->device, w->stream);
		if (tr.gap_us) {
			struct timespec ts = { 0, tr.gap_us * 1000L };
			nanosleep(&ts, NULL);
		}
	}
	struct cudaemu_work *gl = ex.g ? ex.g : calloc((size_t)tr.graphs + 1, sizeof(*gl));
	int n_gl = ex.n_g;
	for (int g = 0; g < tr.graphs && gl; g++) {
		struct cudaemu_work *w = &gl[n_gl++];
		graph_replay(w, t, t % ndev, 1 + (uint32_t)(t / ndev) * 2);
	}
	if (ex.pool) {
		/* the pool's end: trimmed to nothing, destroyed */
		int dev = ex.p[0].device;
		if (cudaemu_submit(pool_call(&ex, CUDAEMU_POOL_TRIM, dev, ex.p[0].stream, 0)) != 0 ||
		    cudaemu_submit(pool_call(&ex, CUDAEMU_POOL_DESTROY, dev, ex.p[0].stream, 0)) != 0)
			abort();
	}
	pthread_mutex_lock(&tr.lock);
	put_extras(&ex);
	for (int g = 0; g < n_gl && gl; g++) {
		const struct cudaemu_work *w = &gl[g];
		for (uint32_t n = 1; n <= w->nodes; n++) {
			uint64_t s0 = w->start_ns + (uint64_t)(n - 1) * ((uint64_t)w->dur_ns + 1);
			fprintf(tr.out, "G\t%d\t%u\t%u\t%u\t%llu\t%llu\t%u\t%u\t%llu\t%llu\t%s\n",
				w->device, w->stream, w->corr, w->tid,
				(unsigned long long)w->api_start_ns, (unsigned long long)w->api_end_ns,
				w->graph_id, n, (unsigned long long)s0,
				(unsigned long long)(s0 + (uint64_t)w->dur_ns), w->name);
		}
		if (w->end_ns > tr.last)
			tr.last = w->end_ns;
	}
	free(gl);
	free(ex.y);
	free(ex.b);
	free(ex.a);
	free(ex.p);
	for (size_t i = 0; i < keep && tr.keep; i++) {
		put(&done[i]);
		if (done[i].api_start_ns < tr.first)
			tr.first = done[i].api_start_ns;
		if (done[i].end_ns > tr.last)
			tr.last = done[i].end_ns;
	}
	pthread_mutex_unlock(&tr.lock);
	free(done);
	free(names);
	if (tr.nvtx > 0)
		nvtx_ranges(tr.nvtx);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--out") && v)
			out = argv[++i];
		else if (!strcmp(argv[i], "--threads") && v)
			tr.threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--work") && v)
			tr.work = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--configs") && v)
			tr.configs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dur-ns") && v)
			tr.dur_ns = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--gap-us") && v)
			tr.gap_us = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--bad-ts") && v)
			tr.bad_ts = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--tsc-at") && v)
			tr.tsc_at = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--graphs") && v)
			tr.graphs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--graph-every") && v)
			tr.graph_every = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--syncs") && v)
			tr.syncs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--batches") && v)
			tr.batches = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--allocs") && v)
			tr.allocs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pools") && v)
			tr.pools = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--nvtx") && v)
			tr.nvtx = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--tail-ms") && v)
			tr.tail_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rate") && v)
			tr.rate = atof(argv[++i]);
		else if (!strcmp(argv[i], "--cupti") && v)
			tr.cupti = argv[++i];
		else if (!strcmp(argv[i], "--kineto-at") && v) {
			tr.kineto_at = atoi(argv[++i]);
			const char *c = strchr(argv[i], ',');
			tr.kineto_stop = c ? atoi(c + 1) : -2;
		} else if (!strcmp(argv[i], "--nvtx-ext") && v)
			tr.nvtx_ext = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--fork-calls"))
			tr.fork_calls = 1;
		else if (!strcmp(argv[i], "--kineto-finalize"))
			tr.kineto_fin = 1;
		else if (!strcmp(argv[i], "--fork") && v)
			tr.forks = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--collectives") && v)
			tr.colls = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--coll-ms") && v)
			tr.coll_ms = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: cudaemu_trainer --out TRUTH [--threads T] [--work N] "
				"[--configs C] [--dur-ns D] [--gap-us G] [--fork N] [--rate R] [--tail-ms M] [--graphs N] [--tsc-at I] [--bad-ts N] [--cupti LIB] [--nvtx D] [--graph-every K] [--syncs K] [--batches K] [--kineto-at I[,J]] [--kineto-finalize] [--nvtx-ext N] [--fork-calls] [--collectives N [--coll-ms P]] [--allocs K] [--pools K]\n");
			return 2;
		}
	}
	if (!out || tr.threads < 1 || tr.threads > 256 || tr.work < 1 || tr.configs < 1) {
		fprintf(stderr, "cudaemu_trainer: --out is required; --threads 1..256, --work, --configs >= 1\n");
		return 2;
	}
	if (tr.kineto_stop == -2)
		tr.kineto_stop = tr.kineto_at + tr.work / 4;
	tr.keep = strcmp(out, "-") != 0;
	tr.out = tr.keep ? fopen(out, "w") : stdout;
	if (!tr.out) {
		fprintf(stderr, "cudaemu_trainer: %s: cannot create\n", out);
		return 1;
	}
	if (tr.kineto_at >= 0 && tr.keep) {
		tr.out_path = out;
		atexit(owners_at_exit);
	}
	if (tr.cupti && !dlopen(tr.cupti, RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "cudaemu_trainer: %s\n", dlerror());
		return 1;
	}
	if (cuInit(0) != CUDA_SUCCESS) {
		fprintf(stderr, "cudaemu_trainer: cuInit failed\n");
		return 1;
	}
	printf("cudaemu trainer: pid %d, %d devices\n", (int)getpid(), cudaemu_device_count());
	fflush(stdout);
	pthread_t th[256], coll;
	if (tr.colls > 0 && tr.coll_ms < 2)
		tr.coll_ms = 20;
	if (tr.colls > 0)
		pthread_create(&coll, NULL, coll_main, NULL);
	for (int t = 0; t < tr.threads; t++)
		pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t);
	for (int f = 0; f < tr.forks; f++) {
		pthread_mutex_lock(&tr.lock);
		fflush(tr.out);        /* the child's exit must not write it again */
		uint64_t t0 = cudaemu_now_ns();
		pid_t c = fork();
		pthread_mutex_unlock(&tr.lock);
		if (c == 0) {
			forked_child = 1;
			if (tr.fork_calls) {
				nvtxRangePushA("child_range");
				nvtxRangePop();
				/* the refusal a forked child gets: exit status 0 */
				exit(cuInit(0) == CUDA_ERROR_NOT_INITIALIZED ? 0 : 1);
			}
			exit(0);       /* a DataLoader worker that ends normally */
		}
		int st = -1;
		if (c > 0)
			waitpid(c, &st, 0);
		fprintf(tr.out, "F\t%d\t%d\t%llu\n", (int)c, WIFEXITED(st) ? WEXITSTATUS(st) : 128,
			(unsigned long long)((cudaemu_now_ns() - t0) / 1000000u));
	}
	for (int t = 0; t < tr.threads; t++)
		pthread_join(th[t], NULL);
	if (tr.colls > 0)
		pthread_join(coll, NULL);
	if (!tr.tail_ms)
		cudaemu_sync();
	fprintf(tr.out, "# pid %d devices %d window %llu %llu\n", (int)getpid(),
		cudaemu_device_count(), (unsigned long long)tr.first, (unsigned long long)tr.last);
	void (*stats)(struct cudaemu_cupti_stats *) = NULL;
	void *cupti = dlopen(tr.cupti ? tr.cupti : "libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	if (cupti)
		*(void **)&stats = dlsym(cupti, "cudaemu_cupti_stats");
	if (stats) {
		/* every record is written by now (the flush at exit only
		 * hands buffers back) */
		struct cudaemu_cupti_stats s;
		stats(&s);
		fprintf(tr.out, "S\trecords\t%llu\tdropped\t%llu\trefused\t%llu\thanded_over\t%llu"
			"\tabandoned\t%llu\tcalls\t%llu\n",
			(unsigned long long)s.records, (unsigned long long)s.dropped,
			(unsigned long long)s.requests_refused,
			(unsigned long long)s.buffers_handed_over,
			(unsigned long long)s.buffers_abandoned, (unsigned long long)s.call_records);
	}
	if (tr.nvtx_ext > 0) {
		nvtxMemHeapDesc_t hd;
		memset(&hd, 0, sizeof(hd));
		hd.extCompatID = NVTX_EXT_COMPATID_MEM;
		hd.structSize = sizeof(hd);
		hd.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
		hd.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
		for (int k = 0; k < tr.nvtx_ext; k++)
			nvtxMemHeapRegister(NULL, &hd);
		uint64_t (*calls)(void) = NULL;
		void *c = dlopen(tr.cupti ? tr.cupti : "libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
		if (c)
			*(void **)&calls = dlsym(c, "cudaemu_cupti_nvtx_ext_calls");
		fprintf(tr.out, "X\tcalls\t%d\thandled\t%llu\n", tr.nvtx_ext,
			(unsigned long long)(calls ? calls() : 0));
	}
	if (tr.kineto_at >= 0) {
		pthread_mutex_lock(&kin.lock);
		fprintf(tr.out, "K\tunknown\t%llu\trecords\t%llu\n", kin.unknown, kin.records);
		pthread_mutex_unlock(&kin.lock);
	}
	if (tr.keep)
		fclose(tr.out);
	else
		fflush(stdout);
	return 0;
}
