/*
 * cudaemu.h - the CUDA driver + CUPTI emulator (test-only code).
 *
 * libcuda.so.1 (cudaemu_cuda.c) stands for the driver: cuInit loads
 * CUDA_INJECTION64_PATH the way the real driver does, devices come from
 * CUDAEMU_DEVICES, and a program submits GPU work with cudaemu_submit().
 * Each stream is a FIFO on the host's CLOCK_REALTIME: work starts when the
 * stream is free and the launch call has returned, and runs dur_ns.
 * libcupti.so.13 (cudaemu_cupti.c) is CUPTI's activity API built from the
 * real CUDA 13 header structs; it receives every API call and every piece
 * of GPU work from the driver through struct cudaemu_sink and writes them
 * into the client's activity buffers.
 *
 * Times are CLOCK_REALTIME ns (what cuptiGetTimestamp returns by default).
 */
#ifndef GTRACE_TESTS_CUDAEMU_H
#define GTRACE_TESTS_CUDAEMU_H

#include <stdint.h>

#define CUDAEMU_API __attribute__((visibility("default")))
#define CUDAEMU_MAX_DEVICES 16
#define CUDAEMU_POOL_GRAIN (2ull << 20)   /* a pool grows in 2 MiB pieces */
#define CUDAEMU_MAX_POOLS 256

enum cudaemu_kind {
	CUDAEMU_KERNEL = 1,
	CUDAEMU_MEMCPY,
	CUDAEMU_MEMSET,
	CUDAEMU_CALL,            /* an API call without GPU work (cbid, driver in) */
	CUDAEMU_GRAPH,           /* cudaGraphLaunch of `nodes` kernels (name, grid,
				  * block, dur_ns each; node i runs from
				  * start_ns + i * (dur_ns + 1) for dur_ns) */
	CUDAEMU_SYNC,            /* stream 0: cudaDeviceSynchronize (the whole
				  * device), else cudaStreamSynchronize(stream):
				  * the call waits for the work submitted before
				  * it; start_ns..end_ns is the wait */
	CUDAEMU_MEMCPY_BATCH,    /* cudaMemcpyBatchAsync of `copies` copies on one
				  * stream, back to back: copy i runs dur_ns from
				  * start_ns + i * (dur_ns + 1) */
	CUDAEMU_MEMALLOC,        /* cuMemAlloc_v2 of `bytes` on the device (any
				  * stream, 0 too): address out; CUPTI writes a
				  * MEMORY2 allocation record (Memory4) at start_ns,
				  * inside the call */
	CUDAEMU_MEMFREE,         /* cuMemFree_v2 of `address` (`bytes` its size):
				  * a MEMORY2 release record at start_ns */
	/* the stream-ordered allocator's pools (one driver call each, at
	 * start_ns inside it; pool_size / pool_used out: the pool's size and
	 * utilized bytes after the call, the driver's truth).  A pool grows in
	 * whole CUDAEMU_POOL_GRAIN pieces when an allocation passes its size and
	 * shrinks only when trimmed. */
	CUDAEMU_POOL_CREATE,     /* cuMemPoolCreate (local pool, size 0, release
				  * threshold `threshold`): `pool` out, its base
				  * address; a MEMORY_POOL record (MemoryPool3) CREATED */
	CUDAEMU_POOL_ALLOC,      /* cuMemAllocFromPoolAsync of `bytes` from `pool`:
				  * `address` out; a MEMORY2 allocation record whose
				  * memoryPoolConfig gives the pool (local, address,
				  * threshold, size then, utilized) */
	CUDAEMU_POOL_FREE,       /* cuMemFreeAsync of `address` (`bytes` its size)
				  * back to `pool`: a MEMORY2 release record with
				  * the pool's config; the size stays */
	CUDAEMU_POOL_TRIM,       /* cuMemPoolTrimTo(pool, `bytes`): the size becomes
				  * the larger of `bytes` and the utilized bytes
				  * rounded up to the grain; a MEMORY_POOL TRIMMED
				  * record with that size (minBytesToKeep `bytes`) */
	CUDAEMU_POOL_DESTROY,    /* cuMemPoolDestroy: a MEMORY_POOL DESTROYED record
				  * (size 0 after) */
};

/* one piece of GPU work and the launch call that made it */
struct cudaemu_work {
	/* in */
	int kind;                /* enum cudaemu_kind */
	int device;
	uint32_t stream;         /* stream id on that device (>= 1) */
	const char *name;        /* kernel name */
	uint32_t grid[3], block[3];
	uint64_t bytes;          /* copies and memsets */
	uint8_t copy_kind;       /* CUpti_ActivityMemcpyKind */
	uint8_t src_kind, dst_kind;   /* CUpti_ActivityMemoryKind */
	int64_t dur_ns;          /* time on the device */
	int bad_ts;              /* CUPTI writes the work's record with 1: start = end
				  * = 0 (no timestamp memory), 2: end before start */
	uint8_t driver;          /* CUDAEMU_CALL: a driver API call (else runtime) */
	uint32_t nodes;          /* CUDAEMU_GRAPH: kernel nodes (>= 1) */
	uint32_t graph_id;       /* CUDAEMU_GRAPH: the graph's id (>= 1; its kernels
				  * are traced only when CUPTI had CONCURRENT_KERNEL
				  * on at cudaemu_graph_instantiate) */
	uint32_t copies;         /* CUDAEMU_MEMCPY_BATCH: copies (1..64) */
	const uint64_t *copy_bytes;   /* their sizes */
	const uint8_t *copy_kinds;    /* their CUpti_ActivityMemcpyKind (HTOD: pinned
				       * -> device, DTOH: device -> pinned, else
				       * device -> device) */
	uint64_t address;        /* CUDAEMU_MEMALLOC: out; CUDAEMU_MEMFREE: in */
	uint8_t mem_kind;        /* CUDAEMU_MEMALLOC / FREE: CUpti_ActivityMemoryKind
				  * (0: device) */
	uint64_t pool;           /* CUDAEMU_POOL_*: the pool (out for CREATE) */
	uint64_t threshold;      /* CUDAEMU_POOL_CREATE: its release threshold */
	uint64_t pool_size;      /* CUDAEMU_POOL_*: out, the pool's size after */
	uint64_t pool_used;      /* CUDAEMU_POOL_*: out, its utilized bytes after */
	uint64_t end_at_ns;      /* a collective: the work runs at least until this
				  * time, when its slowest peer arrives (0: none) */
	/* out: what the driver did (the ground truth) */
	uint32_t corr;           /* correlation id of the launch call */
	uint32_t cbid;           /* API callback id of the call (in for CUDAEMU_CALL) */
	uint32_t tid;            /* system thread id of the launching thread */
	uint64_t api_start_ns, api_end_ns;
	uint64_t start_ns, end_ns;
	int foreign_clock;       /* set by CUPTI: records carrying a client's clock
				  * (cuptiActivityRegisterTimestampCallback): bit 0
				  * the work's, bit 1 the launch call's */
};

struct cudaemu_device {
	char name[64];
	uint32_t sms;
	uint64_t mem_bytes;
	uint32_t cc_major, cc_minor;
	uint32_t context_id;     /* the device's primary context */
};

/* what CUPTI registers with the driver to see API calls and GPU work; the
 * driver calls it on the launching thread */
struct cudaemu_sink {
	void (*api)(struct cudaemu_work *w);
	void (*work)(struct cudaemu_work *w);
	/* cuGraphInstantiate of graph_id: CUPTI decides now whether the
	 * graph's kernels will be traced (NULL: never) */
	void (*instantiate)(uint32_t graph_id);
};

/* ---- exported by libcuda.so.1 ---- */
/* submit w (in fields) on the calling thread; fills the out fields; 0 or
 * -EINVAL (no such device / stream 0 / unknown kind) */
int cudaemu_submit(struct cudaemu_work *w) CUDAEMU_API;
/* cuGraphInstantiate of the graph graph_id (>= 1): its kernel nodes are
 * traced at launch only if CUPTI had CONCURRENT_KERNEL enabled now (the
 * graph is instrumented when instantiated, as with the real CUPTI) */
void cudaemu_graph_instantiate(uint32_t graph_id) CUDAEMU_API;
/* wait until every submitted piece of work has ended */
void cudaemu_sync(void) CUDAEMU_API;
/* number of devices and their properties (index < count) */
int cudaemu_device_count(void) CUDAEMU_API;
const struct cudaemu_device *cudaemu_device_at(int index) CUDAEMU_API;
/* CUPTI's hook (NULL to remove) */
void cudaemu_set_sink(const struct cudaemu_sink *s) CUDAEMU_API;
/* CLOCK_REALTIME in ns */
uint64_t cudaemu_now_ns(void) CUDAEMU_API;

/* ---- exported by libcupti.so.13: the emulator's own counters ---- */
struct cudaemu_cupti_stats {
	uint64_t records;        /* records written into client buffers */
	uint64_t dropped;        /* records dropped (no buffer) */
	uint64_t requests_refused;    /* buffer requests answered with NULL */
	uint64_t buffers_completed;
	uint64_t buffers_abandoned;   /* held by CUPTI at cuptiFinalize, never handed back */
	uint64_t buffers_handed_over; /* requested from one callback pair, completed to
				       * another (registered meanwhile) */
	uint64_t graph_kernels_untraced;   /* node kernels of graphs instantiated
					    * while CONCURRENT_KERNEL was off */
	uint64_t call_records;   /* of them, API records of calls that submit no work
				  * (CUDAEMU_CALL: the trainer's chatty calls) */
};
void cudaemu_cupti_stats(struct cudaemu_cupti_stats *out) CUDAEMU_API;
/* the CUPTI timestamp of the calling thread's last NVTX marker record
 * (what its START / END record carries), 0 before any */
uint64_t cudaemu_cupti_marker_ns(void) CUDAEMU_API;
/* which buffer-callback pair received the records of correlation id corr:
 * low 4 bits the work record's, high 4 bits the API record's; pairs are
 * numbered 1, 2, ... in the order their completion functions were first
 * registered; 0 never delivered (yet), 15 abandoned by cuptiFinalize */
int cudaemu_cupti_owner(uint32_t corr) CUDAEMU_API;
/* calls of the NVTX extension function it took (nvtxMemHeapRegister,
 * through InitializeInjectionNvtxExtension) */
uint64_t cudaemu_cupti_nvtx_ext_calls(void) CUDAEMU_API;

#endif
