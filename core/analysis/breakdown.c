/*
 * breakdown.c - the PyTorch TensorBoard plugin's step-time breakdown
 * (ANALYSES.md 3): inside the step windows each instant goes to the first
 * category covering it, Kernel > Memcpy > Memset > Communication > Runtime >
 * DataLoader > CPU Exec > Other.  Each category is an interval union of its
 * events (ivl_collect); the priority chain is intersections and differences
 * of those unions with the remaining window slots, so the cost is linear in
 * the events of the windows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "anl.h"
#include "ivl.h"

static const char *const cat_names[BD_NCAT] = {
	"Kernel", "Memcpy", "Memset", "Communication", "Runtime",
	"DataLoader", "CPU Exec", "Other"
};

const char *breakdown_cat_name(enum breakdown_cat c)
{
	return (unsigned)c < BD_NCAT ? cat_names[c] : "?";
}

/* the breakdown category of an event, -1 for none (ProfilerStep spans, NVTX) */
static int cat_of(const struct gt_event *e, void *p)
{
	struct anl_names *nm = p;
	switch (e->kind) {
	case GT_EV_KERNEL: return anl_is_comm(nm, e) ? BD_COMM : BD_KERNEL;
	case GT_EV_MEMCPY: return BD_MEMCPY;
	case GT_EV_MEMSET: return BD_MEMSET;
	case GT_EV_RUNTIME: return BD_RUNTIME;
	case GT_EV_CPU_OP:
	case GT_EV_PYTHON:
		if (anl_is_input(nm, e))
			return BD_DATALOADER;
		return (anl_name_class(nm, e->name) & ANL_PROFSTEP) ? -1 : BD_CPU;
	case GT_EV_NVTX: return anl_is_input(nm, e) ? BD_DATALOADER : -1;
	default: return -1;
	}
}

void breakdown_result_done(struct breakdown_result *r)
{
	free(r->rows);
	memset(r, 0, sizeof(*r));
}

int breakdown_compute(const struct gt_store *s, int32_t rank, const struct steps_list *steps,
		      const struct gt_scope *sc, struct breakdown_result *out,
		      char *err, size_t errlen)
{
	struct steps_list own = {0};
	struct anl_win *win = NULL;
	uint32_t *hl = NULL, *gl = NULL;
	struct ivl_list slots = {0}, cost[BD_NCAT], cat[BD_NCAT], anyk = {0}, rest = {0};
	uint32_t *lanes = NULL;
	struct anl_names nm = {0};
	int rc = 0;
	memset(cost, 0, sizeof(cost));
	memset(cat, 0, sizeof(cat));
	memset(out, 0, sizeof(*out));
	out->rank = rank;
	if (!steps) {
		if ((rc = steps_find(s, rank, NULL, &own, err, errlen)))
			return rc;
		steps = &own;
	}
	out->source = steps->source;
	long nw = anl_windows(s, rank, steps, sc, &win);
	long nh = anl_lanes(s, rank, GT_LANE_HOST, -1, &hl);
	long ng = anl_lanes(s, rank, GT_LANE_GPU, sc ? sc->gpu : -1, &gl);
	if (nw < 0 || nh < 0 || ng < 0 || anl_names_init(&nm, s))
		goto nomem;
	lanes = malloc(((size_t)nh + (size_t)ng + 1) * sizeof(*lanes));
	if (!lanes)
		goto nomem;
	memcpy(lanes, hl, (size_t)nh * sizeof(*lanes));
	memcpy(lanes + nh, gl, (size_t)ng * sizeof(*lanes));
	if (!nw)
		goto done;
	out->rows = calloc((size_t)nw, sizeof(*out->rows));
	if (!out->rows)
		goto nomem;
	out->n = (size_t)nw;
	for (long i = 0; i < nw; i++)
		if (ivl_push(&slots, win[i].t0, win[i].t1))
			goto nomem;
	int64_t T0 = win[0].t0, T1 = win[0].t1;
	for (long i = 1; i < nw; i++)
		if (win[i].t1 > T1)
			T1 = win[i].t1;
	if (ivl_collect_multi(s, lanes, (size_t)(nh + ng), T0, T1, cat_of, &nm, BD_OTHER, cat))
		goto nomem;
	for (int c = 0; c < BD_OTHER; c++) {
		if (ivl_intersect(&slots, &cat[c], &cost[c]) || ivl_subtract(&slots, &cost[c], &rest))
			goto nomem;
		ivl_move(&slots, &rest);
	}
	ivl_move(&cost[BD_OTHER], &slots);
	if (ivl_union(&cat[BD_KERNEL], &cat[BD_COMM], &anyk))
		goto nomem;
	int64_t sum_any = 0, sum_total = 0;
	for (long i = 0; i < nw; i++) {
		struct breakdown_row *r = &out->rows[i];
		r->step = win[i].step;
		r->t0_ns = win[i].t0;
		r->t1_ns = win[i].t1;
		r->total_ns = win[i].t1 - win[i].t0;
		for (int c = 0; c < BD_NCAT; c++) {
			r->cat_ns[c] = ivl_len_in(&cost[c], r->t0_ns, r->t1_ns);
			out->avg_ns[c] += (double)r->cat_ns[c];
		}
		r->kernel_any_ns = ivl_len_in(&anyk, r->t0_ns, r->t1_ns);
		sum_any += r->kernel_any_ns;
		sum_total += r->total_ns;
	}
	for (int c = 0; c < BD_NCAT; c++)
		out->avg_ns[c] /= (double)nw;
	out->avg_total_ns = (double)sum_total / (double)nw;
	out->gpu_util_pct = sum_total ? 100.0 * (double)sum_any / (double)sum_total : 0;
	goto done;
nomem:
	rc = -ENOMEM;
	if (err && errlen)
		snprintf(err, errlen, "breakdown: out of memory");
	breakdown_result_done(out);
done:
	for (int c = 0; c < BD_NCAT; c++) {
		ivl_done(&cost[c]);
		ivl_done(&cat[c]);
	}
	free(lanes);
	ivl_done(&slots);
	ivl_done(&anyk);
	ivl_done(&rest);
	anl_names_done(&nm);
	free(win);
	free(hl);
	free(gl);
	steps_list_done(&own);
	return rc;
}
