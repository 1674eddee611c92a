/*
 * cudaemu_cuda.c - the emulated CUDA driver, built as libcuda.so.1
 * (tests/cudaemu/cudaemu.h).
 *
 * cuInit loads CUDA_INJECTION64_PATH with RTLD_NOW and calls its
 * InitializeInjection once, on the calling thread, as the real driver does.
 * Devices: CUDAEMU_DEVICES (default 2), H100-like properties.  Streams are
 * per-device FIFOs of end times; correlation ids are one process-wide
 * counter.  Everything else of the driver API is absent on purpose: a
 * library that needs more fails to load (RTLD_NOW) and the test says so.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include "cudaemu.h"

#define STREAMS 64

static struct {
	pthread_once_t dev_once, init_once;
	CUresult init_rc;
	int n_dev;
	struct cudaemu_device dev[CUDAEMU_MAX_DEVICES];
	pthread_mutex_t lock;                   /* stream tails */
	uint64_t tail[CUDAEMU_MAX_DEVICES][STREAMS];
	uint64_t last_end;
	_Atomic uint32_t corr;
	_Atomic uint64_t next_addr;             /* cuMemAlloc's addresses */
	const struct cudaemu_sink *_Atomic sink;
	pthread_mutex_t pool_lock;              /* the pools */
	struct emu_pool {
		uint64_t size, used, threshold;
		int device, live;
	} pools[CUDAEMU_MAX_POOLS];             /* pool i has base address POOL_BASE + i << 32 */
	int n_pools;
} drv = { .dev_once = PTHREAD_ONCE_INIT, .init_once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER,
	  .pool_lock = PTHREAD_MUTEX_INITIALIZER };

#define POOL_BASE 0x7e0000000000ull

CUresult CUDAAPI cuInit(unsigned int flags) CUDAEMU_API;
CUresult CUDAAPI cuDriverGetVersion(int *v) CUDAEMU_API;
CUresult CUDAAPI cuDeviceGetCount(int *n) CUDAEMU_API;

/* GTRACE_TEST_CLOCK_OFFSET_NS: this process stands for a node whose
 * CLOCK_REALTIME is off by that much (tests of multi-node clock alignment).
 * Every CLOCK_REALTIME read in the process (the driver's, CUPTI's, the
 * capture library's calibration) goes through this interposer: libcuda.so.1
 * comes before libc in the trainer's symbol lookup order. */
int clock_gettime(clockid_t clk, struct timespec *ts) CUDAEMU_API;
int clock_gettime(clockid_t clk, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	static _Atomic long long off = -1;   /* -1: not read yet */
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "clock_gettime");
	int rc = real(clk, ts);
	if (rc || clk != CLOCK_REALTIME)
		return rc;
	long long o = atomic_load(&off);
	if (o == -1) {
		const char *e = getenv("GTRACE_TEST_CLOCK_OFFSET_NS");
		o = e && *e ? strtoll(e, NULL, 10) : 0;
		o = o == -1 ? 0 : o;
		atomic_store(&off, o);
	}
	if (o) {
		long long ns = (long long)ts->tv_nsec + o % 1000000000LL;
		ts->tv_sec += (time_t)(o / 1000000000LL + (ns >= 1000000000LL) - (ns < 0));
		ts->tv_nsec = (long)(ns >= 1000000000LL ? ns - 1000000000LL : ns < 0 ? ns + 1000000000LL : ns);
	}
	return rc;
}

uint64_t cudaemu_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void devices_init(void)
{
	const char *e = getenv("CUDAEMU_DEVICES");
	int n = e ? atoi(e) : 2;
	drv.n_dev = n < 1 ? 1 : n > CUDAEMU_MAX_DEVICES ? CUDAEMU_MAX_DEVICES : n;
	for (int i = 0; i < drv.n_dev; i++) {
		struct cudaemu_device *d = &drv.dev[i];
		snprintf(d->name, sizeof(d->name), "NVIDIA H100 80GB HBM3");
		d->sms = 132;
		d->mem_bytes = 85520809984ull;
		d->cc_major = 9;
		d->cc_minor = 0;
		d->context_id = (uint32_t)i + 1;
	}
}

/* the driver's injection contract: dlopen RTLD_NOW, InitializeInjection
 * once on the thread that called cuInit */
static void init_once(void)
{
	pthread_once(&drv.dev_once, devices_init);
	const char *path = getenv("CUDA_INJECTION64_PATH");
	if (!path || !*path)
		return;
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "cudaemu: CUDA_INJECTION64_PATH %s: %s\n", path, dlerror());
		drv.init_rc = CUDA_ERROR_NOT_INITIALIZED;
		return;
	}
	int (*fn)(void);
	*(void **)&fn = dlsym(h, "InitializeInjection");
	if (!fn) {
		fprintf(stderr, "cudaemu: %s has no InitializeInjection\n", path);
		drv.init_rc = CUDA_ERROR_NOT_INITIALIZED;
		return;
	}
	if (fn() != 1)
		fprintf(stderr, "cudaemu: InitializeInjection of %s did not return 1\n", path);
}

/* CUDA is not fork-safe: a child of a process that initialized it gets
 * CUDA_ERROR_NOT_INITIALIZED from cuInit (no second injection) */
static int drv_inited, drv_child;

static void drv_fork_child(void)
{
	drv_child = drv_inited;
}

__attribute__((constructor)) static void drv_ctor(void)
{
	pthread_atfork(NULL, NULL, drv_fork_child);
}

CUresult CUDAAPI cuInit(unsigned int flags)
{
	(void)flags;
	if (drv_child)
		return CUDA_ERROR_NOT_INITIALIZED;
	drv_inited = 1;
	pthread_once(&drv.init_once, init_once);
	return drv.init_rc;
}

CUresult CUDAAPI cuDriverGetVersion(int *v)
{
	*v = CUDA_VERSION;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *n)
{
	pthread_once(&drv.dev_once, devices_init);
	*n = drv.n_dev;
	return CUDA_SUCCESS;
}

int cudaemu_device_count(void)
{
	pthread_once(&drv.dev_once, devices_init);
	return drv.n_dev;
}

const struct cudaemu_device *cudaemu_device_at(int i)
{
	pthread_once(&drv.dev_once, devices_init);
	return i >= 0 && i < drv.n_dev ? &drv.dev[i] : NULL;
}

void cudaemu_set_sink(const struct cudaemu_sink *s)
{
	atomic_store(&drv.sink, s);
}

static uint32_t launch_cbid(int kind)
{
	switch (kind) {
	case CUDAEMU_KERNEL: return CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
	case CUDAEMU_MEMCPY: return CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
	case CUDAEMU_GRAPH: return CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000;
	case CUDAEMU_SYNC: return CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020;
	case CUDAEMU_MEMCPY_BATCH: return CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_v13000;
	default: return CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020;
	}
}

/* sleep until CLOCK_REALTIME passes end */
static void wait_until(uint64_t end)
{
	for (uint64_t now; (now = cudaemu_now_ns()) <= end;) {
		uint64_t d = end - now + 1;
		struct timespec ts = { (time_t)(d / 1000000000u), (long)(d % 1000000000u) };
		nanosleep(&ts, NULL);
	}
}

/* CUDAEMU_SYNC: wait for the work submitted before the call on the
 * device (stream 0) or the stream; the record spans the wait */
static int submit_sync(struct cudaemu_work *w)
{
	w->tid = (uint32_t)syscall(SYS_gettid);
	w->corr = atomic_fetch_add(&drv.corr, 1) + 1;
	w->cbid = w->stream ? CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020
			    : CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020;
	w->api_start_ns = cudaemu_now_ns();
	pthread_mutex_lock(&drv.lock);
	uint64_t end = drv.tail[w->device][w->stream];
	for (int s = 1; !w->stream && s < STREAMS; s++)
		end = drv.tail[w->device][s] > end ? drv.tail[w->device][s] : end;
	pthread_mutex_unlock(&drv.lock);
	w->start_ns = w->api_start_ns + 1;
	wait_until(end > w->start_ns ? end : w->start_ns);
	/* the wait ends when the call sees the work done */
	w->end_ns = cudaemu_now_ns();
	w->api_end_ns = w->end_ns + 1;
	const struct cudaemu_sink *s = atomic_load(&drv.sink);
	if (s) {
		s->api(w);
		s->work(w);
	}
	return 0;
}

/* CUDAEMU_MEMALLOC / MEMFREE: a driver call that allocates (an address
 * of its own, 512-byte aligned) or frees at start_ns, inside the call */
static int submit_mem(struct cudaemu_work *w)
{
	int alloc = w->kind == CUDAEMU_MEMALLOC;
	w->tid = (uint32_t)syscall(SYS_gettid);
	w->corr = atomic_fetch_add(&drv.corr, 1) + 1;
	w->driver = 1;
	w->cbid = alloc ? CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2 : CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2;
	if (alloc)
		w->address = 0x7f0000000000ull +
			     atomic_fetch_add(&drv.next_addr, (w->bytes + 511) & ~511ull);
	w->api_start_ns = cudaemu_now_ns();
	w->start_ns = w->end_ns = w->api_start_ns + 1;
	w->api_end_ns = w->start_ns + 1;
	const struct cudaemu_sink *s = atomic_load(&drv.sink);
	if (s) {
		s->api(w);
		s->work(w);
	}
	return 0;
}

void cudaemu_graph_instantiate(uint32_t graph_id)
{
	const struct cudaemu_sink *s = atomic_load(&drv.sink);
	if (s && s->instantiate)
		s->instantiate(graph_id);
}

/* the pool call w makes on its pool (drv.pool_lock held): 0, or -EINVAL
 * for a pool that does not exist (any more), is another device's, or an
 * allocation's bytes it does not hold */
static int pool_op(struct cudaemu_work *w)
{
	struct emu_pool *p;
	if (w->kind == CUDAEMU_POOL_CREATE) {
		if (drv.n_pools == CUDAEMU_MAX_POOLS)
			return -EINVAL;
		w->pool = POOL_BASE + ((uint64_t)drv.n_pools << 32);
		p = &drv.pools[drv.n_pools++];
		*p = (struct emu_pool){ 0, 0, w->threshold, w->device, 1 };
	} else {
		uint64_t i = (w->pool - POOL_BASE) >> 32;
		if (w->pool < POOL_BASE || (w->pool & 0xffffffffull) || i >= (uint64_t)drv.n_pools ||
		    !drv.pools[i].live || drv.pools[i].device != w->device)
			return -EINVAL;
		p = &drv.pools[i];
		w->threshold = p->threshold;
		switch (w->kind) {
		case CUDAEMU_POOL_ALLOC:
			w->address = w->pool + p->used;   /* addresses are not reused */
			p->used += w->bytes;
			if (p->used > p->size)
				p->size = (p->used + CUDAEMU_POOL_GRAIN - 1) / CUDAEMU_POOL_GRAIN *
					  CUDAEMU_POOL_GRAIN;
			break;
		case CUDAEMU_POOL_FREE:
			if (w->bytes > p->used)
				return -EINVAL;
			p->used -= w->bytes;
			break;
		case CUDAEMU_POOL_TRIM: {
			uint64_t keep = (p->used + CUDAEMU_POOL_GRAIN - 1) / CUDAEMU_POOL_GRAIN *
					CUDAEMU_POOL_GRAIN;
			if (w->bytes > keep)
				keep = w->bytes;
			if (keep < p->size)
				p->size = keep;
			break;
		}
		default:        /* CUDAEMU_POOL_DESTROY */
			p->live = 0;
			p->size = p->used = 0;
		}
	}
	w->pool_size = p->size;
	w->pool_used = p->used;
	return 0;
}

/* CUDAEMU_POOL_*: a driver call on a pool at start_ns, inside the call */
static int submit_pool(struct cudaemu_work *w)
{
	static const uint32_t cbid[] = {
		CUPTI_DRIVER_TRACE_CBID_cuMemPoolCreate, CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
		CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, CUPTI_DRIVER_TRACE_CBID_cuMemPoolTrimTo,
		CUPTI_DRIVER_TRACE_CBID_cuMemPoolDestroy,
	};
	w->tid = (uint32_t)syscall(SYS_gettid);
	w->corr = atomic_fetch_add(&drv.corr, 1) + 1;
	w->driver = 1;
	w->cbid = cbid[w->kind - CUDAEMU_POOL_CREATE];
	w->api_start_ns = cudaemu_now_ns();
	pthread_mutex_lock(&drv.pool_lock);
	int rc = pool_op(w);
	w->start_ns = w->end_ns = w->api_start_ns + 1;
	pthread_mutex_unlock(&drv.pool_lock);
	if (rc)
		return rc;
	w->api_end_ns = w->start_ns + 1;
	const struct cudaemu_sink *s = atomic_load(&drv.sink);
	if (s) {
		s->api(w);
		s->work(w);
	}
	return 0;
}

int cudaemu_submit(struct cudaemu_work *w)
{
	pthread_once(&drv.dev_once, devices_init);
	if (w->device >= 0 && w->device < drv.n_dev && w->kind >= CUDAEMU_POOL_CREATE &&
	    w->kind <= CUDAEMU_POOL_DESTROY)
		return submit_pool(w);
	if (w->device >= 0 && w->device < drv.n_dev &&
	    (w->kind == CUDAEMU_MEMALLOC || w->kind == CUDAEMU_MEMFREE))
		return submit_mem(w);
	if (w->device < 0 || w->device >= drv.n_dev || (w->stream == 0 && w->kind != CUDAEMU_SYNC) ||
	    w->stream >= STREAMS || w->kind < CUDAEMU_KERNEL || w->kind > CUDAEMU_MEMCPY_BATCH ||
	    w->dur_ns < 0 || (w->kind == CUDAEMU_GRAPH && (w->nodes < 1 || w->graph_id < 1)) ||
	    (w->kind == CUDAEMU_MEMCPY_BATCH &&
	     (w->copies < 1 || w->copies > 64 || !w->copy_bytes || !w->copy_kinds)))
		return -EINVAL;
	if (w->kind == CUDAEMU_SYNC)
		return submit_sync(w);
	w->tid = (uint32_t)syscall(SYS_gettid);
	w->corr = atomic_fetch_add(&drv.corr, 1) + 1;
	w->api_start_ns = cudaemu_now_ns();
	if (w->kind == CUDAEMU_CALL) {
		w->api_end_ns = cudaemu_now_ns() + 1;
		const struct cudaemu_sink *s = atomic_load(&drv.sink);
		if (s)
			s->api(w);
		return 0;
	}
	w->cbid = launch_cbid(w->kind);
	pthread_mutex_lock(&drv.lock);
	/* the call returns before the work starts (at least 1 ns later) */
	w->api_end_ns = cudaemu_now_ns() + 1;
	uint64_t *tail = &drv.tail[w->device][w->stream];
	w->start_ns = *tail > w->api_end_ns ? *tail + 1 : w->api_end_ns + 1;
	w->end_ns = w->start_ns + (uint64_t)w->dur_ns;
	if (w->end_at_ns > w->end_ns)   /* a collective waits for its peers */
		w->end_ns = w->end_at_ns;
	if (w->kind == CUDAEMU_GRAPH || w->kind == CUDAEMU_MEMCPY_BATCH) {
		/* the nodes (copies) back to back */
		uint32_t n = w->kind == CUDAEMU_GRAPH ? w->nodes : w->copies;
		w->end_ns = w->start_ns + (uint64_t)(n - 1) * ((uint64_t)w->dur_ns + 1) +
			    (uint64_t)w->dur_ns;
	}
	*tail = w->end_ns;
	if (w->end_ns > drv.last_end)
		drv.last_end = w->end_ns;
	pthread_mutex_unlock(&drv.lock);
	const struct cudaemu_sink *s = atomic_load(&drv.sink);
	if (s) {
		s->api(w);
		s->work(w);
	}
	return 0;
}

void cudaemu_sync(void)
{
	pthread_mutex_lock(&drv.lock);
	uint64_t end = drv.last_end;
	pthread_mutex_unlock(&drv.lock);
	wait_until(end);
}
