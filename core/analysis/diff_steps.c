/*
 * diff_steps.c - the one step alignment of `gtrace diff` (gtrace/diff.h):
 * both runs' step-time breakdowns (gt_breakdown_compute, the TensorBoard
 * plugin's rules) and the pairs of rows compared, a.rows[ia + k] with
 * b.rows[ib + k] for k < n.  The breakdown report's table and the viewer's
 * compare pages both come from a struct gt_diff_steps.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "gtrace/diff.h"
#include "diff_priv.h"

/* the breakdown of one run; 0 or negative errno */
static int run_breakdown(const struct gt_store *s, int32_t rank, const struct gt_diff_opts *o,
			 struct gt_breakdown_result *r, char *err, size_t errlen)
{
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_steps_list none = { .rank = rank, .source = GT_STEPS_SRC_NONE };
	return gt_breakdown_compute(s, rank, o->align == GT_DIFF_ALIGN_START ? &none : NULL, &sc, r,
				 err, errlen);
}

/* index of the first aligned row; -1 when step is missing */
static long first_row(const struct gt_breakdown_result *r, const struct gt_diff_opts *o)
{
	if (o->align != GT_DIFF_ALIGN_STEP)
		return 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->rows[i].step == o->step)
			return (long)i;
	return -1;
}

/* one run's breakdown, for a thread */
struct job {
	const struct gt_store *s;
	const struct gt_diff_opts *o;
	struct gt_breakdown_result r;
	int rc;
	char err[256];
};

static void *job_run(void *arg)
{
	struct job *j = arg;
	j->rc = run_breakdown(j->s, diff_rank(j->s, j->o), j->o, &j->r, j->err, sizeof(j->err));
	return NULL;
}

int gt_diff_steps_compute(const struct gt_store *a, const struct gt_store *b,
			  const struct gt_diff_opts *o, struct gt_diff_steps *d, char *err,
			  size_t errlen)
{
	memset(d, 0, sizeof(*d));
	/* the experiment on a second thread while this one does the baseline */
	struct gt_diff_opts oa = diff_side(o, 0), ob = diff_side(o, 1);
	struct job ja = { .s = a, .o = &oa }, jb = { .s = b, .o = &ob };
	diff_run_both(job_run, &ja, &jb);
	d->a = ja.r;
	d->b = jb.r;
	int rc = ja.rc ? ja.rc : jb.rc;
	if (rc)
		snprintf(err, errlen, "%s", ja.rc ? ja.err : jb.err);
	long ia = rc ? 0 : first_row(&d->a, o), ib = rc ? 0 : first_row(&d->b, o);
	if (!rc && (ia < 0 || ib < 0)) {
		snprintf(err, errlen, "step %lld is not in the %s run", (long long)o->step,
			 ia < 0 ? "baseline" : "experiment");
		rc = -EINVAL;
	}
	if (!rc) {
		size_t la = d->a.n - (size_t)ia, lb = d->b.n - (size_t)ib;
		d->ia = (size_t)ia;
		d->ib = (size_t)ib;
		d->n = la < lb ? la : lb;
		if (!d->n) {
			snprintf(err, errlen, "no step of the %s run to compare",
				 la ? "experiment" : "baseline");
			rc = -EINVAL;
		}
	}
	if (rc)
		gt_diff_steps_done(d);
	return rc;
}

void gt_diff_steps_done(struct gt_diff_steps *d)
{
	gt_breakdown_result_done(&d->a);
	gt_breakdown_result_done(&d->b);
	memset(d, 0, sizeof(*d));
}

long gt_diff_steps_find(const struct gt_diff_steps *d, int64_t step)
{
	for (size_t k = 0; k < d->n; k++)
		if (d->a.rows[d->ia + k].step == step)
			return (long)k;
	return -1;
}
