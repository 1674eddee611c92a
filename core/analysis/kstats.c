/*
 * kstats.c - per-name duration statistics in one pass over the store.
 *
 * Each group (name, or name and kind, or copy kind) gets an accumulator:
 * count, sum, min, max, the durations themselves (for the exact median by
 * quickselect and a two-pass standard deviation), the most common launch
 * configuration (a small list of candidates checked last-hit first) and a
 * bit set of the GPUs that ran it.  Groups are found through a direct array
 * indexed by key (string id x classes), so an event costs a few loads.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/kstats.h"

#define NCAND 8  /* launch configurations tracked exactly per group */

struct vec {
	int64_t *v;
	size_t n, cap;
};

struct acc {
	uint64_t key;
	struct vec dur, bytes;
	uint32_t cand[NCAND], cand_n[NCAND];
	uint32_t ncand, last;
	uint32_t nkconf_extra;   /* configurations beyond NCAND (not counted for the mode) */
	uint64_t gpu_mask;
	int64_t win_ns;          /* duration of instances starting in a window */
};

static int vec_grow(struct vec *v)
{
	{
		size_t cap = v->cap ? v->cap * 2 : 64;
		int64_t *nv = realloc(v->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		v->v = nv;
		v->cap = cap;
	}
	return 0;
}

static inline int vec_push(struct vec *v, int64_t x)
{
	if (v->n == v->cap && vec_grow(v))
		return -ENOMEM;
	v->v[v->n++] = x;
	return 0;
}

/* sample standard deviation around mean (n - 1; 0 for one value) */
static double stddev(const int64_t *v, size_t n, double mean)
{
	if (n < 2)
		return 0;
	double ss = 0;
	for (size_t i = 0; i < n; i++) {
		double d = (double)v[i] - mean;
		ss += d * d;
	}
	return sqrt(ss / (double)(n - 1));
}

int kstats_lane_in_scope(const struct gt_lane *l, const struct gt_scope *sc)
{
	int32_t rank = l->key.rank < 0 ? 0 : l->key.rank;
	if (sc->rank >= 0 && rank != sc->rank)
		return 0;
	if (sc->gpu >= 0 && l->key.type == GT_LANE_GPU && l->key.device != sc->gpu)
		return 0;
	return 1;
}

/* first index whose start is >= t */
static size_t lower_start(const struct gt_lane *l, int64_t t)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (l->ev[m].start_ns < t)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

void kstats_lane_starts(const struct gt_lane *l, int64_t t0, int64_t t1,
			size_t *first, size_t *last)
{
	*first = t0 == INT64_MIN ? 0 : lower_start(l, t0);
	*last = t1 == INT64_MAX ? l->n : lower_start(l, t1);
	if (*last < *first)
		*last = *first;
}

/* index of the lane's GPU in r->gpus (adding it), -1 when host or overflow */
static int gpu_slot(struct kstats_result *r, const struct gt_lane *l)
{
	if (l->key.type != GT_LANE_GPU)
		return -1;
	int32_t rank = l->key.rank < 0 ? 0 : l->key.rank;
	for (size_t i = 0; i < r->ngpus; i++)
		if (r->gpus[i].rank == rank && r->gpus[i].device == l->key.device)
			return (int)i;
	if (r->ngpus == KSTATS_MAX_GPUS) {
		r->gpus_overflow = 1;
		return -1;
	}
	r->gpus[r->ngpus].rank = rank;
	r->gpus[r->ngpus].device = l->key.device;
	return (int)r->ngpus++;
}

static void count_kconf(struct acc *a, uint32_t k)
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

struct ctx {
	const struct gt_store *s;
	const struct kstats_opts *o;
	uint32_t nclass;
	uint32_t *slot;          /* key -> acc index + 1 */
	size_t nkeys;
	struct acc *accs;
	size_t nacc, capacc;
};

/* the accumulator of key, created on first use; NULL on ENOMEM */
static struct acc *get_acc(struct ctx *c, uint64_t key)
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
		if (group == KSTATS_BY_COPY_KIND)
			key = e->kind == GT_EV_MEMSET ? KSTATS_CLS_MEMSET :
			      e->sub < GT_COPY_KIND_COUNT ? e->sub : GT_COPY_UNKNOWN;
		else if (group == KSTATS_BY_NAME_KIND)
			key = (uint64_t)e->name * GT_EV_KIND_COUNT + e->kind;
		else
			key = e->name;
		if (key != akey) {
			uint32_t si = key < c->nkeys ? c->slot[key] : 0;
			if (si) {
				a = &c->accs[si - 1];
			} else {
				/* pointer may move when accs grows: only here */
				a = get_acc(c, key);
				if (!a)
					return -ENOMEM;
			}
			akey = key;
			a->gpu_mask |= gbit;
		}
		if (vec_push(&a->dur, e->dur_ns))
			return -ENOMEM;
		if (wt) {
			/* windows sorted, events sorted by start: one forward walk */
			while (wi < wn && wt[2 * wi + 1] <= e->start_ns)
				wi++;
			if (wi < wn && e->start_ns >= wt[2 * wi])
				a->win_ns += e->dur_ns;
		}
		if (want_bytes && vec_push(&a->bytes, (int64_t)e->arg))
			return -ENOMEM;
		if (e->kind == GT_EV_KERNEL) {
			uint32_t k = gt_event_kconf(e);
			if (a->ncand && a->cand[a->last] == k)
				a->cand_n[a->last]++;
			else
				count_kconf(a, k);
		}
	}
	return 0;
}

static int scan_lane(struct ctx *c, const struct gt_lane *l, size_t first, size_t last,
		     uint64_t gbit, const int64_t *wt, size_t wn)
{
	int wb = (c->o->flags & KSTATS_WANT_BYTES) != 0;
	switch (c->o->group) {
	case KSTATS_BY_COPY_KIND:
		return scan_lane_g(c, l, first, last, gbit, KSTATS_BY_COPY_KIND, wb, wt, wn);
	case KSTATS_BY_NAME_KIND:
		return scan_lane_g(c, l, first, last, gbit, KSTATS_BY_NAME_KIND, wb, wt, wn);
	default:
		if (wb)
			return scan_lane_g(c, l, first, last, gbit, KSTATS_BY_NAME, 1, wt, wn);
		if (wt)
			return scan_lane_g(c, l, first, last, gbit, KSTATS_BY_NAME, 0, wt, wn);
		return scan_lane_g(c, l, first, last, gbit, KSTATS_BY_NAME, 0, NULL, 0);
	}
}

static int row_cmp(const void *pa, const void *pb, void *arg)
{
	const struct kstats_row *a = pa, *b = pb;
	const struct gt_store *s = arg;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	int r = strcmp(store_str(s, a->name), store_str(s, b->name));
	if (r)
		return r;
	return (a->cls > b->cls) - (a->cls < b->cls);
}

/* turn an accumulator into a row, freeing its vectors */
static void finish_row(const struct ctx *c, struct acc *a, struct kstats_row *row)
{
	memset(row, 0, sizeof(*row));
	uint64_t n = a->dur.n;
	switch (c->o->group) {
	case KSTATS_BY_COPY_KIND:
		row->cls = (uint32_t)a->key;
		break;
	case KSTATS_BY_NAME_KIND:
		row->name = (uint32_t)(a->key / GT_EV_KIND_COUNT);
		row->cls = (uint32_t)(a->key % GT_EV_KIND_COUNT);
		break;
	default:
		row->name = (uint32_t)a->key;
	}
	row->count = n;
	int64_t sum = 0, mn = INT64_MAX, mx = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		int64_t d = a->dur.v[i];
		sum += d;
		mn = d < mn ? d : mn;
		mx = d > mx ? d : mx;
	}
	row->total_ns = sum;
	row->min_ns = mn;
	row->max_ns = mx;
	row->avg_ns = (double)sum / (double)n;
	row->stddev_ns = stddev(a->dur.v, n, row->avg_ns);
	row->med_ns = kstats_median(a->dur.v, n);
	if (c->o->flags & KSTATS_WANT_BYTES) {
		int64_t bmin = INT64_MAX, bmax = INT64_MIN;
		uint64_t bsum = 0;
		for (size_t i = 0; i < n; i++) {
			int64_t b = a->bytes.v[i];
			bsum += (uint64_t)b;
			if (b < bmin)
				bmin = b;
			if (b > bmax)
				bmax = b;
		}
		row->bytes_total = bsum;
		row->bytes_min = bmin;
		row->bytes_max = bmax;
		row->bytes_avg = (double)bsum / (double)n;
		row->bytes_stddev = stddev(a->bytes.v, n, row->bytes_avg);
		row->bytes_med = kstats_median(a->bytes.v, n);
	}
	uint32_t best = 0;
	for (uint32_t i = 0; i < a->ncand; i++)
		if (a->cand_n[i] > a->cand_n[best] ||
		    (a->cand_n[i] == a->cand_n[best] && a->cand[i] < a->cand[best]))
			best = i;
	row->kconf = a->ncand ? a->cand[best] : 0;
	row->nkconf = a->ncand + a->nkconf_extra;
	row->gpu_mask = a->gpu_mask;
	row->in_windows_ns = a->win_ns;
	if (c->o->group != KSTATS_BY_COPY_KIND)
		row->tc = kstats_is_tensor_core(store_str(c->s, row->name));
	free(a->dur.v);
	free(a->bytes.v);
	a->dur.v = a->bytes.v = NULL;
}

/* a slice of one lane's events, the unit of work of a scan thread */
struct work {
	const struct gt_lane *l;
	size_t first, last;
	uint64_t gbit;
	int thread;
	const int64_t *wt;          /* windows of the lane's rank, NULL = none */
	size_t wn;
};

#define NTHREADS 2
#define PAR_MIN_EVENTS 200000   /* below this one thread is faster */
#define SLICE_EVENTS 1000000

struct job {
	struct ctx c;
	const struct work *w;
	size_t nw;
	int me, rc;
	/* finish phase */
	struct kstats_row *rows;
	size_t *order;              /* acc indices of this thread's rows */
	size_t norder;
};

static void *scan_thread(void *arg)
{
	struct job *j = arg;
	for (size_t i = 0; i < j->nw && !j->rc; i++)
		if (j->w[i].thread == j->me)
			j->rc = scan_lane(&j->c, j->w[i].l, j->w[i].first, j->w[i].last, j->w[i].gbit,
					  j->w[i].wt, j->w[i].wn);
	return NULL;
}

static void *finish_thread(void *arg)
{
	struct job *j = arg;
	for (size_t i = 0; i < j->norder; i++)
		finish_row(&j->c, &j->c.accs[j->order[i]], &j->rows[j->order[i]]);
	return NULL;
}

/* append src's values to dst; 0 or -ENOMEM */
static int vec_cat(struct vec *dst, const struct vec *src)
{
	if (!src->n)
		return 0;
	if (dst->n + src->n > dst->cap) {
		int64_t *nv = realloc(dst->v, (dst->n + src->n) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		dst->v = nv;
		dst->cap = dst->n + src->n;
	}
	memcpy(dst->v + dst->n, src->v, src->n * sizeof(*src->v));
	dst->n += src->n;
	return 0;
}

/* fold thread b's accumulators into a; 0 or -ENOMEM */
static int merge_ctx(struct ctx *a, struct ctx *b)
{
	for (size_t i = 0; i < b->nacc; i++) {
		struct acc *y = &b->accs[i];
		struct acc *x = get_acc(a, y->key);
		if (!x)
			return -ENOMEM;
		x->gpu_mask |= y->gpu_mask;
		x->win_ns += y->win_ns;
		if (vec_cat(&x->dur, &y->dur) || vec_cat(&x->bytes, &y->bytes))
			return -ENOMEM;
		for (uint32_t k = 0; k < y->ncand; k++) {
			for (uint32_t n = 0; n < y->cand_n[k]; n++)
				count_kconf(x, y->cand[k]);
		}
		x->nkconf_extra += y->nkconf_extra;
	}
	return 0;
}

static void ctx_free(struct ctx *c)
{
	for (size_t i = 0; i < c->nacc; i++) {
		free(c->accs[i].dur.v);
		free(c->accs[i].bytes.v);
	}
	free(c->accs);
	free(c->slot);
}

/* the slices to scan: every lane in scope, cut into SLICE_EVENTS pieces and
 * handed to the thread with less work so far */
static int plan(const struct gt_store *s, const struct gt_scope *sc, const struct kstats_opts *o,
		struct kstats_result *r, struct work **out, size_t *nout, size_t *total)
{
	size_t nl = store_lane_count(s), nw = 0, cap = 0;
	struct work *w = NULL;
	size_t load[NTHREADS] = { 0 };
	*total = 0;
	for (uint32_t li = 0; li < nl; li++) {
		const struct gt_lane *l = store_lane_at(s, li);
		if (!(l->kinds_mask & o->kinds_mask) || !kstats_lane_in_scope(l, sc))
			continue;
		int g = gpu_slot(r, l);
		size_t first, last;
		kstats_lane_starts(l, sc->t0_ns, sc->t1_ns, &first, &last);
		const int64_t *wt = NULL;
		size_t wn = 0;
		int32_t rank = l->key.rank < 0 ? 0 : l->key.rank;
		for (size_t k = 0; o->win && k < o->nwin; k++)
			if (o->win[k].rank == rank) {
				wt = o->win[k].t;
				wn = o->win[k].n;
			}
		if (o->win && !wt) {
			static const int64_t none[2] = { 0, 0 };
			wt = none;              /* a rank without windows: nothing inside */
		}
		for (size_t f = first; f < last; f += SLICE_EVENTS) {
			if (nw == cap) {
				cap = cap ? cap * 2 : 32;
				struct work *nwk = realloc(w, cap * sizeof(*nwk));
				if (!nwk) {
					free(w);
					return -ENOMEM;
				}
				w = nwk;
			}
			size_t e = last - f > SLICE_EVENTS ? f + SLICE_EVENTS : last;
			int t = load[1] < load[0];
			load[t] += e - f;
			w[nw++] = (struct work){ l, f, e, g >= 0 ? 1ull << g : 0, t, wt, wn };
			*total += e - f;
		}
	}
	*out = w;
	*nout = nw;
	return 0;
}

int kstats_compute(const struct gt_store *s, const struct gt_scope *sc,
		   const struct kstats_opts *o, struct kstats_result *r,
		   char *err, size_t errlen)
{
	struct kstats_opts def = { .kinds_mask = 1u << GT_EV_KERNEL, .group = KSTATS_BY_NAME };
	struct gt_scope all;
	if (!o)
		o = &def;
	if (!sc) {
		gt_scope_all(&all);
		sc = &all;
	}
	if (o->kinds_mask == 0) {
		def.group = o->group;
		def.flags = o->flags;
		def.win = o->win;
		def.nwin = o->nwin;
		o = &def;
	}
	memset(r, 0, sizeof(*r));
	struct job jobs[NTHREADS];
	memset(jobs, 0, sizeof(jobs));
	size_t nkeys = o->group == KSTATS_BY_COPY_KIND ? GT_COPY_KIND_COUNT + 1 :
		       o->group == KSTATS_BY_NAME_KIND ? (store_str_count(s) + 1) * GT_EV_KIND_COUNT :
		       store_str_count(s) + 1;
	struct work *w = NULL;
	size_t nw = 0, total = 0;
	int rc = plan(s, sc, o, r, &w, &nw, &total);
	if (rc)
		goto out;
	int nthr = total >= PAR_MIN_EVENTS ? NTHREADS : 1;
	rc = -ENOMEM;
	for (int t = 0; t < nthr; t++) {
		jobs[t].c = (struct ctx){ .s = s, .o = o, .nkeys = nkeys };
		jobs[t].c.slot = calloc(nkeys, sizeof(*jobs[t].c.slot));
		if (!jobs[t].c.slot)
			goto out;
		jobs[t].w = w;
		jobs[t].nw = nw;
		jobs[t].me = t;
	}
	if (nthr == 1) {
		for (size_t i = 0; i < nw; i++)
			w[i].thread = 0;
		scan_thread(&jobs[0]);
	} else {
		pthread_t th;
		int started = pthread_create(&th, NULL, scan_thread, &jobs[1]) == 0;
		if (!started)
			scan_thread(&jobs[1]);
		scan_thread(&jobs[0]);
		if (started)
			pthread_join(th, NULL);
	}
	for (int t = 0; t < nthr; t++)
		if (jobs[t].rc)
			goto out;
	for (int t = 1; t < nthr; t++)
		if (merge_ctx(&jobs[0].c, &jobs[t].c))
			goto out;
	struct ctx *c = &jobs[0].c;
	r->rows = calloc(c->nacc ? c->nacc : 1, sizeof(*r->rows));
	size_t *order = malloc((c->nacc ? c->nacc : 1) * sizeof(*order));
	if (!r->rows || !order) {
		free(order);
		goto out;
	}
	/* finish rows in parallel: biggest groups first, each to the lighter thread */
	size_t fl[NTHREADS] = { 0 }, n0 = 0, n1 = c->nacc;
	for (size_t i = 0; i < c->nacc; i++) {
		int t = nthr > 1 && fl[1] < fl[0];
		fl[t] += c->accs[i].dur.n;
		if (t)
			order[--n1] = i;
		else
			order[n0++] = i;
	}
	for (int t = 0; t < nthr; t++) {
		jobs[t].c.s = s;
		jobs[t].rows = r->rows;
	}
	jobs[0].order = order;
	jobs[0].norder = n0;
	struct job fin1 = { .c = *c, .rows = r->rows, .order = order + n0, .norder = c->nacc - n0 };
	if (nthr > 1 && fin1.norder) {
		pthread_t th;
		int started = pthread_create(&th, NULL, finish_thread, &fin1) == 0;
		if (!started)
			finish_thread(&fin1);
		finish_thread(&jobs[0]);
		if (started)
			pthread_join(th, NULL);
	} else {
		jobs[0].norder = c->nacc;
		finish_thread(&jobs[0]);
	}
	free(order);
	for (size_t i = 0; i < c->nacc; i++) {
		r->count += r->rows[i].count;
		r->total_ns += r->rows[i].total_ns;
	}
	r->nrows = c->nacc;
	for (size_t i = 0; i < r->nrows; i++)
		r->rows[i].pct = r->total_ns > 0 ?
			100.0 * (double)r->rows[i].total_ns / (double)r->total_ns : 0.0;
	qsort_r(r->rows, r->nrows, sizeof(*r->rows), row_cmp, (void *)s);
	rc = 0;
out:
	for (int t = 0; t < NTHREADS; t++)
		ctx_free(&jobs[t].c);
	free(w);
	if (rc) {
		kstats_result_done(r);
		snprintf(err, errlen, "kernel statistics: out of memory");
	}
	return rc;
}

void kstats_result_done(struct kstats_result *r)
{
	free(r->rows);
	r->rows = NULL;
	r->nrows = 0;
}
