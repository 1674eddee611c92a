/*
 * anl_pass.c - one pass over a rank's events in a time range, shared by the
 * step analyses: per lane group (the host lanes, each GPU's lanes) the
 * interval union of each fine event class (see anl.h).  breakdown, pipeline
 * and gputime build their categories as unions of these classes, so the
 * overview reads the events of a range once instead of once per analysis.
 * A union of unions is the same set, so the results do not change.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "anl.h"

/* the fine class of an event, -1 for none (ProfilerStep spans, plain NVTX) */
static int fine_class(const struct gt_event *e, void *p)
{
	struct anl_names *nm = p;
	switch (e->kind) {
	case GT_EV_KERNEL: return anl_is_comm(nm, e) ? ANL_FC_KCOMM : ANL_FC_KCOMP;
	case GT_EV_MEMCPY:
		switch (e->sub) {
		case GT_COPY_H2D: return ANL_FC_H2D;
		case GT_COPY_D2H: return ANL_FC_D2H;
		case GT_COPY_H2H: return ANL_FC_H2H;
		default: return ANL_FC_COPY;
		}
	case GT_EV_MEMSET: return ANL_FC_MEMSET;
	case GT_EV_RUNTIME: return ANL_FC_RUNTIME;
	case GT_EV_DRIVER: return ANL_FC_DRIVER;
	case GT_EV_CPU_OP:
	case GT_EV_PYTHON:
		if (anl_is_input(nm, e))
			return ANL_FC_INPUT;
		return (anl_name_class(nm, e->name) & ANL_PROFSTEP) ? -1 : ANL_FC_CPU;
	case GT_EV_NVTX: return anl_is_input(nm, e) ? ANL_FC_INPUT : -1;
	default: return -1;
	}
}

void anl_pass_done(struct anl_pass *p)
{
	for (int c = 0; c < ANL_FC_N; c++)
		ivl_done(&p->host[c]);
	for (size_t d = 0; p->dev && d < p->ndev; d++)
		for (int c = 0; c < ANL_FC_N; c++)
			ivl_done(&p->dev[d][c]);
	free(p->dev);
	free(p->devs);
	memset(p, 0, sizeof(*p));
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

int anl_pass_build(const struct gt_store *s, int32_t rank, int32_t gpu, int64_t t0, int64_t t1,
		   int host, struct anl_names *nm, struct anl_pass *p)
{
	uint32_t *hl = NULL, *gl = NULL, *sel = NULL;
	int rc = -ENOMEM;
	memset(p, 0, sizeof(*p));
	p->rank = rank;
	p->gpu = gpu;
	p->t0 = t0;
	p->t1 = t1;
	p->has_host = host;
	long nh = anl_lanes(s, rank, GT_LANE_HOST, -1, &hl);
	long ng = anl_lanes(s, rank, GT_LANE_GPU, gpu, &gl);
	if (nh < 0 || ng < 0)
		goto out;
	p->devs = malloc(((size_t)ng + 1) * sizeof(*p->devs));
	sel = malloc(((size_t)ng + 1) * sizeof(*sel));
	if (!p->devs || !sel)
		goto out;
	for (long k = 0; k < ng; k++)
		p->devs[p->ndev++] = store_lane_at(s, gl[k])->key.device;
	qsort(p->devs, p->ndev, sizeof(*p->devs), cmp_i32);
	size_t w = 0;
	for (size_t k = 0; k < p->ndev; k++)
		if (!w || p->devs[w - 1] != p->devs[k])
			p->devs[w++] = p->devs[k];
	p->ndev = w;
	p->dev = calloc(w ? w : 1, sizeof(*p->dev));
	if (!p->dev)
		goto out;
	if (host && ivl_collect_multi(s, hl, (size_t)nh, t0, t1, fine_class, nm, ANL_FC_N, p->host))
		goto out;
	for (size_t d = 0; d < p->ndev; d++) {
		size_t n = 0;
		for (long k = 0; k < ng; k++)
			if (store_lane_at(s, gl[k])->key.device == p->devs[d])
				sel[n++] = gl[k];
		if (ivl_collect_multi(s, sel, n, t0, t1, fine_class, nm, ANL_FC_N, p->dev[d]))
			goto out;
	}
	rc = 0;
out:
	free(hl);
	free(gl);
	free(sel);
	if (rc)
		anl_pass_done(p);
	return rc;
}

long anl_pass_dev_index(const struct anl_pass *p, int32_t device)
{
	for (size_t d = 0; d < p->ndev; d++)
		if (p->devs[d] == device)
			return (long)d;
	return -1;
}

/* out = a copy of x (out empty) */
static int copy_ivl(const struct ivl_list *x, struct ivl_list *out)
{
	if (ivl_reserve(out, x->n ? x->n : 1))
		return -ENOMEM;
	if (x->n)
		memcpy(out->v, x->v, x->n * sizeof(*out->v));
	out->n = x->n;
	return 0;
}

/* union of the listed inputs (not consumed) into out: balanced pairwise rounds */
static int union_many(const struct ivl_list *const *in, size_t n, struct ivl_list *out)
{
	ivl_done(out);
	if (n <= 1)
		return n ? copy_ivl(in[0], out) : 0;
	size_t np = (n + 1) / 2;
	struct ivl_list *parts = calloc(np, sizeof(*parts));
	if (!parts)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i += 2)
		rc = i + 1 == n ? copy_ivl(in[i], &parts[i / 2]) :
				  ivl_union(in[i], in[i + 1], &parts[i / 2]);
	while (!rc && np > 1) {
		size_t w = 0;
		for (size_t i = 0; i < np && !rc; i += 2) {
			if (i + 1 == np) {
				if (w != i)
					ivl_move(&parts[w], &parts[i]);
				w++;
				break;
			}
			struct ivl_list m = {0};
			rc = ivl_union(&parts[i], &parts[i + 1], &m);
			ivl_done(&parts[i]);
			ivl_done(&parts[i + 1]);
			ivl_move(&parts[w++], &m);
		}
		np = w;
	}
	if (!rc)
		ivl_move(out, &parts[0]);
	for (size_t i = 0; i < (n + 1) / 2; i++)
		ivl_done(&parts[i]);
	free(parts);
	return rc;
}

int anl_pass_union(const struct anl_pass *p, unsigned mask, int with_host, long dev,
		   struct ivl_list *out)
{
	const struct ivl_list *in[ANL_FC_N * 17];
	const struct ivl_list **v = in;
	size_t n = 0, max = ANL_FC_N * (p->ndev + 1);
	if (max > sizeof(in) / sizeof(in[0])) {
		v = malloc(max * sizeof(*v));
		if (!v)
			return -ENOMEM;
	}
	for (int c = 0; c < ANL_FC_N; c++) {
		if (!((mask >> c) & 1))
			continue;
		if (with_host && p->host[c].n)
			v[n++] = &p->host[c];
		for (size_t d = 0; d < p->ndev; d++)
			if ((dev < 0 || (size_t)dev == d) && p->dev[d][c].n)
				v[n++] = &p->dev[d][c];
	}
	int rc = union_many(v, n, out);
	if (v != in)
		free(v);
	return rc;
}
