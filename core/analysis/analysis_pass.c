/*
 * analysis_pass.c - one pass over a rank's events in a time range, shared by the
 * step analyses: per lane group (the host lanes, each GPU's lanes) the
 * interval union of each fine event class (see analysis.h).  breakdown, pipeline
 * and gputime build their categories as unions of these classes, so the
 * overview reads the events of a range once instead of once per analysis.
 * A union of unions is the same set, so the results do not change.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analysis.h"

/* class bits of a name (analysis_name_class with the cached case inline) */
static inline unsigned name_class(struct analysis_names *nm, uint32_t name)
{
	if (name < nm->n && (nm->cls[name] & 0x80))
		return nm->cls[name] & 0x7f;
	return analysis_name_class(nm, name);
}

/* the fine class of an event, -1 for none (ProfilerStep spans, plain NVTX) */
static inline int fine_class(const struct gt_event *e, struct analysis_names *nm)
{
	switch (e->kind) {
	case GT_EV_KERNEL:
		return (e->flags & GT_EVF_NCCL) || (name_class(nm, e->name) & ANALYSIS_NCCL) ?
		       ANALYSIS_FC_KCOMM : ANALYSIS_FC_KCOMP;
	case GT_EV_MEMCPY:
		switch (e->sub) {
		case GT_COPY_H2D: return ANALYSIS_FC_H2D;
		case GT_COPY_D2H: return ANALYSIS_FC_D2H;
		case GT_COPY_H2H: return ANALYSIS_FC_H2H;
		default: return ANALYSIS_FC_COPY;
		}
	case GT_EV_MEMSET: return ANALYSIS_FC_MEMSET;
	case GT_EV_RUNTIME:
		return name_class(nm, e->name) & ANALYSIS_LAUNCH ? ANALYSIS_FC_RUNTIME : ANALYSIS_FC_RT_OTHER;
	case GT_EV_DRIVER:
		return name_class(nm, e->name) & ANALYSIS_LAUNCH ? ANALYSIS_FC_DRIVER : ANALYSIS_FC_DRV_OTHER;
	case GT_EV_CPU_OP:
	case GT_EV_PYTHON:
	case GT_EV_NVTX: {
		unsigned c = name_class(nm, e->name);
		if ((e->flags & GT_EVF_DATALOADER) || (c & ANALYSIS_DATALOADER))
			return ANALYSIS_FC_INPUT;
		return e->kind == GT_EV_NVTX || (c & ANALYSIS_PROFSTEP) ? -1 : ANALYSIS_FC_CPU;
	}
	default: return -1;
	}
}

/* out[c] = union of the class-c events of the lanes clipped to [t0, t1)
 * (the loop of interval_collect_multi with the class and the push inline) */
static int collect(const struct gt_store *s, const uint32_t *lanes, size_t nlanes, int64_t t0,
		   int64_t t1, struct analysis_names *nm, struct interval_list *out, struct analysis_pass *p)
{
	int rc = 0;
	if (!nlanes)
		return 0;
	struct interval_list *parts = calloc(nlanes * ANALYSIS_FC_N, sizeof(*parts));
	struct interval_list *col = calloc(nlanes, sizeof(*col));
	if (!parts || !col) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < nlanes; k++) {
		const struct gt_lane *ln = gt_store_lane_at(s, lanes[k]);
		struct interval_list *lp = &parts[k * ANALYSIS_FC_N];
		size_t first, last;
		gt_store_lane_range(ln, t0, t1, &first, &last);
		gt_store_read_tick(s, ln, first, last);
		for (size_t i = first; i < last; i++) {
			const struct gt_event *e = &ln->ev[i];
			int64_t a = e->start_ns, b = gt_event_end(e);
			if (p && e->corr) {   /* correlation ids of the GPU work (gputime) */
				p->corr_n++;
				p->corr_lo = e->corr < p->corr_lo ? e->corr : p->corr_lo;
				p->corr_hi = e->corr > p->corr_hi ? e->corr : p->corr_hi;
			}
			if (b <= a || b <= t0 || a >= t1)
				continue;
			int c = fine_class(e, nm);
			if (c < 0)
				continue;
			struct interval_list *o = &lp[c];
			if (a < t0)
				a = t0;
			if (b > t1)
				b = t1;
			if (o->n) {          /* sorted by start: merge with the last */
				struct interval *l = &o->v[o->n - 1];
				if (a <= l->b) {
					if (b > l->b)
						l->b = b;
					continue;
				}
			} else if (!o->cap && interval_reserve(o, last - i)) {  /* the lane's rest */
				rc = -ENOMEM;
				goto out;
			}
			o->v[o->n].a = a;
			o->v[o->n].b = b;
			o->n++;
		}
	}
	for (int c = 0; c < ANALYSIS_FC_N && !rc; c++) {
		size_t np = 0;
		for (size_t k = 0; k < nlanes; k++)
			if (parts[k * ANALYSIS_FC_N + c].n)
				interval_move(&col[np++], &parts[k * ANALYSIS_FC_N + c]);
		rc = interval_merge_parts(col, np, &out[c]);
		for (size_t k = 0; k < np; k++)
			interval_done(&col[k]);
	}
out:
	for (size_t i = 0; parts && i < nlanes * ANALYSIS_FC_N; i++)
		interval_done(&parts[i]);
	free(parts);
	free(col);
	return rc;
}

void analysis_pass_done(struct analysis_pass *p)
{
	for (int c = 0; c < ANALYSIS_FC_N; c++)
		interval_done(&p->host[c]);
	for (size_t d = 0; p->dev && d < p->ndev; d++)
		for (int c = 0; c < ANALYSIS_FC_N; c++)
			interval_done(&p->dev[d][c]);
	free(p->dev);
	free(p->devs);
	memset(p, 0, sizeof(*p));
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

long analysis_lane_devices(const struct gt_store *s, const uint32_t *gl, size_t ng, int32_t **out)
{
	int32_t *d = malloc((ng + 1) * sizeof(*d));
	if (!(*out = d))
		return -ENOMEM;
	for (size_t k = 0; k < ng; k++)
		d[k] = gt_store_lane_at(s, gl[k])->key.device;
	qsort(d, ng, sizeof(*d), cmp_i32);
	size_t w = 0;
	for (size_t k = 0; k < ng; k++)
		if (!w || d[w - 1] != d[k])
			d[w++] = d[k];
	return (long)w;
}

int analysis_pass_build(const struct gt_store *s, int32_t rank, int32_t gpu, int64_t t0, int64_t t1,
		   int host, struct analysis_names *nm, struct analysis_pass *p)
{
	uint32_t *hl = NULL, *gl = NULL, *sel = NULL;
	int rc = -ENOMEM;
	memset(p, 0, sizeof(*p));
	p->rank = rank;
	p->gpu = gpu;
	p->t0 = t0;
	p->t1 = t1;
	p->has_host = host;
	p->corr_lo = UINT32_MAX;
	long nh = analysis_lanes(s, rank, GT_LANE_HOST, -1, &hl);
	long ng = analysis_lanes(s, rank, GT_LANE_GPU, gpu, &gl);
	if (nh < 0 || ng < 0)
		goto out;
	long nd = analysis_lane_devices(s, gl, (size_t)ng, &p->devs);
	sel = malloc(((size_t)ng + 1) * sizeof(*sel));
	if (nd < 0 || !sel)
		goto out;
	p->ndev = (size_t)nd;
	p->dev = calloc(p->ndev ? p->ndev : 1, sizeof(*p->dev));
	if (!p->dev)
		goto out;
	if (host && collect(s, hl, (size_t)nh, t0, t1, nm, p->host, NULL))
		goto out;
	for (size_t d = 0; d < p->ndev; d++) {
		size_t n = 0;
		for (long k = 0; k < ng; k++)
			if (gt_store_lane_at(s, gl[k])->key.device == p->devs[d])
				sel[n++] = gl[k];
		if (collect(s, sel, n, t0, t1, nm, p->dev[d], p))
			goto out;
	}
	rc = 0;
out:
	free(hl);
	free(gl);
	free(sel);
	if (rc)
		analysis_pass_done(p);
	return rc;
}

/* events of the lanes starting before t (one block of each lane read) */
static uint64_t starts_before(const struct gt_store *s, const uint32_t *lanes, size_t n, int64_t t)
{
	uint64_t c = 0;
	for (size_t k = 0; k < n; k++)
		c += gt_store_lane_lower_start(gt_store_lane_at(s, lanes[k]), t);
	return c;
}

long analysis_slabs(const struct gt_store *s, int32_t rank, int32_t gpu, int host, int64_t t0,
		    int64_t t1, int64_t **cuts)
{
	uint32_t *hl = NULL, *gl = NULL;
	if (!gt_store_budget(s)) {   /* one slab: nothing to count */
		if (!cuts)
			return 1;
		if (!(*cuts = malloc(2 * sizeof(**cuts))))
			return -ENOMEM;
		(*cuts)[0] = t0;
		(*cuts)[1] = t1;
		return 1;
	}
	long nh = host ? analysis_lanes(s, rank, GT_LANE_HOST, -1, &hl) : 0;
	long ng = analysis_lanes(s, rank, GT_LANE_GPU, gpu, &gl);
	long n = -ENOMEM;
	if (cuts)
		*cuts = NULL;
	if (nh < 0 || ng < 0)
		goto out;
	size_t nl = (size_t)nh + (size_t)ng, budget = gt_store_budget(s);
	uint32_t *lanes = gl;
	if (nh) {   /* one list: the host lanes after the GPU lanes */
		uint32_t *v = realloc(gl, (nl ? nl : 1) * sizeof(*v));
		if (!v)
			goto out;
		memcpy(v + ng, hl, (size_t)nh * sizeof(*v));
		lanes = gl = v;
	}
	/* the events in [t0, t1): those of each lane's range */
	uint64_t total = 0;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t k = 0; k < nl; k++) {
		const struct gt_lane *l = gt_store_lane_at(s, lanes[k]);
		size_t first, last;
		gt_store_lane_range(l, t0, t1, &first, &last);
		if (first >= last)
			continue;
		total += last - first;
		gt_store_read_tick(s, l, first, first + 1);
		if (l->ev[first].start_ns < lo)
			lo = l->ev[first].start_ns;
		gt_store_read_tick(s, l, last - 1, last);
		if (l->ev[last - 1].start_ns > hi)
			hi = l->ev[last - 1].start_ns;
	}
	uint64_t per = budget / ANALYSIS_SLAB_BYTES;
	if (per < ANALYSIS_SLAB_MIN)
		per = ANALYSIS_SLAB_MIN;
	long want = total <= per ? 1 : (long)((total + per - 1) / per);
	if (!cuts) {   /* how many only */
		n = want;
		goto out;
	}
	lo = lo > t0 ? lo : t0;
	hi = hi < t1 ? hi : t1 - 1;
	*cuts = malloc(((size_t)want + 1) * sizeof(**cuts));
	if (!*cuts)
		goto out;
	int64_t *c = *cuts;
	c[0] = t0;
	n = 1;
	/* the k-th cut: the first time by which k slabs' worth of events have
	 * started (bisection over time; equal times make no empty slab) */
	uint64_t base = want > 1 ? starts_before(s, lanes, nl, lo) : 0;
	for (long k = 1; k < want; k++) {
		uint64_t goal = base + (uint64_t)k * (total / (uint64_t)want);
		int64_t a = c[n - 1] > lo ? c[n - 1] : lo, b = hi;
		if (a >= b)
			break;
		while (b - a > 1) {   /* starts_before(a) < goal <= starts_before(b) */
			int64_t m = a + (int64_t)(((uint64_t)b - (uint64_t)a) / 2);
			if (starts_before(s, lanes, nl, m) < goal)
				a = m;
			else
				b = m;
		}
		if (b > c[n - 1] && b < t1)
			c[n++] = b;
	}
	c[n] = t1;
out:
	free(hl);
	free(gl);
	if (n < 0 && cuts) {
		free(*cuts);
		*cuts = NULL;
	}
	return n;
}

long analysis_pass_dev_index(const struct analysis_pass *p, int32_t device)
{
	for (size_t d = 0; d < p->ndev; d++)
		if (p->devs[d] == device)
			return (long)d;
	return -1;
}

/* out = a copy of x (out empty) */
static int copy_ivl(const struct interval_list *x, struct interval_list *out)
{
	if (interval_reserve(out, x->n ? x->n : 1))
		return -ENOMEM;
	if (x->n)
		memcpy(out->v, x->v, x->n * sizeof(*out->v));
	out->n = x->n;
	return 0;
}

/* union of the listed inputs (not consumed) into out: balanced pairwise rounds */
static int union_many(const struct interval_list *const *in, size_t n, struct interval_list *out)
{
	interval_done(out);
	if (n <= 1)
		return n ? copy_ivl(in[0], out) : 0;
	size_t np = (n + 1) / 2;
	struct interval_list *parts = calloc(np, sizeof(*parts));
	if (!parts)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i += 2)
		rc = i + 1 == n ? copy_ivl(in[i], &parts[i / 2]) :
				  interval_union(in[i], in[i + 1], &parts[i / 2]);
	while (!rc && np > 1) {
		size_t w = 0;
		for (size_t i = 0; i < np && !rc; i += 2) {
			if (i + 1 == np) {
				if (w != i)
					interval_move(&parts[w], &parts[i]);
				w++;
				break;
			}
			struct interval_list m = {0};
			rc = interval_union(&parts[i], &parts[i + 1], &m);
			interval_done(&parts[i]);
			interval_done(&parts[i + 1]);
			interval_move(&parts[w++], &m);
		}
		np = w;
	}
	if (!rc)
		interval_move(out, &parts[0]);
	for (size_t i = 0; i < (n + 1) / 2; i++)
		interval_done(&parts[i]);
	free(parts);
	return rc;
}

const struct interval_list *analysis_pass_get(const struct analysis_pass *p, unsigned mask, int with_host,
				   long dev, struct interval_list *tmp)
{
	const struct interval_list *in[ANALYSIS_FC_N * 17];
	const struct interval_list **v = in;
	size_t n = 0, max = ANALYSIS_FC_N * (p->ndev + 1);
	interval_done(tmp);
	if (max > sizeof(in) / sizeof(in[0])) {
		v = malloc(max * sizeof(*v));
		if (!v)
			return NULL;
	}
	for (int c = 0; c < ANALYSIS_FC_N; c++) {
		if (!((mask >> c) & 1))
			continue;
		if (with_host && p->host[c].n)
			v[n++] = &p->host[c];
		for (size_t d = 0; d < p->ndev; d++)
			if ((dev < 0 || (size_t)dev == d) && p->dev[d][c].n)
				v[n++] = &p->dev[d][c];
	}
	const struct interval_list *r = tmp;
	if (n == 1)
		r = v[0];
	else if (n > 1 && union_many(v, n, tmp))
		r = NULL;
	if (v != in)
		free(v);
	return r;
}
