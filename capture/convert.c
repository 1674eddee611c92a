/*
 * convert.c - CUPTI activity records -> gt_events (capture/convert.h).
 * Record layouts are CUDA 13's: Kernel10, Memcpy6, MemcpyPtoP4, Memset4,
 * API, Marker2, Synchronization2, Device5, Context3, ExternalCorrelation,
 * Overhead3, Memory4 (allocations); CUDA 12's are lifted to those first (convert12.c).
 * Times: CUPTI ns + clock_offset_ns.  Lanes: GPU (device, stream) and
 * host (pid, thread).  Strings are interned by content.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cupti_activity.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include "convert.h"
#include "convert12.h"

void convert_init(struct convert *c, int64_t pid, int32_t rank)
{
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->rank = rank;
	for (size_t i = 0; i < CONVERT_CTX; i++)
		c->ctx_dev[i] = -1;
}

void convert_done(struct convert *c)
{
	for (size_t i = 0; i < c->n_str; i++)
		free(c->str[i].text);
	free(c->str);
	free(c->str_hash);
	free(c->lane);
	free(c->kconf);
	free(c->kconf_hash);
	convmark_done(&c->markers);
	memset(c, 0, sizeof(*c));
}

static uint32_t fnv(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static int str_rehash(struct convert *c, size_t cap)
{
	uint32_t *t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_str; i++) {
		size_t j = c->str[i].hash & (cap - 1);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = (uint32_t)i + 1;
	}
	free(c->str_hash);
	c->str_hash = t;
	c->str_hash_cap = cap;
	return 0;
}

uint32_t convert_intern(struct convert *c, const char *s, size_t len)
{
	uint32_t h = fnv(s, len);
	if (c->str_hash_cap) {
		size_t j = h & (c->str_hash_cap - 1);
		for (uint32_t id; (id = c->str_hash[j]); j = (j + 1) & (c->str_hash_cap - 1)) {
			struct convert_str *e = &c->str[id - 1];
			if (e->hash == h && e->len == len && !memcmp(e->text, s, len))
				return id;
		}
	}
	if ((c->n_str + 1) * 2 > c->str_hash_cap &&
	    str_rehash(c, c->str_hash_cap ? c->str_hash_cap * 2 : 1024) < 0)
		return 0;
	if (c->n_str == c->cap_str) {
		size_t nc = c->cap_str ? c->cap_str * 2 : 256;
		struct convert_str *n = realloc(c->str, nc * sizeof(*n));
		if (!n)
			return 0;
		c->str = n;
		c->cap_str = nc;
	}
	char *t = malloc(len + 1);
	if (!t)
		return 0;
	memcpy(t, s, len);
	t[len] = 0;
	c->str[c->n_str] = (struct convert_str){ t, (uint32_t)len, h };
	uint32_t id = (uint32_t)++c->n_str;
	size_t j = h & (c->str_hash_cap - 1);
	while (c->str_hash[j])
		j = (j + 1) & (c->str_hash_cap - 1);
	c->str_hash[j] = id;
	return id;
}

static uint32_t intern_cstr(struct convert *c, const char *s)
{
	return convert_intern(c, s ? s : "", s ? strlen(s) : 0);
}

/* lane id for (type, device, pid, tid); pid < 0: the GPU annotation lane
 * of the device's synchronizations (tid -1: device-wide ones), never a
 * stream.  UINT32_MAX on allocation failure.  Few lanes: a linear scan
 * from the most recent hit is enough. */
static uint32_t lane_of(struct convert *c, uint8_t type, int32_t device, int64_t pid, int64_t tid)
{
	for (size_t i = c->n_lane; i-- > 0;) {
		const struct gt_ring_lane_def *l = &c->lane[i];
		if (l->type == type && l->device == device && l->tid == tid && l->pid == pid)
			return (uint32_t)i;
	}
	if (c->n_lane == c->cap_lane) {
		size_t nc = c->cap_lane ? c->cap_lane * 2 : 32;
		struct gt_ring_lane_def *n = realloc(c->lane, nc * sizeof(*n));
		if (!n)
			return UINT32_MAX;
		c->lane = n;
		c->cap_lane = nc;
	}
	char name[64];
	if (type == 1 && pid < 0 && tid < 0)
		snprintf(name, sizeof(name), "device synchronizations");
	else if (type == 1 && pid < 0)
		snprintf(name, sizeof(name), "stream %lld synchronizations", (long long)tid);
	else if (type == 1)
		snprintf(name, sizeof(name), "stream %lld", (long long)tid);
	else
		snprintf(name, sizeof(name), "thread %lld", (long long)tid);
	struct gt_ring_lane_def *l = &c->lane[c->n_lane];
	memset(l, 0, sizeof(*l));
	l->id = (uint32_t)c->n_lane;
	l->type = type;
	l->rank = c->rank;
	l->device = device;
	l->pid = pid;             /* GPU lanes too: two processes on one device stay apart */
	l->tid = tid;
	l->name = intern_cstr(c, name);
	return (uint32_t)c->n_lane++;
}

/* lane id for (type, device, tid) of this process */
static uint32_t lane_id(struct convert *c, uint8_t type, int32_t device, int64_t tid)
{
	return lane_of(c, type, device, c->pid, tid);
}

static int32_t dev_of_ctx(const struct convert *c, uint32_t ctx, uint32_t dev_hint)
{
	if (dev_hint != UINT32_MAX)
		return (int32_t)dev_hint;
	return ctx < CONVERT_CTX && c->ctx_dev[ctx] >= 0 ? c->ctx_dev[ctx] : 0;
}

static uint32_t kconf_hash(const struct gt_kconf *k)
{
	return fnv((const char *)k, sizeof(*k));
}

static int kconf_rehash(struct convert *c, size_t cap)
{
	uint32_t *t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 1; i < c->n_kconf; i++) {
		size_t j = kconf_hash(&c->kconf[i]) & (cap - 1);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = (uint32_t)i;
	}
	free(c->kconf_hash);
	c->kconf_hash = t;
	c->kconf_hash_cap = cap;
	return 0;
}

/* id of a launch configuration, by hash (dynamic shapes: thousands of
 * them, every kernel record looks one up); 0 on allocation failure */
static uint32_t kconf_id(struct convert *c, const struct gt_kconf *k)
{
	uint32_t h = kconf_hash(k);
	if (c->kconf_hash_cap) {
		size_t j = h & (c->kconf_hash_cap - 1);
		for (uint32_t id; (id = c->kconf_hash[j]); j = (j + 1) & (c->kconf_hash_cap - 1))
			if (!memcmp(&c->kconf[id], k, sizeof(*k)))
				return id;
	}
	if (c->n_kconf == 0)
		c->n_kconf = 1;
	if ((c->n_kconf + 1) * 2 > c->kconf_hash_cap &&
	    kconf_rehash(c, c->kconf_hash_cap ? c->kconf_hash_cap * 2 : 256) < 0)
		return 0;
	if (c->n_kconf >= c->cap_kconf) {
		size_t nc = c->cap_kconf ? c->cap_kconf * 2 : 64;
		struct gt_kconf *n = realloc(c->kconf, nc * sizeof(*n));
		if (!n)
			return 0;
		c->kconf = n;
		c->cap_kconf = nc;
	}
	c->kconf[c->n_kconf] = *k;
	size_t j = h & (c->kconf_hash_cap - 1);
	while (c->kconf_hash[j])
		j = (j + 1) & (c->kconf_hash_cap - 1);
	c->kconf_hash[j] = (uint32_t)c->n_kconf;
	return (uint32_t)c->n_kconf++;
}

static uint32_t ext_of(const struct convert *c, uint32_t corr)
{
	const struct convert_corr *e = &c->corr_ext[corr % CONVERT_CORR];
	return e->corr == corr ? e->ext : 0;
}

static void set_span(struct convert *c, struct gt_event *e, uint64_t start, uint64_t end)
{
	e->start_ns = (int64_t)start + c->clock_offset_ns;
	e->dur_ns = end > start ? (int64_t)(end - start) : 0;
}

static int64_t abs64(int64_t v)
{
	return v < 0 ? -v : v;
}

int convert_clock(struct convert *c, struct gt_ring_clock_def *m)
{
	if (m->bracket_ns < 0 || m->bracket_ns > 1000000 || m->host_ns == 0) {
		m->offset_ns = c->clock_offset_ns;
		return -EINVAL;
	}
	int64_t slack = m->bracket_ns + 1000;
	int64_t off = m->offset_ns;
	if (abs64(off) <= m->bracket_ns)
		off = 0;                                /* CUPTI's clock is the host's */
	else if (c->clock_set && abs64(off - c->clock_offset_ns) <= slack)
		off = c->clock_offset_ns;               /* same clock, measurement jitter */
	c->clock_offset_ns = off;
	c->clock_set = 1;
	m->offset_ns = off;
	return 0;
}

static int conv_kernel(struct convert *c, const CUpti_ActivityKernel10 *k, struct gt_event *e)
{
	struct gt_kconf kc;
	memset(&kc, 0, sizeof(kc));
	kc.grid[0] = (uint32_t)k->gridX;
	kc.grid[1] = (uint32_t)k->gridY;
	kc.grid[2] = (uint32_t)k->gridZ;
	kc.block[0] = (uint32_t)k->blockX;
	kc.block[1] = (uint32_t)k->blockY;
	kc.block[2] = (uint32_t)k->blockZ;
	kc.regs_per_thread = k->registersPerThread;
	kc.smem_static_bytes = (uint32_t)k->staticSharedMemory;
	kc.smem_dynamic_bytes = (uint32_t)k->dynamicSharedMemory;
	kc.occupancy_pct = -1.0f;
	e->kind = GT_EV_KERNEL;
	e->name = intern_cstr(c, k->name);
	e->lane = lane_id(c, 1, (int32_t)k->deviceId, k->streamId);
	e->arg = kconf_id(c, &kc);
	e->corr = k->correlationId;
	/* a node of a CUDA graph replay: the graph (every node carries the
	 * cudaGraphLaunch's correlation id) */
	e->aux = k->graphId;
	if (k->name && (strstr(k->name, "ncclKernel") || strstr(k->name, "ncclDevKernel")))
		e->flags |= GT_EVF_NCCL;
	set_span(c, e, k->start, k->end);
	return 1;
}

static uint8_t copy_kind(uint8_t k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return GT_COPY_H2D;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return GT_COPY_D2H;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return GT_COPY_D2D;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return GT_COPY_H2H;
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return GT_COPY_P2P;
	default: return GT_COPY_UNKNOWN;
	}
}

static const char *mem_kind_name(uint8_t k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "Pageable";
	case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "Pinned";
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "Device";
	case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "Array";
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "Managed";
	default: return "Unknown";
	}
}

static const char *const copy_names[] = { "?", "HtoD", "DtoH", "DtoD", "PtoP", "HtoH" };

/* Kineto's names: "Memcpy HtoD (Pinned -> Device)" */
static void copy_common(struct convert *c, struct gt_event *e, uint8_t ck, uint8_t sk, uint8_t dk)
{
	char name[96];
	e->kind = GT_EV_MEMCPY;
	e->sub = copy_kind(ck);
	snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)", copy_names[e->sub],
		 mem_kind_name(sk), mem_kind_name(dk));
	e->name = intern_cstr(c, name);
	if (sk == CUPTI_ACTIVITY_MEMORY_KIND_PINNED || dk == CUPTI_ACTIVITY_MEMORY_KIND_PINNED)
		e->flags |= GT_EVF_PINNED;
	if (sk == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE || dk == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE)
		e->flags |= GT_EVF_PAGEABLE;
}

static int conv_memcpy(struct convert *c, const CUpti_ActivityMemcpy6 *m, struct gt_event *e)
{
	copy_common(c, e, m->copyKind, m->srcKind, m->dstKind);
	e->arg = m->bytes;
	e->corr = m->correlationId;
	/* CUDA 13 folds copies of a batch (cudaMemcpyBatchAsync) into one
	 * record: how many it covers (bytes are their sum) */
	e->aux = m->copyCount > 1 ? (uint32_t)(m->copyCount > UINT32_MAX ? UINT32_MAX : m->copyCount) : 0;
	e->lane = lane_id(c, 1, (int32_t)m->deviceId, m->streamId);
	set_span(c, e, m->start, m->end);
	return 1;
}

static int conv_p2p(struct convert *c, const CUpti_ActivityMemcpyPtoP4 *m, struct gt_event *e)
{
	copy_common(c, e, m->copyKind, m->srcKind, m->dstKind);
	e->sub = GT_COPY_P2P;
	e->arg = m->bytes;
	e->corr = m->correlationId;
	e->aux = (m->srcDeviceId & 0xffffu) | (m->dstDeviceId << 16);
	e->lane = lane_id(c, 1, (int32_t)m->deviceId, m->streamId);
	set_span(c, e, m->start, m->end);
	return 1;
}

static int conv_memset(struct convert *c, const CUpti_ActivityMemset4 *m, struct gt_event *e)
{
	char name[64];
	snprintf(name, sizeof(name), "Memset (%s)", mem_kind_name((uint8_t)m->memoryKind));
	e->kind = GT_EV_MEMSET;
	e->name = intern_cstr(c, name);
	e->arg = m->bytes;
	e->corr = m->correlationId;
	e->lane = lane_id(c, 1, (int32_t)m->deviceId, m->streamId);
	set_span(c, e, m->start, m->end);
	return 1;
}

const uint32_t convert_chatty_rt[] = {
	CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_ptsz_v10000,
};
const size_t convert_chatty_rt_n = sizeof(convert_chatty_rt) / sizeof(convert_chatty_rt[0]);
const uint32_t convert_chatty_drv[] = {
	CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, CUPTI_DRIVER_TRACE_CBID_cuStreamQuery,
	CUPTI_DRIVER_TRACE_CBID_cuEventQuery, CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice,
	CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute, CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
	CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute, CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute,
	CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes,
};
const size_t convert_chatty_drv_n = sizeof(convert_chatty_drv) / sizeof(convert_chatty_drv[0]);

int convert_chatty(int driver, uint32_t cbid)
{
	const uint32_t *v = driver ? convert_chatty_drv : convert_chatty_rt;
	size_t n = driver ? convert_chatty_drv_n : convert_chatty_rt_n;
	for (size_t i = 0; i < n; i++)
		if (v[i] == cbid)
			return 1;
	return 0;
}

static int conv_api(struct convert *c, const CUpti_ActivityAPI *a, struct gt_event *e)
{
	int drv = a->kind == CUPTI_ACTIVITY_KIND_DRIVER;
	if (convert_chatty(drv, a->cbid))
		return 0;      /* left out on purpose, not lost (convert.h) */
	const char *nm = c->api_name ? c->api_name(c->api_ctx, drv, a->cbid) : NULL;
	char buf[48];
	if (!nm) {
		snprintf(buf, sizeof(buf), "%s cbid %u", drv ? "driver" : "runtime", (unsigned)a->cbid);
		nm = buf;
	}
	e->kind = drv ? GT_EV_DRIVER : GT_EV_RUNTIME;
	e->name = intern_cstr(c, nm);
	e->corr = a->correlationId;
	e->ext = ext_of(c, a->correlationId);
	if (strstr(nm, "Launch") || strstr(nm, "Memcpy") || strstr(nm, "Memset"))
		e->flags |= GT_EVF_LAUNCH;
	e->lane = lane_id(c, 2, -1, a->threadId);
	set_span(c, e, a->start, a->end);
	return 1;
}

/* an allocation or release (CUPTI_ACTIVITY_KIND_MEMORY2, Memory4; CUDA 12's
 * Memory3 has the same leading fields) as an allocator record, the event
 * Kineto's [memory] instants give: GT_EVF_MEMORY instant, arg = bytes
 * (negative for a release), aux = the device, or GT_MEM_HOST for pageable /
 * pinned host memory.  The record names no thread: it lies on the lane of
 * the process's main thread (tid = pid).  0 for other operation types. */
static int conv_memory(struct convert *c, const CUpti_ActivityMemory4 *m, struct gt_event *e)
{
	int64_t b = (int64_t)(m->bytes > INT64_MAX ? INT64_MAX : m->bytes);
	if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
		b = -b;
	else if (m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION) {
		c->unknown_records++;
		return 0;
	}
	int host = m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE ||
		   m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	e->kind = GT_EV_INSTANT;
	e->flags = GT_EVF_MEMORY;
	e->name = intern_cstr(c, "[memory]");
	e->corr = m->correlationId;
	e->aux = host || m->deviceId >= GT_MEM_HOST ? GT_MEM_HOST : m->deviceId;
	memcpy(&e->arg, &b, sizeof(b));
	e->lane = lane_id(c, 2, -1, (int64_t)m->processId);
	set_span(c, e, m->timestamp, m->timestamp);
	return 1;
}

static int conv_marker(struct convert *c, const CUpti_ActivityMarker2 *m, struct gt_event *e)
{
	uint32_t tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
		       m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS ? m->objectId.pt.threadId : 0;
	uint32_t id = m->id ? m->id : 1;
	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
		e->kind = GT_EV_INSTANT;
		e->name = intern_cstr(c, m->name);
		e->lane = lane_id(c, 2, -1, tid);
		set_span(c, e, m->timestamp, m->timestamp);
		return 1;
	}
	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
		struct convmark_ent o = { id, intern_cstr(c, m->name), (int64_t)m->timestamp, tid, 0 };
		int r = convmark_put(&c->markers, &o);
		if (r == -ENOMEM)
			return -ENOMEM;
		if (r != 0)
			c->markers_lost++;      /* replaced, or too many open */
		return 0;
	}
	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
		struct convmark_ent o;
		if (!convmark_take(&c->markers, id, &o)) {
			c->markers_lost++;
			return 0;
		}
		e->kind = GT_EV_NVTX;
		e->name = o.name;
		e->lane = lane_id(c, 2, -1, o.tid);
		set_span(c, e, (uint64_t)o.start_ns, m->timestamp);
		return 1;
	}
	c->unknown_records++;
	return 0;
}

static int conv_sync(struct convert *c, const CUpti_ActivitySynchronization2 *s, struct gt_event *e)
{
	static const char *const names[] = { "cudaSynchronize", "cudaEventSynchronize",
		"cudaStreamWaitEvent", "cudaStreamSynchronize", "cudaDeviceSynchronize" };
	unsigned t = s->type <= 4 ? (unsigned)s->type : 0;
	e->kind = GT_EV_SYNC;
	e->sub = (uint8_t)t;        /* CUPTI's order matches enum gt_sync_kind */
	e->name = intern_cstr(c, names[t]);
	e->corr = s->correlationId;
	/* on the device's synchronization lane (pid -1, as Kineto traces'
	 * cuda_sync events are imported), never on a stream lane: a
	 * device-wide one (no stream) would make a stream 0 up */
	int64_t stream = s->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : (int64_t)s->streamId;
	e->lane = lane_of(c, 1, dev_of_ctx(c, s->contextId, UINT32_MAX), -1, stream);
	set_span(c, e, s->start, s->end);
	return 1;
}

static void conv_device(struct convert *c, const CUpti_ActivityDevice5 *d)
{
	if (c->n_dev == CONVERT_DEVICES)
		return;
	for (size_t i = 0; i < c->n_dev; i++)
		if (c->dev[i].id == (int32_t)d->id)
			return;
	struct gt_ring_device_def *o = &c->dev[c->n_dev++];
	memset(o, 0, sizeof(*o));
	o->rank = c->rank;
	o->id = (int32_t)d->id;
	o->name = intern_cstr(c, d->name);
	o->sm_count = d->numMultiprocessors;
	o->mem_bytes = d->globalMemorySize;
	o->cc_major = d->computeCapabilityMajor;
	o->cc_minor = d->computeCapabilityMinor;
}

int convert_record(struct convert *c, const void *record, struct gt_event *out)
{
	union convert12_rec up;
	if (c->cupti_major == 12)
		record = convert12_up(record, &up);
	const CUpti_Activity *r = record;
	memset(out, 0, sizeof(*out));
	/* zero timestamps: the device buffer ran out for this record */
	uint64_t s0 = 0, s1 = 0;
	int timed = 1;
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		s0 = ((const CUpti_ActivityKernel10 *)r)->start;
		s1 = ((const CUpti_ActivityKernel10 *)r)->end;
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		s0 = ((const CUpti_ActivityMemcpy6 *)r)->start;
		s1 = ((const CUpti_ActivityMemcpy6 *)r)->end;
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		s0 = ((const CUpti_ActivityMemcpyPtoP4 *)r)->start;
		s1 = ((const CUpti_ActivityMemcpyPtoP4 *)r)->end;
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		s0 = ((const CUpti_ActivityMemset4 *)r)->start;
		s1 = ((const CUpti_ActivityMemset4 *)r)->end;
		break;
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		s0 = s1 = ((const CUpti_ActivityMemory4 *)r)->timestamp;
		break;
	default:
		timed = 0;
	}
	/* no usable timestamps: zero (CUPTI's timestamp memory ran out) or an
	 * end before the start; never made a zero-length event, counted */
	if (timed && ((s0 == 0 && s1 == 0) || s1 < s0)) {
		c->zero_timestamps++;
		return 0;
	}
	int rc;
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		rc = conv_kernel(c, record, out);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		rc = conv_memcpy(c, record, out);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		rc = conv_p2p(c, record, out);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		rc = conv_memset(c, record, out);
		break;
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		rc = conv_memory(c, record, out);
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		rc = conv_api(c, record, out);
		break;
	case CUPTI_ACTIVITY_KIND_MARKER:
		rc = conv_marker(c, record, out);
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		rc = conv_sync(c, record, out);
		break;
	case CUPTI_ACTIVITY_KIND_OVERHEAD: {
		const CUpti_ActivityOverhead3 *o = record;
		out->kind = GT_EV_OVERHEAD;
		out->name = intern_cstr(c, "CUPTI overhead");
		out->lane = lane_id(c, 2, -1, o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ?
				    o->objectId.pt.threadId : 0);
		set_span(c, out, o->start, o->end);
		rc = 1;
		break;
	}
	case CUPTI_ACTIVITY_KIND_DEVICE:
		conv_device(c, record);
		return 0;
	case CUPTI_ACTIVITY_KIND_CONTEXT: {
		const CUpti_ActivityContext3 *x = record;
		if (x->contextId < CONVERT_CTX)
			c->ctx_dev[x->contextId] = (int32_t)x->deviceId;
		return 0;
	}
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
		const CUpti_ActivityExternalCorrelation *x = record;
		c->corr_ext[x->correlationId % CONVERT_CORR].corr = x->correlationId;
		c->corr_ext[x->correlationId % CONVERT_CORR].ext = (uint32_t)x->externalId;
		return 0;
	}
	default:
		c->unknown_records++;
		return 0;
	}
	if (rc == 1 && (out->name == 0 || out->lane == UINT32_MAX))
		return -ENOMEM;
	if (rc == 1 && !out->ext && out->corr)
		out->ext = ext_of(c, out->corr);
	return rc;
}

size_t convert_take_devices(struct convert *c, const struct gt_ring_device_def **out)
{
	*out = &c->dev[c->n_dev_taken];
	size_t n = c->n_dev - c->n_dev_taken;
	c->n_dev_taken = c->n_dev;
	return n;
}

static const char *d_str(void *ctx, uint32_t id, size_t *len)
{
	struct convert *c = ctx;
	if (id == 0 || id > c->n_str)
		return NULL;
	*len = c->str[id - 1].len;
	return c->str[id - 1].text;
}

static int d_lane(void *ctx, uint32_t id, struct gt_ring_lane_def *o)
{
	struct convert *c = ctx;
	if (id >= c->n_lane)
		return -1;
	*o = c->lane[id];
	return 0;
}

static int d_kconf(void *ctx, uint32_t id, struct gt_kconf *k)
{
	struct convert *c = ctx;
	if (id == 0 || id >= c->n_kconf)
		return -1;
	*k = c->kconf[id];
	return 0;
}

struct gt_publisher_dict convert_dict(struct convert *c)
{
	return (struct gt_publisher_dict){ c, d_str, d_lane, d_kconf, NULL };
}
