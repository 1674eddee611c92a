/*
 * mem_usage.c - memory usage from allocator records (gtrace/mem_usage.h has the
 * rules).  The records of every host lane are gathered, sorted by (rank,
 * device, time) and walked with a running sum; each (rank, device) run of
 * the sorted array is one struct gt_mem_usage_dev.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/mem_usage.h"
#include "gtrace/steps.h"
#include "analysis.h"

struct rec {
	int64_t t, b;
	int32_t rank;
	uint32_t dev, lane, idx;
};

static int by_time(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

struct grp {
	int32_t rank;
	uint32_t dev;
	size_t n, at;
};

static int is_rec(const struct gt_event *e, uint32_t dev)
{
	return e->kind == GT_EV_INSTANT && (e->flags & GT_EVF_MEMORY) &&
	       (dev == UINT32_MAX || e->aux == dev);
}

/* records of rank (-1 = all) and device (UINT32_MAX = all), sorted by
 * (rank, device, time): grouped by a counting pass (few groups), a group
 * sorted only when its records came out of time order (several threads);
 * count or negative errno */
static long gather(const struct gt_store *s, int32_t rank, uint32_t dev, struct rec **out)
{
	struct grp g[64];
	size_t ng = 0, n = 0;
	*out = NULL;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < gt_store_lane_count(s); i++) {
			const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
			int32_t r = l->key.rank;
			if (l->key.type != GT_LANE_HOST || !(l->kinds_mask & (1u << GT_EV_INSTANT)) ||
			    (rank >= 0 && r != rank))
				continue;
			size_t k = 0;
			for (size_t j = 0; j < l->n; j++) {
				gt_store_read_walk(s, l, 0, j, l->n);
				const struct gt_event *e = &l->ev[j];
				if (!is_rec(e, dev))
					continue;
				if (k >= ng || g[k].rank != r || g[k].dev != e->aux)
					for (k = 0; k < ng && (g[k].rank != r || g[k].dev != e->aux); k++)
						;
				if (k == ng) {
					if (pass || ng == 64)
						return -E2BIG;
					g[ng++] = (struct grp){ .rank = r, .dev = e->aux };
				}
				if (!pass) {
					g[k].n++;
					continue;
				}
				struct rec *x = &(*out)[g[k].at++];
				x->t = e->start_ns;
				memcpy(&x->b, &e->arg, sizeof(x->b));
				x->rank = r;
				x->dev = e->aux;
				x->lane = (uint32_t)i;
				x->idx = (uint32_t)j;
			}
		}
		if (pass)
			break;
		/* groups in (rank, device) order, then their places */
		for (size_t a = 1; a < ng; a++)
			for (size_t b = a; b > 0 && (g[b - 1].rank > g[b].rank ||
			     (g[b - 1].rank == g[b].rank && g[b - 1].dev > g[b].dev)); b--) {
				struct grp t = g[b];
				g[b] = g[b - 1];
				g[b - 1] = t;
			}
		for (size_t a = 0; a < ng; a++) {
			g[a].at = n;
			n += g[a].n;
		}
		if (!n)
			return 0;
		*out = malloc(n * sizeof(**out));
		if (!*out)
			return -ENOMEM;
	}
	for (size_t a = 0; a < ng; a++) {
		struct rec *v = *out + (g[a].at - g[a].n);
		for (size_t i = 1; i < g[a].n; i++)
			if (by_time(&v[i - 1], &v[i]) > 0) {
				qsort(v, g[a].n, sizeof(*v), by_time);
				break;
			}
	}
	return (long)n;
}

/* the innermost CPU op of lane open at t (latest start, then shortest); 0 = none */
static uint32_t op_at(const struct gt_store *s, uint32_t lane, int64_t t)
{
	const struct gt_lane *l = gt_store_lane_at(s, lane);
	size_t a, b;
	gt_store_lane_range(l, t, t + 1, &a, &b);
	const struct gt_event *best = NULL;
	for (size_t i = a; i < b; i++) {
		const struct gt_event *e = &l->ev[i];
		if (e->kind != GT_EV_CPU_OP || e->start_ns > t || gt_event_end(e) <= t)
			continue;
		if (!best || e->start_ns > best->start_ns ||
		    (e->start_ns == best->start_ns && e->dur_ns < best->dur_ns))
			best = e;
	}
	return best ? best->name : 0;
}

/* first index in v[0..n) with t >= x */
static size_t lower(const struct rec *v, size_t n, int64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (v[m].t < x)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

/* per-step figures of one device's records (cum: running sums); 0 or -ENOMEM */
static int dev_steps(const struct gt_steps_list *l, const struct rec *v, const int64_t *cum,
		     size_t n, const struct gt_scope *sc, struct gt_mem_usage_dev *d)
{
	d->steps = calloc(l->n ? l->n : 1, sizeof(*d->steps));
	if (!d->steps)
		return -ENOMEM;
	for (size_t k = 0; k < l->n; k++) {
		int64_t h0 = l->v[k].host_t0_ns, h1 = l->v[k].host_t1_ns;
		if (h1 <= sc->t0_ns || h0 >= sc->t1_ns)
			continue;
		size_t a = lower(v, n, h0), b = lower(v, n, h1);
		struct gt_mem_usage_step *st = &d->steps[d->nsteps++];
		st->number = l->v[k].number;
		st->start_bytes = a ? cum[a - 1] : 0;
		st->end_bytes = b ? cum[b - 1] : 0;
		st->peak_bytes = st->start_bytes;
		for (size_t i = a; i < b; i++)
			if (cum[i] > st->peak_bytes)
				st->peak_bytes = cum[i];
		if (d->peak_step < 0 && d->peak_ns >= h0 && d->peak_ns < h1 && d->records)
			d->peak_step = st->number;
		if (d->total_peak_step < 0 && d->total_samples[0] && d->total_peak_ns[0] >= h0 &&
		    d->total_peak_ns[0] < h1)
			d->total_peak_step = st->number;
	}
	return 0;
}

/* the Total Allocated / Total Reserved counter samples of d's rank and
 * device in scope: counts, first peaks, last values */
static void totals(const struct gt_store *s, const struct gt_scope *sc, struct gt_mem_usage_dev *d)
{
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type != GT_LANE_COUNTER || l->key.rank != d->rank || !l->n)
			continue;
		const struct gt_event *f = &l->ev[0];
		if (!(f->flags & GT_EVF_MEMORY) || f->aux != d->device || f->sub > 1)
			continue;
		for (size_t j = 0; j < l->n; j++) {
			gt_store_read_walk(s, l, 0, j, l->n);
			const struct gt_event *e = &l->ev[j];
			if (e->kind != GT_EV_COUNTER || !(e->flags & GT_EVF_MEMORY) ||
			    e->aux != d->device || e->sub > 1 || e->start_ns < sc->t0_ns ||
			    e->start_ns >= sc->t1_ns)
				continue;
			double x;
			memcpy(&x, &e->arg, sizeof(x));
			int64_t v = (int64_t)x;
			int k = e->sub;
			/* a lane is one series in time order; two lanes of one series
			   (two pids of a rank) keep the later sample as the end */
			if (!d->total_samples[k] || v > d->total_peak[k] ||
			    (v == d->total_peak[k] && e->start_ns < d->total_peak_ns[k])) {
				d->total_peak[k] = v;
				d->total_peak_ns[k] = e->start_ns;
			}
			if (!d->total_samples[k]++ || e->start_ns >= d->total_end_ns[k]) {
				d->total_end[k] = v;
				d->total_end_ns[k] = e->start_ns;
			}
		}
	}
}

/* one (rank, device) run v[0..n); 0 or negative errno */
static int one_dev(const struct gt_store *s, const struct gt_scope *sc, const struct rec *v,
		   size_t n, struct gt_mem_usage_dev *d)
{
	memset(d, 0, sizeof(*d));
	d->rank = v[0].rank;
	d->device = v[0].dev;
	d->peak_step = -1;
	int64_t *cum = malloc(n * sizeof(*cum));
	if (!cum)
		return -ENOMEM;
	int64_t sum = 0;
	size_t peak_i = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		sum += v[i].b;
		cum[i] = sum;
		if (v[i].t < sc->t0_ns || v[i].t >= sc->t1_ns)
			continue;
		d->records++;
		if (v[i].b > 0) {
			d->allocs++;
			d->alloc_bytes += v[i].b;
		} else if (v[i].b < 0) {
			d->frees++;
			d->free_bytes -= v[i].b;
		}
		if (peak_i == SIZE_MAX || sum > d->peak_bytes) {
			d->peak_bytes = sum;
			peak_i = i;
		}
		d->end_bytes = sum;
	}
	if (peak_i != SIZE_MAX) {
		d->peak_ns = v[peak_i].t;
		d->peak_op = op_at(s, v[peak_i].lane, v[peak_i].t);
	}
	d->total_peak_step = -1;
	totals(s, sc, d);
	if (d->total_samples[0]) {
		/* the record the peak sample came with: same time, this device */
		size_t k = lower(v, n, d->total_peak_ns[0]);
		if (k < n && v[k].t == d->total_peak_ns[0])
			d->total_peak_op = op_at(s, v[k].lane, v[k].t);
	}
	struct gt_steps_list l;
	char err[128];
	int rc = 0;
	if (!gt_steps_find(s, d->rank, NULL, &l, err, sizeof(err))) {
		rc = dev_steps(&l, v, cum, n, sc, d);
		gt_steps_list_done(&l);
	}
	free(cum);
	return rc;
}

int gt_mem_usage_compute(const struct gt_store *s, const struct gt_scope *sc_in, struct gt_mem_usage_result *out,
		 char *err, size_t errlen)
{
	struct gt_scope sc;
	analysis_scope_or_all(&sc, sc_in);
	memset(out, 0, sizeof(*out));
	struct rec *v = NULL;
	long n = gather(s, sc.rank, UINT32_MAX, &v);
	int rc = n < 0 ? (int)n : 0;
	if (rc == -E2BIG)
		snprintf(err, errlen, "memory-usage: more than 64 (rank, device) pairs with "
			 "allocator records");
	for (long i = 0; i < n && !rc;) {
		long j = i;
		while (j < n && v[j].rank == v[i].rank && v[j].dev == v[i].dev)
			j++;
		if (sc.gpu < 0 || v[i].dev == GT_MEM_HOST || v[i].dev == (uint32_t)sc.gpu) {
			struct gt_mem_usage_dev *nd = realloc(out->dev, (out->n + 1) * sizeof(*nd));
			if (!nd) {
				rc = -ENOMEM;
				break;
			}
			out->dev = nd;
			rc = one_dev(s, &sc, &v[i], (size_t)(j - i), &out->dev[out->n]);
			out->n++;
		}
		i = j;
	}
	free(v);
	if (rc) {
		gt_mem_usage_result_done(out);
		if (rc != -E2BIG)
			snprintf(err, errlen, "memory-usage: out of memory");
	}
	return rc;
}

void gt_mem_usage_result_done(struct gt_mem_usage_result *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->dev[i].steps);
	free(r->dev);
	memset(r, 0, sizeof(*r));
}

int gt_mem_usage_series(const struct gt_store *s, int32_t rank, uint32_t device, int64_t t0,
		int64_t dt, size_t n, int64_t *out)
{
	struct rec *v = NULL;
	long m = gather(s, rank, device, &v);
	if (m < 0)
		return (int)m;
	int64_t sum = 0;
	size_t i = 0;
	for (size_t c = 0; c < n; c++) {
		int64_t end = t0 + (int64_t)(c + 1) * dt;
		while (i < (size_t)m && v[i].t < t0 + (int64_t)c * dt)
			sum += v[i++].b;
		int64_t hi = sum;
		while (i < (size_t)m && v[i].t < end) {
			sum += v[i++].b;
			if (sum > hi)
				hi = sum;
		}
		out[c] = hi;
	}
	free(v);
	return 0;
}
