/*
 * lsum.c - the per-lane summary (gtrace/lsum.h): building it from a
 * store's lanes, and drawing a row of columns from it.
 *
 * Build, per lane: level 0 is filled densely over the lane's buckets from
 * its events in start order (union busy pieces [max(s, M), e) with M the
 * running max end, added to the buckets they cross; counts at the start's
 * bucket; the longest event overlapping each bucket), then each coarser
 * level merges 4 buckets (sums and the longest), and every level is
 * compacted to its non-empty buckets.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "store_priv.h"
#include "gtrace/lsum.h"
#include "lsum_page.h"

/* average events per finest bucket on a lane holding an average share */
#define EV_PER_BUCKET 16
/* a lane never has more finest buckets than this (bounds the dense pass) */
#define MAX_BUCKETS ((int64_t)1 << 20)
/* the coarsest level has at most this many buckets over the span */
#define TOP_BUCKETS 16
/* a lane is read in runs of RUN events: fed to the summary without a copy
 * of the whole lane, and the memory budget checked once a run
 * (gt_store_read_tick) */
#define RUN 65536

struct gt_lsum *gt_lsum_new(int64_t origin_ns, int64_t base_ns, int nlev, size_t nlanes)
{
	if (base_ns <= 0 || nlev < 1 || nlev > GT_LSUM_MAXLEV)
		return NULL;
	struct gt_lsum *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->origin_ns = origin_ns;
	m->base_ns = base_ns;
	m->nlev = nlev;
	m->nlanes = nlanes;
	m->lane = calloc(nlanes ? nlanes : 1, sizeof(*m->lane));
	if (!m->lane) {
		free(m);
		return NULL;
	}
	return m;
}

void gt_lsum_free(struct gt_lsum *m)
{
	if (!m)
		return;
	lsum_page_free(m);
	for (size_t i = 0; i < m->nlanes; i++)
		for (int k = 0; k < GT_LSUM_MAXLEV; k++)
			free(m->lane[i].e[k]);
	free(m->lane);
	free(m);
}

struct sev {
	int64_t s, d;
	uint32_t name, kfs;
};

static int sev_cmp(const void *a, const void *b)
{
	const struct sev *x = a, *y = b;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->d > y->d ? -1 : x->d < y->d;
}

static uint32_t ev_kfs(const struct gt_event *e)
{
	return (uint32_t)e->kind | (uint32_t)e->sub << 8 | (uint32_t)e->flags << 16;
}

/* keep the longer of the bucket's dominant and (d, name, kfs) */
static void dom(struct gt_lsum_ent *b, int64_t d, uint32_t name, uint32_t kfs)
{
	if (b->dom_name == UINT32_MAX || d > b->dom_dur) {
		b->dom_dur = d;
		b->dom_name = name;
		b->dom_kfs = kfs;
	}
}

/* the non-empty entries of dense[0..nb) into m's level k of lane li */
static int compact(struct gt_lsum_lane *ln, int k, const struct gt_lsum_ent *dense, size_t nb)
{
	size_t n = 0;
	for (size_t i = 0; i < nb; i++)
		n += dense[i].dom_name != UINT32_MAX || dense[i].count || dense[i].busy_ns;
	ln->n[k] = n;
	if (!n)
		return 0;
	struct gt_lsum_ent *e = malloc(n * sizeof(*e));
	if (!e)
		return -ENOMEM;
	ln->e[k] = e;
	for (size_t i = 0, j = 0; i < nb; i++)
		if (dense[i].dom_name != UINT32_MAX || dense[i].count || dense[i].busy_ns) {
			e[j] = dense[i];
			e[j++].idx = (uint32_t)i;
		}
	return 0;
}

static void dense_clear(struct gt_lsum_ent *d, size_t nb)
{
	memset(d, 0, nb * sizeof(*d));
	for (size_t i = 0; i < nb; i++)
		d[i].dom_name = UINT32_MAX;
}

/* one lane's levels, built from its events in (start, longer first)
 * order fed in runs: lane_begin (maxe: the lane's latest end), lane_add
 * for each run, lane_levels at the end */
struct lane_acc {
	size_t nb;        /* buckets of the finest level */
	int64_t M;        /* latest end so far (busy time counts past it) */
};

static void lane_begin(const struct gt_lsum *m, struct lane_acc *a, int64_t maxe,
		       struct gt_lsum_ent *dense, size_t cap)
{
	size_t nb = (size_t)((maxe - m->origin_ns) / m->base_ns) + 1;
	if (nb > cap)
		nb = cap;   /* cannot happen: the geometry covers the span */
	dense_clear(dense, nb);
	a->nb = nb;
	a->M = INT64_MIN;
}

static void lane_add(const struct gt_lsum *m, struct lane_acc *a, const struct sev *ev, size_t n,
		     struct gt_lsum_ent *dense)
{
	const int64_t o = m->origin_ns, W = m->base_ns;
	const size_t nb = a->nb;
	int64_t M = a->M;
	for (size_t i = 0; i < n; i++) {
		int64_t s = ev[i].s, e = s + ev[i].d;
		size_t bs = (size_t)((s - o) / W);
		if (bs >= nb)
			continue;
		if (dense[bs].count < UINT32_MAX)
			dense[bs].count++;
		size_t be = ev[i].d ? (size_t)((e - 1 - o) / W) : bs;
		if (be >= nb)
			be = nb - 1;
		for (size_t b = bs; b <= be; b++)
			dom(&dense[b], ev[i].d, ev[i].name, ev[i].kfs);
		if (e > M) {
			int64_t x0 = s > M ? s : M;
			for (size_t b = (size_t)((x0 - o) / W); b <= be; b++) {
				int64_t lo = o + (int64_t)b * W, hi = lo + W;
				int64_t x = x0 > lo ? x0 : lo, y = e < hi ? e : hi;
				if (y > x)
					dense[b].busy_ns += y - x;
			}
			M = e;
		}
	}
	a->M = M;
}

/* the finest level's dense buckets into every level of ln */
static int lane_levels(struct gt_lsum *m, struct gt_lsum_lane *ln, struct gt_lsum_ent *dense,
		       size_t nb)
{
	for (int k = 0; k < m->nlev; k++) {
		if (k) {   /* merge 4 buckets into one, in place */
			size_t nn = (nb + 3) / 4;
			for (size_t j = 0; j < nn; j++) {
				struct gt_lsum_ent acc = dense[4 * j];
				for (size_t c = 4 * j + 1; c < 4 * j + 4 && c < nb; c++) {
					uint64_t sum = (uint64_t)acc.count + dense[c].count;
					acc.count = sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
					acc.busy_ns += dense[c].busy_ns;
					if (dense[c].dom_name != UINT32_MAX)
						dom(&acc, dense[c].dom_dur, dense[c].dom_name, dense[c].dom_kfs);
				}
				dense[j] = acc;
			}
			nb = nn;
		}
		int rc = compact(ln, k, dense, nb);
		if (rc)
			return rc;
	}
	return 0;
}

/* geometry for a span holding n events on `lanes` non-empty lanes: base a
 * power of two near EV_PER_BUCKET events a bucket on an average lane, at
 * most MAX_BUCKETS over the span; levels up to TOP_BUCKETS over the span */
static void geometry(int64_t span, size_t lanes, size_t n, int64_t *base, int *nlev)
{
	double want = n ? (double)span * (double)lanes / (double)n * EV_PER_BUCKET : 1;
	int64_t b = 1;
	while ((double)b < want && b < ((int64_t)1 << 40))
		b <<= 1;
	while (span / b >= MAX_BUCKETS)
		b <<= 1;
	int k = 1;
	for (int64_t wk = b; k < GT_LSUM_MAXLEV && span / wk > TOP_BUCKETS && wk <= INT64_MAX / 8;
	     wk *= 4)
		k++;
	*base = b;
	*nlev = k;
}

int gt_lsum_build(const struct gt_store *s, struct gt_lsum **out)
{
	*out = NULL;
	size_t total = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++)
		total += gt_store_lane_at(s, (uint32_t)i)->n;
	if (!total)
		return 0;
	/* the store's t_min/t_max are set by finish; an unfinished store
	 * (a live capture) gets them from its events */
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	size_t lanes = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		lanes += l->n > 0;
		for (size_t j = 0; j < l->n; j++) {
			if (!(j % RUN))
				gt_store_read_tick(s, l, j, l->n - j < RUN ? l->n : j + RUN);
			int64_t st = l->ev[j].start_ns, e = gt_event_end(&l->ev[j]);
			lo = st < lo ? st : lo;
			hi = e > hi ? e : hi;
		}
	}
	int64_t base;
	int nlev;
	geometry(hi - lo, lanes, total, &base, &nlev);
	struct gt_lsum *m = gt_lsum_new(lo, base, nlev, gt_store_lane_count(s));
	size_t cap = (size_t)((hi - lo) / base) + 2;
	struct gt_lsum_ent *dense = malloc(cap * sizeof(*dense));
	/* a lane already in order (a finished store's) is fed in runs of
	 * RUN events: no copy of a whole lane on the heap, whatever its
	 * length (a day's live lane is 100s of M events, its array in the
	 * store's cache file); only a lane out of order is copied and sorted */
	size_t evcap = RUN;
	struct sev *ev = malloc(evcap * sizeof(*ev));
	int rc = m && dense && ev ? 0 : -ENOMEM;
	for (size_t i = 0; i < gt_store_lane_count(s) && !rc; i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (!l->n)
			continue;
		int sorted = 1;
		int64_t maxe = INT64_MIN;
		for (size_t j = 0; j < l->n; j++) {
			if (!(j % RUN))
				gt_store_read_tick(s, l, j, l->n - j < RUN ? l->n : j + RUN);
			const struct gt_event *e = &l->ev[j];
			int64_t end = e->dur_ns ? e->start_ns + e->dur_ns - 1 : e->start_ns;
			maxe = end > maxe ? end : maxe;
			if (j && sorted) {
				const struct gt_event *p = &l->ev[j - 1];
				sorted = p->start_ns < e->start_ns ||
					 (p->start_ns == e->start_ns && p->dur_ns >= e->dur_ns);
			}
		}
		struct lane_acc a;
		lane_begin(m, &a, maxe, dense, cap);
		if (sorted) {
			for (size_t j0 = 0; j0 < l->n; j0 += RUN) {
				size_t k = l->n - j0 < RUN ? l->n - j0 : RUN;
				gt_store_read_tick(s, l, j0, j0 + k);
				for (size_t j = 0; j < k; j++) {
					const struct gt_event *e = &l->ev[j0 + j];
					ev[j] = (struct sev){ e->start_ns, e->dur_ns, e->name, ev_kfs(e) };
				}
				lane_add(m, &a, ev, k, dense);
			}
		} else {
			if (l->n > evcap) {
				struct sev *g = realloc(ev, l->n * sizeof(*ev));
				if (!g) {
					rc = -ENOMEM;
					break;
				}
				ev = g;
				evcap = l->n;
			}
			for (size_t j = 0; j < l->n; j++) {
				gt_store_read_walk(s, l, 0, j, l->n);
				ev[j] = (struct sev){ l->ev[j].start_ns, l->ev[j].dur_ns, l->ev[j].name,
						      ev_kfs(&l->ev[j]) };
			}
			qsort(ev, l->n, sizeof(*ev), sev_cmp);
			lane_add(m, &a, ev, l->n, dense);
		}
		rc = lane_levels(m, &m->lane[i], dense, a.nb);
	}
	free(dense);
	free(ev);
	if (rc) {
		gt_lsum_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

/* coarsest level at most dt / 2 wide, or -1 */
static int pick_level(const struct gt_lsum *m, int64_t dt)
{
	int k = -1;
	for (int j = 0; j < m->nlev && gt_lsum_width(m, j) <= dt / 2; j++)
		k = j;
	return k;
}

int gt_lsum_applies(const struct gt_lsum *m, uint32_t lane, int64_t dt)
{
	return m && lane < m->nlanes && pick_level(m, dt) >= 0;
}

/* floor((t - o) / w) */
static int64_t bucket_of(int64_t t, int64_t o, int64_t w)
{
	__int128 d = (__int128)t - o;   /* both within +-2^62, t a little past */
	__int128 b = d >= 0 ? d / w : -((-d + w - 1) / w);
	return b > INT64_MAX ? INT64_MAX : b < INT64_MIN ? INT64_MIN : (int64_t)b;
}

static void row(int64_t o, int64_t W, const struct gt_lsum_ent *e, size_t n, int64_t ia0,
		int64_t t0, int64_t dt, int ncols, struct gt_bucket *out, uint32_t *kfs,
		uint32_t *name);

int gt_lsum_buckets(const struct gt_lsum *m, uint32_t lane, int64_t t0, int64_t dt, int ncols,
		 struct gt_bucket *out, uint32_t *kfs, uint32_t *name)
{
	if (!gt_lsum_applies(m, lane, dt) || ncols <= 0)
		return 0;
	int k = pick_level(m, dt);
	int64_t W = gt_lsum_width(m, k), o = m->origin_ns;
	const struct gt_lsum_ent *e = m->lane[lane].e[k];
	size_t n = m->lane[lane].n[k];
	/* first entry whose bucket ends after t0 */
	int64_t ia0 = bucket_of(t0, o, W);
	if (lsum_page_level(m, k)) {
		/* the row's buckets from the pages holding them; the pager
		 * is the summary's mutable part (loads and its LRU) */
		struct gt_lsum *mm = (struct gt_lsum *)(uintptr_t)m;
		int64_t end = t0 + (int64_t)ncols * dt;
		int rc = lsum_page_gather(mm, lane, k, ia0, bucket_of(end - 1, o, W), &e, &n);
		if (!rc)
			row(o, W, e, n, ia0, t0, dt, ncols, out, kfs, name);
		lsum_page_unlock(mm);
		return !rc;
	}
	row(o, W, e, n, ia0, t0, dt, ncols, out, kfs, name);
	return 1;
}

/* the columns of a row from a level's entries e[0..n) (rising buckets) */
static void row(int64_t o, int64_t W, const struct gt_lsum_ent *e, size_t n, int64_t ia0,
		int64_t t0, int64_t dt, int ncols, struct gt_bucket *out, uint32_t *kfs,
		uint32_t *name)
{
	size_t p = 0, hi = n;
	while (p < hi) {
		size_t mid = p + (hi - p) / 2;
		if ((int64_t)e[mid].idx < ia0)
			p = mid + 1;
		else
			hi = mid;
	}
	for (int c = 0; c < ncols; c++) {
		int64_t a = t0 + (int64_t)c * dt, b = a + dt;
		int64_t ia = bucket_of(a, o, W);
		while (p < n && (int64_t)e[p].idx < ia)
			p++;
		int64_t busy = 0, bd = -1;
		uint64_t cnt = 0;
		uint32_t bk = UINT32_MAX, bn = UINT32_MAX;
		for (size_t q = p; q < n; q++) {
			int64_t bs = o + (int64_t)e[q].idx * W, be = bs + W;
			if (bs >= b)
				break;
			int64_t x = bs > a ? bs : a, y = be < b ? be : b;
			if (y - x == W)
				busy += e[q].busy_ns;
			else
				busy += (int64_t)((__int128)e[q].busy_ns * (y - x) / W);
			if (bs >= a)
				cnt += e[q].count;
			if (e[q].dom_name != UINT32_MAX && e[q].dom_dur > bd) {
				bd = e[q].dom_dur;
				bk = e[q].dom_kfs;
				bn = e[q].dom_name;
			}
		}
		out[c].busy_ns = busy > dt ? dt : busy;
		out[c].count = cnt > UINT32_MAX ? UINT32_MAX : (uint32_t)cnt;
		out[c].dominant = SIZE_MAX;
		if (kfs)
			kfs[c] = bk;
		if (name)
			name[c] = bn;
	}
}

const struct gt_lsum *gt_store_summary(const struct gt_store *s)
{
	return s->summary;
}

void gt_store_set_summary(struct gt_store *s, struct gt_lsum *m)
{
	if (s->summary != m)
		gt_lsum_free(s->summary);
	s->summary = m;
}

void gt_store_set_span(struct gt_store *s, int64_t t_min, int64_t t_max, size_t n_events)
{
	s->n_events = n_events;
	s->t_min = t_min;
	s->t_max = t_max;
}

void gt_store_swap(struct gt_store *a, struct gt_store *b)
{
	struct gt_store t = *a;
	*a = *b;
	*b = t;
}
