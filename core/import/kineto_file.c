/*
 * kineto_file.c - maps one Kineto / Chrome trace event (struct kev) to a
 * struct gt_event: kind from the category (both schema eras) and the name,
 * flags, kernel configuration and NCCL side records, and stages it on a
 * file-local lane (metadata, flows and top-level keys: kineto_file_meta.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json_tok.h"
#include "kineto.h"

#define T_LIMIT_NS 2000000000000000000LL  /* |times| beyond this are refused */

void kineto_file_init(struct kineto_file *kf, struct gt_store *s, const char *path)
{
	memset(kf, 0, sizeof(*kf));
	kf->s = s;
	kf->ls = s;
	kf->path = path;
	kf->rank = -1;
	kf->world = -1;
	kf->ic = calloc(KIC_SIZE, sizeof(*kf->ic));
}

int kineto_file_private(struct kineto_file *kf)
{
	kf->ls = gt_store_new();
	if (!kf->ls) {
		kf->ls = kf->s;
		return -ENOMEM;
	}
	return 0;
}

uint32_t kineto_file_intern(struct kineto_file *kf, const char *s, size_t len)
{
	if (!kf->ic || len > UINT32_MAX)
		return gt_store_intern(kf->ls, s, len);
	uint64_t a = 0, b = 0;
	memcpy(&a, s, len < 8 ? len : 8);
	if (len > 8)
		memcpy(&b, s + len - 8, 8);
	uint64_t h = (a * 0x9e3779b97f4a7c15ULL) ^ (b * 0xc2b2ae3d27d4eb4fULL) ^ len;
	struct kic *c = &kf->ic[(h ^ (h >> 31)) & (KIC_SIZE - 1)];
	if (c->str && c->len == len && !memcmp(c->str, s, len))
		return c->id;
	uint32_t id = gt_store_intern(kf->ls, s, len);
	c->str = gt_store_str(kf->ls, id);
	c->len = (uint32_t)len;
	c->id = id;
	return id;
}

void kineto_file_release(struct kineto_file *kf)
{
	if (kf->held_lanes || kf->held_events)
		gt_store_limit_take(kf->s, -kf->held_lanes, -kf->held_events);
	kf->held_lanes = kf->held_events = 0;
}

void kineto_file_done(struct kineto_file *kf)
{
	kineto_file_release(kf);
	for (size_t i = 0; i < kf->n_lanes; i++)
		free(kf->lanes[i].ev);
	free(kf->lanes);
	free(kf->lhash);
	free(kf->meta);
	free(kf->gl);
	free(kf->flows);
	kineto_open_done(&kf->open_b);
	free(kf->ic);
	free(kf->map_str);
	free(kf->map_kconf);
	free(kf->map_nccl);
	if (kf->ls && kf->ls != kf->s)
		gt_store_free(kf->ls);
	memset(kf, 0, sizeof(*kf));
}

int kineto_file_grow(void **p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 16;
	void *np = realloc(*p, nc * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

static int is_int_text(const char *s, size_t n)
{
	size_t i = n && s[0] == '-';
	if (i == n || n - i > 18)
		return 0;
	for (; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

static int64_t int_text(const char *s, size_t n)
{
	int neg = n && s[0] == '-';
	int64_t v = 0;
	for (size_t i = (size_t)neg; i < n; i++)
		v = v * 10 + (s[i] - '0');
	return neg ? -v : v;
}

/* a pid / tid as a number: numeric strings are numbers, others tagged ids */
int64_t kineto_file_norm(struct kineto_file *kf, const struct kval *v)
{
	if (v->t == 1)
		return v->num;
	if (v->t == 2) {
		if (is_int_text(v->s, v->len))
			return int_text(v->s, v->len);
		return KTAG | gt_store_intern(kf->ls, v->s, v->len);
	}
	return 0;
}

/* trailing number of "stream 7", "GPU 3"; -1 when none */
static int64_t trailing_num(const struct kval *v)
{
	if (v->t == 1)
		return v->num;
	if (v->t != 2)
		return -1;
	size_t e = v->len;
	while (e && v->s[e - 1] == ' ')
		e--;
	size_t b = e;
	while (b && v->s[b - 1] >= '0' && v->s[b - 1] <= '9' && e - b < 18)
		b--;
	return b < e ? int_text(v->s + b, e - b) : -1;
}

static uint64_t lhash_key(uint8_t cls, int64_t a, int64_t b)
{
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)b + cls) * 0xc2b2ae3d27d4eb4fULL;
	return h ^ (h >> 29);
}

static int lrehash(struct kineto_file *kf, size_t ncap)
{
	uint32_t *nh = calloc(ncap, sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	for (size_t k = 0; k < kf->n_lanes; k++) {
		const struct klane *l = &kf->lanes[k];
		size_t i = lhash_key(l->cls, l->cpid, l->ctid) & (ncap - 1);
		while (nh[i])
			i = (i + 1) & (ncap - 1);
		nh[i] = (uint32_t)k + 1;
	}
	free(kf->lhash);
	kf->lhash = nh;
	kf->lhcap = ncap;
	return 0;
}

/* the local lane (cls, cpid, ctid); create = 0: -1 when absent */
static long klane_get(struct kineto_file *kf, uint8_t cls, int64_t cpid, int64_t ctid, int create)
{
	if (kf->lhcap) {
		size_t m = kf->lhcap - 1;
		for (size_t i = lhash_key(cls, cpid, ctid) & m; kf->lhash[i]; i = (i + 1) & m) {
			const struct klane *l = &kf->lanes[kf->lhash[i] - 1];
			if (l->cls == cls && l->cpid == cpid && l->ctid == ctid)
				return (long)kf->lhash[i] - 1;
		}
	}
	if (!create)
		return -1;
	/* the store's limits bound what this file holds before its flush */
	if (gt_store_limit_take(kf->s, 1, 0)) {
		gt_store_limit_take(kf->s, -1, 0);
		return -2;
	}
	kf->held_lanes++;
	if ((kf->n_lanes + 1) * 2 > kf->lhcap && lrehash(kf, kf->lhcap ? kf->lhcap * 2 : 64))
		return -2;
	if (kineto_file_grow((void **)&kf->lanes, &kf->cap_lanes, kf->n_lanes, sizeof(*kf->lanes)))
		return -2;
	struct klane *l = &kf->lanes[kf->n_lanes];
	memset(l, 0, sizeof(*l));
	l->cls = cls;
	l->cpid = cpid;
	l->ctid = ctid;
	size_t m = kf->lhcap - 1, i = lhash_key(cls, cpid, ctid) & m;
	while (kf->lhash[i])
		i = (i + 1) & m;
	kf->lhash[i] = (uint32_t)kf->n_lanes + 1;
	return (long)kf->n_lanes++;
}

long kineto_file_find_lane(struct kineto_file *kf, uint8_t cls, int64_t cpid, int64_t ctid)
{
	return klane_get(kf, cls, cpid, ctid, 0);
}

#define CATIS(c, lit) ((c).s && (c).len == sizeof(lit) - 1 && !memcmp((c).s, lit, sizeof(lit) - 1))
#define HAS(n, lit) ((n).s && memmem((n).s, (n).len, lit, sizeof(lit) - 1) != NULL)
#define STARTS(n, lit) ((n).s && (n).len >= sizeof(lit) - 1 && !memcmp((n).s, lit, sizeof(lit) - 1))

/* kind of an X event from its category; -1 for the Trace span */
static int cat_kind(struct kstr c, uint16_t *flags)
{
	switch (c.len) {
	case 5:
		if (CATIS(c, "Trace"))
			return -1;
		break;
	case 6:
		if (CATIS(c, "kernel") || CATIS(c, "Kernel"))
			return GT_EV_KERNEL;
		if (CATIS(c, "Memcpy"))
			return GT_EV_MEMCPY;
		if (CATIS(c, "Memset"))
			return GT_EV_MEMSET;
		if (CATIS(c, "cpu_op") || CATIS(c, "Driver"))
			return CATIS(c, "Driver") ? GT_EV_DRIVER : GT_EV_CPU_OP;
		break;
	case 7:
		if (CATIS(c, "Runtime"))
			return GT_EV_RUNTIME;
		break;
	case 8:
		if (CATIS(c, "Operator"))
			return GT_EV_CPU_OP;
		if (CATIS(c, "overhead"))
			return GT_EV_OVERHEAD;
		break;
	case 9:
		if (CATIS(c, "cuda_sync"))
			return GT_EV_SYNC;
		break;
	case 10:
		if (CATIS(c, "gpu_memcpy"))
			return GT_EV_MEMCPY;
		if (CATIS(c, "gpu_memset"))
			return GT_EV_MEMSET;
		if (CATIS(c, "DataLoader")) {
			*flags |= GT_EVF_DATALOADER;
			return GT_EV_CPU_OP;
		}
		break;
	case 11:
		if (CATIS(c, "cuda_driver"))
			return GT_EV_DRIVER;
		if (CATIS(c, "gtrace_step"))
			return GT_EV_STEP;
		break;
	case 12:
		if (CATIS(c, "cuda_runtime"))
			return GT_EV_RUNTIME;
		break;
	case 15:
		if (CATIS(c, "user_annotation") || CATIS(c, "python_function"))
			return CATIS(c, "python_function") ? GT_EV_PYTHON : GT_EV_NVTX;
		break;
	case 19:
		if (CATIS(c, "gpu_user_annotation"))
			return GT_EV_GPU_ANNOT;
		break;
	}
	return GT_EV_CPU_OP;
}

static int is_launch(struct kstr n)
{
	return STARTS(n, "cudaLaunch") || STARTS(n, "cuLaunch") || STARTS(n, "cudaMemcpy") ||
	       STARTS(n, "cudaMemset") || STARTS(n, "cuMemcpy") || STARTS(n, "cuMemset") ||
	       STARTS(n, "cudaGraphLaunch") || STARTS(n, "cuGraphLaunch");
}

static uint32_t dtype_bytes(struct kstr d)
{
	static const struct { const char *n; uint32_t b; } t[] = {
		{ "Float", 4 }, { "float", 4 }, { "Half", 2 }, { "BFloat16", 2 }, { "Double", 8 },
		{ "Int", 4 }, { "Long", 8 }, { "Short", 2 }, { "Byte", 1 }, { "Char", 1 },
		{ "Bool", 1 }, { "Float8_e4m3fn", 1 }, { "Float8_e5m2", 1 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (d.len == strlen(t[i].n) && !memcmp(d.s, t[i].n, d.len))
			return t[i].b;
	return 0;
}

static uint32_t clamp_u32(int64_t v)
{
	return v < 0 ? 0 : v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static uint32_t nccl_id(struct kineto_file *kf, const struct kev *ev)
{
	struct gt_nccl n = { 0 };
	n.collective = gt_store_intern(kf->ls, ev->coll.s, ev->coll.len);
	if (ev->dtype.s)
		n.dtype = gt_store_intern(kf->ls, ev->dtype.s, ev->dtype.len);
	n.dtype_bytes = dtype_bytes(ev->dtype);
	n.in_nelems = ev->in_nelems > 0 ? (uint64_t)ev->in_nelems : 0;
	n.out_nelems = ev->out_nelems > 0 ? (uint64_t)ev->out_nelems : 0;
	n.group_size = clamp_u32(ev->group_size);
	if (ev->pg.s)
		n.pg_name = gt_store_intern(kf->ls, ev->pg.s, ev->pg.len);
	return gt_store_nccl(kf->ls, &n);
}

static int stage(struct kineto_file *kf, uint8_t cls, const struct kev *ev, struct gt_event *g)
{
	int64_t cpid = kineto_file_norm(kf, &ev->pid), ctid = kineto_file_norm(kf, &ev->tid);
	long li = klane_get(kf, cls, cpid, ctid, 1);
	if (li < 0)
		return -ENOMEM;
	struct klane *l = &kf->lanes[li];
	if (l->n == 0 && l->cap == 0 && (cls == KCLS_GPU || cls == KCLS_AUX)) {
		int64_t d = ev->have & KA_DEVICE ? ev->device : trailing_num(&ev->pid);
		int64_t st = ev->have & KA_STREAM ? ev->stream : trailing_num(&ev->tid);
		l->device = d < 0 || d > INT32_MAX ? 0 : (int32_t)d;
		l->stream = st < 0 ? 0 : st;
	}
	if (l->n == 0 && l->cap == 0) {
		l->name = g->name;
		l->gtid = cls == KCLS_COUNTER ? kineto_file_norm(kf, &ev->id) : ctid;
	}
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 64;
		struct gt_event *ne = realloc(l->ev, nc * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		l->ev = ne;
		l->cap = nc;
	}
	if (kf->n_events >= (uint64_t)kf->held_events) {
		/* counted 4096 at a time: one atomic per 4096 events */
		if (gt_store_limit_take(kf->s, 0, 4096)) {
			gt_store_limit_take(kf->s, 0, -4096);
			return -ENOMEM;
		}
		kf->held_events += 4096;
	}
	g->lane = (uint32_t)li;
	l->ev[l->n++] = *g;
	kf->n_events++;
	kf->last_lane = li;
	return 0;
}

static int x_event(struct kineto_file *kf, const struct kev *ev, struct gt_event *g)
{
	uint16_t flags = 0;
	int kind = cat_kind(ev->cat, &flags);
	struct kstr n = ev->name;
	if (kind < 0) {            /* the profiler's own Trace span */
		kf->span_start_ns = ev->ts_ns;
		kf->span_dur_ns = ev->dur_ns;
		kf->have_span = 1;
		return 0;
	}
	uint8_t cls = KCLS_HOST;
	switch (kind) {
	case GT_EV_KERNEL: {
		cls = KCLS_GPU;
		if (STARTS(n, "nccl") || HAS(n, "ncclKernel") || HAS(n, "ncclDevKernel"))
			flags |= GT_EVF_NCCL;
		uint32_t kc = 0, nc = 0;
		if (ev->have & (KA_GRID | KA_BLOCK | KA_REGS | KA_SMEM | KA_OCC)) {
			struct gt_kconf k;
			memset(&k, 0, sizeof(k));
			memcpy(k.grid, ev->grid, sizeof(k.grid));
			memcpy(k.block, ev->block, sizeof(k.block));
			k.regs_per_thread = clamp_u32(ev->regs);
			k.smem_static_bytes = clamp_u32(ev->smem);
			k.occupancy_pct = ev->have & KA_OCC ? (float)ev->occ_milli / 1000.0f : -1.0f;
			kc = gt_store_kconf(kf->ls, &k);
		}
		if (ev->have & KA_COLL)
			nc = nccl_id(kf, ev);
		g->arg = kc | (uint64_t)nc << 32;
		break;
	}
	case GT_EV_MEMCPY:
		cls = KCLS_GPU;
		/* Kineto spells the kind "HtoD", nsys (and our export of it) "Host-to-Device" */
		g->sub = HAS(n, "HtoD") || HAS(n, "Host-to-Device") ? GT_COPY_H2D :
			 HAS(n, "DtoH") || HAS(n, "Device-to-Host") ? GT_COPY_D2H :
			 HAS(n, "DtoD") || HAS(n, "Device-to-Device") ? GT_COPY_D2D :
			 HAS(n, "PtoP") || HAS(n, "Peer-to-Peer") ? GT_COPY_P2P :
			 HAS(n, "HtoH") || HAS(n, "Host-to-Host") ? GT_COPY_H2H : GT_COPY_UNKNOWN;
		if (HAS(n, "Pinned"))
			flags |= GT_EVF_PINNED;
		if (HAS(n, "Pageable"))
			flags |= GT_EVF_PAGEABLE;
		g->arg = ev->have & KA_BYTES && ev->bytes > 0 ? (uint64_t)ev->bytes : 0;
		if ((ev->have & (KA_FROMDEV | KA_TODEV)) == (KA_FROMDEV | KA_TODEV))
			g->aux = (clamp_u32(ev->from_dev) & 0xffff) | (clamp_u32(ev->to_dev) << 16);
		break;
	case GT_EV_MEMSET:
		cls = KCLS_GPU;
		g->arg = ev->have & KA_BYTES && ev->bytes > 0 ? (uint64_t)ev->bytes : 0;
		break;
	case GT_EV_GPU_ANNOT:
		cls = KCLS_AUX;
		break;
	case GT_EV_SYNC:
		cls = KCLS_AUX;
		g->sub = HAS(n, "Stream Wait") ? GT_SYNC_STREAM_WAIT : HAS(n, "Event") ? GT_SYNC_EVENT :
			 HAS(n, "Stream") ? GT_SYNC_STREAM : (HAS(n, "Context") || HAS(n, "Device")) ?
			 GT_SYNC_CONTEXT : GT_SYNC_UNKNOWN;
		break;
	case GT_EV_RUNTIME:
	case GT_EV_DRIVER:
		if (is_launch(n))
			flags |= GT_EVF_LAUNCH;
		break;
	case GT_EV_STEP:
		g->arg = ev->have & KA_STEP && ev->step > 0 ? (uint64_t)ev->step : 0;
		break;
	case GT_EV_CPU_OP:
	case GT_EV_NVTX:
		if (STARTS(n, "ProfilerStep#")) {
			kind = GT_EV_STEP;
			const char *q = n.s + 13;
			int64_t v = 0;
			if (json_tok_fixed(&q, n.s + n.len + (n.len < UINT32_MAX), 0, &v) != JT_OK || v < 0)
				v = 0;
			g->arg = (uint64_t)v;
		} else if ((HAS(n, "DataLoader") && HAS(n, "__next__")) || HAS(n, "IteratorGetNext")) {
			flags |= GT_EVF_DATALOADER;
		}
		if ((ev->have & KA_COLL) && kind != GT_EV_STEP)
			g->arg = (uint64_t)nccl_id(kf, ev) << 32;
		if (kind == GT_EV_CPU_OP)
			kineto_file_op(kf, ev, g);
		break;
	}
	g->kind = (uint8_t)kind;
	g->flags = flags;
	if (!g->corr && (cls == KCLS_GPU || kind == GT_EV_RUNTIME || kind == GT_EV_DRIVER))
		kf->n_nocorr++;
	return stage(kf, cls, ev, g);
}

/* B: staged like an X of duration 0 and remembered until its E */
static int begin_event(struct kineto_file *kf, const struct kev *ev, struct gt_event *g)
{
	uint64_t before = kf->n_events;
	int rc = x_event(kf, ev, g);
	if (rc || kf->n_events == before)
		return rc;
	struct klane *l = &kf->lanes[kf->last_lane];
	if (kineto_open_push(&kf->open_b, l->cpid, l->ctid, (uint32_t)kf->last_lane, (uint32_t)(l->n - 1)))
		return -ENOMEM;
	l->ev[l->n - 1].flags |= GT_EVF_TRUNCATED;   /* until the E arrives */
	return 0;
}

/* E: closes the latest open B of the same pid and tid */
static int end_event(struct kineto_file *kf, const struct kev *ev)
{
	int64_t cpid = kineto_file_norm(kf, &ev->pid), ctid = kineto_file_norm(kf, &ev->tid);
	struct kineto_open o;
	if (kineto_open_pop(&kf->open_b, cpid, ctid, &o)) {
		struct klane *l = &kf->lanes[o.lane];
		struct gt_event *b = &l->ev[o.idx];
		b->dur_ns = ev->ts_ns > b->start_ns ? ev->ts_ns - b->start_ns : 0;
		b->flags &= (uint16_t)~GT_EVF_TRUNCATED;
		return 0;
	}
	kf->skipped[KSKIP_E_WITHOUT_B]++;
	return 0;
}

/* one counter sample named nm (the series: its own counter lane of the
 * event's Chrome pid); 0 or -ENOMEM */
static int counter_sample(struct kineto_file *kf, const struct kev *ev, struct gt_event *g,
			  const char *nm, size_t nl, double v)
{
	struct kev one = *ev;
	memcpy(&g->arg, &v, sizeof(v));
	g->kind = GT_EV_COUNTER;
	kineto_file_mem_counter(ev, g);
	g->name = gt_store_intern(kf->ls, nm, nl);
	one.tid.t = 1;
	one.tid.num = KTAG | g->name;
	one.id = ev->tid;  /* stage() keeps it for the gtrace_lane lookup */
	return stage(kf, KCLS_COUNTER, &one, g);
}

/* an allocator record's Total Allocated / Total Reserved args as samples
 * of the counters "Total Allocated (GPU n)" / "... (CPU)" (GT_EVF_MEMORY,
 * sub = 0 allocated / 1 reserved, aux = device); 0 or -ENOMEM */
static int mem_totals(struct kineto_file *kf, const struct kev *ev, const struct gt_event *rec)
{
	static const char *const what[2] = { "Total Allocated", "Total Reserved" };
	for (int k = 0; k < 2; k++) {
		int64_t v;
		if (!kineto_file_mem_total(ev, k, &v))
			continue;
		char nm[64];
		int nl = rec->aux == GT_MEM_HOST ? snprintf(nm, sizeof(nm), "%s (CPU)", what[k]) :
			 snprintf(nm, sizeof(nm), "%s (GPU %u)", what[k], rec->aux);
		struct gt_event g = *rec;
		g.sub = (uint8_t)k;
		g.corr = g.ext = 0;
		if (counter_sample(kf, ev, &g, nm, (size_t)nl, (double)v))
			return -ENOMEM;
	}
	return 0;
}

int kineto_file_event(struct kineto_file *kf, const struct kev *ev)
{
	struct gt_event g;
	memset(&g, 0, sizeof(g));
	switch (ev->ph) {
	case 'M':
		return kineto_file_meta(kf, ev);
	case 's':
	case 'f':
	case 't':
		return ev->bad_num ? 0 : kineto_file_flow(kf, ev);
	case 'X':
	case 'B':
	case 'E':
	case 'i':
	case 'I':
	case 'C':
		break;
	default:
		kf->skipped[KSKIP_PHASE]++;
		return 0;
	}
	if (ev->bad_num) {
		kf->skipped[KSKIP_BAD_NUMBER]++;
		return 0;
	}
	if (!ev->has_ts) {
		kf->skipped[KSKIP_NO_TS]++;
		return 0;
	}
	if (ev->ts_ns > T_LIMIT_NS || ev->ts_ns < -T_LIMIT_NS || ev->dur_ns > T_LIMIT_NS ||
	    ev->dur_ns < -T_LIMIT_NS) {
		kf->skipped[KSKIP_BAD_NUMBER]++;
		return 0;
	}
	g.start_ns = ev->ts_ns;
	g.name = ev->name.s ? kineto_file_intern(kf, ev->name.s, ev->name.len) : 0;
	if (ev->have & KA_CORR)
		g.corr = (uint32_t)ev->corr;
	if (ev->have & KA_EXT)
		g.ext = (uint32_t)ev->ext;
	if (ev->ph == 'X') {
		if (!ev->has_dur) {
			kf->skipped[KSKIP_NO_DUR]++;
			return 0;
		}
		g.dur_ns = ev->dur_ns;
		if (g.dur_ns < 0) {
			g.dur_ns = 0;
			kf->neg_dur++;
		}
		return x_event(kf, ev, &g);
	}
	if (ev->ph == 'B')
		return begin_event(kf, ev, &g);
	if (ev->ph == 'E')
		return end_event(kf, ev);
	if (ev->ph == 'C') {
		/* one sample per numeric series; the lane is the series */
		for (uint32_t i = 0; i < ev->n_num; i++) {
			const char *q = ev->num_val[i].s;
			char nm[512];
			size_t nl = (size_t)snprintf(nm, sizeof(nm), "%.*s%s%.*s", (int)ev->name.len,
					ev->name.s ? ev->name.s : "", ev->n_num > 1 ? " " : "",
					ev->n_num > 1 ? (int)ev->num_key[i].len : 0, ev->num_key[i].s);
			if (nl >= sizeof(nm))
				nl = sizeof(nm) - 1;
			if (counter_sample(kf, ev, &g, nm, nl, strtod(q, NULL)))
				return -ENOMEM;
		}
		return 0;
	}
	g.kind = GT_EV_INSTANT;
	kineto_file_mem(ev, &g);
	int rc = stage(kf, KCLS_HOST, ev, &g);
	if (!rc && (g.flags & GT_EVF_MEMORY))
		rc = mem_totals(kf, ev, &g);
	return rc;
}

