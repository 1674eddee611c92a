/*
 * steps_scope.c - the one place where a step becomes a time window.
 *
 * A step's window is its device-widened [t0, t1) (steps.c).  Inside a scope
 * (gtrace/report.h: a range, a step number, a GPU, a rank) a step counts when
 * its number is the scope's step (if one is set) and its window overlaps the
 * range; it then counts for the part inside the range.  Over all ranks, step
 * N's window runs from the earliest start to the latest end of the ranks'
 * step N.  `--step N` in the CLI, the table reports and the step analyses
 * (analysis_windows) all go through these functions.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "gtrace/report.h"
#include "gtrace/steps.h"

int gt_steps_window(const struct gt_steps_step *st, const struct gt_scope *sc, int64_t *t0_ns,
		 int64_t *t1_ns)
{
	int64_t r0 = sc ? sc->t0_ns : INT64_MIN, r1 = sc ? sc->t1_ns : INT64_MAX;
	if (sc && sc->step >= 0 && st->number != sc->step)
		return 0;
	int64_t a = st->t0_ns > r0 ? st->t0_ns : r0;
	int64_t b = st->t1_ns < r1 ? st->t1_ns : r1;
	/* an empty step counts when it lies inside the range */
	if (b <= a && !(st->t0_ns == st->t1_ns && a == b && a >= r0 && a < r1))
		return 0;
	*t0_ns = a;
	*t1_ns = b;
	return 1;
}

int gt_steps_range(const struct gt_store *s, int64_t step, int64_t *t0_ns, int64_t *t1_ns)
{
	int32_t *ranks = NULL;
	long nr = gt_steps_ranks(s, &ranks);
	int found = 0;
	int64_t a = INT64_MAX, b = INT64_MIN;
	for (long r = 0; r < nr; r++) {
		struct gt_steps_list l;
		char err[64];
		if (gt_steps_find(s, ranks[r], NULL, &l, err, sizeof(err)))
			continue;
		for (size_t i = 0; i < l.n; i++) {
			if (l.v[i].number != step)
				continue;
			found = 1;
			if (l.v[i].t0_ns < a)
				a = l.v[i].t0_ns;
			if (l.v[i].t1_ns > b)
				b = l.v[i].t1_ns;
		}
		gt_steps_list_done(&l);
	}
	free(ranks);
	if (!found)
		return -ENOENT;
	*t0_ns = a;
	*t1_ns = b;
	return 0;
}

int gt_steps_scope(const struct gt_store *s, const struct gt_scope *in, struct gt_scope *out,
		char *err, size_t errlen)
{
	struct gt_scope sc;
	if (in)
		sc = *in;
	else
		gt_scope_all(&sc);
	if (sc.step >= 0) {
		int64_t t0, t1;
		if (gt_steps_range(s, sc.step, &t0, &t1)) {
			if (err && errlen)
				snprintf(err, errlen, "no step %lld in the trace", (long long)sc.step);
			return -ENOENT;
		}
		sc.t0_ns = t0 > sc.t0_ns ? t0 : sc.t0_ns;
		sc.t1_ns = t1 < sc.t1_ns ? t1 : sc.t1_ns;
	}
	*out = sc;
	return 0;
}
