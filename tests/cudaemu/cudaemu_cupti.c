/*
 * cudaemu_cupti.c - CUPTI's activity API emulated from the real CUDA 13
 * header structs, built as libcupti.so.13 (tests/cudaemu/cudaemu.h); with
 * CUDAEMU_CUPTI_MAJOR=12 built as libcupti.so.12: a CUDA 12.6 CUPTI (API
 * version 24) writing the CUDA 12 record versions of
 * cupti_activity_deprecated.h (Kernel9, Memcpy5, Device4, Context2;
 * Memset4 and API records are the same in both).
 *
 * Rules it enforces as the real library does (and stricter):
 * - one subscriber (cuptiSubscribe); one buffer-callback pair: a second
 *   cuptiActivityRegisterCallbacks takes over, and buffers in flight
 *   complete to whichever pair is current when they complete;
 * - records go into the buffer of the current pair on the thread that made
 *   them; a refused request (NULL or too small) drops records, counted
 *   until cuptiActivityGetNumDroppedRecords reads (and resets) the count;
 * - full buffers, and with a flush period (cuptiActivityFlushPeriod) the
 *   current one when all its records have completed, are handed back by a
 *   worker thread; cuptiActivityFlushAll(0) hands back buffers whose
 *   records all completed, FLUSH_FORCED every buffer: a record of work
 *   still running is marked incomplete (its kind becomes INVALID, so
 *   cuptiActivityGetNextRecord stops there with CUPTI_ERROR_INVALID_KIND);
 *   a forced flush calls the completion callback on the caller's thread
 *   while holding the internal lock (a callback that calls back into a
 *   locking CUPTI function is reported and aborts);
 * - the record walk ends with CUPTI_ERROR_MAX_LIMIT_REACHED;
 * - cuptiGetTimestamp is CLOCK_REALTIME unless a client installed its own
 *   clock with cuptiActivityRegisterTimestampCallback;
 * - after the library's destructor, every call aborts with a message;
 * - CUDA graphs: a graph's kernels are traced only when CONCURRENT_KERNEL
 *   was enabled when it was instantiated (cudaemu_graph_instantiate);
 * - synchronizations: cudaDeviceSynchronize writes a SYNCHRONIZATION
 *   record without a stream (CUPTI_SYNCHRONIZATION_INVALID_VALUE), as
 *   the header documents for context syncs; cudaStreamSynchronize one
 *   with its stream;
 * - CUDAEMU_SHUFFLE=K (tests of order-independent readers): a buffer takes
 *   at most K records, and full buffers are held until 4 are pending (or a
 *   flush) and then handed back newest first, so records reach the client
 *   out of time order, as they do from real CUPTI's per-context buffers;
 * - batched copies (cudaMemcpyBatchAsync): CUDA 13 folds a run of copies
 *   of one kind into one Memcpy6 record with copyCount; 12 writes one
 *   record per copy;
 * - NVTX: InitializeInjectionNvtx2 (called through the injection library
 *   that NVTX_INJECTION64_PATH names, by the NVTX v3 code compiled into
 *   the program) takes over RangePushA / RangePushEx / RangePop of the core
 *   module's function table; each range becomes a START and an END
 *   Marker2 record with one id (a per-thread stack of ids, any depth).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <cupti.h>
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>
#include "cudaemu.h"

#define EXPORT CUDAEMU_API

#if CUDAEMU_CUPTI_MAJOR == 12
typedef CUpti_ActivityKernel9 emu_kernel;
typedef CUpti_ActivityMemcpy5 emu_memcpy;
typedef CUpti_ActivityDevice4 emu_device;
typedef CUpti_ActivityContext2 emu_context;
typedef CUpti_ActivitySynchronization emu_sync;
typedef CUpti_ActivityMemoryPool2 emu_pool;    /* MemoryPool3 less isManagedPool */
#define EMU_API_VERSION 24u            /* CUDA 12.6 (cupti_version.h) */
#else
typedef CUpti_ActivityKernel10 emu_kernel;
typedef CUpti_ActivityMemcpy6 emu_memcpy;
typedef CUpti_ActivityDevice5 emu_device;
typedef CUpti_ActivityContext3 emu_context;
typedef CUpti_ActivitySynchronization2 emu_sync;
typedef CUpti_ActivityMemoryPool3 emu_pool;
#define EMU_API_VERSION ((uint32_t)CUPTI_API_VERSION)
#endif
#define MAX_KIND 128
#define MAX_PENDING 4096
#define NAME_SLOTS 65536

struct pend {
	uint8_t *buf;
	size_t size, valid;
	uint64_t max_end;            /* latest end of a record in it */
	int pair;                    /* the callback pair that gave it (pair_of) */
	unsigned recs;               /* records in it */
};

static struct {
	pthread_mutex_t lock;        /* error-checking: re-entry is a bug */
	_Atomic int poisoned;
	int subscribed;
	CUpti_BuffersCallbackRequestFunc req;
	CUpti_BuffersCallbackCompleteFunc comp;
	uint8_t kind_on[MAX_KIND];
	uint8_t rt_off[1024], drv_off[1024];
	CUpti_ActivityThreadIdType tid_type;
	CUpti_TimestampCallbackFunc ts_cb;
	double ts_rate;              /* client clock units per host ns */
	struct pend cur;
	int have_cur;
	struct pend full[MAX_PENDING];
	int n_full;
	unsigned shuffle;            /* CUDAEMU_SHUFFLE: records a buffer takes, 0 = no limit */
	uint64_t dropped;            /* since the last read */
	struct cudaemu_cupti_stats st;
	uint32_t flush_ms;
	pthread_t worker;
	int worker_started;
	int stop;
	const char *names[NAME_SLOTS];
	uint8_t graph_traced[65536];  /* by graph id: CONCURRENT_KERNEL was on at
				       * its instantiation */
} cu;

/* the second-client section (end of file): subscriber callbacks, which
 * callback pair each record was delivered to, cuptiFinalize */
static int pair_of(CUpti_BuffersCallbackCompleteFunc f);
static void owner_mark(const uint8_t *buf, size_t valid, int pair);
static void sub_notify(const struct cudaemu_work *w);
static void sub_set(CUpti_CallbackFunc f, void *ud);

static void lock(const char *fn)
{
	int r = pthread_mutex_lock(&cu.lock);
	if (r == EDEADLK) {
		fprintf(stderr, "cudaemu cupti: %s called from a buffer callback while CUPTI "
			"holds its lock (deadlock on a real CUPTI)\n", fn);
		abort();
	}
}

static void unlock(void)
{
	pthread_mutex_unlock(&cu.lock);
}

static void check(const char *fn)
{
	if (atomic_load(&cu.poisoned)) {
		fprintf(stderr, "cudaemu cupti: %s called after libcupti was unloaded "
			"(process exit)\n", fn);
		abort();
	}
}

static void lock_init(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&cu.lock, &a);
	pthread_mutexattr_destroy(&a);
}

static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

__attribute__((constructor)) static void cu_ctor(void)
{
	lock_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

__attribute__((destructor)) static void cu_dtor(void)
{
	atomic_store(&cu.poisoned, 1);
}

/* ---- records ---- */

static size_t rec_size(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: return sizeof(emu_kernel);
	case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(emu_memcpy);
	case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(emu_device);
	case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(emu_context);
	case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(emu_sync);
	case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
	case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return sizeof(emu_pool);
	default: return 0;
	}
}

#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)
#define MAX_REC ALIGN8(sizeof(emu_kernel))

static uint64_t now_ns(void)
{
	return cudaemu_now_ns();
}

/* a CUPTI timestamp for host time t: the client's clock when installed
 * (taken as linear: its value now plus its rate times the distance) */
static uint64_t cupti_time(uint64_t t)
{
	if (!cu.ts_cb || t == 0)
		return t;
	uint64_t c = cu.ts_cb(), h = now_ns();
	return (uint64_t)((double)c + ((double)t - (double)h) * cu.ts_rate);
}

/* a stable copy of a kernel name (CUPTI's names outlive the records) */
static const char *intern(const char *s)
{
	uint32_t h = 2166136261u;
	for (const char *p = s; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	for (uint32_t i = h % NAME_SLOTS;; i = (i + 1) % NAME_SLOTS) {
		if (!cu.names[i])
			return cu.names[i] = strdup(s);
		if (!strcmp(cu.names[i], s))
			return cu.names[i];
	}
}

/* room for one record in the current buffer, asking for one if needed;
 * NULL (the record is dropped and counted) when the client refuses */
static uint8_t *room(size_t n, uint64_t end)
{
	if (cu.have_cur && (cu.cur.valid + ALIGN8(n) > cu.cur.size ||
			    (cu.shuffle && cu.cur.recs >= cu.shuffle))) {
		if (cu.n_full == MAX_PENDING) {
			cu.dropped++;
			cu.st.dropped++;
			return NULL;
		}
		cu.full[cu.n_full++] = cu.cur;
		cu.have_cur = 0;
	}
	if (!cu.have_cur) {
		uint8_t *b = NULL;
		size_t sz = 0, maxr = 0;
		if (cu.req)
			cu.req(&b, &sz, &maxr);
		if (!b || sz < MAX_REC) {
			cu.st.requests_refused++;
			cu.dropped++;
			cu.st.dropped++;
			return NULL;
		}
		cu.cur = (struct pend){ b, sz, 0, 0, pair_of(cu.comp), 0 };
		cu.have_cur = 1;
	}
	uint8_t *p = cu.cur.buf + cu.cur.valid;
	memset(p, 0, ALIGN8(n));
	cu.cur.valid += ALIGN8(n);
	cu.cur.recs++;
	if (end > cu.cur.max_end)
		cu.cur.max_end = end;
	cu.st.records++;
	return p;
}

static uint32_t thread_id(void)
{
	return cu.tid_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM ? (uint32_t)syscall(SYS_gettid)
								   : (uint32_t)pthread_self();
}

static void sink_api(struct cudaemu_work *w)
{
	lock("the driver");
	w->foreign_clock = cu.ts_cb ? 2 : 0;
	CUpti_ActivityKind k = w->driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
	const uint8_t *off = w->driver ? cu.drv_off : cu.rt_off;
	if (cu.kind_on[k] && !off[w->cbid % 1024]) {
		CUpti_ActivityAPI *a = (void *)room(sizeof(*a), w->api_end_ns);
		if (a) {
			a->kind = k;
			a->cbid = w->cbid;
			a->start = cupti_time(w->api_start_ns);
			a->end = cupti_time(w->api_end_ns);
			a->processId = (uint32_t)getpid();
			a->threadId = thread_id();
			a->correlationId = w->corr;
			cu.st.call_records += w->kind == CUDAEMU_CALL;
		}
	}
	unlock();
	sub_notify(w);
}

/* a kernel record; node > 0: node `node` of a graph launch (its times
 * from the node's place in the graph, graphId and graphNodeId set) */
static void put_kernel(const struct cudaemu_work *w, const struct cudaemu_device *d, uint32_t node)
{
	uint64_t s0 = w->start_ns, s1 = w->end_ns;
	if (node) {
		s0 = w->start_ns + (uint64_t)(node - 1) * ((uint64_t)w->dur_ns + 1);
		s1 = s0 + (uint64_t)w->dur_ns;
	}
	emu_kernel *k = (void *)room(sizeof(*k), s1);
	if (!k)
		return;
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->registersPerThread = 32;
	k->start = cupti_time(s0);
	k->end = cupti_time(s1);
	if (w->bad_ts == 1) {
		k->start = k->end = 0;
	} else if (w->bad_ts == 2) {
		uint64_t x = k->start;
		k->start = k->end;
		k->end = x;
	}
	if (node) {
		k->graphId = w->graph_id;
		k->graphNodeId = ((uint64_t)w->graph_id << 32) | node;
		k->launchType = 0;
	}
	k->completed = k->end;
	k->deviceId = (uint32_t)w->device;
	k->contextId = d->context_id;
	k->streamId = w->stream;
	k->gridX = (int32_t)w->grid[0];
	k->gridY = (int32_t)w->grid[1];
	k->gridZ = (int32_t)w->grid[2];
	k->blockX = (int32_t)w->block[0];
	k->blockY = (int32_t)w->block[1];
	k->blockZ = (int32_t)w->block[2];
	k->correlationId = w->corr;
	k->name = intern(w->name ? w->name : "");
	k->queued = CUPTI_TIMESTAMP_UNKNOWN;
	k->submitted = CUPTI_TIMESTAMP_UNKNOWN;
}

/* a synchronization record: the device-wide one (cudaDeviceSynchronize)
 * has no stream (CUPTI_SYNCHRONIZATION_INVALID_VALUE) */
static void put_sync(const struct cudaemu_work *w, const struct cudaemu_device *d)
{
	emu_sync *y = (void *)room(sizeof(*y), w->end_ns);
	if (!y)
		return;
	y->kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	y->type = w->stream ? CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE
			    : CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
	y->start = cupti_time(w->start_ns);
	y->end = cupti_time(w->end_ns);
	y->correlationId = w->corr;
	y->contextId = d->context_id;
	y->streamId = w->stream ? w->stream : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	y->cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
}

/* the records of a batched copy: CUDA 13's CUPTI folds a run of copies of
 * one kind into one record (copyCount, the bytes summed, first start to
 * last end); CUDA 12's writes one record per copy */
static void put_batch(const struct cudaemu_work *w, const struct cudaemu_device *d)
{
	for (uint32_t i = 0; i < w->copies;) {
		uint32_t j = i + 1;
#if CUDAEMU_CUPTI_MAJOR != 12
		while (j < w->copies && w->copy_kinds[j] == w->copy_kinds[i])
			j++;
#endif
		uint64_t bytes = 0;
		for (uint32_t k = i; k < j; k++)
			bytes += w->copy_bytes[k];
		uint64_t s0 = w->start_ns + (uint64_t)i * ((uint64_t)w->dur_ns + 1);
		uint64_t s1 = w->start_ns + (uint64_t)(j - 1) * ((uint64_t)w->dur_ns + 1) +
			      (uint64_t)w->dur_ns;
		emu_memcpy *m = (void *)room(sizeof(*m), s1);
		if (m) {
			uint8_t ck = w->copy_kinds[i];
			m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
			m->copyKind = ck;
			m->srcKind = ck == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED
									  : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
			m->dstKind = ck == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED
									  : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
			m->bytes = bytes;
			m->start = cupti_time(s0);
			m->end = cupti_time(s1);
			m->deviceId = (uint32_t)w->device;
			m->contextId = d->context_id;
			m->streamId = w->stream;
			m->correlationId = w->corr;
#if CUDAEMU_CUPTI_MAJOR != 12
			m->copyCount = j - i;
#endif
		}
		i = j;
	}
}

/* an allocation / release record (MEMORY2: CUDA 13's Memory4, whose
 * leading fields are all the converter reads of either version) */
static void put_memory(const struct cudaemu_work *w, const struct cudaemu_device *d)
{
	CUpti_ActivityMemory4 *m = (void *)room(sizeof(*m), w->end_ns);
	if (!m)
		return;
	m->kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m->memoryOperationType = w->kind == CUDAEMU_MEMALLOC || w->kind == CUDAEMU_POOL_ALLOC
				 ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
				 : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	m->memoryKind = w->mem_kind ? (CUpti_ActivityMemoryKind)w->mem_kind
				    : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m->correlationId = w->corr;
	m->address = w->address;
	m->bytes = w->bytes;
	m->timestamp = cupti_time(w->start_ns);
	m->processId = (uint32_t)getpid();
	m->deviceId = (uint32_t)w->device;
	m->contextId = d->context_id;
	if (w->kind == CUDAEMU_POOL_ALLOC || w->kind == CUDAEMU_POOL_FREE) {
		/* from a local pool: its size and utilized bytes then */
		m->isAsync = 1;
		m->streamId = w->stream;
		m->memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
		m->memoryPoolConfig.address = w->pool;
		m->memoryPoolConfig.releaseThreshold = w->threshold;
		m->memoryPoolConfig.pool.size = w->pool_size;
		m->memoryPoolConfig.utilizedSize = w->pool_used;
	}
}

/* a pool created, trimmed or destroyed (MEMORY_POOL: CUDA 13's
 * MemoryPool3, 12's MemoryPool2): the pool's size and utilized bytes after
 * the call */
static void put_pool(const struct cudaemu_work *w)
{
	emu_pool *m = (void *)room(sizeof(*m), w->end_ns);
	if (!m)
		return;
	m->kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
	m->memoryPoolOperationType = w->kind == CUDAEMU_POOL_CREATE
				     ? CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED
				     : w->kind == CUDAEMU_POOL_TRIM
				     ? CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED
				     : CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED;
	m->memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
	m->correlationId = w->corr;
	m->processId = (uint32_t)getpid();
	m->deviceId = (uint32_t)w->device;
	m->minBytesToKeep = w->kind == CUDAEMU_POOL_TRIM ? (size_t)w->bytes : 0;
	m->address = w->pool;
	m->size = w->pool_size;
	m->releaseThreshold = w->threshold;
	m->timestamp = cupti_time(w->start_ns);
	m->utilizedSize = w->pool_used;
}

/* cuGraphInstantiate: the graph's kernels will be traced when kernels are */
static void sink_instantiate(uint32_t graph_id)
{
	lock("the driver");
	cu.graph_traced[graph_id % 65536] = cu.kind_on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL];
	unlock();
}

static void sink_work(struct cudaemu_work *w)
{
	const struct cudaemu_device *d = cudaemu_device_at(w->device);
	lock("the driver");
	w->foreign_clock |= cu.ts_cb ? 1 : 0;
	if (w->kind == CUDAEMU_KERNEL && cu.kind_on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]) {
		put_kernel(w, d, 0);
	} else if (w->kind == CUDAEMU_GRAPH && cu.kind_on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]) {
		/* every node's record carries the cudaGraphLaunch correlation id;
		 * a graph instantiated while kernels were not traced is not */
		if (!cu.graph_traced[w->graph_id % 65536])
			cu.st.graph_kernels_untraced += w->nodes;
		for (uint32_t n = 1; n <= w->nodes && cu.graph_traced[w->graph_id % 65536]; n++)
			put_kernel(w, d, n);
	} else if (w->kind == CUDAEMU_SYNC && cu.kind_on[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION]) {
		put_sync(w, d);
	} else if (w->kind == CUDAEMU_MEMCPY_BATCH && cu.kind_on[CUPTI_ACTIVITY_KIND_MEMCPY]) {
		put_batch(w, d);
	} else if (w->kind == CUDAEMU_MEMCPY && cu.kind_on[CUPTI_ACTIVITY_KIND_MEMCPY]) {
		emu_memcpy *m = (void *)room(sizeof(*m), w->end_ns);
		if (m) {
			m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
			m->copyKind = w->copy_kind;
			m->srcKind = w->src_kind;
			m->dstKind = w->dst_kind;
			m->bytes = w->bytes;
			m->start = cupti_time(w->start_ns);
			m->end = cupti_time(w->end_ns);
			m->deviceId = (uint32_t)w->device;
			m->contextId = d->context_id;
			m->streamId = w->stream;
			m->correlationId = w->corr;
		}
	} else if ((w->kind == CUDAEMU_MEMALLOC || w->kind == CUDAEMU_MEMFREE ||
		    w->kind == CUDAEMU_POOL_ALLOC || w->kind == CUDAEMU_POOL_FREE) &&
		   cu.kind_on[CUPTI_ACTIVITY_KIND_MEMORY2]) {
		put_memory(w, d);
	} else if ((w->kind == CUDAEMU_POOL_CREATE || w->kind == CUDAEMU_POOL_TRIM ||
		    w->kind == CUDAEMU_POOL_DESTROY) && cu.kind_on[CUPTI_ACTIVITY_KIND_MEMORY_POOL]) {
		put_pool(w);
	} else if (w->kind == CUDAEMU_MEMSET && cu.kind_on[CUPTI_ACTIVITY_KIND_MEMSET]) {
		CUpti_ActivityMemset4 *m = (void *)room(sizeof(*m), w->end_ns);
		if (m) {
			m->kind = CUPTI_ACTIVITY_KIND_MEMSET;
			m->bytes = w->bytes;
			m->start = cupti_time(w->start_ns);
			m->end = cupti_time(w->end_ns);
			m->deviceId = (uint32_t)w->device;
			m->contextId = d->context_id;
			m->streamId = w->stream;
			m->correlationId = w->corr;
			m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		}
	}
	unlock();
}

static const struct cudaemu_sink sink = { sink_api, sink_work, sink_instantiate };

/* ---- completion ---- */

/* hand back buffers: full ones, and the current one when forced or (with
 * `cur_too`) when all its records completed (cur_too 1: only when it holds
 * records, the worker's period; 2: even empty, cuptiActivityFlushAll);
 * incomplete records of a forced flush are marked.  Called with the lock
 * held; callbacks run with it held when `hold` (forced flush), else with
 * it released. */
static void complete(int forced, int cur_too, int hold)
{
	uint64_t now = now_ns();
	if (cu.have_cur && (forced || (cur_too && cu.cur.max_end < now &&
				       (cu.cur.valid || cur_too == 2)))) {
		if (cu.n_full < MAX_PENDING) {
			cu.full[cu.n_full++] = cu.cur;
			cu.have_cur = 0;
		}
	}
	if (cu.shuffle && !forced && cur_too != 2 && cu.n_full < 4)
		return;                 /* held: handed back late, newest first */
	int i = 0;
	while (i < cu.n_full) {
		int at = cu.shuffle ? cu.n_full - 1 - i : i;
		struct pend b = cu.full[at];
		if (b.max_end >= now && !forced) {
			i++;
			continue;
		}
		memmove(&cu.full[at], &cu.full[at + 1], (size_t)(cu.n_full - at - 1) * sizeof(b));
		cu.n_full--;
		if (forced && b.max_end >= now) {
			/* records of work still running: incomplete */
			for (size_t off = 0; off < b.valid;) {
				CUpti_Activity *r = (void *)(b.buf + off);
				size_t n = rec_size(r->kind);
				uint64_t end = 0;
				if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
					end = ((emu_kernel *)r)->end;
				else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY)
					end = ((emu_memcpy *)r)->end;
				else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET)
					end = ((CUpti_ActivityMemset4 *)r)->end;
				if (end >= now) {
					r->kind = CUPTI_ACTIVITY_KIND_INVALID;
					break;
				}
				off += ALIGN8(n);
			}
		}
		cu.st.buffers_completed++;
		CUpti_BuffersCallbackCompleteFunc f = cu.comp;
		owner_mark(b.buf, b.valid, pair_of(f));
		if (b.pair != pair_of(f))    /* requested by one pair, completed to another */
			cu.st.buffers_handed_over++;
		if (!hold)
			unlock();
		if (f)
			f(NULL, 0, b.buf, b.size, b.valid);
		if (!hold)
			lock("the worker");
	}
}

static void *worker_main(void *arg)
{
	(void)arg;
	uint64_t last = now_ns();
	/* CUDAEMU_WORKER_MS: how often full buffers go back (default 5) */
	const char *e = getenv("CUDAEMU_WORKER_MS");
	long ms = e ? atol(e) : 5;
	lock("the worker");
	while (!cu.stop) {
		unlock();
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
		lock("the worker");
		uint64_t now = now_ns();
		int periodic = cu.flush_ms && now - last >= (uint64_t)cu.flush_ms * 1000000u;
		if (periodic)
			last = now;
		complete(0, periodic, 0);
	}
	unlock();
	return NULL;
}

/* ---- the API ---- */

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *v)
{
	check(__func__);
	*v = EMU_API_VERSION;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult r, const char **s)
{
	check(__func__);
	*s = r == CUPTI_SUCCESS ? "CUPTI_SUCCESS" :
	     r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ?
	     "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" : "CUPTI_ERROR (emulated)";
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *t)
{
	check(__func__);
	lock(__func__);              /* the clock may change (a client's, finalize) */
	CUpti_TimestampCallbackFunc f = cu.ts_cb;
	unlock();
	*t = f ? f() : now_ns();
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	check(__func__);
	double rate = 1;
	if (f) {
		/* the client clock's rate against the host's, over 2 ms */
		uint64_t h1 = now_ns(), c1 = f();
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
		uint64_t h2 = now_ns(), c2 = f();
		rate = h2 > h1 ? (double)(c2 - c1) / (double)(h2 - h1) : 1;
	}
	lock(__func__);
	cu.ts_rate = rate;
	cu.ts_cb = f;
	unlock();
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType t)
{
	check(__func__);
	if (t != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && t != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		return CUPTI_ERROR_INVALID_PARAMETER;
	cu.tid_type = t;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetThreadIdType(CUpti_ActivityThreadIdType *t)
{
	check(__func__);
	*t = cu.tid_type;
	return CUPTI_SUCCESS;
}

static CUptiResult subscribe(const char *name, char *old, size_t oldlen)
{
	lock(name);
	CUptiResult r = CUPTI_SUCCESS;
	if (cu.subscribed) {
		if (old && oldlen)
			snprintf(old, oldlen, "CUPTI for emulated client");
		r = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	} else {
		cu.subscribed = 1;
	}
	unlock();
	return r;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc f, void *ud)
{
	check(__func__);
	(void)f;
	(void)ud;
	*s = (CUpti_SubscriberHandle)&cu;
	CUptiResult r = subscribe(__func__, NULL, 0);
	if (r == CUPTI_SUCCESS)
		sub_set(f, ud);
	return r;
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *s, CUpti_CallbackFunc f, void *ud,
				       CUpti_SubscriberParams *p)
{
	check(__func__);
	(void)f;
	(void)ud;
	*s = (CUpti_SubscriberHandle)&cu;
	CUptiResult r = subscribe(__func__, p ? p->oldSubscriberName : NULL,
				  p ? p->oldSubscriberSize : 0);
	if (r == CUPTI_SUCCESS)
		sub_set(f, ud);
	return r;
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
	check(__func__);
	if (s != (CUpti_SubscriberHandle)&cu)
		return CUPTI_ERROR_INVALID_PARAMETER;
	lock(__func__);
	cu.subscribed = 0;
	unlock();
	sub_set(NULL, NULL);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain dom, uint32_t cbid, const char **name)
{
	check(__func__);
	/* the real names, version suffix included */
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
		switch (cbid) {
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000: *name = "cudaLaunchKernel_v7000"; return CUPTI_SUCCESS;
		case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020: *name = "cudaMemcpyAsync_v3020"; return CUPTI_SUCCESS;
		case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020: *name = "cudaMemsetAsync_v3020"; return CUPTI_SUCCESS;
		case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000: *name = "cudaGraphLaunch_v10000"; return CUPTI_SUCCESS;
		case CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000: *name = "cudaStreamIsCapturing_v10000"; return CUPTI_SUCCESS;
		case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020: *name = "cudaDeviceSynchronize_v3020"; return CUPTI_SUCCESS;
		case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020: *name = "cudaStreamSynchronize_v3020"; return CUPTI_SUCCESS;
		case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_v13000: *name = "cudaMemcpyBatchAsync_v13000"; return CUPTI_SUCCESS;
		}
	} else if (dom == CUPTI_CB_DOMAIN_DRIVER_API) {
		switch (cbid) {
		case CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute: *name = "cuPointerGetAttribute"; return CUPTI_SUCCESS;
		case CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes: *name = "cuPointerGetAttributes"; return CUPTI_SUCCESS;
		case CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute: *name = "cuKernelGetAttribute"; return CUPTI_SUCCESS;
		}
	}
	return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						    CUpti_BuffersCallbackCompleteFunc comp)
{
	check(__func__);
	if (!req || !comp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	lock(__func__);
	cu.req = req;
	cu.comp = comp;
	const char *sh = getenv("CUDAEMU_SHUFFLE");
	cu.shuffle = sh ? (unsigned)atoi(sh) : 0;
	if (!cu.worker_started && pthread_create(&cu.worker, NULL, worker_main, NULL) == 0)
		cu.worker_started = 1;
	unlock();
	return CUPTI_SUCCESS;
}

static CUptiResult set_kind(CUpti_ActivityKind k, int on, const char *fn)
{
	check(fn);
	if ((unsigned)k >= MAX_KIND)
		return CUPTI_ERROR_INVALID_KIND;
	lock(fn);
	cu.kind_on[k] = (uint8_t)on;
	/* cupti_activity.h: the API kinds override the per-call switches
	 * (cuptiActivityEnableRuntimeApi / DriverApi) set before them */
	if (k == CUPTI_ACTIVITY_KIND_RUNTIME)
		memset(cu.rt_off, 0, sizeof(cu.rt_off));
	else if (k == CUPTI_ACTIVITY_KIND_DRIVER)
		memset(cu.drv_off, 0, sizeof(cu.drv_off));
	unlock();
	cudaemu_set_sink(&sink);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind k)
{
	return set_kind(k, 1, __func__);
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind k)
{
	return set_kind(k, 0, __func__);
}

/* enable and write the current state: one record per device / context */
CUptiResult CUPTIAPI cuptiActivityEnableAndDump(CUpti_ActivityKind k)
{
	CUptiResult r = set_kind(k, 1, __func__);
	if (r != CUPTI_SUCCESS)
		return r;
	lock(__func__);
	for (int i = 0; i < cudaemu_device_count(); i++) {
		const struct cudaemu_device *d = cudaemu_device_at(i);
		if (k == CUPTI_ACTIVITY_KIND_DEVICE) {
			emu_device *o = (void *)room(sizeof(*o), 0);
			if (!o)
				continue;
			o->kind = k;
			o->id = (uint32_t)i;
			o->name = d->name;
			o->numMultiprocessors = d->sms;
			o->globalMemorySize = d->mem_bytes;
			o->computeCapabilityMajor = d->cc_major;
			o->computeCapabilityMinor = d->cc_minor;
		} else if (k == CUPTI_ACTIVITY_KIND_CONTEXT) {
			emu_context *o = (void *)room(sizeof(*o), 0);
			if (!o)
				continue;
			o->kind = k;
			o->contextId = d->context_id;
			o->deviceId = (uint32_t)i;
		}
	}
	unlock();
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t on)
{
	check(__func__);
	if (cbid >= 1024)
		return CUPTI_ERROR_INVALID_PARAMETER;
	cu.rt_off[cbid] = !on;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t on)
{
	check(__func__);
	if (cbid >= 1024)
		return CUPTI_ERROR_INVALID_PARAMETER;
	cu.drv_off[cbid] = !on;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t ms)
{
	check(__func__);
	lock(__func__);
	cu.flush_ms = ms;
	unlock();
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	check(__func__);
	lock(__func__);
	if (!cu.comp) {                      /* the header's rule */
		unlock();
		return CUPTI_ERROR_INVALID_OPERATION;
	}
	int forced = (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0;
	/* forced: callbacks on this thread with the lock held */
	complete(forced, 2, forced);
	unlock();
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *n)
{
	check(__func__);
	(void)ctx;
	(void)stream;
	lock(__func__);
	*n = (size_t)cu.dropped;
	cu.dropped = 0;
	unlock();
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	check(__func__);
	if (!buf)
		return CUPTI_ERROR_INVALID_PARAMETER;
	uint8_t *p = buf;
	if (*rec) {
		size_t n = rec_size((*rec)->kind);
		if (!n)
			return CUPTI_ERROR_INVALID_KIND;
		p = (uint8_t *)*rec + ALIGN8(n);
	}
	if (p + sizeof(CUpti_Activity) > buf + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	CUpti_Activity *r = (void *)p;
	size_t n = rec_size(r->kind);
	if (!n || p + n > buf + valid)
		return CUPTI_ERROR_INVALID_KIND;
	*rec = r;
	return CUPTI_SUCCESS;
}

void cudaemu_cupti_stats(struct cudaemu_cupti_stats *out)
{
	lock(__func__);
	*out = cu.st;
	unlock();
}

/* ---- NVTX (CUPTI's InitializeInjectionNvtx2) ---- */

static _Atomic uint32_t marker_ids;
static __thread uint32_t *range_ids;       /* this thread's open ranges */
static __thread size_t range_n, range_cap;
static __thread uint64_t marker_last_ns;   /* time of its last marker record */

/* one marker record (START with name, or END) on the calling thread */
static void put_marker(uint32_t id, const char *name, uint32_t flags)
{
	uint64_t t = now_ns();
	lock("nvtx");
	uint64_t ts = cupti_time(t);
	marker_last_ns = ts;
	if (cu.kind_on[CUPTI_ACTIVITY_KIND_MARKER]) {
		CUpti_ActivityMarker2 *m = (void *)room(sizeof(*m), 0);
		if (m) {
			m->kind = CUPTI_ACTIVITY_KIND_MARKER;
			m->flags = (CUpti_ActivityFlag)flags;
			m->timestamp = ts;
			m->id = id;
			m->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
			m->objectId.pt.processId = (uint32_t)getpid();
			m->objectId.pt.threadId = thread_id();
			m->name = name ? intern(name) : NULL;
		}
	}
	unlock();
}

static int NVTX_API range_push(const char *msg)
{
	check(__func__);
	if (range_n == range_cap) {
		size_t nc = range_cap ? range_cap * 2 : 64;
		uint32_t *n = realloc(range_ids, nc * sizeof(*n));
		if (!n)
			return -1;
		range_ids = n;
		range_cap = nc;
	}
	uint32_t id = atomic_fetch_add(&marker_ids, 1) + 1;
	range_ids[range_n++] = id;
	put_marker(id, msg ? msg : "", CUPTI_ACTIVITY_FLAG_MARKER_START);
	return (int)range_n - 1;
}

static int NVTX_API range_push_ex(const nvtxEventAttributes_t *a)
{
	const char *msg = a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "";
	return range_push(msg);
}

static int NVTX_API range_pop(void)
{
	check(__func__);
	if (!range_n)
		return -1;
	uint32_t id = range_ids[--range_n];
	put_marker(id, NULL, CUPTI_ACTIVITY_FLAG_MARKER_END);
	if (!range_n) {                      /* nothing left open: give it back */
		free(range_ids);
		range_ids = NULL;
		range_cap = 0;
	}
	return (int)range_n;
}

/* NVTX calls this once, at the process's first NVTX call; 1 = taken */
EXPORT int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t));
int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t))
{
	check(__func__);
	const NvtxExportTableCallbacks *cb = get_export_table ? get_export_table(NVTX_ETID_CALLBACKS) : NULL;
	NvtxFunctionTable t = NULL;
	unsigned int n = 0;
	if (!cb || !cb->GetModuleFunctionTable ||
	    !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) || !t ||
	    n <= NVTX_CBID_CORE_RangePop)
		return 0;
	*t[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)range_push;
	*t[NVTX_CBID_CORE_RangePushEx] = (NvtxFunctionPointer)range_push_ex;
	*t[NVTX_CBID_CORE_RangePop] = (NvtxFunctionPointer)range_pop;
	return 1;
}

uint64_t cudaemu_cupti_marker_ns(void)
{
	return marker_last_ns;
}

/* ---- a second CUPTI client (Kineto) ----
 *
 * The callback API of the subscriber (cuptiEnableCallback / EnableDomain /
 * GetCallbackState: the subscriber's function is called on the launching
 * thread at API enter and exit, for the cbids it enabled); which callback
 * pair each record was delivered to (cudaemu_cupti_owner); cuptiFinalize,
 * which tears CUPTI down: subscription, callbacks, kinds, clock and the
 * buffers it still holds (never handed back: their records are lost). */

#define PAIRS 8
#define OWNER_ABANDONED 15       /* in a buffer cuptiFinalize abandoned */

static struct {
	_Atomic(CUpti_CallbackFunc) fn;
	_Atomic(void *) ud;
	_Atomic uint8_t on[2][1024];    /* [driver][cbid] */
	CUpti_BuffersCallbackCompleteFunc pairs[PAIRS];   /* under cu.lock */
	int n_pairs;
	uint8_t *owner;              /* by correlation id: low nibble the work
				      * record's pair, high the API record's */
	size_t owner_cap;
} c2;

static void sub_set(CUpti_CallbackFunc f, void *ud)
{
	atomic_store(&c2.ud, ud);
	for (int d = 0; d < 2; d++)
		for (int i = 0; i < 1024; i++)
			atomic_store(&c2.on[d][i], 0);
	atomic_store(&c2.fn, f);
}

/* the pair number (1, 2, ...) of a completion function, in the order the
 * pairs were first registered; called with cu.lock held */
static int pair_of(CUpti_BuffersCallbackCompleteFunc f)
{
	if (!f)
		return 0;
	for (int i = 0; i < c2.n_pairs; i++)
		if (c2.pairs[i] == f)
			return i + 1;
	if (c2.n_pairs == PAIRS)
		return PAIRS;
	c2.pairs[c2.n_pairs++] = f;
	return c2.n_pairs;
}

static void owner_set(uint32_t corr, int api, int pair)
{
	if (corr >= c2.owner_cap) {
		size_t nc = c2.owner_cap ? c2.owner_cap : 4096;
		while (nc <= corr)
			nc *= 2;
		uint8_t *n = realloc(c2.owner, nc);
		if (!n)
			abort();
		memset(n + c2.owner_cap, 0, nc - c2.owner_cap);
		c2.owner = n;
		c2.owner_cap = nc;
	}
	uint8_t v = c2.owner[corr];
	c2.owner[corr] = api ? (uint8_t)((v & 0x0f) | (pair << 4)) : (uint8_t)((v & 0xf0) | pair);
}

/* the records of a buffer go to pair `pair`; with cu.lock held */
static void owner_mark(const uint8_t *buf, size_t valid, int pair)
{
	for (size_t off = 0; off + sizeof(CUpti_Activity) <= valid;) {
		const CUpti_Activity *r = (const void *)(buf + off);
		size_t n = rec_size(r->kind);
		if (!n)
			break;               /* an incomplete record ends the walk */
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			owner_set(((const emu_kernel *)r)->correlationId, 0, pair);
		else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY)
			owner_set(((const emu_memcpy *)r)->correlationId, 0, pair);
		else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET)
			owner_set(((const CUpti_ActivityMemset4 *)r)->correlationId, 0, pair);
		else if (r->kind == CUPTI_ACTIVITY_KIND_RUNTIME || r->kind == CUPTI_ACTIVITY_KIND_DRIVER)
			owner_set(((const CUpti_ActivityAPI *)r)->correlationId, 1, pair);
		off += ALIGN8(n);
	}
}

int cudaemu_cupti_owner(uint32_t corr)
{
	lock(__func__);
	int v = corr < c2.owner_cap ? c2.owner[corr] : 0;
	unlock();
	return v;
}

/* the subscriber's callback at enter and exit of an API call it enabled */
static void sub_notify(const struct cudaemu_work *w)
{
	CUpti_CallbackFunc f = atomic_load(&c2.fn);
	if (!f || !atomic_load(&c2.on[w->driver ? 1 : 0][w->cbid % 1024]))
		return;
	CUpti_CallbackData d;
	memset(&d, 0, sizeof(d));
	d.correlationId = w->corr;
	CUpti_CallbackDomain dom = w->driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
	d.callbackSite = CUPTI_API_ENTER;
	f(atomic_load(&c2.ud), dom, w->cbid, &d);
	d.callbackSite = CUPTI_API_EXIT;
	f(atomic_load(&c2.ud), dom, w->cbid, &d);
}

static CUptiResult cb_check(CUpti_SubscriberHandle s, CUpti_CallbackDomain dom, const char *fn)
{
	check(fn);
	lock(fn);
	int ok = cu.subscribed && s == (CUpti_SubscriberHandle)&cu;
	unlock();
	if (!ok)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (dom != CUPTI_CB_DOMAIN_RUNTIME_API && dom != CUPTI_CB_DOMAIN_DRIVER_API)
		return CUPTI_ERROR_INVALID_PARAMETER;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle s,
					 CUpti_CallbackDomain dom, CUpti_CallbackId cbid)
{
	CUptiResult r = cb_check(s, dom, __func__);
	if (r != CUPTI_SUCCESS)
		return r;
	if (cbid >= 1024)
		return CUPTI_ERROR_INVALID_PARAMETER;
	atomic_store(&c2.on[dom == CUPTI_CB_DOMAIN_DRIVER_API][cbid], enable ? 1 : 0);
	cudaemu_set_sink(&sink);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle s,
				       CUpti_CallbackDomain dom)
{
	CUptiResult r = cb_check(s, dom, __func__);
	if (r != CUPTI_SUCCESS)
		return r;
	for (int i = 0; i < 1024; i++)
		atomic_store(&c2.on[dom == CUPTI_CB_DOMAIN_DRIVER_API][i], enable ? 1 : 0);
	cudaemu_set_sink(&sink);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackState(uint32_t *enable, CUpti_SubscriberHandle s,
					   CUpti_CallbackDomain dom, CUpti_CallbackId cbid)
{
	CUptiResult r = cb_check(s, dom, __func__);
	if (r != CUPTI_SUCCESS)
		return r;
	if (!enable || cbid >= 1024)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*enable = atomic_load(&c2.on[dom == CUPTI_CB_DOMAIN_DRIVER_API][cbid]);
	return CUPTI_SUCCESS;
}

/* CUPTI detaches: the buffers it holds are abandoned (their records never
 * reach a client: the header asks clients to flush first), callbacks,
 * subscription, kinds, flush period and clock are gone */
CUptiResult CUPTIAPI cuptiFinalize(void)
{
	check(__func__);
	lock(__func__);
	for (int i = 0; i < cu.n_full; i++)
		owner_mark(cu.full[i].buf, cu.full[i].valid, OWNER_ABANDONED);
	if (cu.have_cur)
		owner_mark(cu.cur.buf, cu.cur.valid, OWNER_ABANDONED);
	cu.st.buffers_abandoned += (uint64_t)cu.n_full + (cu.have_cur ? 1u : 0u);
	cu.n_full = 0;
	cu.have_cur = 0;
	cu.req = NULL;
	cu.comp = NULL;
	memset(cu.kind_on, 0, sizeof(cu.kind_on));
	cu.subscribed = 0;
	cu.flush_ms = 0;
	cu.ts_cb = NULL;
	unlock();
	sub_set(NULL, NULL);
	return CUPTI_SUCCESS;
}

/* ---- NVTX extensions (InitializeInjectionNvtxExtension) ----
 *
 * NVTX's extension modules (memory, payload, counters) each load the
 * injection library at their first call and hand it a nvtxExtModuleInfo_t
 * whose function slots the tool fills.  This CUPTI takes the memory
 * module's nvtxMemHeapRegister (counted, a handle returned) and declines
 * every other module (0: NVTX keeps them no-ops). */

static _Atomic uint64_t ext_calls;

static nvtxMemHeapHandle_t NVTX_API ext_heap_register(nvtxDomainHandle_t dom,
						      nvtxMemHeapDesc_t const *desc)
{
	(void)dom;
	(void)desc;
	check(__func__);
	return (nvtxMemHeapHandle_t)(uintptr_t)(atomic_fetch_add(&ext_calls, 1) + 1);
}

EXPORT int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *mi);
int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *mi)
{
	check(__func__);
	if (!mi || mi->structSize < sizeof(*mi) || mi->moduleId != NVTX_EXT_MODULEID_MEM ||
	    mi->segmentsCount < 1 || !mi->segments ||
	    mi->segments[0].slotCount <= NVTX3EXT_CBID_nvtxMemHeapRegister)
		return 0;
	mi->segments[0].functionSlots[NVTX3EXT_CBID_nvtxMemHeapRegister] =
		(intptr_t)ext_heap_register;
	return 1;
}

uint64_t cudaemu_cupti_nvtx_ext_calls(void)
{
	return atomic_load(&ext_calls);
}

/* ---- fork ----
 *
 * The lock is taken around fork() so a child never inherits it held; in
 * the child (one thread, no worker) CUPTI starts over: the buffers in
 * flight are the parent's and are dropped from its queue (never handed
 * back in the child), so the child's first record asks the client for a
 * new buffer on the calling thread. */

static void fork_prepare(void)
{
	pthread_mutex_lock(&cu.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&cu.lock);
}

static void fork_child(void)
{
	lock_init();                 /* held by the parent's thread id */
	cu.worker_started = 0;       /* no worker thread in the child */
	cu.have_cur = 0;
	cu.n_full = 0;
}
