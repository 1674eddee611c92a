/*
 * multigpu_copies.c - copies recurring at the same place every step: a copy
 * is keyed by (kind, bytes, n-th copy of that kind in the step) per GPU;
 * keys present in >= 80 % of the GPU's steps (and at least 2) are kept with
 * their mean time and mean offset from the step start.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "multigpu_priv.h"

#define MAX_KEYS 512

struct cp {
	int64_t start, dur;
	uint64_t bytes;
	int kind;
};

static int cmp_cp(const void *a, const void *b)
{
	const struct cp *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

static int grow(struct gt_multigpu_result *r, size_t *cap)
{
	if (r->ncopies < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 16;
	struct gt_multigpu_copy *nv = realloc(r->copies, nc * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	r->copies = nv;
	*cap = nc;
	return 0;
}

int multigpu_copies(const struct gt_store *s, size_t gi, const struct analysis_win *win, long nw,
		    struct gt_multigpu_result *r)
{
	const struct gt_multigpu_gpu *g = &r->gpus[gi];
	uint32_t *gl = NULL;
	struct cp *buf = NULL;
	size_t bcap = 0, cap = r->ncopies, base = r->ncopies;
	int rc = 0;
	long ng = analysis_lanes(s, g->rank, GT_LANE_GPU, g->device, &gl);
	if (ng < 0)
		return -ENOMEM;
	for (long w = 0; w < nw && !rc; w++) {
		size_t nb = 0;
		for (long k = 0; k < ng; k++) {
			const struct gt_lane *l = gt_store_lane_at(s, gl[k]);
			if (!((l->kinds_mask >> GT_EV_MEMCPY) & 1))
				continue;
			size_t first, last;
			gt_store_lane_range(l, win[w].t0, win[w].t1, &first, &last);
			gt_store_read_tick(s, l, first, last);
			for (size_t i = first; i < last; i++) {
				const struct gt_event *e = &l->ev[i];
				if (e->kind != GT_EV_MEMCPY || e->start_ns < win[w].t0 || e->start_ns >= win[w].t1)
					continue;
				if (nb == bcap) {
					size_t nc = bcap ? bcap * 2 : 64;
					struct cp *nv = realloc(buf, nc * sizeof(*nv));
					if (!nv) {
						rc = -ENOMEM;
						goto out;
					}
					buf = nv;
					bcap = nc;
				}
				buf[nb++] = (struct cp){ e->start_ns, e->dur_ns, e->arg, e->sub };
			}
		}
		if (nb > 1)
			qsort(buf, nb, sizeof(*buf), cmp_cp);
		uint32_t ord[GT_COPY_KIND_COUNT] = {0};
		for (size_t i = 0; i < nb; i++) {
			int kind = buf[i].kind < GT_COPY_KIND_COUNT ? buf[i].kind : 0;
			uint32_t o = ord[kind]++;
			size_t j;
			for (j = base; j < r->ncopies; j++)
				if (r->copies[j].kind == kind && r->copies[j].bytes == buf[i].bytes &&
				    r->copies[j].ordinal == o)
					break;
			if (j == r->ncopies) {
				if (r->ncopies - base >= MAX_KEYS)
					continue;
				if ((rc = grow(r, &cap)))
					goto out;
				r->copies[j] = (struct gt_multigpu_copy){ g->rank, g->device, kind, buf[i].bytes,
								      o, 0, 0, 0, 0 };
				r->ncopies++;
			}
			struct gt_multigpu_copy *c = &r->copies[j];
			if (c->steps && c->last_step == (uint32_t)w)
				continue;
			c->steps++;
			c->last_step = (uint32_t)w;
			c->mean_ns += (double)buf[i].dur;
			c->mean_offset_ns += (double)(buf[i].start - win[w].t0);
		}
	}
	/* keep the recurring keys */
	size_t keep = base;
	for (size_t j = base; j < r->ncopies; j++) {
		struct gt_multigpu_copy c = r->copies[j];
		if (c.steps < 2 || (long)c.steps * 5 < nw * 4)
			continue;
		c.mean_ns /= c.steps;
		c.mean_offset_ns /= c.steps;
		r->copies[keep++] = c;
	}
	r->ncopies = keep;
out:
	free(buf);
	free(gl);
	return rc;
}
