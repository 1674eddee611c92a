/*
 * steps_widen.c - the TensorBoard plugin's device-side step widening: GPU
 * work is tied to the step whose host span wholly contains its launching
 * runtime call (corr -> launch map of analysis.c, then the step by start), windows grow
 * to the end of that work, and trailing / cut-off steps are dropped.
 * Without correlations GPU work is tied to the window its start lies in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analysis.h"
#include "steps_priv.h"

/* step whose host span wholly holds the launch call, or -1; *hint caches
 * the last answer (GPU work of a stream is mostly launched in order) */
static long step_of_launch(const struct gt_steps_list *out, const struct analysis_launch *la, size_t *hint)
{
	size_t p = *hint;
	if (!(p < out->n && out->v[p].host_t0_ns <= la->t0 &&
	      (p + 1 == out->n || out->v[p + 1].host_t0_ns > la->t0))) {
		size_t lo = 0, hi = out->n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (out->v[mid].host_t0_ns <= la->t0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo)
			return -1;
		p = lo - 1;
		*hint = p;
	}
	return la->t1 <= out->v[p].host_t1_ns ? (long)p : -1;
}

static size_t gpu_index(const struct gt_steps_list *out, int32_t dev)
{
	size_t lo = 0, hi = out->ngpus;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (out->gpus[mid] < dev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void credit(struct gt_steps_step *st, size_t g, const struct gt_event *e,
		   int64_t *dmin, int64_t *dmax)
{
	int64_t a = e->start_ns, b = gt_event_end(e);
	st->acts++;
	if (a < *dmin)
		*dmin = a;
	if (b > *dmax)
		*dmax = b;
	st->gpu[g].acts++;
	if (a < st->gpu[g].first_ns)
		st->gpu[g].first_ns = a;
	if (b > st->gpu[g].last_ns)
		st->gpu[g].last_ns = b;
}

/* step whose window [t0, t1) holds t, or -1 */
static long window_of(const struct gt_steps_list *out, int64_t t)
{
	size_t lo = 0, hi = out->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (out->v[mid].t0_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || t >= out->v[lo - 1].t1_ns)
		return -1;
	return (long)lo - 1;
}

static void drop_tail(struct gt_steps_list *out)
{
	if (out->n < 2)
		return;
	long i = (long)out->n - 1;
	while (i >= 0 && !out->v[i].acts)
		i--;
	if (i < 0)
		return;
	size_t keep = (size_t)i + 1;
	if (i > 0 && out->v[i - 1].acts * 0.8 > out->v[i].acts)
		keep = (size_t)i;
	out->dropped = out->n - keep;
	out->n = keep;
}

int steps_widen(const struct gt_store *s, struct gt_steps_list *out,
		const uint32_t *hl, size_t nh, const uint32_t *gl, size_t ng)
{
	struct analysis_corrmap cm;
	int rc = analysis_corrmap_build(s, hl, nh, &cm);
	int64_t *dmin = malloc(out->n * sizeof(*dmin)), *dmax = malloc(out->n * sizeof(*dmax));
	if (rc || !dmin || !dmax) {
		rc = -ENOMEM;
		goto done;
	}
	for (size_t i = 0; i < out->n; i++) {
		dmin[i] = INT64_MAX;
		dmax[i] = INT64_MIN;
	}
	size_t matched = 0;
	for (size_t k = 0; k < ng && cm.n; k++) {
		const struct gt_lane *l = gt_store_lane_at(s, gl[k]);
		size_t g = gpu_index(out, l->key.device), hint = 0;
		for (size_t i = 0; i < l->n; i++) {
			gt_store_read_walk(s, l, 0, i, l->n);
			const struct gt_event *e = &l->ev[i];
			if (!e->corr || !gt_event_is_gpu(e))
				continue;
			const struct analysis_launch *la = analysis_corrmap_get(&cm, e->corr);
			long st = la ? step_of_launch(out, la, &hint) : -1;
			if (st < 0)
				continue;
			credit(&out->v[st], g, e, &dmin[st], &dmax[st]);
			matched++;
		}
	}
	if (matched) {
		out->widened = 1;
		int64_t prev = out->v[0].host_t0_ns;
		if (dmin[0] != INT64_MAX) {
			for (size_t k = 0; k < ng; k++) {
				const struct gt_lane *l = gt_store_lane_at(s, gl[k]);
				for (size_t i = 0; i < l->n; i++) {
					gt_store_read_walk(s, l, 0, i, l->n);
					if (l->ev[i].start_ns >= dmin[0])
						break;
					const struct gt_event *e = &l->ev[i];
					int64_t end = gt_event_end(e);
					if (!gt_event_is_gpu(e) || end >= dmin[0] || end <= prev)
						continue;
					const struct analysis_launch *la = analysis_corrmap_get(&cm, e->corr);
					size_t hint = 0;
					if (la && step_of_launch(out, la, &hint) >= 0)
						continue;
					prev = end;
				}
			}
		}
		for (size_t i = 0; i < out->n; i++) {
			struct gt_steps_step *st = &out->v[i];
			int64_t a = prev > st->host_t0_ns ? prev : st->host_t0_ns;
			int64_t b = st->host_t1_ns;
			if (dmax[i] != INT64_MIN && dmax[i] > b)
				b = dmax[i];
			if (b < a)
				b = a;
			st->t0_ns = a;
			st->t1_ns = b;
			prev = b;
		}
		drop_tail(out);
	} else {
		/* no correlation: GPU work belongs to the window it starts in */
		for (size_t k = 0; k < ng; k++) {
			const struct gt_lane *l = gt_store_lane_at(s, gl[k]);
			size_t g = gpu_index(out, l->key.device);
			size_t first, last;
			gt_store_lane_range(l, out->v[0].t0_ns, out->v[out->n - 1].t1_ns, &first, &last);
			gt_store_read_tick(s, l, first, last);
			for (size_t i = first; i < last; i++) {
				const struct gt_event *e = &l->ev[i];
				if (!gt_event_is_gpu(e))
					continue;
				long st = window_of(out, e->start_ns);
				if (st >= 0)
					credit(&out->v[st], g, e, &dmin[st], &dmax[st]);
			}
		}
		if (out->source == GT_STEPS_SRC_INFERRED)
			drop_tail(out);
	}
done:
	analysis_corrmap_done(&cm);
	free(dmin);
	free(dmax);
	return rc;
}
