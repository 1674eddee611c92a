/*
 * steps.c - find the training steps of a rank (see gtrace/steps.h): host
 * spans from annotations or NVTX, device-side widening through the
 * correlation of runtime calls and GPU work, tail dropping, per-GPU shares.
 * Inference from periodic device work is in steps_infer.c.
 */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/steps.h"
#include "analysis.h"
#include "steps_priv.h"

const char *gt_steps_source_name(enum gt_steps_source src)
{
	switch (src) {
	case GT_STEPS_SRC_ANNOT: return "annotation";
	case GT_STEPS_SRC_NVTX: return "nvtx";
	case GT_STEPS_SRC_INFERRED: return "inferred";
	case GT_STEPS_SRC_PROFSTEP: return "ProfilerStep";
	default: return "none";
	}
}

void gt_steps_list_done(struct gt_steps_list *l)
{
	free(l->v);
	free(l->gpus);
	free(l->gpu_mem);
	memset(l, 0, sizeof(*l));
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

long gt_steps_ranks(const struct gt_store *s, int32_t **out)
{
	size_t nl = gt_store_lane_count(s), n = 0;
	int32_t *v = malloc((nl ? nl : 1) * sizeof(*v));
	*out = NULL;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < nl; i++)
		v[n++] = gt_store_lane_at(s, (uint32_t)i)->key.rank;
	qsort(v, n, sizeof(*v), cmp_i32);
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (!w || v[w - 1] != v[i])
			v[w++] = v[i];
	if (!w) {
		free(v);
		return 0;
	}
	*out = v;
	return (long)w;
}

int steps_hv_push(struct steps_hv *h, int64_t t0, int64_t t1, int64_t number,
		  uint32_t name, unsigned flags)
{
	if (h->n == h->cap) {
		size_t nc = h->cap ? h->cap * 2 : 32;
		struct steps_host *nv = realloc(h->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		h->v = nv;
		h->cap = nc;
	}
	h->v[h->n++] = (struct steps_host){ t0, t1, number, name, flags };
	return 0;
}

static int cmp_host(const void *a, const void *b)
{
	const struct steps_host *x = a, *y = b;
	if (x->t0 != y->t0)
		return (x->t0 > y->t0) - (x->t0 < y->t0);
	return (x->t1 < y->t1) - (x->t1 > y->t1);   /* longer first */
}

/* sort by start and drop spans nested in (or duplicating) an earlier one */
static void host_normalize(struct steps_hv *h)
{
	if (h->n > 1)
		qsort(h->v, h->n, sizeof(*h->v), cmp_host);
	size_t w = 0;
	for (size_t i = 0; i < h->n; i++) {
		if (w && h->v[i].t1 <= h->v[w - 1].t1 && h->v[i].t0 < h->v[w - 1].t1)
			continue;
		h->v[w++] = h->v[i];
	}
	h->n = w;
}

/* trailing number of a name ("ProfilerStep#12" -> 12), or -1 */
static int64_t name_number(const char *p)
{
	size_t len = strlen(p), i = len;
	while (i > 0 && p[i - 1] >= '0' && p[i - 1] <= '9')
		i--;
	if (i == len || len - i > 18)
		return -1;
	return strtoll(p + i, NULL, 10);
}

/* source 1: GT_EV_STEP spans and ProfilerStep#N CPU ops */
static int find_annot(const struct gt_store *s, const uint32_t *hl, size_t nh,
		      struct analysis_names *nm, struct steps_hv *h)
{
	int any_step = 0;   /* GT_EV_STEP spans present: no need to read op names */
	for (size_t k = 0; k < nh; k++)
		any_step |= (gt_store_lane_at(s, hl[k])->kinds_mask >> GT_EV_STEP) & 1;
	for (size_t k = 0; k < nh; k++) {
		const struct gt_lane *l = gt_store_lane_at(s, hl[k]);
		int has_step = (l->kinds_mask >> GT_EV_STEP) & 1;
		int has_op = !any_step && (((l->kinds_mask >> GT_EV_CPU_OP) & 1) ||
					   ((l->kinds_mask >> GT_EV_NVTX) & 1));
		if (!has_step && !has_op)
			continue;
		for (size_t i = 0; i < l->n; i++) {
			gt_store_read_walk(s, l, 0, i, l->n);
			const struct gt_event *e = &l->ev[i];
			int64_t num;
			if (e->kind == GT_EV_STEP)
				num = (int64_t)e->arg;
			else if (has_op && (e->kind == GT_EV_CPU_OP || e->kind == GT_EV_NVTX) &&
				 (analysis_name_class(nm, e->name) & ANALYSIS_PROFSTEP))
				num = name_number(gt_store_str(s, e->name));
			else
				continue;
			if (steps_hv_push(h, e->start_ns, gt_event_end(e), num, e->name,
					  e->flags & GT_EVF_INFERRED))
				return -ENOMEM;
		}
	}
	return 0;
}

/* source 2: NVTX ranges matching the pattern */
static int find_nvtx(const struct gt_store *s, const uint32_t *hl, size_t nh,
		     const char *pattern, struct steps_hv *h, char *err, size_t errlen)
{
	regex_t re;
	int rc = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		snprintf(err, errlen, "step pattern '%s': invalid regular expression", pattern);
		return -EINVAL;
	}
	size_t ns = gt_store_str_count(s);
	int8_t *match = calloc(ns ? ns : 1, 1);     /* 0 unknown, 1 yes, -1 no */
	if (!match) {
		regfree(&re);
		return -ENOMEM;
	}
	rc = 0;
	for (size_t k = 0; k < nh && !rc; k++) {
		const struct gt_lane *l = gt_store_lane_at(s, hl[k]);
		if (!((l->kinds_mask >> GT_EV_NVTX) & 1))
			continue;
		for (size_t i = 0; i < l->n; i++) {
			gt_store_read_walk(s, l, 0, i, l->n);
			const struct gt_event *e = &l->ev[i];
			if (e->kind != GT_EV_NVTX || e->name >= ns)
				continue;
			if (!match[e->name])
				match[e->name] = regexec(&re, gt_store_str(s, e->name), 0, NULL, 0) ? -1 : 1;
			if (match[e->name] < 0)
				continue;
			if ((rc = steps_hv_push(h, e->start_ns, gt_event_end(e),
						name_number(gt_store_str(s, e->name)), e->name, 0)))
				break;
		}
	}
	free(match);
	regfree(&re);
	return rc;
}

/* build the result list from normalized host spans (windows = host spans) */
static int list_from_host(struct gt_steps_list *out, const struct steps_hv *h, int32_t rank)
{
	out->v = calloc(h->n ? h->n : 1, sizeof(*out->v));
	out->gpu_mem = calloc((h->n ? h->n : 1) * (out->ngpus ? out->ngpus : 1),
			      sizeof(*out->gpu_mem));
	if (!out->v || !out->gpu_mem)
		return -ENOMEM;
	out->n = h->n;
	int64_t ord = 0;
	for (size_t i = 0; i < h->n; i++) {
		struct gt_steps_step *st = &out->v[i];
		st->number = h->v[i].number >= 0 ? h->v[i].number : ord;
		ord = st->number + 1;
		st->rank = rank;
		st->name = h->v[i].name;
		st->host_t0_ns = st->t0_ns = h->v[i].t0;
		st->host_t1_ns = st->t1_ns = h->v[i].t1;
		st->flags = h->v[i].flags;
		st->gpu = &out->gpu_mem[i * out->ngpus];
		for (size_t g = 0; g < out->ngpus; g++)
			st->gpu[g] = (struct gt_steps_gpu){ out->gpus[g], 0, INT64_MAX, INT64_MIN };
	}
	return 0;
}

static int gpu_devices(const struct gt_store *s, const uint32_t *gl, size_t ng,
		       struct gt_steps_list *out)
{
	out->gpus = malloc((ng ? ng : 1) * sizeof(*out->gpus));
	if (!out->gpus)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < ng; i++)
		out->gpus[n++] = gt_store_lane_at(s, gl[i])->key.device;
	qsort(out->gpus, n, sizeof(*out->gpus), cmp_i32);
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (!w || out->gpus[w - 1] != out->gpus[i])
			out->gpus[w++] = out->gpus[i];
	out->ngpus = w;
	return 0;
}

int steps_find_uncached(const struct gt_store *s, int32_t rank, const struct gt_steps_opts *o,
			struct gt_steps_list *out, char *err, size_t errlen)
{
	uint32_t *hl = NULL, *gl = NULL;
	struct steps_hv h = {0};
	struct analysis_names nm = {0};
	int rc;
	memset(out, 0, sizeof(*out));
	out->rank = rank < 0 ? 0 : rank;
	rank = out->rank;
	long nh = analysis_lanes(s, rank, GT_LANE_HOST, -1, &hl);
	long ng = analysis_lanes(s, rank, GT_LANE_GPU, -1, &gl);
	if (nh < 0 || ng < 0 || analysis_names_init(&nm, s)) {
		rc = -ENOMEM;
		goto fail;
	}
	if ((rc = gpu_devices(s, gl, (size_t)ng, out)))
		goto fail;
	if ((rc = find_annot(s, hl, (size_t)nh, &nm, &h)))
		goto fail;
	if (h.n) {
		out->source = strncmp(gt_store_str(s, h.v[0].name), "ProfilerStep#", 13) ?
			      GT_STEPS_SRC_ANNOT : GT_STEPS_SRC_PROFSTEP;
	} else {
		const char *pat = o && o->pattern ? o->pattern : GT_STEPS_DEFAULT_PATTERN;
		if ((rc = find_nvtx(s, hl, (size_t)nh, pat, &h, err, errlen)))
			goto fail;
		if (h.n)
			out->source = GT_STEPS_SRC_NVTX;
	}
	if (!h.n) {
		if ((rc = steps_infer(s, gl, (size_t)ng, &h)))
			goto fail;
		if (h.n)
			out->source = GT_STEPS_SRC_INFERRED;
	}
	host_normalize(&h);
	if ((rc = list_from_host(out, &h, rank)))
		goto fail;
	if (out->n && (rc = steps_widen(s, out, hl, (size_t)nh, gl, (size_t)ng)))
		goto fail;
	free(hl);
	free(gl);
	free(h.v);
	analysis_names_done(&nm);
	return 0;
fail:
	if (rc == -ENOMEM && err && errlen)
		snprintf(err, errlen, "steps: out of memory");
	free(hl);
	free(gl);
	free(h.v);
	analysis_names_done(&nm);
	gt_steps_list_done(out);
	return rc;
}
