/*
 * multigpu.c - multi-GPU health from the TensorFlow GPU performance guide's
 * checklist (docs/analyses.md §6).  Participants are the (rank, GPU) pairs of the
 * scope; steps are matched by number across ranks.  Per step and GPU: the
 * compute kernel union, collective time and its overlap with compute, the
 * first kernel and the copies.  Straggler: the GPU with the most compute in
 * a step, by its excess over the other GPUs' mean; stagger: first kernel of
 * a step after the earliest GPU's of the same rank.  Copies recurring at the same place
 * (kind, size, n-th of its kind) in >= 80 % of the steps are listed (copies
 * in multigpu_copies.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "analysis.h"
#include "interval.h"
#include "multigpu_priv.h"

enum { K_COMPUTE = 0, K_COMM, K_COPY, K_MEMSET, K_NCLS, K_ANYK = K_NCLS, K_ALL, K_N };

/* compute kernel, communication kernel, copy, memset, or -1 */
static int class_of(const struct gt_event *e, void *p)
{
	switch (e->kind) {
	case GT_EV_KERNEL: return analysis_is_comm(p, e) ? K_COMM : K_COMPUTE;
	case GT_EV_MEMCPY: return K_COPY;
	case GT_EV_MEMSET: return K_MEMSET;
	default: return -1;
	}
}

void gt_multigpu_result_done(struct gt_multigpu_result *r)
{
	free(r->gpus);
	free(r->copies);
	free(r->step_nums);
	free(r->cells);
	memset(r, 0, sizeof(*r));
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static long step_index(const struct gt_multigpu_result *r, int64_t num)
{
	int64_t *p = bsearch(&num, r->step_nums, r->nsteps, sizeof(num), cmp_i64);
	return p ? p - r->step_nums : -1;
}

/* first start >= t0 inside [t0, t1) of a union, or INT64_MAX */
static int64_t first_in(const struct interval_list *l, int64_t t0, int64_t t1)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (l->v[mid].b <= t0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == l->n || l->v[lo].a >= t1)
		return INT64_MAX;
	return l->v[lo].a > t0 ? l->v[lo].a : t0;
}

/* last end <= t1 inside [t0, t1) of a union, or INT64_MIN */
static int64_t last_in(const struct interval_list *l, int64_t t0, int64_t t1)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {        /* first interval starting at or after t1 */
		size_t mid = (lo + hi) / 2;
		if (l->v[mid].a < t1)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || l->v[lo - 1].b <= t0)
		return INT64_MIN;
	return l->v[lo - 1].b < t1 ? l->v[lo - 1].b : t1;
}

/* fill the cells of one participant */
/* the fine classes (analysis.h) of each class */
static const unsigned class_mask[K_N] = {
	ANALYSIS_FC_BIT(ANALYSIS_FC_KCOMP), ANALYSIS_FC_BIT(ANALYSIS_FC_KCOMM), ANALYSIS_FC_MEMCPY,
	ANALYSIS_FC_BIT(ANALYSIS_FC_MEMSET), ANALYSIS_FC_BIT(ANALYSIS_FC_KCOMP) | ANALYSIS_FC_BIT(ANALYSIS_FC_KCOMM),
	ANALYSIS_FC_BIT(ANALYSIS_FC_KCOMP) | ANALYSIS_FC_BIT(ANALYSIS_FC_KCOMM) | ANALYSIS_FC_MEMCPY |
	ANALYSIS_FC_BIT(ANALYSIS_FC_MEMSET)
};

/* one GPU's share of its rank's windows in one slab [c0, c1) of [T0, T1)
 * (the whole of it: c0 == T0, c1 == T1, when the rank fits the budget):
 * the unions from pass (rank 0's pass of the overview, given only when it
 * covers [T0, T1): one slab), else collected over the slab and a
 * nanosecond either side (clipped to [T0, T1)), so that an empty window at
 * a cut sees what it would see in one union: an interval around it.
 * Lengths add up into acc[0..nw), firsts and lasts (absolute, in
 * finish_ns) take the least and the greatest; an empty window counts in
 * the slab that holds it.  *busy_out: the GPU's busy union of the slab. */
static int fill_gpu(const struct gt_store *s, size_t gi,
		    const struct analysis_win *win, long nw, int64_t T0, int64_t T1, int64_t c0, int64_t c1,
		    struct analysis_names *nm, const struct analysis_pass *pass,
		    const struct gt_multigpu_result *r, struct gt_multigpu_cell *acc,
		    struct interval_list *busy_out)
{
	const struct gt_multigpu_gpu *g = &r->gpus[gi];
	uint32_t *gl = NULL;
	struct interval_list u[K_N], ov = {0};
	const struct interval_list *up[K_N];
	int rc = 0;
	memset(u, 0, sizeof(u));
	for (int k = 0; k < K_N; k++)
		up[k] = &u[k];
	long di = pass ? analysis_pass_dev_index(pass, g->device) : -1;
	if (di >= 0) {
		for (int k = 0; k < K_N && !rc; k++)
			if (!(up[k] = analysis_pass_get(pass, class_mask[k], 0, di, &u[k])))
				rc = -ENOMEM;
	} else {
		long ng = analysis_lanes(s, g->rank, GT_LANE_GPU, g->device, &gl);
		if (ng < 0)
			return -ENOMEM;
		struct interval_list tmp = {0};
		int64_t lo = c0 > T0 ? c0 - 1 : T0, hi = c1 < T1 ? c1 + 1 : T1;
		rc = interval_collect_multi(s, gl, (size_t)ng, lo, hi, class_of, nm, K_NCLS, u);
		if (!rc)
			rc = interval_union(&u[K_COMPUTE], &u[K_COMM], &u[K_ANYK]);
		if (!rc)
			rc = interval_union(&u[K_ANYK], &u[K_COPY], &tmp);
		if (!rc)
			rc = interval_union(&tmp, &u[K_MEMSET], &u[K_ALL]);
		interval_done(&tmp);
	}
	if (!rc)
		rc = interval_intersect(up[K_COMPUTE], up[K_COMM], &ov);
	for (long i = 0; i < nw && !rc; i++) {
		struct gt_multigpu_cell *c = &acc[i];
		int64_t a, b;
		if (win[i].t0 == win[i].t1) {   /* an empty window: in the slab that holds it */
			if (win[i].t0 < c0 || (win[i].t0 >= c1 && c1 != T1))
				continue;
			a = b = win[i].t0;
		} else if (!analysis_win_clip(&win[i], c0, c1, &a, &b)) {
			continue;
		}
		c->compute_ns += interval_len_in(up[K_COMPUTE], a, b);
		c->comm_ns += interval_len_in(up[K_COMM], a, b);
		c->comm_overlap_ns += interval_len_in(&ov, a, b);
		c->copy_ns += interval_len_in(up[K_COPY], a, b);
		c->busy_ns += interval_len_in(up[K_ALL], a, b);
		int64_t first = first_in(up[K_ANYK], a, b), last = last_in(up[K_ALL], a, b);
		if (di >= 0 && a == b && (a == T0 || a == T1)) {
			/* an empty window at the edge of [T0, T1): nothing of a
			 * union clipped to [T0, T1) touches it */
			first = INT64_MAX;
			last = INT64_MIN;
		}
		c->first_kernel_ns = first < c->first_kernel_ns ? first : c->first_kernel_ns;
		c->finish_ns = last > c->finish_ns ? last : c->finish_ns;
	}
	if (!rc && up[K_ALL] != &u[K_ALL]) {   /* a list of the pass: copy it */
		struct interval_list none = {0};
		rc = interval_union(up[K_ALL], &none, busy_out);
	} else if (!rc) {
		interval_move(busy_out, &u[K_ALL]);
	}
	for (int k = 0; k < K_N; k++)
		interval_done(&u[k]);
	interval_done(&ov);
	free(gl);
	return rc;
}

/* the cells of one rank's GPUs: slab by slab (analysis_slabs over the
 * rank's GPU lanes in [T0, T1) of its windows), each GPU's share added up
 * (fill_gpu); busy[0..nw): the time in each window that any of the rank's
 * GPUs is busy (the union over its GPUs) */
static int fill_rank(const struct gt_store *s, const struct gt_scope *sc, int32_t rank,
		     const struct analysis_win *win, long nw, struct analysis_names *nm,
		     const struct analysis_pass *pass, struct gt_multigpu_result *r, int64_t *busy)
{
	size_t G = r->ngpus, ng = 0;
	int64_t *cuts = NULL, T0 = win[0].t0, T1 = win[0].t1;
	for (long i = 1; i < nw; i++)
		if (win[i].t1 > T1)
			T1 = win[i].t1;
	for (size_t g = 0; g < G; g++)
		ng += r->gpus[g].rank == rank;
	int shared = pass && pass->rank == rank && pass->gpu == sc->gpu && pass->t0 <= T0 && pass->t1 >= T1;
	int64_t one[2] = { T0, T1 };
	long ns = shared ? 1 : analysis_slabs(s, rank, sc->gpu, 0, T0, T1, &cuts);
	struct gt_multigpu_cell *acc = calloc((ng ? ng : 1) * (size_t)nw, sizeof(*acc));
	if (ns < 0 || !acc) {
		free(cuts);
		free(acc);
		return -ENOMEM;
	}
	const int64_t *c = cuts ? cuts : one;
	for (size_t i = 0; i < ng * (size_t)nw; i++) {
		acc[i].first_kernel_ns = INT64_MAX;
		acc[i].finish_ns = INT64_MIN;
	}
	int rc = 0;
	for (long k = 0; k < ns && !rc; k++) {
		struct interval_list rank_busy = {0};
		size_t j = 0;
		for (size_t g = 0; g < G && !rc; g++) {
			if (r->gpus[g].rank != rank)
				continue;
			struct interval_list b = {0}, merged = {0};
			rc = fill_gpu(s, g, win, nw, T0, T1, c[k], c[k + 1], nm, shared ? pass : NULL, r,
				      &acc[j++ * (size_t)nw], &b);
			if (!rc && !(rc = interval_union(&rank_busy, &b, &merged)))
				interval_move(&rank_busy, &merged);
			interval_done(&b);
			interval_done(&merged);
		}
		for (long i = 0; i < nw && !rc; i++) {
			int64_t a, b;
			if (analysis_win_clip(&win[i], c[k], c[k + 1], &a, &b))
				busy[i] += interval_len_in(&rank_busy, a, b);
		}
		interval_done(&rank_busy);
	}
	/* the windows' cells, in window order (a later window of the same
	 * step number replaces an earlier one) */
	for (size_t g = 0, j = 0; g < G && !rc; g++) {
		if (r->gpus[g].rank != rank)
			continue;
		for (long i = 0; i < nw; i++) {
			long si = step_index(r, win[i].step);
			if (si < 0)
				continue;
			struct gt_multigpu_cell *cell = &r->cells[(size_t)si * G + g], *x = &acc[j * (size_t)nw + i];
			int valid = cell->valid;
			*cell = *x;
			cell->valid = valid;
			cell->t0_ns = win[i].t0;
			cell->t1_ns = win[i].t1;
			cell->finish_ns = x->finish_ns == INT64_MIN ? -1 : x->finish_ns - win[i].t0;
		}
		j++;
	}
	free(acc);
	free(cuts);
	return rc;
}

/* how parallel the rank's GPUs run: (sum of busy - busy union) /
 * (sum of busy - largest busy) over its step windows, in percent */
static void parallel(struct gt_multigpu_result *r, int32_t rank, const struct analysis_win *win, long nw,
		     const int64_t *rank_busy)
{
	double num = 0, den = 0;
	size_t G = r->ngpus;
	for (long i = 0; i < nw; i++) {
		long si = step_index(r, win[i].step);
		if (si < 0)
			continue;
		int64_t sum = 0, mx = 0;
		int n = 0;
		for (size_t g = 0; g < G; g++) {
			const struct gt_multigpu_cell *c = &r->cells[(size_t)si * G + g];
			if (r->gpus[g].rank != rank || !c->valid)
				continue;
			sum += c->busy_ns;
			if (c->busy_ns > mx)
				mx = c->busy_ns;
			n++;
		}
		if (n < 2)
			continue;
		num += (double)(sum - rank_busy[i]);
		den += (double)(sum - mx);
	}
	for (size_t g = 0; g < G; g++)
		if (r->gpus[g].rank == rank)
			r->gpus[g].parallel_pct = den > 0 ? 100.0 * num / den : -1;
}

/* the expected all-reduce time per step when the user gave parameter bytes
 * and link bandwidth (docs/analyses.md §6: bytes / bandwidth), and each GPU's
 * collective time per step against it */
static void expected(struct gt_multigpu_result *r, const struct gt_scope *sc)
{
	if (!sc->param_bytes || !(sc->link_gbps > 0))
		return;
	r->param_bytes = sc->param_bytes;
	r->link_gbps = sc->link_gbps;
	r->expected_comm_ns = (double)sc->param_bytes / sc->link_gbps;  /* bytes / (GB/s) = ns */
	for (size_t g = 0; g < r->ngpus; g++)
		r->gpus[g].comm_vs_expected = r->gpus[g].mean_comm_ns / r->expected_comm_ns;
}

/* straggler, stagger, shares from the cells */
static void summarize(struct gt_multigpu_result *r)
{
	size_t G = r->ngpus;
	double *excess = calloc(G ? G : 1, sizeof(*excess));
	size_t *ridx = calloc(G ? G : 1, sizeof(*ridx));       /* dense rank index per GPU */
	int64_t *earliest = calloc(G ? G : 1, sizeof(*earliest)); /* per dense rank */
	double step_sum = 0;
	size_t step_n = 0, compared = 0, nranks = 0;
	if (!excess || !ridx || !earliest) {
		free(excess);
		free(ridx);
		free(earliest);
		return;
	}
	/* the stagger baseline is the earliest GPU of the same rank: one host
	   thread launching for several GPUs is what staggers them; ranks are
	   separate processes whose step starts differ for other reasons (and
	   show as collective wait, not here) */
	for (size_t g = 0; g < G; g++) {
		size_t k = 0;
		while (k < g && r->gpus[k].rank != r->gpus[g].rank)
			k++;
		ridx[g] = k < g ? ridx[k] : nranks++;
	}
	for (size_t si = 0; si < r->nsteps; si++) {
		struct gt_multigpu_cell *row = &r->cells[si * G];
		size_t best = SIZE_MAX, valid = 0;
		double sum = 0;
		for (size_t k = 0; k < nranks; k++)
			earliest[k] = INT64_MAX;
		for (size_t g = 0; g < G; g++) {
			if (!row[g].valid)
				continue;
			step_sum += (double)(row[g].t1_ns - row[g].t0_ns);
			step_n++;
			if (row[g].first_kernel_ns < earliest[ridx[g]])
				earliest[ridx[g]] = row[g].first_kernel_ns;
			if (row[g].compute_ns <= 0)
				continue;
			valid++;
			sum += (double)row[g].compute_ns;
			if (best == SIZE_MAX || row[g].compute_ns > row[best].compute_ns)
				best = g;
		}
		for (size_t g = 0; g < G; g++) {
			if (!row[g].valid || row[g].first_kernel_ns == INT64_MAX)
				continue;
			double off = (double)(row[g].first_kernel_ns - earliest[ridx[g]]);
			r->gpus[g].stagger_mean_ns += off;
			if (off > r->gpus[g].stagger_max_ns)
				r->gpus[g].stagger_max_ns = off;
		}
		if (valid < 2)
			continue;
		compared++;
		double others = (sum - (double)row[best].compute_ns) / (double)(valid - 1);
		if (others > 0) {
			r->gpus[best].slowest++;
			excess[best] += 100.0 * ((double)row[best].compute_ns - others) / others;
		}
	}
	r->mean_step_ns = step_n ? step_sum / (double)step_n : 0;
	r->straggler = -1;
	double copy_all = 0, span_all = 0;
	for (size_t i = 0; i < r->nsteps * G; i++)
		if (r->cells[i].valid) {
			copy_all += (double)r->cells[i].copy_ns;
			span_all += (double)(r->cells[i].t1_ns - r->cells[i].t0_ns);
		}
	r->copy_share_pct = span_all > 0 ? 100.0 * copy_all / span_all : 0;
	for (size_t g = 0; g < G; g++) {
		struct gt_multigpu_gpu *mg = &r->gpus[g];
		size_t n = 0;
		double comp = 0, comm = 0, ovl = 0, span = 0;
		for (size_t si = 0; si < r->nsteps; si++) {
			const struct gt_multigpu_cell *c = &r->cells[si * G + g];
			if (!c->valid)
				continue;
			n++;
			comp += (double)c->compute_ns;
			comm += (double)c->comm_ns;
			ovl += (double)c->comm_overlap_ns;
			span += (double)(c->t1_ns - c->t0_ns);
		}
		if (n) {
			mg->mean_compute_ns = comp / (double)n;
			mg->mean_comm_ns = comm / (double)n;
			mg->stagger_mean_ns /= (double)n;
		}
		mg->comm_share_pct = span > 0 ? 100.0 * comm / span : 0;
		mg->comm_overlap_pct = comm > 0 ? 100.0 * ovl / comm : 0;
		mg->stagger_pct = r->mean_step_ns > 0 ? 100.0 * mg->stagger_mean_ns / r->mean_step_ns : 0;
		if (mg->slowest)
			mg->skew_pct = excess[g] / mg->slowest;
		if (compared && mg->slowest * 2 > compared &&
		    (r->straggler < 0 || mg->slowest > r->gpus[r->straggler].slowest))
			r->straggler = (int)g;
	}
	r->ncompared = compared;
	if (r->straggler >= 0)
		r->straggler_pct = r->gpus[r->straggler].skew_pct;
	free(excess);
	free(ridx);
	free(earliest);
}

int gt_multigpu_compute(const struct gt_store *s, const struct gt_scope *sc,
		     struct gt_multigpu_result *out, char *err, size_t errlen)
{
	return multigpu_compute_pass(s, sc, out, NULL, err, errlen);
}

int multigpu_compute_pass(const struct gt_store *s, const struct gt_scope *sc,
			  struct gt_multigpu_result *out, const struct analysis_pass *pass,
			  char *err, size_t errlen)
{
	struct gt_scope all;
	int32_t *ranks = NULL;
	struct gt_steps_list *sl = NULL;
	struct analysis_win **win = NULL;
	long *nw = NULL;
	struct analysis_names nm = {0};
	int rc = 0;
	memset(out, 0, sizeof(*out));
	out->straggler = -1;
	if (!sc) {
		gt_scope_all(&all);
		sc = &all;
	}
	long nr = analysis_scope_ranks(s, sc, &ranks);
	if (nr < 0 || analysis_names_init(&nm, s))
		goto nomem;
	sl = calloc((size_t)nr + 1, sizeof(*sl));
	win = calloc((size_t)nr + 1, sizeof(*win));
	nw = calloc((size_t)nr + 1, sizeof(*nw));
	if (!sl || !win || !nw)
		goto nomem;
	size_t nsteps = 0, ngpus = 0;
	for (long r = 0; r < nr; r++) {
		if ((rc = gt_steps_find(s, ranks[r], NULL, &sl[r], err, errlen)))
			goto fail;
		if ((nw[r] = analysis_windows(s, ranks[r], &sl[r], sc, &win[r])) < 0)
			goto nomem;
		nsteps += (size_t)nw[r];
		for (size_t g = 0; g < sl[r].ngpus; g++)
			ngpus += sc->gpu < 0 || sl[r].gpus[g] == sc->gpu;
	}
	out->step_nums = malloc((nsteps ? nsteps : 1) * sizeof(*out->step_nums));
	out->gpus = calloc(ngpus ? ngpus : 1, sizeof(*out->gpus));
	if (!out->step_nums || !out->gpus)
		goto nomem;
	for (long r = 0; r < nr; r++)
		for (long i = 0; i < nw[r]; i++)
			out->step_nums[out->nsteps++] = win[r][i].step;
	qsort(out->step_nums, out->nsteps, sizeof(int64_t), cmp_i64);
	size_t w = 0;
	for (size_t i = 0; i < out->nsteps; i++)
		if (!w || out->step_nums[w - 1] != out->step_nums[i])
			out->step_nums[w++] = out->step_nums[i];
	out->nsteps = w;
	for (long r = 0; r < nr; r++)
		for (size_t g = 0; g < sl[r].ngpus; g++)
			if (sc->gpu < 0 || sl[r].gpus[g] == sc->gpu) {
				out->gpus[out->ngpus].rank = ranks[r];
				out->gpus[out->ngpus++].device = sl[r].gpus[g];
			}
	out->cells = calloc((out->nsteps ? out->nsteps : 1) * (out->ngpus ? out->ngpus : 1),
			    sizeof(*out->cells));
	if (!out->cells)
		goto nomem;
	for (size_t i = 0; i < out->nsteps * out->ngpus; i++)
		out->cells[i].first_kernel_ns = INT64_MAX;
	for (long r = 0; r < nr; r++) {
		int has = 0;
		for (size_t g = 0; g < out->ngpus; g++) {
			if (out->gpus[g].rank != ranks[r])
				continue;
			out->gpus[g].parallel_pct = -1;
			has = 1;
			for (long i = 0; i < nw[r]; i++) {
				long si = step_index(out, win[r][i].step);
				out->cells[(size_t)si * out->ngpus + g].valid = 1;
			}
		}
		if (!has || !nw[r])
			continue;
		int64_t *busy = calloc((size_t)nw[r], sizeof(*busy));
		if (!busy)
			goto nomem;
		rc = fill_rank(s, sc, ranks[r], win[r], nw[r], &nm, pass, out, busy);
		for (size_t g = 0; g < out->ngpus && !rc; g++)
			if (out->gpus[g].rank == ranks[r])
				rc = multigpu_copies(s, g, win[r], nw[r], out);
		if (!rc)
			parallel(out, ranks[r], win[r], nw[r], busy);
		free(busy);
		if (rc)
			goto fail;
	}
	summarize(out);
	/* separate runs opened together (no time overlap, different world
	   sizes: import.mixed_runs) are no job: no straggler across them */
	if (gt_store_meta_get(s, "import.mixed_runs")) {
		out->separate_runs = 1;
		out->straggler = -1;
		out->straggler_pct = 0;
	}
	expected(out, sc);
	goto done;
nomem:
	rc = -ENOMEM;
fail:
	if (rc == -ENOMEM && err && errlen)
		snprintf(err, errlen, "multigpu: out of memory");
	gt_multigpu_result_done(out);
done:
	for (long r = 0; sl && win && r < nr; r++) {
		gt_steps_list_done(&sl[r]);
		free(win[r]);
	}
	free(sl);
	free(win);
	free(nw);
	free(ranks);
	analysis_names_done(&nm);
	return rc;
}
