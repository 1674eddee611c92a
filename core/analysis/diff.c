/*
 * diff.c - `gtrace diff A B`: the report dispatch (gtrace/diff.h), the
 * kernel and operator comparisons and both runs' overviews.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/diff.h"
#include "gtrace/kernel_stats.h"
#include "gtrace/ops.h"
#include "gtrace/steps.h"
#include "diff_priv.h"

const char *const diff_report_names[] = { "breakdown", "kernels", "ops", "overview", NULL };

int32_t diff_rank(const struct gt_store *s, const struct gt_diff_opts *o)
{
	if (o->rank >= 0)
		return o->rank;
	int32_t *r = NULL;
	long n = gt_steps_ranks(s, &r);
	int32_t v = n > 0 ? r[0] : 0;
	free(r);
	return v;
}

struct gt_diff_opts diff_side(const struct gt_diff_opts *o, int b)
{
	struct gt_diff_opts x = *o;
	if (b && (o->flags & GT_DIFF_F_RANK_B))
		x.rank = o->rank_b;
	x.flags &= ~GT_DIFF_F_RANK_B;
	return x;
}

static void scope_of(const struct gt_diff_opts *o, struct gt_scope *sc)
{
	gt_scope_all(sc);
	sc->rank = o->rank;
}

/* kernels of one run as items; count or negative errno */
static long kernel_items(const struct gt_store *s, const struct gt_diff_opts *o,
			 struct gt_diff_item **out, char *err, size_t errlen)
{
	struct gt_scope sc;
	scope_of(o, &sc);
	struct gt_kernel_stats_result r;
	int rc = gt_kernel_stats_compute(s, &sc, NULL, &r, err, errlen);
	if (rc)
		return rc;
	struct gt_diff_item *v = calloc(r.nrows ? r.nrows : 1, sizeof(*v));
	for (size_t i = 0; v && i < r.nrows; i++) {
		v[i].name = gt_store_str(s, r.rows[i].name);
		v[i].count = r.rows[i].count;
		v[i].fig_ns[0] = r.rows[i].total_ns;
	}
	long n = v ? (long)r.nrows : -ENOMEM;
	gt_kernel_stats_result_done(&r);
	*out = v;
	return n;
}

/* operators of one run as items (device self, host self); count or negative errno */
static long ops_items(const struct gt_store *s, const struct gt_diff_opts *o,
		      struct gt_diff_item **out, char *err, size_t errlen)
{
	struct gt_scope sc;
	scope_of(o, &sc);
	struct gt_ops_result r;
	int rc = gt_ops_compute(s, &sc, &r, err, errlen);
	if (rc)
		return rc;
	struct gt_diff_item *v = calloc(r.n ? r.n : 1, sizeof(*v));
	for (size_t i = 0; v && i < r.n; i++) {
		v[i].name = gt_store_str(s, r.rows[i].name);
		v[i].count = r.rows[i].calls;
		v[i].fig_ns[0] = r.rows[i].dev_self_ns;
		v[i].fig_ns[1] = r.rows[i].host_self_ns;
	}
	long n = v ? (long)r.n : -ENOMEM;
	gt_ops_result_done(&r);
	*out = v;
	return n;
}

/* one run's items, for a thread */
struct job {
	const struct gt_store *s;
	const struct gt_diff_opts *o;
	int ops;
	struct gt_diff_item *items;
	long n;
	char err[256];
};

void diff_run_both(void *(*run)(void *), void *a, void *b)
{
	pthread_t th;
	int threaded = !pthread_create(&th, NULL, run, b);
	run(a);
	if (threaded)
		pthread_join(th, NULL);
	else
		run(b);
}

static void *job_run(void *arg)
{
	struct job *j = arg;
	j->n = j->ops ? ops_items(j->s, j->o, &j->items, j->err, sizeof(j->err))
		      : kernel_items(j->s, j->o, &j->items, j->err, sizeof(j->err));
	return NULL;
}

static int names(const struct gt_store *a, const struct gt_store *b, const struct gt_diff_opts *o,
		 int ops, struct gt_report_out *out, char *err, size_t errlen)
{
	static const char *const kfig[] = { "Time" }, *const ofig[] = { "Device Self", "Host Self" };
	/* the experiment on a second thread while this one does the baseline */
	struct gt_diff_opts oa = diff_side(o, 0), ob = diff_side(o, 1);
	struct job ja = { .s = a, .o = &oa, .ops = ops }, jb = { .s = b, .o = &ob, .ops = ops };
	diff_run_both(job_run, &ja, &jb);
	struct gt_diff_item *ia = ja.items, *ib = jb.items;
	long na = ja.n, nb = jb.n;
	if (na < 0 || nb < 0)
		snprintf(err, errlen, "%s", na < 0 ? ja.err : jb.err);
	int rc = na < 0 ? (int)na : nb < 0 ? (int)nb : 0;
	if (!rc) {
		struct gt_table *t = ops
			? gt_diff_names_table("diff_ops", "Operators: baseline vs experiment (sorted by "
					   "absolute delta of device self time)", ia, (size_t)na, ib,
					   (size_t)nb, ofig, 2)
			: gt_diff_names_table("diff_kernels", "Kernels: baseline vs experiment (sorted "
					   "by absolute delta of total time)", ia, (size_t)na, ib,
					   (size_t)nb, kfig, 1);
		rc = t ? gt_report_out_add(out, t) : -ENOMEM;
		if (rc)
			snprintf(err, errlen, "diff: out of memory");
	}
	free(ia);
	free(ib);
	return rc;
}

/* a table renamed "<side>_<name>" and titled "<Side>: <title>"; 0 or -ENOMEM */
static int relabel(struct gt_table *t, const char *side, const char *Side)
{
	char *n = NULL, *ti = NULL;
	if (asprintf(&n, "%s_%s", side, t->name) < 0)
		return -ENOMEM;
	if (asprintf(&ti, "%s: %s", Side, t->title ? t->title : t->name) < 0) {
		free(n);
		return -ENOMEM;
	}
	free(t->name);
	free(t->title);
	t->name = n;
	t->title = ti;
	return 0;
}

static int overviews(const struct gt_store *a, const struct gt_store *b,
		     const struct gt_diff_opts *o, struct gt_report_out *out, char *err, size_t errlen)
{
	const struct gt_report *rep = gt_report_find("overview");
	struct gt_scope sc;
	const struct gt_table *ov[2] = { NULL, NULL }, *rec[2] = { NULL, NULL };
	for (int k = 0; k < 2; k++) {
		struct gt_diff_opts ok = diff_side(o, k);
		scope_of(&ok, &sc);
		struct gt_report_out one = { 0 };
		int rc = rep->run(k ? b : a, &sc, &one, err, errlen);
		for (size_t i = 0; i < one.n && !rc; i++) {
			struct gt_table *t = one.tables[i];
			if (!strcmp(t->name, "overview"))
				ov[k] = t;
			else if (!strcmp(t->name, "overview_recs"))
				rec[k] = t;
			rc = relabel(t, k ? "experiment" : "baseline", k ? "Experiment" : "Baseline");
			if (!rc)
				rc = gt_report_out_add(out, t);
			if (!rc)
				one.tables[i] = NULL;
		}
		gt_report_out_done(&one);
		if (rc)
			return rc;
	}
	if (!ov[0] || !ov[1])
		return 0;
	/* the two overviews side by side, last (CSV's default stays the baseline's) */
	struct gt_table *t = gt_diff_verdicts_table(ov[0], ov[1], rec[0], rec[1]);
	int rc = t ? gt_report_out_add(out, t) : -ENOMEM;
	if (rc)
		snprintf(err, errlen, "diff: out of memory");
	return rc;
}

int gt_diff_run(const struct gt_store *a, const struct gt_store *b, const char *name,
	     const struct gt_diff_opts *o, struct gt_report_out *out, char *err, size_t errlen)
{
	if (!strcmp(name, "breakdown"))
		return diff_breakdown(a, b, o, out, err, errlen);
	if (!strcmp(name, "kernels") || !strcmp(name, "ops"))
		return names(a, b, o, name[0] == 'o', out, err, errlen);
	if (!strcmp(name, "overview"))
		return overviews(a, b, o, out, err, errlen);
	snprintf(err, errlen, "unknown diff report '%s' (breakdown, kernels, ops, overview)", name);
	return -EINVAL;
}
