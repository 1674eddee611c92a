/*
 * analysis.c - shared helpers of the step analyses (see analysis.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analysis.h"
#include "../util/sortx.h"

long analysis_lanes(const struct gt_store *s, int32_t rank, int type, int32_t device,
	       uint32_t **out)
{
	size_t nl = gt_store_lane_count(s), n = 0;
	uint32_t *v = malloc((nl ? nl : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < nl; i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type != type || !l->n)
			continue;
		if (rank >= 0 && l->key.rank != rank)
			continue;
		if (type == GT_LANE_GPU && device >= 0 && l->key.device != device)
			continue;
		v[n++] = (uint32_t)i;
	}
	*out = v;
	return (long)n;
}

int analysis_names_init(struct analysis_names *nm, const struct gt_store *s)
{
	nm->s = s;
	nm->n = gt_store_str_count(s);
	nm->cls = calloc(nm->n ? nm->n : 1, 1);
	return nm->cls ? 0 : -ENOMEM;
}

void analysis_names_done(struct analysis_names *nm)
{
	free(nm->cls);
	nm->cls = NULL;
}

static unsigned classify(const char *p)
{
	unsigned c = 0;
	size_t len = strlen(p);
	if (!strncmp(p, "nccl", 4) || strstr(p, "ncclKernel") || strstr(p, "ncclDevKernel"))
		c |= ANALYSIS_NCCL;
	if (!strncmp(p, "enumerate(DataLoader)#", 22) && len >= 9 &&
	    !strcmp(p + len - 9, ".__next__"))
		c |= ANALYSIS_DATALOADER;
	if (!strncmp(p, "ProfilerStep#", 13))
		c |= ANALYSIS_PROFSTEP;
	if (strstr(p, "Launch"))
		c |= ANALYSIS_LAUNCH;
	return c;
}

unsigned analysis_name_class(struct analysis_names *nm, uint32_t name)
{
	if (name >= nm->n)
		return classify(gt_store_str(nm->s, name));
	if (!(nm->cls[name] & 0x80))
		nm->cls[name] = (uint8_t)(0x80 | classify(gt_store_str(nm->s, name)));
	return nm->cls[name] & 0x7f;
}

int analysis_is_comm(struct analysis_names *nm, const struct gt_event *e)
{
	return e->kind == GT_EV_KERNEL &&
	       ((e->flags & GT_EVF_NCCL) || (analysis_name_class(nm, e->name) & ANALYSIS_NCCL));
}

int analysis_is_input(struct analysis_names *nm, const struct gt_event *e)
{
	if (e->kind != GT_EV_CPU_OP && e->kind != GT_EV_PYTHON && e->kind != GT_EV_NVTX)
		return 0;
	return (e->flags & GT_EVF_DATALOADER) || (analysis_name_class(nm, e->name) & ANALYSIS_DATALOADER);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

void analysis_sort_i64(int64_t *v, size_t n)
{
	size_t i = 1;
	while (i < n && v[i - 1] <= v[i])
		i++;
	if (i >= n)
		return;
	if (n < 4096 || sortx_radix_i64(v, n))
		qsort(v, n, sizeof(*v), cmp_i64);
}

double analysis_median_sorted(const int64_t *v, size_t n)
{
	if (!n)
		return 0;
	if (n & 1)
		return (double)v[n / 2];
	return ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2.0;
}

#include "gtrace/report.h"
#include "gtrace/steps.h"

/* first start and last end of the rank's events, as far as they matter
 * once clipped to [r0, r1): only the events of each lane that may overlap
 * the range are read (an event after them starts, so ends, at or after r1;
 * one before them ends by r0) */
static void rank_span(const struct gt_store *s, int32_t rank, int64_t r0, int64_t r1,
		      int64_t *a, int64_t *b)
{
	*a = INT64_MAX;
	*b = INT64_MIN;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (!l->n || l->key.rank != rank || l->key.type == GT_LANE_COUNTER)
			continue;
		if (l->ev[0].start_ns < *a)
			*a = l->ev[0].start_ns;
		size_t first, last;
		gt_store_lane_range(l, r0, r1, &first, &last);
		if (last < l->n)
			*b = INT64_MAX;
		for (size_t k = first; k < last; k++)
			if (gt_event_end(&l->ev[k]) > *b)
				*b = gt_event_end(&l->ev[k]);
	}
}

long analysis_windows(const struct gt_store *s, int32_t rank, const struct gt_steps_list *steps,
		 const struct gt_scope *sc, struct analysis_win **out)
{
	int64_t r0 = sc ? sc->t0_ns : INT64_MIN, r1 = sc ? sc->t1_ns : INT64_MAX;
	size_t n = steps ? steps->n : 0, w = 0;
	struct analysis_win *v = malloc((n ? n : 1) * sizeof(*v));
	*out = NULL;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int64_t a, b;
		if (gt_steps_window(&steps->v[i], sc, &a, &b))
			v[w++] = (struct analysis_win){ steps->v[i].number, a, b, i };
	}
	if (!n && !(sc && sc->step >= 0)) {
		int64_t a, b;
		rank_span(s, rank, r0, r1, &a, &b);
		if (a < r0)
			a = r0;
		if (b > r1)
			b = r1;
		if (a < b)
			v[w++] = (struct analysis_win){ -1, a, b, SIZE_MAX };
	}
	if (!w) {
		free(v);
		return 0;
	}
	*out = v;
	return (long)w;
}

/* ranks of the scope (all, or sc->rank when present); count or -errno */
long analysis_scope_ranks(const struct gt_store *s, const struct gt_scope *sc, int32_t **out)
{
	long n = gt_steps_ranks(s, out);
	if (n <= 0 || sc->rank < 0)
		return n;
	long w = 0;
	for (long i = 0; i < n; i++)
		if ((*out)[i] == sc->rank)
			(*out)[w++] = (*out)[i];
	return w;
}


static inline size_t cm_slot(uint32_t k)
{
	return (size_t)(k * 2654435761u);
}

static int is_launch_ev(const struct gt_event *e)
{
	return (e->kind == GT_EV_RUNTIME || e->kind == GT_EV_DRIVER) && e->corr;
}

static int has_launch(const struct gt_lane *l)
{
	return ((l->kinds_mask >> GT_EV_RUNTIME) & 1) || ((l->kinds_mask >> GT_EV_DRIVER) & 1);
}

/* a dense map's arrays for `range` slots: under a budget, when they would
 * take a sixteenth of it, in a spill of their own (an eighth of the budget
 * mapped at most; a one-rank capture of 50 M events had 267 MB of it on the
 * heap); else, or when no spill can be had, the heap */
static int cm_dense(const struct gt_store *s, struct analysis_corrmap *m, size_t range)
{
	size_t vb = range * sizeof(*m->val), pb = (range / 64 + 1) * sizeof(*m->present);
	size_t budget = gt_store_budget(s);
	m->dense = 1;
	m->mask = range;    /* dense: number of slots */
	if (budget && vb >= budget / 16 && spill_new(budget / 8, &m->sp) == 0) {
		m->val = spill_alloc(m->sp, vb);
		m->present = m->val ? spill_alloc(m->sp, pb) : NULL;
		if (m->present)
			return 0;
		spill_free(m->sp);
		m->sp = NULL;
		m->val = NULL;
		m->present = NULL;
	}
	/* read only where present */
	m->val = analysis_mem_get(vb, &m->val_bytes);
	m->present = calloc(range / 64 + 1, sizeof(*m->present));
	if (!m->val || !m->present) {
		analysis_corrmap_done(m);
		return -ENOMEM;
	}
	return 0;
}

static void cm_put(struct analysis_corrmap *m, uint32_t k, int64_t t0, int64_t t1)
{
	size_t i;
	if (m->dense) {
		i = k - m->base;
		if (m->sp)
			spill_touch_walk(m->sp, &m->pg, i * sizeof(*m->val));
		m->present[i >> 6] |= 1ull << (i & 63);
	} else {
		i = cm_slot(k) & m->mask;
		while (m->key[i] && m->key[i] != k)
			i = (i + 1) & m->mask;
		m->key[i] = k;
	}
	m->val[i].t0 = t0;
	m->val[i].t1 = t1;
}

int analysis_corrmap_build(const struct gt_store *s, const uint32_t *hl, size_t nh,
		      struct analysis_corrmap *m)
{
	return analysis_corrmap_build_range(s, hl, nh, 1, UINT32_MAX, m);
}

int analysis_corrmap_build_range(const struct gt_store *s, const uint32_t *hl, size_t nh,
			    uint32_t want_lo, uint32_t want_hi, struct analysis_corrmap *m)
{
	size_t cnt = 0;
	uint32_t lo = UINT32_MAX, hi = 0;
	memset(m, 0, sizeof(*m));
	for (size_t k = 0; k < nh; k++) {
		const struct gt_lane *l = gt_store_lane_at(s, hl[k]);
		if (!has_launch(l))
			continue;
		for (size_t i = 0; i < l->n; i++) {
			gt_store_read_walk(s, l, 0, i, l->n);
			const struct gt_event *e = &l->ev[i];
			if (e->corr < want_lo || e->corr > want_hi || !is_launch_ev(e))
				continue;
			cnt++;
			if (e->corr < lo)
				lo = e->corr;
			if (e->corr > hi)
				hi = e->corr;
		}
	}
	if (!cnt)
		return 0;
	size_t range = (size_t)(hi - lo) + 1;
	if (range <= 4 * cnt + 1024) {
		m->base = lo;
		if (cm_dense(s, m, range))
			return -ENOMEM;
	} else {
		size_t cap = 64;
		while (cap < cnt * 2)
			cap <<= 1;
		m->key = calloc(cap, sizeof(*m->key));
		m->val = analysis_mem_get(cap * sizeof(*m->val), &m->val_bytes);
		m->mask = cap - 1;
		if (!m->key || !m->val) {
			analysis_corrmap_done(m);
			return -ENOMEM;
		}
	}
	m->n = cnt;
	for (size_t k = 0; k < nh; k++) {
		const struct gt_lane *l = gt_store_lane_at(s, hl[k]);
		if (!has_launch(l))
			continue;
		for (size_t i = 0; i < l->n; i++) {
			gt_store_read_walk(s, l, 0, i, l->n);
			const struct gt_event *e = &l->ev[i];
			if (e->corr >= want_lo && e->corr <= want_hi && is_launch_ev(e))
				cm_put(m, e->corr, e->start_ns, gt_event_end(e));
		}
	}
	return 0;
}

int analysis_corrmap_build_scope(const struct gt_store *s, const uint32_t *hl, size_t nh,
			    uint32_t lo, uint32_t hi, size_t hint, int64_t t1,
			    struct analysis_corrmap *m)
{
	memset(m, 0, sizeof(*m));
	if (lo > hi)
		return 0;
	size_t range = (size_t)(hi - lo) + 1;
	if (range > 4 * hint + 1024)
		return analysis_corrmap_build_range(s, hl, nh, lo, hi, m);
	m->base = lo;
	if (cm_dense(s, m, range))
		return -ENOMEM;
	for (size_t k = 0; k < nh; k++) {
		const struct gt_lane *l = gt_store_lane_at(s, hl[k]);
		if (!has_launch(l))
			continue;
		size_t first, last;
		gt_store_lane_range(l, INT64_MIN, t1, &first, &last);
		/* backwards from the scope's end: a thread's correlation ids grow with
		 * time, so the first launch below lo ends the scan */
		for (size_t i = last; i-- > 0;) {
			if ((last - 1 - i) % GT_READ_RUN == 0)   /* runs going down */
				gt_store_read_tick(s, l, i + 1 > GT_READ_RUN ? i + 1 - GT_READ_RUN : 0, i + 1);
			const struct gt_event *e = &l->ev[i];
			if (!is_launch_ev(e))
				continue;
			if (e->corr < lo)
				break;
			if (e->corr <= hi) {
				cm_put(m, e->corr, e->start_ns, gt_event_end(e));
				m->n++;
			}
		}
	}
	return 0;
}

const struct analysis_launch *analysis_corrmap_get_hashed(const struct analysis_corrmap *m, uint32_t corr)
{
	size_t i = cm_slot(corr) & m->mask;
	while (m->key[i]) {
		if (m->key[i] == corr)
			return &m->val[i];
		i = (i + 1) & m->mask;
	}
	return NULL;
}

void analysis_corrmap_done(struct analysis_corrmap *m)
{
	if (m->sp) {
		spill_free(m->sp);   /* val and present with it */
		memset(m, 0, sizeof(*m));
		return;
	}
	free(m->present);
	free(m->key);
	analysis_mem_put(m->val, m->val_bytes);
	memset(m, 0, sizeof(*m));
}

int64_t analysis_select_i64(int64_t *v, size_t n, size_t k)
{
	return sortx_select_i64(v, n, k);
}

#define MED_BITS 11

/* median of a 2-element middle: lo + (hi - lo) / 2 (no overflow) */
static inline int64_t mid2(int64_t lo, int64_t hi)
{
	return lo + (hi - lo) / 2;
}

int64_t analysis_median_i64(int64_t *v, size_t n)
{
	if (!n)
		return 0;
	/* the middle ranks: k1 == k2 when n is odd */
	size_t k1 = (n - 1) / 2, k2 = n / 2;
	size_t cnt[1u << MED_BITS];
	while (n > 256) {   /* MSD radix select: keep only the bucket holding k1 */
		int64_t mn = v[0], mx = v[0];
		for (size_t i = 1; i < n; i++) {
			mn = v[i] < mn ? v[i] : mn;
			mx = v[i] > mx ? v[i] : mx;
		}
		if (mn == mx)
			return mn;
		uint64_t range = (uint64_t)mx - (uint64_t)mn;
		int bits = 64 - __builtin_clzll(range);
		int sh = bits > MED_BITS ? bits - MED_BITS : 0;
		memset(cnt, 0, sizeof(cnt));
		for (size_t i = 0; i < n; i++)
			cnt[((uint64_t)v[i] - (uint64_t)mn) >> sh]++;
		size_t cum = 0, b1 = SIZE_MAX, b2 = 0, c1 = 0;
		for (size_t b = 0; b < (1u << MED_BITS); b++) {
			if (b1 == SIZE_MAX && k1 < cum + cnt[b]) {
				b1 = b;
				c1 = cum;
			}
			if (k2 < cum + cnt[b]) {
				b2 = b;
				break;
			}
			cum += cnt[b];
		}
		if (b1 != b2) {     /* k1 ends bucket b1, k2 starts bucket b2 */
			int64_t lo = INT64_MIN, hi = INT64_MAX;
			for (size_t i = 0; i < n; i++) {
				size_t b = ((uint64_t)v[i] - (uint64_t)mn) >> sh;
				if (b == b1 && v[i] > lo)
					lo = v[i];
				else if (b == b2 && v[i] < hi)
					hi = v[i];
			}
			return mid2(lo, hi);
		}
		size_t w = 0;
		for (size_t i = 0; i < n; i++)
			if ((((uint64_t)v[i] - (uint64_t)mn) >> sh) == b1)
				v[w++] = v[i];
		if (!sh)                /* one value per bucket */
			return v[0];
		n = w;
		k1 -= c1;
		k2 -= c1;
	}
	int64_t hi = analysis_select_i64(v, n, k2);
	if (k1 == k2)
		return hi;
	int64_t lo = v[0];
	for (size_t i = 1; i < k2; i++)   /* max of the lower part */
		if (v[i] > lo)
			lo = v[i];
	return mid2(lo, hi);
}

void analysis_scope_or_all(struct gt_scope *sc, const struct gt_scope *in)
{
	if (in)
		*sc = *in;
	else
		gt_scope_all(sc);
}
