/*
 * steps_report.c - the "steps" and "breakdown" reports: tables built from
 * gt_steps_find() and gt_breakdown_compute(), one set per rank in the scope.
 * Times in the steps table are us after the capture start.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "gtrace/analysis.h"
#include "reports.h"
#include "tables.h"
#include "analysis.h"

static double rel_us(const struct gt_store *s, int64_t t)
{
	return (double)(t - gt_store_t_min(s)) / 1e3;
}

static int steps_tables(const struct gt_store *s, const struct gt_scope *sc, int32_t rank,
			struct gt_table *t, struct gt_table *tg, char *err, size_t errlen)
{
	struct gt_steps_list l;
	int rc = gt_steps_find(s, rank, NULL, &l, err, errlen);
	if (rc)
		return rc;
	for (size_t i = 0; i < l.n; i++) {
		const struct gt_steps_step *st = &l.v[i];
		if (sc->step >= 0 && st->number != sc->step)
			continue;
		if (st->t1_ns <= sc->t0_ns || st->t0_ns >= sc->t1_ns)
			continue;
		long r = gt_table_row(t);
		if (r < 0)
			goto nomem;
		gt_table_set_int(t, (size_t)r, 0, rank);
		gt_table_set_int(t, (size_t)r, 1, st->number);
		if (gt_table_set_str(t, (size_t)r, 2, gt_steps_source_name(l.source)))
			goto nomem;
		gt_table_set_float(t, (size_t)r, 3, rel_us(s, st->host_t0_ns));
		gt_table_set_float(t, (size_t)r, 4, (double)(st->host_t1_ns - st->host_t0_ns) / 1e3);
		gt_table_set_float(t, (size_t)r, 5, rel_us(s, st->t0_ns));
		gt_table_set_float(t, (size_t)r, 6, (double)(st->t1_ns - st->t0_ns) / 1e3);
		gt_table_set_int(t, (size_t)r, 7, st->acts);
		for (size_t g = 0; g < l.ngpus; g++) {
			const struct gt_steps_gpu *sg = &st->gpu[g];
			if (sc->gpu >= 0 && sg->device != sc->gpu)
				continue;
			long rg = gt_table_row(tg);
			if (rg < 0)
				goto nomem;
			gt_table_set_int(tg, (size_t)rg, 0, rank);
			gt_table_set_int(tg, (size_t)rg, 1, st->number);
			gt_table_set_int(tg, (size_t)rg, 2, sg->device);
			gt_table_set_int(tg, (size_t)rg, 3, sg->acts);
			if (sg->acts) {
				gt_table_set_float(tg, (size_t)rg, 4, rel_us(s, sg->first_ns));
				gt_table_set_float(tg, (size_t)rg, 5, rel_us(s, sg->last_ns));
				gt_table_set_float(tg, (size_t)rg, 6, (double)(sg->last_ns - sg->first_ns) / 1e3);
			}
		}
	}
	if (gt_table_note(t, "Rank %d: %zu steps from %s%s%s", rank, l.n,
			  gt_steps_source_name(l.source), l.widened ? ", device-side widened" : "",
			  l.source == GT_STEPS_SRC_INFERRED ? " (inferred from periodic device work)" : ""))
		goto nomem;
	if (l.dropped && gt_table_note(t, "Rank %d: %zu trailing step(s) dropped (no GPU work, "
				       "or under 80 %% of the previous step's GPU activities)",
				       rank, l.dropped))
		goto nomem;
	gt_steps_list_done(&l);
	return 0;
nomem:
	gt_steps_list_done(&l);
	return -ENOMEM;
}

int gt_steps_report(const struct gt_store *s, const struct gt_scope *sc,
		 struct gt_report_out *out, char *err, size_t errlen)
{
	static const char *const cols[] = {
		"Rank:i", "Step:i", "Source", "Host Start (us):f:1", "Host Duration (us):f:1",
		"Start (us):f:1", "Duration (us):f:1", "GPU Activities:i", NULL
	};
	static const char *const gcols[] = {
		"Rank:i", "Step:i", "GPU:i", "Activities:i", "First Start (us):f:1",
		"Last End (us):f:1", "GPU Duration (us):f:1", NULL
	};
	int32_t *ranks = NULL;
	struct gt_table *t = tables_new("steps", "Training steps (TensorBoard plugin step windows)", cols);
	struct gt_table *tg = tables_new("steps_gpu", "Steps per GPU", gcols);
	long nr = analysis_scope_ranks(s, sc, &ranks);
	int rc = (!t || !tg || nr < 0) ? -ENOMEM : 0;
	for (long i = 0; i < nr && !rc; i++)
		rc = steps_tables(s, sc, ranks[i], t, tg, err, errlen);
	free(ranks);
	if (!rc && !t->nrows)
		rc = gt_table_note(t, "No steps in the scope");
	if (!rc)
		rc = tables_scope_note(t, s, sc);
	rc = tables_out_pair(out, rc, t, tg);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "steps: out of memory");
	return rc;
}

const struct gt_report gt_report_steps = {
	.name = "steps",
	.help = "training steps: ProfilerStep#N, NVTX step ranges or inferred; device-side "
		"windows by the PyTorch TensorBoard plugin's rule",
	.run = gt_steps_report,
};
