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
#include "cudaemu.h"

#define EXPORT CUDAEMU_API

#if CUDAEMU_CUPTI_MAJOR == 12
typedef CUpti_ActivityKernel9 emu_kernel;
typedef CUpti_ActivityMemcpy5 emu_memcpy;
typedef CUpti_ActivityDevice4 emu_device;
typedef CUpti_ActivityContext2 emu_context;
typedef CUpti_ActivitySynchronization emu_sync;
#define EMU_API_VERSION 24u            /* CUDA 12.6 (cupti_version.h) */
#else
typedef CUpti_ActivityKernel10 emu_kernel;
typedef CUpti_ActivityMemcpy6 emu_memcpy;
typedef CUpti_ActivityDevice5 emu_device;
typedef CUpti_ActivityContext3 emu_context;
typedef CUpti_ActivitySynchronization2 emu_sync;
#define EMU_API_VERSION ((uint32_t)CUPTI_API_VERSION)
#endif
#define MAX_KIND 128
#define MAX_PENDING 4096
#define NAME_SLOTS 65536

struct pend {
	uint8_t *buf;
	size_t size, valid;
	uint64_t max_end;            /* latest end of a record in it */
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

__attribute__((constructor)) static void cu_ctor(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&cu.lock, &a);
	pthread_mutexattr_destroy(&a);
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
	if (cu.have_cur && cu.cur.valid + ALIGN8(n) > cu.cur.size) {
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
		cu.cur = (struct pend){ b, sz, 0, 0 };
		cu.have_cur = 1;
	}
	uint8_t *p = cu.cur.buf + cu.cur.valid;
	memset(p, 0, ALIGN8(n));
	cu.cur.valid += ALIGN8(n);
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
		}
	}
	unlock();
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
	int i = 0;
	while (i < cu.n_full) {
		struct pend b = cu.full[i];
		if (b.max_end >= now && !forced) {
			i++;
			continue;
		}
		memmove(&cu.full[i], &cu.full[i + 1], (size_t)(cu.n_full - i - 1) * sizeof(b));
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
	*t = cu.ts_cb ? cu.ts_cb() : now_ns();
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
	return subscribe(__func__, NULL, 0);
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *s, CUpti_CallbackFunc f, void *ud,
				       CUpti_SubscriberParams *p)
{
	check(__func__);
	(void)f;
	(void)ud;
	*s = (CUpti_SubscriberHandle)&cu;
	return subscribe(__func__, p ? p->oldSubscriberName : NULL, p ? p->oldSubscriberSize : 0);
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
	check(__func__);
	if (s != (CUpti_SubscriberHandle)&cu)
		return CUPTI_ERROR_INVALID_PARAMETER;
	lock(__func__);
	cu.subscribed = 0;
	unlock();
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
