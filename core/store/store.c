/*
 * store.c - the event store: lanes, side tables, metadata, build and finish.
 *
 * Lanes are found by key through an open-addressing hash over lane ids.
 * Events are appended to their lane's array; gt_store_finish() sorts what is
 * unsorted and (re)builds each lane's index (lod.c) and the correlation
 * index (corr.c).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "store_priv.h"
#include "gtrace/lsum.h"

static const char *const kind_names[GT_EV_KIND_COUNT] = {
	[GT_EV_NONE] = "none",       [GT_EV_KERNEL] = "kernel",
	[GT_EV_MEMCPY] = "memcpy",   [GT_EV_MEMSET] = "memset",
	[GT_EV_SYNC] = "sync",       [GT_EV_RUNTIME] = "cuda_runtime",
	[GT_EV_DRIVER] = "cuda_driver", [GT_EV_NVTX] = "annotation",
	[GT_EV_GPU_ANNOT] = "gpu_annotation", [GT_EV_CPU_OP] = "cpu_op",
	[GT_EV_PYTHON] = "python_function", [GT_EV_STEP] = "step",
	[GT_EV_INSTANT] = "instant", [GT_EV_COUNTER] = "counter",
	[GT_EV_OVERHEAD] = "overhead",
};

const char *gt_ev_kind_name(int kind)
{
	if (kind < 0 || kind >= GT_EV_KIND_COUNT)
		return "unknown";
	return kind_names[kind];
}

const char *gt_copy_kind_name(int sub)
{
	static const char *const n[GT_COPY_KIND_COUNT] = {
		"Unknown", "Host-to-Device", "Device-to-Host", "Device-to-Device",
		"Peer-to-Peer", "Host-to-Host",
	};
	if (sub < 0 || sub >= GT_COPY_KIND_COUNT)
		return "Unknown";
	return n[sub];
}

struct gt_store *gt_store_new(void)
{
	struct gt_store *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (strtab_init(&s->strs)) {
		free(s);
		return NULL;
	}
	rectab_init(&s->kconf, sizeof(struct gt_kconf));
	rectab_init(&s->nccl, sizeof(struct gt_nccl));
	s->t_min = INT64_MAX;
	s->t_max = INT64_MIN;
	s->drop_last_start = INT64_MIN;
	s->drop_origin = INT64_MAX;
	static _Atomic uint64_t uids;
	s->uid = atomic_fetch_add(&uids, 1) + 1;
	return s;
}

uint64_t gt_store_change_id(const struct gt_store *s)
{
	/* n_added and n_finish only grow: their sum changes at every change */
	uint64_t h = s->uid * 0x9e3779b97f4a7c15ull;
	return h ^ (s->n_added + s->n_finish);
}

void gt_store_free(struct gt_store *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_lanes; i++) {
		lod_free(s, s->lanes[i]);
		store_mem_free(s, s->lanes[i]->ev);
		free(s->lanes[i]);
	}
	free(s->lanes);
	free(s->lane_hash);
	gt_lsum_free(s->summary);
	strtab_done(&s->strs);
	rectab_done(&s->kconf);
	rectab_done(&s->nccl);
	free(s->devs);
	free(s->ranks);
	for (size_t i = 0; i < s->n_meta; i++) {
		free(s->meta[i].key);
		free(s->meta[i].value);
	}
	free(s->meta);
	free(s->str_short);
	store_mem_free(s, s->corr_launch);
	store_mem_free(s, s->corr_gpu);
	store_arena_free(s->arena);
	free(s);
}

uint32_t gt_store_intern(struct gt_store *s, const char *str, size_t len)
{
	return strtab_intern(&s->strs, str, len);
}

uint32_t gt_store_intern_cstr(struct gt_store *s, const char *str)
{
	return strtab_intern(&s->strs, str, strlen(str));
}

const char *gt_store_str(const struct gt_store *s, uint32_t id)
{
	if (id >= s->strs.n)
		return "";
	return s->strs.str[id];
}

int gt_store_str_set_short(struct gt_store *s, uint32_t name, uint32_t short_name)
{
	if (name >= s->n_str_short) {
		size_t n = s->n_str_short ? s->n_str_short : 64;
		while (n <= name)
			n *= 2;
		uint32_t *v = realloc(s->str_short, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + s->n_str_short, 0, (n - s->n_str_short) * sizeof(*v));
		s->str_short = v;
		s->n_str_short = n;
	}
	s->str_short[name] = short_name;
	return 0;
}

uint32_t gt_store_str_short(const struct gt_store *s, uint32_t name)
{
	return name < s->n_str_short ? s->str_short[name] : 0;
}

size_t gt_store_str_count(const struct gt_store *s)
{
	return s->strs.n;
}

uint32_t gt_store_str_find(const struct gt_store *s, const char *str, size_t len)
{
	return strtab_find(&s->strs, str, len);
}

/* ---- lanes ---- */

static uint64_t lane_key_hash(const struct gt_lane_key *k)
{
	int64_t v[5] = { k->type, k->rank, k->device, k->pid, k->id };
	return strtab_hash(v, sizeof(v));
}

static int lane_key_eq(const struct gt_lane_key *a, const struct gt_lane_key *b)
{
	return a->type == b->type && a->rank == b->rank && a->device == b->device &&
	       a->pid == b->pid && a->id == b->id;
}

static int lane_rehash(struct gt_store *s, size_t ncap)
{
	uint32_t *nh = calloc(ncap, sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	for (size_t k = 0; k < s->n_lanes; k++) {
		size_t m = ncap - 1, i = lane_key_hash(&s->lanes[k]->key) & m;
		while (nh[i])
			i = (i + 1) & m;
		nh[i] = (uint32_t)k + 1;
	}
	free(s->lane_hash);
	s->lane_hash = nh;
	s->lane_hcap = ncap;
	return 0;
}

/* what importers hold for the limits (gt_store_limit_take), >= 0 */
static uint64_t pend(const int64_t *p)
{
	int64_t v = __atomic_load_n(p, __ATOMIC_RELAXED);
	return v > 0 ? (uint64_t)v : 0;
}

/* the first limit that refused something */
static void lim_refuse(struct gt_store *s, int which)
{
	int zero = 0;
	__atomic_compare_exchange_n(&s->lim_hit, &zero, which, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

uint32_t gt_store_lane(struct gt_store *s, const struct gt_lane_key *in)
{
	struct gt_lane_key k = *in, *key = &k;
	k.rank = store_rank_norm(k.rank);
	uint64_t h = lane_key_hash(key);
	if (s->lane_hcap) {
		size_t m = s->lane_hcap - 1;
		for (size_t i = h & m; s->lane_hash[i]; i = (i + 1) & m)
			if (lane_key_eq(&s->lanes[s->lane_hash[i] - 1]->key, key))
				return s->lane_hash[i] - 1;
	}
	if (s->lim_lanes && s->n_lanes + pend(&s->pend_lanes) >= s->lim_lanes) {
		lim_refuse(s, GT_STORE_LIM_LANES);
		return UINT32_MAX;
	}
	if ((s->n_lanes + 1) * 2 > s->lane_hcap &&
	    lane_rehash(s, s->lane_hcap ? s->lane_hcap * 2 : 64))
		return UINT32_MAX;
	if (s->n_lanes == s->cap_lanes) {
		size_t nc = s->cap_lanes ? s->cap_lanes * 2 : 16;
		struct gt_lane **nl = realloc(s->lanes, nc * sizeof(*nl));
		if (!nl)
			return UINT32_MAX;
		s->lanes = nl;
		s->cap_lanes = nc;
	}
	struct gt_lane *l = calloc(1, sizeof(*l));
	if (!l)
		return UINT32_MAX;
	l->key = *key;
	l->id = (uint32_t)s->n_lanes;
	s->lanes[s->n_lanes++] = l;
	size_t m = s->lane_hcap - 1, i = h & m;
	while (s->lane_hash[i])
		i = (i + 1) & m;
	s->lane_hash[i] = l->id + 1;
	return l->id;
}

size_t gt_store_lane_count(const struct gt_store *s)
{
	return s->n_lanes;
}

struct gt_lane *gt_store_lane_at(const struct gt_store *s, uint32_t id)
{
	return id < s->n_lanes ? s->lanes[id] : NULL;
}

void gt_store_lane_set_name(struct gt_store *s, uint32_t lane, const char *name)
{
	if (lane < s->n_lanes)
		s->lanes[lane]->name = gt_store_intern_cstr(s, name);
}

/* ---- side tables ---- */

uint32_t gt_store_kconf(struct gt_store *s, const struct gt_kconf *k)
{
	return rectab_intern(&s->kconf, k);
}

const struct gt_kconf *gt_store_kconf_at(const struct gt_store *s, uint32_t id)
{
	return rectab_at(&s->kconf, id);
}

size_t gt_store_kconf_count(const struct gt_store *s)
{
	return s->kconf.n;
}

uint32_t gt_store_nccl(struct gt_store *s, const struct gt_nccl *n)
{
	return rectab_intern(&s->nccl, n);
}

const struct gt_nccl *gt_store_nccl_at(const struct gt_store *s, uint32_t id)
{
	return rectab_at(&s->nccl, id);
}

size_t gt_store_nccl_count(const struct gt_store *s)
{
	return s->nccl.n;
}

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	size_t nc = *cap ? *cap * 2 : 8;
	void *np = realloc(p, nc * size);
	if (np)
		*cap = nc;
	return np;
}

int gt_store_device(struct gt_store *s, const struct gt_device *in)
{
	struct gt_device nd0 = *in, *d = &nd0;
	nd0.rank = store_rank_norm(nd0.rank);
	for (size_t i = 0; i < s->n_devs; i++)
		if (s->devs[i].rank == d->rank && s->devs[i].id == d->id) {
			s->devs[i] = *d;
			return 0;
		}
	struct gt_device *nd = grow(s->devs, &s->cap_devs, s->n_devs, sizeof(*nd));
	if (!nd)
		return -ENOMEM;
	s->devs = nd;
	s->devs[s->n_devs++] = *d;
	return 0;
}

size_t gt_store_device_count(const struct gt_store *s)
{
	return s->n_devs;
}

const struct gt_device *gt_store_device_at(const struct gt_store *s, size_t i)
{
	return i < s->n_devs ? &s->devs[i] : NULL;
}

int gt_store_rank(struct gt_store *s, const struct gt_rank *in)
{
	struct gt_rank nr0 = *in, *r = &nr0;
	nr0.rank = store_rank_norm(nr0.rank);
	for (size_t i = 0; i < s->n_ranks; i++)
		if (s->ranks[i].rank == r->rank) {
			s->ranks[i] = *r;
			return 0;
		}
	struct gt_rank *nr = grow(s->ranks, &s->cap_ranks, s->n_ranks, sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	s->ranks = nr;
	s->ranks[s->n_ranks++] = *r;
	return 0;
}

size_t gt_store_rank_count(const struct gt_store *s)
{
	return s->n_ranks;
}

const struct gt_rank *gt_store_rank_at(const struct gt_store *s, size_t i)
{
	return i < s->n_ranks ? &s->ranks[i] : NULL;
}

struct gt_drops *gt_store_drops(struct gt_store *s)
{
	return &s->drops;
}

uint64_t gt_store_drops_lost(const struct gt_drops *d)
{
	/* a declined buffer request is why CUPTI dropped records, which its
	 * own count already has: not added again */
	return d->cupti_dropped + d->zero_timestamps + d->ring_overflow + d->import_skipped +
	       d->read_errors;
}

int gt_store_meta_set(struct gt_store *s, const char *key, const char *value)
{
	char *v = strdup(value);
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_meta; i++)
		if (!strcmp(s->meta[i].key, key)) {
			free(s->meta[i].value);
			s->meta[i].value = v;
			return 0;
		}
	char *k = strdup(key);
	struct meta_kv *nm = grow(s->meta, &s->cap_meta, s->n_meta, sizeof(*nm));
	if (!k || !nm) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	s->meta = nm;
	s->meta[s->n_meta].key = k;
	s->meta[s->n_meta++].value = v;
	return 0;
}

const char *gt_store_meta_get(const struct gt_store *s, const char *key)
{
	for (size_t i = 0; i < s->n_meta; i++)
		if (!strcmp(s->meta[i].key, key))
			return s->meta[i].value;
	return NULL;
}

size_t gt_store_meta_count(const struct gt_store *s)
{
	return s->n_meta;
}

int gt_store_meta_at(const struct gt_store *s, size_t i, const char **key, const char **value)
{
	if (i >= s->n_meta)
		return -ENOENT;
	*key = s->meta[i].key;
	*value = s->meta[i].value;
	return 0;
}

/* ---- events ---- */

int gt_store_reserve(struct gt_store *s, uint32_t lane, size_t n)
{
	if (lane >= s->n_lanes)
		return -EINVAL;
	struct gt_lane *l = s->lanes[lane];
	if (l->n + n <= l->cap)
		return 0;
	if (s->lim_events && s->n_added + pend(&s->pend_events) + n > s->lim_events) {
		lim_refuse(s, GT_STORE_LIM_EVENTS);
		return -E2BIG;
	}
	store_budget_poll(s, (l->n + n) * sizeof(*l->ev));
	struct gt_event *ne = store_mem_realloc(s, l->ev, (l->n + n) * sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	l->ev = ne;
	l->cap = l->n + n;
	return 0;
}

int gt_store_add(struct gt_store *s, const struct gt_event *e)
{
	if (e->lane >= s->n_lanes)
		return -EINVAL;
	struct gt_lane *l = s->lanes[e->lane];
	if (s->summary)
		gt_store_set_summary(s, NULL);   /* it described the events before this one */
	if (s->lim_events && s->n_added + pend(&s->pend_events) >= s->lim_events) {
		lim_refuse(s, GT_STORE_LIM_EVENTS);
		return -E2BIG;
	}
	s->n_added++;
	if (l->n == l->cap) {
		/* small first (a file of a million one-event lanes must not
		 * reserve 12 KiB each), then x1.5 */
		size_t nc = !l->cap ? 4 : l->cap < 256 ? l->cap * 4 : l->cap + l->cap / 2;
		store_budget_poll(s, nc * sizeof(*l->ev));
		l = s->lanes[e->lane];
		struct gt_event *ne = store_mem_realloc(s, l->ev, nc * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		l->ev = ne;
		l->cap = nc;
	}
	l->ev[l->n++] = *e;
	if (s->arena && !(l->n % STORE_AHEAD_EVENTS))
		store_budget_ahead(s, l);
	if (s->arena && ++s->adds_unchecked >= 65536) {
		/* a writer filling reserved room checks the budget itself */
		s->adds_unchecked = 0;
		store_budget_finished(s);
	}
	if (e->kind < 32)
		l->kinds_mask |= 1u << e->kind;
	return 0;
}

void gt_store_limits_set(struct gt_store *s, size_t max_lanes, uint64_t max_events)
{
	s->lim_lanes = max_lanes;
	s->lim_events = max_events;
	__atomic_store_n(&s->lim_hit, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->pend_lanes, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->pend_events, 0, __ATOMIC_RELAXED);
}

int gt_store_limit_hit(const struct gt_store *s)
{
	return __atomic_load_n(&s->lim_hit, __ATOMIC_RELAXED);
}

int gt_store_limit_take(struct gt_store *s, int64_t lanes, int64_t events)
{
	int64_t pl = __atomic_add_fetch(&s->pend_lanes, lanes, __ATOMIC_RELAXED);
	int64_t pe = __atomic_add_fetch(&s->pend_events, events, __ATOMIC_RELAXED);
	if (lanes > 0 && s->lim_lanes && (uint64_t)pl + s->n_lanes > s->lim_lanes) {
		lim_refuse(s, GT_STORE_LIM_LANES);
		return -E2BIG;
	}
	if (events > 0 && s->lim_events && (uint64_t)pe + s->n_added > s->lim_events) {
		lim_refuse(s, GT_STORE_LIM_EVENTS);
		return -E2BIG;
	}
	return 0;
}

size_t gt_store_event_count(const struct gt_store *s)
{
	return s->n_events;
}

int64_t gt_store_t_min(const struct gt_store *s)
{
	return s->n_events ? s->t_min : 0;
}

int64_t gt_store_t_origin(const struct gt_store *s)
{
	int64_t lo = gt_store_t_min(s);
	if (s->drop_origin == INT64_MAX)
		return lo;
	return s->n_events && lo < s->drop_origin ? lo : s->drop_origin;
}

int64_t gt_store_t_max(const struct gt_store *s)
{
	return s->n_events ? s->t_max : 0;
}

int gt_store_finish(struct gt_store *s)
{
	int rc;
	size_t n = 0, unchecked = 0;
	s->n_finish++;
	store_budget_poll(s, 0);
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < s->n_lanes; i++) {
		struct gt_lane *l = s->lanes[i];
		rc = lod_build(s, l);
		if (rc)
			return rc;
		/* indexing reads every event: check the budget every 1 M events
		   (not every lane: the check costs O(lanes)) */
		unchecked += l->n;
		if (s->arena && unchecked >= ((size_t)1 << 20)) {
			unchecked = 0;
			store_budget_finished(s);
		}
		n += l->n;
		if (l->n) {
			if (l->ev[0].start_ns < lo)
				lo = l->ev[0].start_ns;
			int64_t me = l->blk_maxend[(l->n - 1) / GT_LOD_BLOCK];
			if (me > hi)
				hi = me;
		}
	}
	s->n_events = n;
	s->t_min = lo;
	s->t_max = hi;
	rc = corr_build(s);
	store_budget_finished(s);
	return rc;
}

size_t gt_store_bytes(const struct gt_store *s)
{
	size_t b = sizeof(*s);
	for (size_t i = 0; i < s->n_lanes; i++) {
		const struct gt_lane *l = s->lanes[i];
		size_t nb = (l->n + GT_LOD_BLOCK - 1) / GT_LOD_BLOCK;
		b += sizeof(*l) + l->cap * sizeof(struct gt_event) + nb * 24;
		for (int k = 0; k < l->n_lvl; k++)
			b += l->lvl_n[k] * (sizeof(uint32_t) + sizeof(int64_t));
	}
	b += (s->n_corr_launch + s->n_corr_gpu) * sizeof(struct corr_ent);
	b += s->strs.n_blocks * STRTAB_BLOCK_BYTES + s->strs.cap * (sizeof(char *) + 4) +
	     s->strs.hcap * 4;
	b += s->kconf.cap * s->kconf.rec_size + s->nccl.cap * s->nccl.rec_size;
	return b;
}
