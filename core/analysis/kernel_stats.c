/*
 * kernel_stats.c - per-name duration statistics: the accumulators and the scan.
 *
 * Each group (name, or name and kind, or copy kind) gets an accumulator:
 * the durations themselves (sum, min, max, the exact median and a two-pass
 * standard deviation are taken from them at finish), the most common launch
 * configuration (a small list of candidates checked last-hit first) and a
 * bit set of the GPUs that ran it.  Groups are found through a direct array
 * indexed by key (string id x classes), so an event costs a few loads.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel_stats_priv.h"
#include "../util/spill.h"


/* vectors of this many bytes or more live in the spill when there is one
 * (a group's heap vector stays under 64 KiB: 1,000 names take 32-64 MB) */
#define SPILL_VEC_BYTES ((size_t)64 << 10)

void kernel_stats_touch(struct spill *sp, const int64_t *v, size_t n)
{
	if (sp && spill_owns(sp, v))
		spill_touch(sp, n * sizeof(*v));
}

void kernel_stats_vec_free(struct spill *sp, struct vec *v)
{
	if (spill_owns(sp, v->v))
		spill_release(sp, v->v, v->cap * sizeof(*v->v));
	else
		free(v->v);
	v->v = NULL;
	v->n = v->cap = 0;
}

static int vec_grow(struct spill *sp, struct vec *v)
{
	size_t cap = v->cap ? v->cap * 2 : 64;
	if (sp && cap * sizeof(*v->v) >= SPILL_VEC_BYTES) {
		/* under a budget: a big vector moves to (or grows in) the spill,
		 * or to the heap when the spill's disk is full; the copy is
		 * announced to the spill (both sides, wherever they live) */
		int64_t *nv = spill_alloc(sp, cap * sizeof(*nv));
		if (!nv)
			nv = malloc(cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		for (size_t b = 0; b < v->n; b += KS_BLOCK) {
			size_t k = kernel_stats_blk_end(b, v->n) - b;
			kernel_stats_touch(sp, v->v + b, k);
			kernel_stats_touch(sp, nv + b, k);
			memcpy(nv + b, v->v + b, k * sizeof(*nv));
		}
		size_t n = v->n;
		kernel_stats_vec_free(sp, v);
		v->v = nv;
		v->n = n;
		v->cap = cap;
		return 0;
	}
	int64_t *nv = realloc(v->v, cap * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	v->v = nv;
	v->cap = cap;
	return 0;
}

/* pushes announce each 64 KiB they are about to write to a spill vector
 * (vectors there are 64 KiB or more): what many groups filling at once
 * have written unannounced stays under 64 KiB a vector */
#define PUSH_STEP ((size_t)8192)

static inline int vec_push(struct spill *sp, struct vec *v, int64_t x)
{
	if (v->n == v->cap && vec_grow(sp, v))
		return -ENOMEM;
	if (sp && !(v->n & (PUSH_STEP - 1)))
		kernel_stats_touch(sp, v->v + v->n, PUSH_STEP);
	v->v[v->n++] = x;
	return 0;
}

__extension__ typedef __int128 kernel_stats_i128;

/* summary of values spread over the segments of a group; sums are exact
 * in 128 bits and saturate where they leave int64 (sum) or uint64 (usum) */
struct dist {
	int64_t sum, min, max;
	uint64_t usum;
	int usum_sat;            /* the true sum is beyond uint64 (or negative) */
	double mean, sd, med;
};

/* sum, min, max, mean, sample standard deviation (n - 1; 0 for one value)
 * and exact median of the values in segs[0..nseg) (n values in all) */
static void dist_of(struct spill *sp, struct vec *const *segs, int nseg, size_t n, struct dist *d)
{
	kernel_stats_i128 sum = 0;
	d->min = INT64_MAX;
	d->max = INT64_MIN;
	for (int k = 0; k < nseg; k++)
		for (size_t b = 0; b < segs[k]->n; b += KS_BLOCK) {
			const int64_t *v = segs[k]->v;
			size_t e = kernel_stats_blk_end(b, segs[k]->n);
			kernel_stats_touch(sp, v + b, e - b);
			for (size_t i = b; i < e; i++) {
				int64_t x = v[i];
				sum += x;
				d->min = x < d->min ? x : d->min;
				d->max = x > d->max ? x : d->max;
			}
		}
	d->sum = sum > INT64_MAX ? INT64_MAX : sum < INT64_MIN ? INT64_MIN : (int64_t)sum;
	d->usum_sat = sum < 0 || sum > (kernel_stats_i128)UINT64_MAX;
	d->usum = sum < 0 ? 0 : d->usum_sat ? UINT64_MAX : (uint64_t)sum;
	d->mean = (double)sum / (double)n;
	double ss = 0;
	for (int k = 0; k < nseg; k++)
		for (size_t b = 0; b < segs[k]->n; b += KS_BLOCK) {
			const int64_t *v = segs[k]->v;
			size_t e = kernel_stats_blk_end(b, segs[k]->n);
			kernel_stats_touch(sp, v + b, e - b);
			for (size_t i = b; i < e; i++) {
				double x = (double)v[i] - d->mean;
				ss += x * x;
			}
		}
	d->sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	int64_t *sv[2];
	size_t sn[2];
	for (int k = 0; k < nseg && k < 2; k++) {
		sv[k] = segs[k]->v;
		sn[k] = segs[k]->n;
	}
	d->med = kernel_stats_median_segs(sp, sv, sn, nseg < 2 ? nseg : 2);
}

int gt_kernel_stats_lane_in_scope(const struct gt_lane *l, const struct gt_scope *sc)
{
	int32_t rank = l->key.rank;
	if (sc->rank >= 0 && rank != sc->rank)
		return 0;
	if (sc->gpu >= 0 && l->key.type == GT_LANE_GPU && l->key.device != sc->gpu)
		return 0;
	return 1;
}

void gt_kernel_stats_lane_starts(const struct gt_lane *l, int64_t t0, int64_t t1,
			size_t *first, size_t *last)
{
	*first = t0 == INT64_MIN ? 0 : gt_store_lane_lower_start(l, t0);
	*last = t1 == INT64_MAX ? l->n : gt_store_lane_lower_start(l, t1);
	if (*last < *first)
		*last = *first;
}

/* index of the lane's GPU in r->gpus (adding it), -1 when host or overflow */
int kernel_stats_gpu_slot(struct gt_kernel_stats_result *r, const struct gt_lane *l)
{
	if (l->key.type != GT_LANE_GPU)
		return -1;
	int32_t rank = l->key.rank;
	for (size_t i = 0; i < r->ngpus; i++)
		if (r->gpus[i].rank == rank && r->gpus[i].device == l->key.device)
			return (int)i;
	if (r->ngpus == GT_KERNEL_STATS_MAX_GPUS) {
		r->gpus_overflow = 1;
		return -1;
	}
	r->gpus[r->ngpus].rank = rank;
	r->gpus[r->ngpus].device = l->key.device;
	return (int)r->ngpus++;
}

void kernel_stats_count_kconf(struct acc *a, uint32_t k)
{
	if (a->ncand && a->cand[a->last] == k) {
		a->cand_n[a->last]++;
		return;
	}
	for (uint32_t i = 0; i < a->ncand; i++)
		if (a->cand[i] == k) {
			a->cand_n[i]++;
			a->last = i;
			return;
		}
	if (a->ncand < NCAND) {
		a->cand[a->ncand] = k;
		a->cand_n[a->ncand] = 1;
		a->last = a->ncand++;
	} else {
		a->nkconf_extra++;
	}
}


/* the accumulator of key, created on first use; NULL on ENOMEM */
struct acc *kernel_stats_get_acc(struct ctx *c, uint64_t key)
{
	uint32_t si = key < c->nkeys ? c->slot[key] : 0;
	if (si)
		return &c->accs[si - 1];
	if (key >= c->nkeys)
		return NULL;            /* cannot happen: string ids < count */
	if (c->nacc == c->capacc) {
		size_t cap = c->capacc ? c->capacc * 2 : 64;
		struct acc *na = realloc(c->accs, cap * sizeof(*na));
		if (!na)
			return NULL;
		c->accs = na;
		c->capacc = cap;
	}
	struct acc *a = &c->accs[c->nacc];
	memset(a, 0, sizeof(*a));
	a->key = key;
	c->slot[key] = (uint32_t)++c->nacc;
	return a;
}

/* accumulate events [first, last) of one lane for one grouping; inlined
 * with constant group/want_bytes so each case gets its own tight loop.
 * Sum, min and max are taken from the duration vector at finish. */
static inline __attribute__((always_inline)) int
scan_lane_g(struct ctx *c, const struct gt_lane *l, size_t first, size_t last, uint64_t gbit,
	    int group, int want_bytes, const int64_t *wt, size_t wn)
{
	size_t wi = 0;
	uint32_t mask = c->o->kinds_mask;
	struct acc *a = NULL;
	uint64_t akey = UINT64_MAX;
	const struct gt_event *ev = l->ev;
	for (size_t i = first; i < last; i++) {
		const struct gt_event *e = &ev[i];
		if (!(mask & (1u << e->kind)))
			continue;
		uint64_t key;
		if (group == GT_KERNEL_STATS_BY_COPY_KIND)
			key = e->kind == GT_EV_MEMSET ? GT_KERNEL_STATS_CLS_MEMSET :
			      e->sub < GT_COPY_KIND_COUNT ? e->sub : GT_COPY_UNKNOWN;
		else if (group == GT_KERNEL_STATS_BY_NAME_KIND)
			key = (uint64_t)e->name * GT_EV_KIND_COUNT + e->kind;
		else
			key = e->name;
		if (key != akey) {
			uint32_t si = key < c->nkeys ? c->slot[key] : 0;
			if (si) {
				a = &c->accs[si - 1];
			} else {
				/* pointer may move when accs grows: only here */
				a = kernel_stats_get_acc(c, key);
				if (!a)
					return -ENOMEM;
			}
			akey = key;
			a->gpu_mask |= gbit;
		}
		if (vec_push(c->sp, &a->dur, e->dur_ns))
			return -ENOMEM;
		if (wt) {
			/* windows sorted, events sorted by start: one forward walk */
			while (wi < wn && wt[2 * wi + 1] <= e->start_ns)
				wi++;
			if (wi < wn && e->start_ns >= wt[2 * wi])
				a->win_ns += e->dur_ns;
		}
		if (want_bytes && vec_push(c->sp, &a->bytes, (int64_t)e->arg))
			return -ENOMEM;
		if (e->kind == GT_EV_KERNEL) {
			uint32_t k = gt_event_kconf(e);
			if (a->ncand && a->cand[a->last] == k)
				a->cand_n[a->last]++;
			else
				kernel_stats_count_kconf(a, k);
		}
	}
	return 0;
}

/* one run of a lane's events, read as one tick */
static int scan_run(struct ctx *c, const struct gt_lane *l, size_t first, size_t last, uint64_t gbit,
		    const int64_t *wt, size_t wn)
{
	int wb = (c->o->flags & GT_KERNEL_STATS_WANT_BYTES) != 0;
	gt_store_read_tick(c->s, l, first, last);
	switch (c->o->group) {
	case GT_KERNEL_STATS_BY_COPY_KIND:
		return scan_lane_g(c, l, first, last, gbit, GT_KERNEL_STATS_BY_COPY_KIND, wb, wt, wn);
	case GT_KERNEL_STATS_BY_NAME_KIND:
		return scan_lane_g(c, l, first, last, gbit, GT_KERNEL_STATS_BY_NAME_KIND, wb, wt, wn);
	default:
		if (wb)
			return scan_lane_g(c, l, first, last, gbit, GT_KERNEL_STATS_BY_NAME, 1, wt, wn);
		if (wt)
			return scan_lane_g(c, l, first, last, gbit, GT_KERNEL_STATS_BY_NAME, 0, wt, wn);
		return scan_lane_g(c, l, first, last, gbit, GT_KERNEL_STATS_BY_NAME, 0, NULL, 0);
	}
}

int kernel_stats_scan(struct ctx *c, const struct gt_lane *l, size_t first, size_t last,
		     uint64_t gbit, const int64_t *wt, size_t wn)
{
	/* run by run (gt_store_read_walk's runs): under a budget a tick
	 * over a long range maps all of it before the next check */
	for (size_t i = first; i < last; i += GT_READ_RUN) {
		int rc = scan_run(c, l, i, last - i > GT_READ_RUN ? i + GT_READ_RUN : last, gbit, wt, wn);
		if (rc)
			return rc;
	}
	return 0;
}

int kernel_stats_row_cmp(const void *pa, const void *pb, void *arg)
{
	const struct gt_kernel_stats_row *a = pa, *b = pb;
	const struct gt_store *s = arg;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	int r = strcmp(gt_store_str(s, a->name), gt_store_str(s, b->name));
	if (r)
		return r;
	return (a->cls > b->cls) - (a->cls < b->cls);
}

/* turn an accumulator into a row, freeing its vectors */
void kernel_stats_finish_row(const struct ctx *c, struct acc *a, struct gt_kernel_stats_row *row)
{
	memset(row, 0, sizeof(*row));
	uint64_t n = a->dur.n + a->dur2.n;
	switch (c->o->group) {
	case GT_KERNEL_STATS_BY_COPY_KIND:
		row->cls = (uint32_t)a->key;
		break;
	case GT_KERNEL_STATS_BY_NAME_KIND:
		row->name = (uint32_t)(a->key / GT_EV_KIND_COUNT);
		row->cls = (uint32_t)(a->key % GT_EV_KIND_COUNT);
		break;
	default:
		row->name = (uint32_t)a->key;
	}
	row->count = n;
	struct vec *segs[2] = { &a->dur, &a->dur2 };
	int nseg = a->dur2.n ? 2 : 1;
	struct dist d;
	dist_of(c->sp, segs, nseg, n, &d);
	row->total_ns = d.sum;
	row->min_ns = d.min;
	row->max_ns = d.max;
	row->avg_ns = d.mean;
	row->stddev_ns = d.sd;
	row->med_ns = d.med;
	if (c->o->flags & GT_KERNEL_STATS_WANT_BYTES) {
		struct vec *bsegs[2] = { &a->bytes, &a->bytes2 };
		dist_of(c->sp, bsegs, nseg, n, &d);
		row->bytes_total = d.usum;
		row->bytes_total_sat = d.usum_sat;
		row->bytes_min = d.min;
		row->bytes_max = d.max;
		row->bytes_avg = d.mean;
		row->bytes_stddev = d.sd;
		row->bytes_med = d.med;
	}
	uint32_t best = 0;
	for (uint32_t i = 0; i < a->ncand; i++)
		if (a->cand_n[i] > a->cand_n[best] ||
		    (a->cand_n[i] == a->cand_n[best] && a->cand[i] < a->cand[best]))
			best = i;
	row->kconf = a->ncand ? a->cand[best] : 0;
	/* distinct known configurations (id 0 = unknown is none): exact up to
	 * NCAND; NCAND + 1 means "more" (nkconf_extra counts instances) */
	uint32_t nk = 0;
	for (uint32_t i = 0; i < a->ncand; i++)
		nk += a->cand[i] != 0;
	row->nkconf = a->nkconf_extra ? NCAND + 1 : nk;
	row->gpu_mask = a->gpu_mask;
	row->in_windows_ns = a->win_ns;
	if (c->o->group != GT_KERNEL_STATS_BY_COPY_KIND)
		row->tc = gt_kernel_stats_is_tensor_core(gt_store_str(c->s, row->name));
	kernel_stats_vec_free(c->sp, &a->dur);
	kernel_stats_vec_free(c->sp, &a->bytes);
	kernel_stats_vec_free(c->sp, &a->dur2);
	kernel_stats_vec_free(c->sp, &a->bytes2);
}
