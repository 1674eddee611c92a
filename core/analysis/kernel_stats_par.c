/*
 * kernel_stats_par.c - gt_kernel_stats_compute: cut the lanes in scope into slices, scan
 * them on two threads with one set of accumulators each, merge the second
 * into the first, then finish the rows (median, standard deviation) on two
 * threads, biggest groups first.  Below PAR_MIN_EVENTS it runs on the
 * calling thread only.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel_stats_priv.h"
#include "../util/spill.h"

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
	struct gt_kernel_stats_row *rows;
	size_t *order;              /* acc indices of this thread's rows */
	size_t norder;
};

static void *scan_thread(void *arg)
{
	struct job *j = arg;
	for (size_t i = 0; i < j->nw && !j->rc; i++)
		if (j->w[i].thread == j->me)
			j->rc = kernel_stats_scan(&j->c, j->w[i].l, j->w[i].first, j->w[i].last, j->w[i].gbit,
					  j->w[i].wt, j->w[i].wn);
	return NULL;
}

static void *finish_thread(void *arg)
{
	struct job *j = arg;
	for (size_t i = 0; i < j->norder; i++)
		kernel_stats_finish_row(&j->c, &j->c.accs[j->order[i]], &j->rows[j->order[i]]);
	return NULL;
}

/* fold thread b's accumulators into a; 0 or -ENOMEM */
static int merge_ctx(struct ctx *a, struct ctx *b)
{
	for (size_t i = 0; i < b->nacc; i++) {
		struct acc *y = &b->accs[i];
		struct acc *x = kernel_stats_get_acc(a, y->key);
		if (!x)
			return -ENOMEM;
		x->gpu_mask |= y->gpu_mask;
		x->win_ns += y->win_ns;
		/* thread b's values stay where they are: the row is finished
		 * over both segments */
		x->dur2 = y->dur;
		x->bytes2 = y->bytes;
		memset(&y->dur, 0, sizeof(y->dur));
		memset(&y->bytes, 0, sizeof(y->bytes));
		for (uint32_t k = 0; k < y->ncand; k++) {
			for (uint32_t n = 0; n < y->cand_n[k]; n++)
				kernel_stats_count_kconf(x, y->cand[k]);
		}
		x->nkconf_extra += y->nkconf_extra;
	}
	return 0;
}

static void ctx_free(struct ctx *c)
{
	for (size_t i = 0; i < c->nacc; i++) {
		kernel_stats_vec_free(c->sp, &c->accs[i].dur);
		kernel_stats_vec_free(c->sp, &c->accs[i].bytes);
		kernel_stats_vec_free(c->sp, &c->accs[i].dur2);
		kernel_stats_vec_free(c->sp, &c->accs[i].bytes2);
	}
	free(c->accs);
	free(c->slot);
}

/* the slices to scan: every lane in scope, cut into SLICE_EVENTS pieces and
 * handed to the thread with less work so far */
static int plan(const struct gt_store *s, const struct gt_scope *sc, const struct gt_kernel_stats_opts *o,
		struct gt_kernel_stats_result *r, struct work **out, size_t *nout, size_t *total)
{
	size_t nl = gt_store_lane_count(s), nw = 0, cap = 0;
	struct work *w = NULL;
	size_t load[NTHREADS] = { 0 };
	*total = 0;
	for (uint32_t li = 0; li < nl; li++) {
		const struct gt_lane *l = gt_store_lane_at(s, li);
		if (!(l->kinds_mask & o->kinds_mask) || !gt_kernel_stats_lane_in_scope(l, sc))
			continue;
		int g = kernel_stats_gpu_slot(r, l);
		size_t first, last;
		gt_kernel_stats_lane_starts(l, sc->t0_ns, sc->t1_ns, &first, &last);
		const int64_t *wt = NULL;
		size_t wn = 0;
		int32_t rank = l->key.rank;
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

int gt_kernel_stats_compute(const struct gt_store *s, const struct gt_scope *sc,
		   const struct gt_kernel_stats_opts *o, struct gt_kernel_stats_result *r,
		   char *err, size_t errlen)
{
	struct gt_kernel_stats_opts def = { .kinds_mask = 1u << GT_EV_KERNEL, .group = GT_KERNEL_STATS_BY_NAME };
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
	size_t nkeys = o->group == GT_KERNEL_STATS_BY_COPY_KIND ? GT_COPY_KIND_COUNT + 1 :
		       o->group == GT_KERNEL_STATS_BY_NAME_KIND ? (gt_store_str_count(s) + 1) * GT_EV_KIND_COUNT :
		       gt_store_str_count(s) + 1;
	struct work *w = NULL;
	struct spill *sp = NULL;
	size_t nw = 0, total = 0;
	int rc = plan(s, sc, o, r, &w, &nw, &total);
	if (rc)
		goto out;
	int nthr = total >= PAR_MIN_EVENTS ? NTHREADS : 1;
	/* under a memory budget the durations (8 bytes an instance, 2.7 GB for
	 * a third of a billion kernels) live in a spill whose mapped share
	 * stays within an eighth of the budget; without a cache file they stay
	 * on the heap (the store already said the budget cannot work) */
	size_t budget = gt_store_budget(s);
	if (budget && total * sizeof(int64_t) >= budget / 16 && spill_new(budget / 8, &sp) != 0)
		sp = NULL;
	rc = -ENOMEM;
	for (int t = 0; t < nthr; t++) {
		jobs[t].c = (struct ctx){ .s = s, .sp = sp, .o = o, .nkeys = nkeys };
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
		fl[t] += c->accs[i].dur.n + c->accs[i].dur2.n;
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
	qsort_r(r->rows, r->nrows, sizeof(*r->rows), kernel_stats_row_cmp, (void *)s);
	rc = 0;
out:
	for (int t = 0; t < NTHREADS; t++)
		ctx_free(&jobs[t].c);
	spill_free(sp);
	free(w);
	if (rc) {
		gt_kernel_stats_result_done(r);
		snprintf(err, errlen, "kernel statistics: out of memory");
	}
	return rc;
}

void gt_kernel_stats_result_done(struct gt_kernel_stats_result *r)
{
	free(r->rows);
	r->rows = NULL;
	r->nrows = 0;
}
