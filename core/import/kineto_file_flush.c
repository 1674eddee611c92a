/*
 * kineto_file_flush.c - the end of one imported file: links launch calls and GPU
 * work through ac2g flows where the correlation args are missing, then
 * creates the store lanes under the file's rank (names from the M metadata,
 * or sensible ones), moves the staged events (adding baseTimeNanoseconds)
 * and records the file's devices and rank.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/evcheck.h"
#include "kineto.h"
#include "../util/sortx.h"

/* ids of the parse-time store (kf->ls) in the target store (kf->s) */
static uint32_t rm_str(struct kineto_file *kf, uint32_t id)
{
	if (kf->ls == kf->s || id == 0)
		return id;
	size_t n = gt_store_str_count(kf->ls);
	if (id >= n)
		return 0;
	if (!kf->map_str && !(kf->map_str = calloc(n, sizeof(uint32_t)))) {
		kf->oom = 1;
		return 0;
	}
	if (!kf->map_str[id])
		kf->map_str[id] = gt_store_intern_cstr(kf->s, gt_store_str(kf->ls, id));
	return kf->map_str[id];
}

static uint32_t rm_kconf(struct kineto_file *kf, uint32_t id)
{
	if (kf->ls == kf->s || id == 0)
		return id;
	size_t n = gt_store_kconf_count(kf->ls) + 1;
	if (id >= n)
		return 0;
	if (!kf->map_kconf && !(kf->map_kconf = calloc(n, sizeof(uint32_t)))) {
		kf->oom = 1;
		return 0;
	}
	if (!kf->map_kconf[id])
		kf->map_kconf[id] = gt_store_kconf(kf->s, gt_store_kconf_at(kf->ls, id));
	return kf->map_kconf[id];
}

static uint32_t rm_nccl(struct kineto_file *kf, uint32_t id)
{
	if (kf->ls == kf->s || id == 0)
		return id;
	size_t n = gt_store_nccl_count(kf->ls) + 1;
	if (id >= n)
		return 0;
	if (!kf->map_nccl && !(kf->map_nccl = calloc(n, sizeof(uint32_t)))) {
		kf->oom = 1;
		return 0;
	}
	if (!kf->map_nccl[id]) {
		struct gt_nccl r = *gt_store_nccl_at(kf->ls, id);
		r.collective = rm_str(kf, r.collective);
		r.dtype = rm_str(kf, r.dtype);
		r.pg_name = rm_str(kf, r.pg_name);
		kf->map_nccl[id] = gt_store_nccl(kf->s, &r);
	}
	return kf->map_nccl[id];
}

static void remap_event(struct kineto_file *kf, struct gt_event *e)
{
	e->name = rm_str(kf, e->name);
	if (e->kind == GT_EV_KERNEL)
		e->arg = rm_kconf(kf, (uint32_t)e->arg) | (uint64_t)rm_nccl(kf, (uint32_t)(e->arg >> 32)) << 32;
	else if ((e->kind == GT_EV_CPU_OP || e->kind == GT_EV_NVTX) && e->arg)
		e->arg = (uint64_t)rm_nccl(kf, (uint32_t)(e->arg >> 32)) << 32 |
			 (e->kind == GT_EV_CPU_OP ? rm_str(kf, (uint32_t)e->arg) : 0);
	if (e->kind == GT_EV_CPU_OP && e->aux)
		e->aux = rm_str(kf, e->aux);
}

static int flow_cmp(const void *a, const void *b)
{
	const struct kflow *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->ph > y->ph) - (x->ph < y->ph);
}

static int is_launch_kind(int k)
{
	return k == GT_EV_RUNTIME || k == GT_EV_DRIVER;
}

static int is_gpu_kind(int k)
{
	return k == GT_EV_KERNEL || k == GT_EV_MEMCPY || k == GT_EV_MEMSET;
}

static int ev_cmp(const void *a, const void *b)
{
	const struct gt_event *x = a, *y = b;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* the uncorrelated event of the right kind starting at ts on a local lane
 * (lanes are sorted by start when this is used) */
static struct gt_event *find_at(struct kineto_file *kf, long li, int64_t ts, int gpu)
{
	if (li < 0)
		return NULL;
	struct klane *l = &kf->lanes[li];
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->ev[mid].start_ns < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < l->n && l->ev[i].start_ns == ts; i++) {
		struct gt_event *e = &l->ev[i];
		if (!e->corr && (gpu ? is_gpu_kind(e->kind) : is_launch_kind(e->kind)))
			return e;
	}
	return NULL;
}

/* every correlation is in the args: only count the flow ends without a partner */
static int count_unmatched(struct kineto_file *kf)
{
	size_t n = kf->n_flows;
	uint64_t *k = malloc(n * sizeof(*k));
	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		k[i] = kf->flows[i].id << 1 | (kf->flows[i].ph == 'f');
	if (sortx_radix_u64(k, n)) {
		free(k);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n;) {
		size_t j = i;
		int hs = 0, hf = 0;
		for (; j < n && k[j] >> 1 == k[i] >> 1; j++) {
			hs |= !(k[j] & 1);
			hf |= (int)(k[j] & 1);
		}
		if (hs && hf)
			kf->flows_linked++;
		else
			kf->flows_unmatched += j - i;
		i = j;
	}
	free(k);
	return 0;
}

/* pair s/f flow ends by id; fill missing correlations; count unmatched ends */
static void link_flows(struct kineto_file *kf)
{
	if (!kf->n_flows)
		return;
	if (!kf->n_nocorr && count_unmatched(kf) == 0)
		return;
	qsort(kf->flows, kf->n_flows, sizeof(*kf->flows), flow_cmp);
	if (kf->n_nocorr)
		for (size_t l = 0; l < kf->n_lanes; l++)
			qsort(kf->lanes[l].ev, kf->lanes[l].n, sizeof(struct gt_event), ev_cmp);
	size_t i = 0;
	while (i < kf->n_flows) {
		size_t j = i;
		while (j < kf->n_flows && kf->flows[j].id == kf->flows[i].id)
			j++;
		const struct kflow *fs = NULL, *ff = NULL;
		for (size_t k = i; k < j; k++) {
			if (kf->flows[k].ph == 's' && !fs)
				fs = &kf->flows[k];
			else if (kf->flows[k].ph == 'f' && !ff)
				ff = &kf->flows[k];
		}
		if (!fs || !ff) {
			kf->flows_unmatched += j - i;
		} else {
			kf->flows_linked++;
			if (kf->n_nocorr) {
				uint32_t c = (uint32_t)fs->id;
				struct gt_event *h = find_at(kf, kineto_file_find_lane(kf, KCLS_HOST, fs->cpid, fs->ctid),
							     fs->ts, 0);
				struct gt_event *d = find_at(kf, kineto_file_find_lane(kf, KCLS_GPU, ff->cpid, ff->ctid),
							     ff->ts, 1);
				if (h && d && c) {
					h->corr = c;
					d->corr = c;
				}
			}
		}
		i = j;
	}
}

/* sorted views of kf->meta and kf->gl for lookups in O(log n): a scan
 * per lane was quadratic (100k metadata entries in a 1.4 MB file: 34 s) */
struct kmix {
	uint32_t what;
	int64_t pid, tid;          /* tid 0 for process entries */
	size_t pos;                /* index in kf->meta: the last one wins */
};

struct kgix {
	int64_t pid, tid;
	size_t pos;                /* index in kf->gl: the first one wins */
};

struct kflush_ix {
	struct kmix *m;
	struct kgix *g;
};

static int is_thread_meta(uint32_t what)
{
	return what == KM_THREAD_NAME || what == KM_THREAD_SORT;
}

static int kmix_cmp(const void *pa, const void *pb)
{
	const struct kmix *a = pa, *b = pb;
	if (a->what != b->what)
		return a->what < b->what ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

static int kgix_cmp(const void *pa, const void *pb)
{
	const struct kgix *a = pa, *b = pb;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

/* build kf->ix; 0 or -ENOMEM */
static int ix_build(struct kineto_file *kf)
{
	struct kflush_ix *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->m = malloc((kf->n_meta ? kf->n_meta : 1) * sizeof(*x->m));
	x->g = malloc((kf->n_gl ? kf->n_gl : 1) * sizeof(*x->g));
	if (!x->m || !x->g) {
		free(x->m);
		free(x->g);
		free(x);
		return -ENOMEM;
	}
	for (size_t i = 0; i < kf->n_meta; i++) {
		const struct kmeta *m = &kf->meta[i];
		x->m[i] = (struct kmix){ m->what, m->cpid, is_thread_meta(m->what) ? m->ctid : 0, i };
	}
	for (size_t i = 0; i < kf->n_gl; i++)
		x->g[i] = (struct kgix){ kf->gl[i].cpid, kf->gl[i].ctid, i };
	qsort(x->m, kf->n_meta, sizeof(*x->m), kmix_cmp);
	qsort(x->g, kf->n_gl, sizeof(*x->g), kgix_cmp);
	kf->ix = x;
	return 0;
}

static void ix_free(struct kineto_file *kf)
{
	if (!kf->ix)
		return;
	free(kf->ix->m);
	free(kf->ix->g);
	free(kf->ix);
	kf->ix = NULL;
}

static const struct kmeta *meta_find(const struct kineto_file *kf, uint32_t what, int64_t pid, int64_t tid)
{
	struct kmix key = { what, pid, is_thread_meta(what) ? tid : 0, SIZE_MAX };
	/* the first entry after key: the one before it is the last of key's run */
	size_t lo = 0, hi = kf->n_meta;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (kmix_cmp(&kf->ix->m[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct kmix *m = &kf->ix->m[lo - 1];
	return m->what == key.what && m->pid == key.pid && m->tid == key.tid ? &kf->meta[m->pos] : NULL;
}

static const struct kglane *glane_find(const struct kineto_file *kf, int64_t pid, int64_t tid)
{
	struct kgix key = { pid, tid, 0 };
	size_t lo = 0, hi = kf->n_gl;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (kgix_cmp(&kf->ix->g[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == kf->n_gl || kf->ix->g[lo].pid != pid || kf->ix->g[lo].tid != tid)
		return NULL;
	return &kf->gl[kf->ix->g[lo].pos];
}

/* a Chrome pid/tid as a store key number (tagged strings become negative) */
static int64_t key_num(struct kineto_file *kf, int64_t v)
{
	return KTAGGED(v) ? -(int64_t)0x10000 - (int64_t)rm_str(kf, (uint32_t)(v & 0xffffffff)) : v;
}

static void name_lane(struct kineto_file *kf, const struct klane *l, uint32_t lane, const struct kglane *g)
{
	struct gt_lane *sl = gt_store_lane_at(kf->s, lane);
	if (!sl || sl->name)
		return;
	const struct kmeta *tn = meta_find(kf, KM_THREAD_NAME, l->cpid, l->gtid);
	const struct kmeta *ts = meta_find(kf, KM_THREAD_SORT, l->cpid, l->gtid);
	if (ts && ts->num >= 0 && ts->num <= UINT32_MAX)
		sl->sort_index = (uint32_t)ts->num;
	char nm[256];
	if (g && tn) {
		sl->name = rm_str(kf, tn->str);
		return;
	}
	switch (l->cls) {
	case KCLS_GPU:
	case KCLS_AUX:
		snprintf(nm, sizeof(nm), "GPU %" PRId32 " stream %" PRId64 "%s", sl->key.device, sl->key.id,
			 l->cls == KCLS_AUX ? " annotations" : "");
		break;
	case KCLS_COUNTER:
		snprintf(nm, sizeof(nm), "%s", gt_store_str(kf->ls, l->name));
		break;
	default:
		if (tn) {
			sl->name = rm_str(kf, tn->str);
			return;
		} else {
			const struct kmeta *pn = meta_find(kf, KM_PROC_NAME, l->cpid, 0);
			char tb[64];
			if (KTAGGED(l->ctid))
				snprintf(tb, sizeof(tb), "%s", gt_store_str(kf->ls, (uint32_t)(l->ctid & 0xffffffff)));
			else
				snprintf(tb, sizeof(tb), "thread %" PRId64, l->ctid);
			if (pn)
				snprintf(nm, sizeof(nm), "%s (%s)", tb, gt_store_str(kf->ls, pn->str));
			else if (KTAGGED(l->cpid))
				snprintf(nm, sizeof(nm), "%s %s", gt_store_str(kf->ls, (uint32_t)(l->cpid & 0xffffffff)), tb);
			else
				snprintf(nm, sizeof(nm), "%s", tb);
		}
	}
	gt_store_lane_set_name(kf->s, lane, nm);
}

static void lane_key(struct kineto_file *kf, const struct klane *l, struct gt_lane_key *k)
{
	memset(k, 0, sizeof(*k));
	k->rank = kf->rank;
	switch (l->cls) {
	case KCLS_GPU:
	case KCLS_AUX:
		k->type = GT_LANE_GPU;
		k->device = l->device;
		k->pid = l->cls == KCLS_AUX ? -1 : 0;
		k->id = l->stream;
		break;
	case KCLS_COUNTER:
		k->type = GT_LANE_COUNTER;
		k->device = -1;
		k->pid = key_num(kf, l->cpid);
		k->id = KTAGGED(l->ctid) ? (int64_t)rm_str(kf, (uint32_t)(l->ctid & 0xffffffff)) : l->ctid;
		break;
	default:
		k->type = GT_LANE_HOST;
		k->device = -1;
		k->pid = key_num(kf, l->cpid);
		k->id = key_num(kf, l->ctid);
	}
}

static int flush(struct kineto_file *kf);

int kineto_file_flush(struct kineto_file *kf)
{
	int rc = ix_build(kf);
	if (!rc)
		rc = flush(kf);
	ix_free(kf);
	return rc;
}

static int flush(struct kineto_file *kf)
{
	struct gt_store *s = kf->s;
	kineto_file_release(kf);         /* added for real below, counted by the store */
	link_flows(kf);
	free(kf->flows);           /* not needed any more: lower the peak */
	kf->flows = NULL;
	kf->n_flows = kf->cap_flows = 0;
	int64_t main_pid = -1;
	size_t main_n = 0;
	for (size_t i = 0; i < kf->n_lanes; i++) {
		struct klane *l = &kf->lanes[i];
		if (!l->n)
			continue;
		const struct kglane *g = glane_find(kf, l->cpid, l->gtid);
		struct gt_lane_key k;
		lane_key(kf, l, &k);
		if (g) {
			int32_t r = k.rank;
			k = g->key;
			if (kf->have_dist)     /* an exported multi-rank file keeps its ranks */
				k.rank = r;
		}
		if (l->cls == KCLS_HOST && l->n > main_n && !KTAGGED(l->cpid)) {
			main_n = l->n;
			main_pid = l->cpid;
		}
		uint32_t lane = gt_store_lane(s, &k);
		if (lane == UINT32_MAX || gt_store_reserve(s, lane, l->n))
			return -ENOMEM;
		name_lane(kf, l, lane, g);
		for (size_t j = 0; j < l->n; j++) {
			struct gt_event e = l->ev[j];
			if (kf->ls != s)
				remap_event(kf, &e);
			e.lane = lane;
			if (__builtin_add_overflow(e.start_ns, kf->base_ns, &e.start_ns) ||
			    gt_evcheck_event(&e)) {
				kf->skipped[KSKIP_OUT_OF_RANGE]++;
				continue;
			}
			if (gt_store_add(s, &e) || kf->oom)
				return -ENOMEM;
		}
		free(l->ev);
		l->ev = NULL;
		l->n = l->cap = 0;
	}
	for (size_t i = 0; i < kf->n_devs; i++) {
		struct gt_device d = kf->devs[i];
		d.rank = kf->rank;
		d.name = rm_str(kf, d.name);
		if (gt_store_device(s, &d))
			return -ENOMEM;
	}
	struct gt_rank r = { .rank = kf->rank, .pid = main_pid, .host = rm_str(kf, kf->host),
			     .source = gt_store_intern_cstr(s, kf->path), .world_size = kf->world };
	if (gt_store_rank(s, &r))
		return -ENOMEM;
	for (size_t i = 0; i < kf->n_gl && !kf->have_dist; i++) {
		int32_t gr = kf->gl[i].key.rank < 0 ? 0 : kf->gl[i].key.rank;
		int known = 0;
		for (size_t k = 0; k < gt_store_rank_count(s); k++)
			known |= gt_store_rank_at(s, k)->rank == gr;
		r.rank = gr;
		if (!known && gt_store_rank(s, &r))
			return -ENOMEM;
	}
	if (kf->have_span) {
		char key[64], val[64];
		snprintf(key, sizeof(key), "trace_span.rank%" PRId32, kf->rank);
		snprintf(val, sizeof(val), "%" PRId64 " %" PRId64, kf->span_start_ns + kf->base_ns,
			 kf->span_dur_ns);
		if (gt_store_meta_set(s, key, val))
			return -ENOMEM;
	}
	return 0;
}
