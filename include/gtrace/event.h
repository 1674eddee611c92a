/*
 * gtrace/event.h - the event model shared by every source, the store, the
 * native file and the capture ring.
 *
 * One struct gt_event is 48 bytes and describes any timed thing: a kernel, a
 * copy, a memset, a synchronization, a CUDA runtime/driver call, an NVTX or
 * user annotation range, a CPU op, a Python function, a training step, an
 * instant or a counter sample.  Kind-specific data that repeats (kernel launch
 * configurations, NCCL collective arguments) lives in interned side tables of
 * the store and the event holds their ids in `arg`.
 *
 * Time rules: start_ns and dur_ns are int64 nanoseconds on the capture's one
 * time axis (for Kineto traces: epoch nanoseconds; for live captures: host
 * CLOCK_REALTIME after clock calibration).  dur_ns >= 0; instants have 0.
 */
#ifndef GTRACE_EVENT_H
#define GTRACE_EVENT_H

#include <stdint.h>

enum gt_ev_kind {
	GT_EV_NONE = 0,
	GT_EV_KERNEL,      /* GPU kernel; arg = kconf id | (nccl id << 32) */
	GT_EV_MEMCPY,      /* GPU copy; sub = enum gt_copy_kind; arg = bytes */
	GT_EV_MEMSET,      /* GPU memset; arg = bytes */
	GT_EV_SYNC,        /* synchronization; sub = enum gt_sync_kind */
	GT_EV_RUNTIME,     /* CUDA runtime API call on a host thread */
	GT_EV_DRIVER,      /* CUDA driver API call on a host thread */
	GT_EV_NVTX,        /* NVTX / user annotation range on a host thread */
	GT_EV_GPU_ANNOT,   /* annotation range projected on a GPU lane */
	GT_EV_CPU_OP,      /* framework operator (aten::..., tf op); arg bits 0-31 = string id
			      of its input shapes, aux = of its call stack (0 = none) */
	GT_EV_PYTHON,      /* Python function */
	GT_EV_STEP,        /* training step span (ProfilerStep#N); arg = N */
	GT_EV_INSTANT,     /* point event (dur 0); GT_EVF_MEMORY: arg = bytes, aux = device */
	GT_EV_COUNTER,     /* counter sample; arg = IEEE double bits of value */
	GT_EV_OVERHEAD,    /* profiler's own overhead */
	GT_EV_KIND_COUNT
};

enum gt_copy_kind {
	GT_COPY_UNKNOWN = 0,
	GT_COPY_H2D,
	GT_COPY_D2H,
	GT_COPY_D2D,
	GT_COPY_P2P,
	GT_COPY_H2H,
	GT_COPY_KIND_COUNT
};

enum gt_sync_kind {
	GT_SYNC_UNKNOWN = 0,
	GT_SYNC_EVENT,         /* cudaEventSynchronize */
	GT_SYNC_STREAM_WAIT,   /* cudaStreamWaitEvent */
	GT_SYNC_STREAM,        /* cudaStreamSynchronize */
	GT_SYNC_CONTEXT,       /* cudaDeviceSynchronize */
	GT_SYNC_KIND_COUNT
};

/* event flags */
#define GT_EVF_NCCL        0x0001u  /* kernel is an NCCL collective/p2p kernel */
#define GT_EVF_DATALOADER  0x0002u  /* host range is input loading (DataLoader, IteratorGetNext) */
#define GT_EVF_PINNED      0x0004u  /* copy uses pinned host memory */
#define GT_EVF_PAGEABLE    0x0008u  /* copy uses pageable host memory */
#define GT_EVF_LAUNCH      0x0010u  /* runtime/driver call that launches GPU work */
#define GT_EVF_INFERRED    0x0020u  /* step inferred, not annotated */
#define GT_EVF_TRUNCATED   0x0040u  /* range cut off by the capture end */
#define GT_EVF_MEMORY      0x0080u  /* instant is an allocator record (Kineto [memory]):
					 arg = bytes as int64 (negative = a free), aux = device:
					 a CUDA ordinal, or GT_MEM_HOST for host memory.
					 counter: the allocator's total after a record, sub =
					 0 Total Allocated / 1 Total Reserved, aux = device */

#define GT_MEM_HOST 0xffffu

struct gt_event {
	int64_t start_ns;
	int64_t dur_ns;
	uint64_t arg;      /* kind-specific, see enum gt_ev_kind */
	uint32_t name;     /* string id in the store's string table */
	uint32_t lane;     /* lane id */
	uint32_t corr;     /* correlation id linking launch call and GPU work; 0 = none */
	uint32_t ext;      /* external id (framework op id); 0 = none */
	uint8_t kind;      /* enum gt_ev_kind */
	uint8_t sub;       /* enum gt_copy_kind / gt_sync_kind */
	uint16_t flags;    /* GT_EVF_* */
	uint32_t aux;      /* kind-specific: P2P copy: src dev | dst dev << 16;
			    * other copy: copies the record covers when more than
			    * one (CUDA 13 batched copies; bytes are their sum);
			    * kernel: CUDA graph id (0 = not a graph node) */
};

_Static_assert(sizeof(struct gt_event) == 48, "gt_event must stay 48 bytes");

static inline int64_t gt_event_end(const struct gt_event *e)
{
	return e->start_ns + e->dur_ns;
}

static inline uint32_t gt_event_kconf(const struct gt_event *e)
{
	return (uint32_t)(e->arg & 0xffffffffu);
}

static inline uint32_t gt_event_nccl(const struct gt_event *e)
{
	return (uint32_t)(e->arg >> 32);
}

static inline int gt_event_is_gpu(const struct gt_event *e)
{
	return e->kind == GT_EV_KERNEL || e->kind == GT_EV_MEMCPY ||
	       e->kind == GT_EV_MEMSET;
}

/* Kernel launch configuration, interned per store (launches repeat). */
struct gt_kconf {
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t regs_per_thread;
	uint32_t smem_static_bytes;
	uint32_t smem_dynamic_bytes;
	float occupancy_pct;       /* estimated achieved occupancy, <0 = unknown */
};

/* NCCL collective arguments (Kineto's "Collective name", "In msg nelems", ...). */
struct gt_nccl {
	uint32_t collective;       /* string id, e.g. "allreduce" */
	uint32_t dtype;            /* string id, e.g. "Float" */
	uint64_t in_nelems;
	uint64_t out_nelems;
	uint32_t group_size;
	uint32_t dtype_bytes;      /* 0 = unknown */
	uint32_t pg_name;          /* string id of the process group, 0 = none */
	uint32_t pad;
};

const char *gt_ev_kind_name(int kind);
const char *gt_copy_kind_name(int sub);

#endif
