/*
 * runalign.c - two runs opened together (`gtrace open A B` where the files
 * never overlap in time, or come from jobs of different sizes: the importer
 * notes it as import.mixed_runs) are shown from a common start: each
 * rank is moved so that its first step (when every rank has steps; else its
 * first event) starts where the earliest one's does.  Ranks of one job
 * (overlapping in time) keep their absolute times.
 */
#include <stdio.h>
#include <stdlib.h>
#include "runalign.h"

/* the anchor of each rank: first step start, or first event start
 * (use_steps 0); INT64_MAX when the rank has none */
static void anchors(const struct gt_store *s, int use_steps, const int32_t *rk, size_t nr,
		    int64_t *out)
{
	for (size_t i = 0; i < nr; i++)
		out[i] = INT64_MAX;
	for (size_t li = 0; li < gt_store_lane_count(s); li++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)li);
		int32_t r = l->key.rank;
		size_t i = 0;
		while (i < nr && rk[i] != r)
			i++;
		if (i == nr || !l->n)
			continue;
		if (!use_steps) {
			if (l->ev[0].start_ns < out[i])
				out[i] = l->ev[0].start_ns;
			continue;
		}
		if (!(l->kinds_mask & (1u << GT_EV_STEP)))
			continue;
		for (size_t k = 0; k < l->n; k++)
			if (l->ev[k].kind == GT_EV_STEP) {
				if (l->ev[k].start_ns < out[i])
					out[i] = l->ev[k].start_ns;
				break;   /* sorted by start: the lane's first step */
			}
	}
}

int runalign_starts(struct gt_store *s, char *note, size_t len)
{
	note[0] = 0;
	size_t nr = gt_store_rank_count(s);
	if (nr < 2 || !gt_store_meta_get(s, "import.mixed_runs"))
		return 0;
	int32_t *rk = malloc(nr * sizeof(*rk));
	int64_t *at = malloc(nr * sizeof(*at));
	int rc = 0;
	if (!rk || !at) {
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < nr; i++)
		rk[i] = gt_store_rank_at(s, i)->rank;
	int use_steps = 1;
	anchors(s, 1, rk, nr, at);
	for (size_t i = 0; i < nr; i++)
		if (at[i] == INT64_MAX)
			use_steps = 0;
	if (!use_steps)
		anchors(s, 0, rk, nr, at);
	int64_t target = INT64_MAX;
	for (size_t i = 0; i < nr; i++)
		if (at[i] < target)
			target = at[i];
	size_t moved = 0;
	for (size_t i = 0; i < nr && !rc; i++) {
		if (at[i] == INT64_MAX || at[i] == target)
			continue;
		rc = gt_store_shift_rank(s, rk[i], target - at[i]);
		moved++;
	}
	if (!rc && moved)
		snprintf(note, len, "runs aligned at their first %s", use_steps ? "step" : "event");
out:
	free(rk);
	free(at);
	return rc;
}
