/*
 * mem_lane.c - the allocated-bytes counter lanes of allocator records
 * (gtrace/mem_lane.h has the rules).
 *
 * A sync sorts the queued records by (rank, device, time, order noted).
 * For each (rank, device) the lane's samples are already in time order with
 * exact values; the new records merge into its tail: walking the samples
 * after the earliest new record's time and the new records in time order
 * (a sample before a new record of equal time), `add` is the bytes of the
 * new records walked so far and `held` the old value of the last sample
 * walked; an old sample becomes old + add (written in place: its time and
 * place do not change, the lane's index stays valid), a new record gets
 * held + add.  New samples are appended and the store's finish sorts them
 * in (stably: after old samples of equal time, in noted order).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/mem_lane.h"

struct q {
	int64_t t, b;
	uint64_t seq;
	int32_t rank;
	uint32_t dev, lane;
};

struct key {
	int32_t rank;
	uint32_t dev, lane;   /* its counter lane */
	uint32_t name;
};

struct gt_mem_lane {
	struct q *q;
	size_t n, cap;
	uint64_t seq;
	struct key *k;
	size_t nk, kcap;
	struct gt_mem_lane_stats st;
	/* new samples of one sync: value and time, before they are added */
	struct gt_event *add;
	size_t nadd, addcap;
};

struct gt_mem_lane *gt_mem_lane_new(void)
{
	return calloc(1, sizeof(struct gt_mem_lane));
}

void gt_mem_lane_free(struct gt_mem_lane *m)
{
	if (!m)
		return;
	free(m->q);
	free(m->k);
	free(m->add);
	free(m);
}

void gt_mem_lane_stats(const struct gt_mem_lane *m, struct gt_mem_lane_stats *out)
{
	*out = m->st;
}

int gt_mem_lane_note(struct gt_mem_lane *m, const struct gt_event *ev, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct gt_event *e = &ev[i];
		if (e->kind != GT_EV_INSTANT || !(e->flags & GT_EVF_MEMORY))
			continue;
		if (m->n == m->cap) {
			size_t nc = m->cap ? 2 * m->cap : 256;
			struct q *nq = realloc(m->q, nc * sizeof(*nq));
			if (!nq)
				return -ENOMEM;
			m->q = nq;
			m->cap = nc;
		}
		struct q *x = &m->q[m->n++];
		x->t = e->start_ns;
		memcpy(&x->b, &e->arg, sizeof(x->b));
		x->seq = m->seq++;
		x->rank = 0;
		x->dev = e->aux;
		x->lane = e->lane;
	}
	return 0;
}

static int by_key_time(const void *x, const void *y)
{
	const struct q *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static double value_of(const struct gt_event *e)
{
	double v;
	memcpy(&v, &e->arg, sizeof(v));
	return v;
}

static void set_value(struct gt_event *e, int64_t v)
{
	double d = (double)v;
	memcpy(&e->arg, &d, sizeof(d));
}

/* the counter lane of process pid on rank named nm: one the store has
 * already (a stream's lane table brings the recorder's lane, empty, its key
 * id the recorder's string id: gtjob does not map a counter lane's id, as
 * Kineto's may be a number), else a new one keyed by the name's string id
 * - or, when another counter lane of the process holds that key, by the
 * first id past it that none holds.  UINT32_MAX when out of memory */
static uint32_t lane_named(struct gt_store *s, int32_t rank, int64_t pid, const char *nm,
			   uint32_t name)
{
	size_t nl = gt_store_lane_count(s);
	int64_t cand = name;
	for (int again = 1; again;) {
		again = 0;
		for (size_t i = 0; i < nl; i++) {
			const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
			if (l->key.type != GT_LANE_COUNTER || l->key.rank != rank || l->key.pid != pid)
				continue;
			if (l->name && !strcmp(gt_store_str(s, l->name), nm))
				return (uint32_t)i;
			if (l->key.id == cand && l->key.device == -1) {
				cand += (int64_t)1 << 32;
				again = 1;
			}
		}
	}
	struct gt_lane_key lk = { .type = GT_LANE_COUNTER, .rank = rank, .device = -1, .pid = pid,
				  .id = cand };
	return gt_store_lane(s, &lk);
}

/* the counter lane of (rank, dev), made on first use with the pid of
 * host lane `host`; NULL when out of memory */
static struct key *key_of(struct gt_mem_lane *m, struct gt_store *s, int32_t rank, uint32_t dev,
			  uint32_t host)
{
	for (size_t i = 0; i < m->nk; i++)
		if (m->k[i].rank == rank && m->k[i].dev == dev)
			return &m->k[i];
	if (m->nk == m->kcap) {
		size_t nc = m->kcap ? 2 * m->kcap : 8;
		struct key *nk = realloc(m->k, nc * sizeof(*nk));
		if (!nk)
			return NULL;
		m->k = nk;
		m->kcap = nc;
	}
	char nm[64];
	if (dev == GT_MEM_HOST)
		snprintf(nm, sizeof(nm), "Driver allocated (CPU)");
	else
		snprintf(nm, sizeof(nm), "Driver allocated (GPU %u)", dev);
	uint32_t name = gt_store_intern_cstr(s, nm);
	const struct gt_lane *h = gt_store_lane_at(s, host);
	if (!name || !h)
		return NULL;
	uint32_t id = lane_named(s, rank, h->key.pid, nm, name);
	struct gt_lane *l = gt_store_lane_at(s, id);
	if (!l)
		return NULL;
	if (!l->name)
		gt_store_lane_set_name(s, id, nm);
	struct key *k = &m->k[m->nk++];
	*k = (struct key){ rank, dev, id, name };
	return k;
}

static int push(struct gt_mem_lane *m, const struct key *k, int64_t t, int64_t v)
{
	if (m->nadd == m->addcap) {
		size_t nc = m->addcap ? 2 * m->addcap : 256;
		struct gt_event *na = realloc(m->add, nc * sizeof(*na));
		if (!na)
			return -ENOMEM;
		m->add = na;
		m->addcap = nc;
	}
	struct gt_event *e = &m->add[m->nadd++];
	memset(e, 0, sizeof(*e));
	e->kind = GT_EV_COUNTER;
	e->flags = GT_EVF_MEMORY;
	e->sub = GT_MEM_LANE_SUB;
	e->start_ns = t;
	e->aux = k->dev;
	e->name = k->name;
	e->lane = k->lane;
	set_value(e, v);
	return 0;
}

/* merge the sorted records v[0..n) of one (rank, device) into its lane l
 * (see the file comment); the new samples go to m->add */
static int merge(struct gt_mem_lane *m, const struct key *k, struct gt_lane *l, const struct q *v,
		 size_t n)
{
	/* first sample later than the earliest new record (binary search) */
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->ev[mid].start_ns <= v[0].t)
			lo = mid + 1;
		else
			hi = mid;
	}
	int64_t held = lo ? (int64_t)value_of(&l->ev[lo - 1]) : 0, add = 0;
	int64_t last_t = l->n ? l->ev[l->n - 1].start_ns : INT64_MIN;
	/* a lane cut by a ring window (gt_store_drop_before) starts with its
	 * value at the cut, a sample at the cut: a record older than that
	 * adds its bytes to every sample kept, but gets none of its own (its
	 * time is gone) */
	int64_t floor_t = l->dropped && l->n ? l->ev[0].start_ns : INT64_MIN;
	size_t j = lo, i = 0;
	while (j < l->n || i < n) {
		if (j < l->n && (i == n || l->ev[j].start_ns <= v[i].t)) {
			held = (int64_t)value_of(&l->ev[j]);
			if (add) {
				set_value(&l->ev[j], held + add);
				m->st.rewritten++;
			}
			j++;
			continue;
		}
		add += v[i].b;
		if (v[i].t < last_t)
			m->st.late++;
		if (v[i].t >= floor_t && push(m, k, v[i].t, held + add))
			return -ENOMEM;
		i++;
	}
	m->st.records += n;
	return 0;
}

int gt_mem_lane_sync(struct gt_mem_lane *m, struct gt_store *s)
{
	if (!m->n)
		return 0;
	for (size_t i = 0; i < m->n; i++) {
		const struct gt_lane *h = gt_store_lane_at(s, m->q[i].lane);
		m->q[i].rank = h ? h->key.rank : 0;
	}
	qsort(m->q, m->n, sizeof(*m->q), by_key_time);
	m->nadd = 0;
	int rc = 0;
	for (size_t a = 0, b; a < m->n && !rc; a = b) {
		for (b = a + 1; b < m->n && m->q[b].rank == m->q[a].rank && m->q[b].dev == m->q[a].dev;
		     b++)
			;
		struct key *k = key_of(m, s, m->q[a].rank, m->q[a].dev, m->q[a].lane);
		if (!k)
			return -ENOMEM;
		rc = merge(m, k, gt_store_lane_at(s, k->lane), m->q + a, b - a);
	}
	/* in place first (above), then appended: an add may move a lane's events */
	for (size_t i = 0; i < m->nadd && !rc; i++)
		rc = gt_store_add(s, &m->add[i]);
	m->n = 0;
	m->st.syncs++;
	return rc ? rc : gt_store_finish(s);
}

int gt_mem_lane_build(struct gt_store *s)
{
	struct gt_mem_lane *m = gt_mem_lane_new();
	if (!m)
		return -ENOMEM;
	int rc = 0;
	size_t nl = gt_store_lane_count(s);
	for (size_t i = 0; i < nl; i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type == GT_LANE_COUNTER && l->n && l->ev[0].kind == GT_EV_COUNTER &&
		    (l->ev[0].flags & GT_EVF_MEMORY) && l->ev[0].sub == GT_MEM_LANE_SUB) {
			gt_mem_lane_free(m);
			return 0;   /* built already (a file written from a store that had them) */
		}
	}
	for (size_t i = 0; i < nl && !rc; i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type == GT_LANE_HOST && (l->kinds_mask & (1u << GT_EV_INSTANT)))
			rc = gt_mem_lane_note(m, l->ev, l->n);
	}
	if (!rc)
		rc = gt_mem_lane_sync(m, s);
	gt_mem_lane_free(m);
	return rc;
}
