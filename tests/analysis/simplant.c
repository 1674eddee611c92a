/*
 * simplant.c - the simulator pair with a planted per-step change
 * (simplant.h): each step's events are collected, then moved as the plant
 * says and added to the store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/event.h"
#include "gtrace/sim.h"
#include "simplant.h"

struct buf {
	struct gt_event *v;
	size_t n, cap;
};

static int collect(void *ctx, const struct gt_event *ev, size_t n)
{
	struct buf *b = ctx;
	if (b->n + n > b->cap) {
		size_t c = (b->n + n) * 2;
		struct gt_event *v = realloc(b->v, c * sizeof(*v));
		if (!v)
			return 1;
		b->v = v;
		b->cap = c;
	}
	memcpy(b->v + b->n, ev, n * sizeof(*ev));
	b->n += n;
	return 0;
}

/* the planted step's events: its DataLoader longer, the step span longer,
 * what starts after the DataLoader later; returns the step number, -1 when
 * the step has no DataLoader */
static int64_t plant(struct gt_store *s, struct gt_event *v, size_t n, int64_t extra)
{
	int64_t dl_end = INT64_MAX, step = -1;
	for (size_t i = 0; i < n; i++) {
		const char *nm = gt_store_str(s, v[i].name);
		if (v[i].kind == GT_EV_CPU_OP && nm && !strncmp(nm, "enumerate(DataLoader)", 21))
			dl_end = gt_event_end(&v[i]);
	}
	if (dl_end == INT64_MAX)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *nm = gt_store_str(s, v[i].name);
		if (v[i].kind == GT_EV_STEP) {
			v[i].dur_ns += extra;
			step = (int64_t)v[i].arg;
		} else if (v[i].kind == GT_EV_CPU_OP && nm && !strncmp(nm, "enumerate(DataLoader)", 21)) {
			v[i].dur_ns += extra;
		} else if (v[i].start_ns >= dl_end) {
			v[i].start_ns += extra;
		}
	}
	return step;
}

int64_t simplant_run(struct gt_store *s, int steps, int step_k, int64_t extra_ns, int64_t off_ns,
		     char *err, size_t errlen)
{
	struct gt_sim_opts o = { .gpus = 1, .steps = steps, .scenario = GT_SIM_BALANCED, .seed = 7 };
	struct gt_sim *sim = gt_sim_new(&o, s, err, errlen);
	if (!sim)
		return -2;
	struct buf b = { 0 };
	int64_t planted = -1, shift = off_ns;
	long r;
	int rc = 0;
	for (int k = 0; !rc && (r = gt_sim_next_step(sim, collect, &b)) > 0; k++) {
		for (size_t i = 0; i < b.n; i++)
			b.v[i].start_ns += shift;
		if (extra_ns > 0 && k == step_k) {
			planted = plant(s, b.v, b.n, extra_ns);
			shift += extra_ns;
		}
		for (size_t i = 0; i < b.n && !rc; i++)
			rc = gt_store_add(s, &b.v[i]);
		b.n = 0;
	}
	free(b.v);
	gt_sim_free(sim);
	if (rc || gt_store_finish(s)) {
		snprintf(err, errlen, "simplant: cannot build the store");
		return -2;
	}
	if (extra_ns > 0 && planted < 0) {
		snprintf(err, errlen, "simplant: step %d not planted", step_k);
		return -2;
	}
	return planted;
}
