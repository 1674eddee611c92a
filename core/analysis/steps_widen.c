/*
 * steps_widen.c - the TensorBoard plugin's device-side step widening: GPU
 * work is tied to the step whose host span wholly contains its launching
 * runtime call (a corr -> step hash built from the host lanes), windows grow
 * to the end of that work, and trailing / cut-off steps are dropped.
 * Without correlations GPU work is tied to the window its start lies in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "anl.h"
#include "steps_priv.h"

struct chash {
	uint32_t *key, *val;
	size_t mask, n;
};

static int ch_init(struct chash *h, size_t want)
{
	size_t cap = 1024;
	while (cap < want * 2)
		cap <<= 1;
	h->key = calloc(cap, sizeof(*h->key));
	h->val = malloc(cap * sizeof(*h->val));
	h->mask = cap - 1;
	h->n = 0;
	return h->key && h->val ? 0 : -ENOMEM;
}

static void ch_done(struct chash *h)
{
	free(h->key);
	free(h->val);
}

static inline size_t ch_slot(uint32_t k)
{
	return (size_t)(k * 2654435761u);
}

static int ch_put(struct chash *h, uint32_t k, uint32_t v);

static int ch_grow(struct chash *h)
{
	struct chash n2;
	if (ch_init(&n2, (h->mask + 1)))
		return -ENOMEM;
	for (size_t i = 0; i <= h->mask; i++)
		if (h->key[i])
			ch_put(&n2, h->key[i], h->val[i]);
	ch_done(h);
	*h = n2;
	return 0;
}

static int ch_put(struct chash *h, uint32_t k, uint32_t v)
{
	if ((h->n + 1) * 2 > h->mask + 1 && ch_grow(h))
		return -ENOMEM;
	size_t i = ch_slot(k) & h->mask;
	while (h->key[i] && h->key[i] != k)
		i = (i + 1) & h->mask;
	if (!h->key[i])
		h->n++;
	h->key[i] = k;
	h->val[i] = v;
	return 0;
}

static int64_t ch_get(const struct chash *h, uint32_t k)
{
	size_t i = ch_slot(k) & h->mask;
	while (h->key[i]) {
		if (h->key[i] == k)
			return h->val[i];
		i = (i + 1) & h->mask;
	}
	return -1;
}

static size_t gpu_index(const struct steps_list *out, int32_t dev)
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

static void credit(struct steps_step *st, size_t g, const struct gt_event *e,
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

/* corr -> step for runtime calls wholly inside a host span */
static int build_hash(const struct gt_store *s, const struct steps_list *out,
		      const uint32_t *hl, size_t nh, struct chash *h)
{
	if (ch_init(h, 4096))
		return -ENOMEM;
	for (size_t k = 0; k < nh; k++) {
		const struct gt_lane *l = store_lane_at(s, hl[k]);
		if (!((l->kinds_mask >> GT_EV_RUNTIME) & 1) && !((l->kinds_mask >> GT_EV_DRIVER) & 1))
			continue;
		size_t p = 0;
		for (size_t i = 0; i < l->n; i++) {
			const struct gt_event *e = &l->ev[i];
			if ((e->kind != GT_EV_RUNTIME && e->kind != GT_EV_DRIVER) || !e->corr)
				continue;
			while (p < out->n && out->v[p].host_t0_ns <= e->start_ns)
				p++;
			if (!p)
				continue;   /* before the first step */
			const struct steps_step *st = &out->v[p - 1];
			if (gt_event_end(e) <= st->host_t1_ns && ch_put(h, e->corr, (uint32_t)(p - 1)))
				return -ENOMEM;
		}
	}
	return 0;
}

/* step whose window [t0, t1) holds t, or -1 */
static long window_of(const struct steps_list *out, int64_t t)
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

static void drop_tail(struct steps_list *out)
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

int steps_widen(const struct gt_store *s, struct steps_list *out,
		const uint32_t *hl, size_t nh, const uint32_t *gl, size_t ng)
{
	struct chash h;
	int rc = build_hash(s, out, hl, nh, &h);
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
	for (size_t k = 0; k < ng && h.n; k++) {
		const struct gt_lane *l = store_lane_at(s, gl[k]);
		size_t g = gpu_index(out, l->key.device);
		for (size_t i = 0; i < l->n; i++) {
			const struct gt_event *e = &l->ev[i];
			if (!gt_event_is_gpu(e) || !e->corr)
				continue;
			int64_t st = ch_get(&h, e->corr);
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
				const struct gt_lane *l = store_lane_at(s, gl[k]);
				for (size_t i = 0; i < l->n && l->ev[i].start_ns < dmin[0]; i++) {
					const struct gt_event *e = &l->ev[i];
					int64_t end = gt_event_end(e);
					if (!gt_event_is_gpu(e) || end >= dmin[0] || end <= prev)
						continue;
					if (e->corr && ch_get(&h, e->corr) >= 0)
						continue;
					prev = end;
				}
			}
		}
		for (size_t i = 0; i < out->n; i++) {
			struct steps_step *st = &out->v[i];
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
			const struct gt_lane *l = store_lane_at(s, gl[k]);
			size_t g = gpu_index(out, l->key.device);
			size_t first, last;
			store_lane_range(l, out->v[0].t0_ns, out->v[out->n - 1].t1_ns, &first, &last);
			for (size_t i = first; i < last; i++) {
				const struct gt_event *e = &l->ev[i];
				if (!gt_event_is_gpu(e))
					continue;
				long st = window_of(out, e->start_ns);
				if (st >= 0)
					credit(&out->v[st], g, e, &dmin[st], &dmax[st]);
			}
		}
		if (out->source == STEPS_SRC_INFERRED)
			drop_tail(out);
	}
done:
	ch_done(&h);
	free(dmin);
	free(dmax);
	return rc;
}
