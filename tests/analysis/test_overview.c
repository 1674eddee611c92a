/*
 * test_overview.c - planted truth: for every simulator scenario the
 * overview names the planted bottleneck (and the straggler GPU and by how
 * much) with the simulator's own truth (gt_sim_generate_truth), raises no
 * other warning, and the balanced run gets no alarm at all.  Plus the
 * overview on an empty store and on a trace without steps, and a bottleneck
 * planted in one rank of several (sim GT_SIM_F_ONE_RANK): named, with that
 * rank only.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "gtrace/sim.h"
#include "test_steps_fixture.h"

static struct gt_store *gen(enum gt_sim_scenario sc, int ranks, int gpus, struct gt_sim_truth *t)
{
	struct gt_sim_opts o = { .scenario = sc, .seed = 7, .ranks = ranks, .gpus = gpus };
	struct gt_store *s = gt_store_new();
	char err[256];
	cr_assert(s);
	cr_assert_eq(gt_sim_generate_truth(&o, s, t, err, sizeof(err)), 0, "%s", err);
	return s;
}

/* the one warning of the run must be `kind`; returns it */
static const struct gt_overview_rec *only_alarm(const struct gt_overview_result *r, const char *kind)
{
	const struct gt_overview_rec *hit = NULL;
	for (size_t i = 0; i < r->nrecs; i++) {
		const struct gt_overview_rec *x = &r->recs[i];
		/* the enum and the text name the same kind, every one a known kind */
		cr_expect(x->kid != GT_OVERVIEW_K_OTHER && !strcmp(gt_overview_kind_name(x->kid), x->kind),
			  "[%s] has kind enum %d (%s)", x->kind, (int)x->kid, gt_overview_kind_name(x->kid));
		if (x->severity < GT_OVERVIEW_WARN)
			continue;
		cr_expect(kind && !strcmp(x->kind, kind), "unexpected alarm [%s] %s", x->kind, x->text);
		if (kind && !strcmp(x->kind, kind))
			hit = x;
	}
	if (kind)
		cr_assert(hit, "no %s recommendation", kind);
	return hit;
}

static size_t recs_of(const struct gt_overview_result *r, const char *kind,
		      const struct gt_overview_rec **out);

/* the named report over the whole store, written in format fmt (freed by the caller) */
static char *report_text(const struct gt_store *s, const char *name, enum gt_format_out fmt)
{
	const struct gt_report *rep = gt_report_find(name);
	cr_assert(rep, "%s", name);
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_report_out o = {0};
	char err[256] = "";
	cr_assert_eq(rep->run(s, &sc, &o, err, sizeof(err)), 0, "%s: %s", name, err);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_eq(gt_report_out_write(f, name, &o, fmt), 0);
	fclose(f);
	gt_report_out_done(&o);
	return buf;
}

/* one table of a report as CSV, picked by its name */
static char *table_csv(const struct gt_store *s, const char *report, const char *table)
{
	const struct gt_report *rep = gt_report_find(report);
	cr_assert(rep, "%s", report);
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_report_out o = {0};
	char err[256] = "";
	cr_assert_eq(rep->run(s, &sc, &o, err, sizeof(err)), 0, "%s: %s", report, err);
	long k = gt_report_out_find(&o, table);
	cr_assert_geq(k, 0, "no table %s", table);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_eq(gt_table_write(f, o.tables[k], GT_OUT_CSV), 0);
	fclose(f);
	gt_report_out_done(&o);
	return buf;
}

static void run(enum gt_sim_scenario sc, int ranks, int gpus, struct gt_overview_result *r,
		struct gt_sim_truth *t, struct gt_store **sp)
{
	*sp = gen(sc, ranks, gpus, t);
	char err[256];
	cr_assert_eq(gt_overview_compute(*sp, NULL, r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r->source, GT_STEPS_SRC_PROFSTEP);
	for (size_t i = 1; i < r->nrecs; i++)      /* most severe first */
		cr_assert_geq(r->recs[i - 1].severity, r->recs[i].severity, "%s before %s",
			      r->recs[i - 1].kind, r->recs[i].kind);
}

Test(overview, balanced_no_false_alarm, .timeout = 60)
{
	struct gt_overview_result r;
	struct gt_sim_truth t;
	struct gt_store *s;
	run(GT_SIM_BALANCED, 1, 4, &r, &t, &s);
	only_alarm(&r, NULL);
	cr_assert_eq(r.gpus, 4);
	cr_assert_eq(r.nsteps, (size_t)t.steps);
	cr_assert(r.ntop > 0);
	gt_overview_result_done(&r);
	gt_store_free(s);
}

Test(overview, input_bound, .timeout = 60)
{
	struct gt_overview_result r;
	struct gt_sim_truth t;
	struct gt_store *s;
	run(GT_SIM_INPUT_BOUND, 1, 4, &r, &t, &s);
	const struct gt_overview_rec *x = only_alarm(&r, "input-bound");
	cr_assert_eq(x->kid, GT_OVERVIEW_K_INPUT_BOUND);
	cr_assert_eq(r.pl.verdict, GT_PL_HIGHLY);
	cr_expect(fabs(r.pl.avg_pct[GT_PL_HOST_WAIT] - t.input_pct) < 3.0, "host wait %.1f vs planted %.1f",
		  r.pl.avg_pct[GT_PL_HOST_WAIT], t.input_pct);
	cr_assert_eq(x->evidence, GT_OVERVIEW_EV_STEPS);
	cr_assert(strstr(x->text, "HIGHLY input-bound"), "%s", x->text);
	/* one rank: the text names no rank (as before several ranks were compared) */
	cr_assert(!strncmp(x->text, "steps 0-", 8), "%s", x->text);
	cr_assert_null(strstr(x->text, "rank"), "%s", x->text);
	cr_assert_eq(r.nrk, 1);
	cr_assert_eq(r.rk[0].verdict, GT_PL_HIGHLY);
	gt_overview_result_done(&r);
	gt_store_free(s);
}

Test(overview, launch_bound, .timeout = 120)
{
	struct gt_overview_result r;
	struct gt_sim_truth t;
	struct gt_store *s;
	run(GT_SIM_LAUNCH_BOUND, 1, 4, &r, &t, &s);
	const struct gt_overview_rec *x = only_alarm(&r, "launch-bound");
	cr_assert(x->value >= 50.0, "%s", x->text);   /* share of kernels under 10 us */
	cr_assert(strstr(x->text, "CUDA graphs"));
	gt_overview_result_done(&r);
	gt_store_free(s);
}

static void check_straggler(int ranks, int gpus)
{
	struct gt_overview_result r;
	struct gt_sim_truth t;
	struct gt_store *s;
	run(GT_SIM_STRAGGLER, ranks, gpus, &r, &t, &s);
	const struct gt_overview_rec *x = only_alarm(&r, "straggler");
	cr_assert_eq(x->rank, t.straggler_rank);
	cr_assert_eq(x->gpu, t.straggler_gpu);
	cr_expect(fabs(x->value - t.straggler_pct) < 2.0, "skew %.1f vs planted %.1f", x->value,
		  t.straggler_pct);
	char want[32];
	snprintf(want, sizeof(want), "GPU %d", t.straggler_gpu);
	cr_assert(strstr(x->text, want), "%s", x->text);
	gt_overview_result_done(&r);
	gt_store_free(s);
}

Test(overview, straggler_one_rank, .timeout = 60)
{
	check_straggler(1, 4);
}

Test(overview, straggler_two_ranks, .timeout = 60)
{
	check_straggler(2, 2);
}

Test(overview, comm_bound, .timeout = 60)
{
	struct gt_overview_result r;
	struct gt_sim_truth t;
	struct gt_store *s;
	run(GT_SIM_COMM_BOUND, 1, 4, &r, &t, &s);
	const struct gt_overview_rec *x = only_alarm(&r, "comm-bound");
	cr_expect(fabs(x->value - t.comm_pct) < 5.0, "comm %.1f vs planted %.1f", x->value, t.comm_pct);
	gt_overview_result_done(&r);
	gt_store_free(s);
}

/* expected all-reduce time (docs/analyses.md §6) from parameter bytes and link
 * bandwidth: the planted NCCL time per step is comm_pct of the step; with
 * a link that should move the bytes in a sixth of it, collectives are
 * 6x the expected time (high, >= 4x); in a third, 3x (warn, >= 2x); in all
 * of it, 1x (info, no alarm) */
Test(overview, expected_allreduce_time, .timeout = 60)
{
	struct gt_sim_truth t;
	struct gt_store *s = gen(GT_SIM_COMM_BOUND, 1, 4, &t);
	double comm_ns = t.comm_pct / 100.0 * (double)t.step_ns;
	static const double factor[] = { 6.0, 3.0, 1.0, 0.25 };
	static const enum gt_overview_severity want[] = { GT_OVERVIEW_HIGH, GT_OVERVIEW_WARN, GT_OVERVIEW_INFO,
						       GT_OVERVIEW_INFO };
	for (int k = 0; k < 4; k++) {
		struct gt_scope sc;
		gt_scope_all(&sc);
		sc.param_bytes = 1000000;
		sc.link_gbps = 1e6 / (comm_ns / factor[k]);     /* bytes / (GB/s) = ns */
		struct gt_overview_result r;
		char err[256];
		cr_assert_eq(gt_overview_compute(s, &sc, &r, err, sizeof(err)), 0, "%s", err);
		cr_assert_float_eq(r.mg.expected_comm_ns, comm_ns / factor[k], 1e-6 * comm_ns);
		const struct gt_overview_rec *x = NULL;
		cr_assert_eq(recs_of(&r, "slow-collectives", &x), 1);
		cr_expect(fabs(x->value - factor[k]) < 0.1 * factor[k], "%.2fx vs planted %.2fx",
			  x->value, factor[k]);
		cr_expect_eq(x->severity, want[k], "%.1fx: %s", factor[k], x->text);
		cr_expect_eq(x->evidence, GT_OVERVIEW_EV_GPU);
		cr_expect(strstr(x->text, "the expected all-reduce time (") &&
			  strstr(x->text, " MiB at "), "%s", x->text);
		if (k >= 2)
			only_alarm(&r, "comm-bound");
		/* faster than the figures allow: they do not describe this job */
		cr_expect_eq(strstr(x->text, "check --param-bytes and --link-gbps") != NULL, k == 3,
			     "%s", x->text);
		gt_overview_result_done(&r);
	}
	/* not given: nothing claimed */
	struct gt_overview_result r;
	char err[256];
	cr_assert_eq(gt_overview_compute(s, NULL, &r, err, sizeof(err)), 0, "%s", err);
	const struct gt_overview_rec *x = NULL;
	cr_assert_eq(recs_of(&r, "slow-collectives", &x), 0);
	gt_overview_result_done(&r);
	gt_store_free(s);
}

Test(overview, copy_heavy, .timeout = 60)
{
	struct gt_overview_result r;
	struct gt_sim_truth t;
	struct gt_store *s;
	run(GT_SIM_COPY_HEAVY, 1, 4, &r, &t, &s);
	const struct gt_overview_rec *x = only_alarm(&r, "copy-heavy");
	cr_expect(fabs(x->value - t.copy_pct) < 5.0, "copies %.1f vs planted %.1f", x->value, t.copy_pct);
	cr_assert(r.mg.ncopies > 0);
	gt_overview_result_done(&r);
	gt_store_free(s);
}

Test(overview, staggered, .timeout = 60)
{
	struct gt_overview_result r;
	struct gt_sim_truth t;
	struct gt_store *s;
	run(GT_SIM_STAGGERED, 1, 4, &r, &t, &s);
	const struct gt_overview_rec *x = only_alarm(&r, "staggered");
	cr_assert_eq(x->gpu, t.gpus - 1);
	/* its evidence: that GPU over every planted step (each step is staggered) */
	cr_expect_eq(x->evidence, GT_OVERVIEW_EV_GPU);
	cr_expect_eq(x->step1 - x->step0 + 1, t.steps, "steps %lld-%lld of %d", (long long)x->step0,
		     (long long)x->step1, t.steps);
	cr_expect(x->t1_ns - x->t0_ns >= (int64_t)(t.steps - 1) * t.step_ns, "span %lld ns",
		  (long long)(x->t1_ns - x->t0_ns));
	/* GPU k starts k * stagger_us after GPU 0 */
	double want_us = (t.gpus - 1) * t.stagger_us;
	const struct gt_multigpu_gpu *g = &r.mg.gpus[t.gpus - 1];
	cr_expect(fabs(g->stagger_mean_ns / 1e3 - want_us) < 0.15 * want_us, "stagger %.0f us vs %.0f",
		  g->stagger_mean_ns / 1e3, want_us);
	gt_overview_result_done(&r);
	gt_store_free(s);
}

/* many ranks whose step starts drift apart (separate processes) are not a
   staggered launch: only GPUs driven by one host thread are compared */
Test(overview, many_ranks_balanced_no_stagger, .timeout = 120)
{
	struct gt_overview_result r;
	struct gt_sim_truth t;
	struct gt_store *s;
	run(GT_SIM_BALANCED, 32, 2, &r, &t, &s);
	only_alarm(&r, NULL);
	cr_assert_eq(r.mg.ngpus, 64);
	for (size_t g = 0; g < r.mg.ngpus; g++)
		cr_expect(r.mg.gpus[g].stagger_mean_ns < 50e3, "rank %d GPU %d stagger %.0f us",
			  r.mg.gpus[g].rank, r.mg.gpus[g].device, r.mg.gpus[g].stagger_mean_ns / 1e3);
	gt_overview_result_done(&r);
	gt_store_free(s);
}

/* the planted stagger is found in every rank, measured from that rank's GPU 0 */
Test(overview, staggered_per_rank, .timeout = 120)
{
	struct gt_overview_result r;
	struct gt_sim_truth t;
	struct gt_store *s;
	run(GT_SIM_STAGGERED, 8, 4, &r, &t, &s);
	only_alarm(&r, "staggered");
	double want_us = (t.gpus - 1) * t.stagger_us;
	for (size_t g = 0; g < r.mg.ngpus; g++) {
		const struct gt_multigpu_gpu *x = &r.mg.gpus[g];
		double w = x->device * t.stagger_us;
		cr_expect(fabs(x->stagger_mean_ns / 1e3 - w) < 0.15 * want_us,
			  "rank %d GPU %d stagger %.0f us vs planted %.0f", x->rank, x->device,
			  x->stagger_mean_ns / 1e3, w);
	}
	gt_overview_result_done(&r);
	gt_store_free(s);
}

Test(overview, empty_and_stepless)
{
	struct gt_store *s = gt_store_new();
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_overview_result r;
	char err[128];
	cr_assert_eq(gt_overview_compute(s, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.nrecs, 0);
	cr_assert_eq(r.nsteps, 0);
	gt_overview_result_done(&r);
	gt_store_free(s);
	s = gt_store_new();
	uint32_t g = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
	fx_add(s, g, GT_EV_KERNEL, "k", 0, 100, 0, 0);
	fx_add(s, g, GT_EV_KERNEL, "k", 100, 100, 0, 0);   /* zero length */
	cr_assert_eq(gt_store_finish(s), 0);
	cr_assert_eq(gt_overview_compute(s, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.source, GT_STEPS_SRC_NONE);
	cr_assert_eq(r.bd.n, 1);
	cr_assert_eq(r.ntop, 1);
	cr_assert_eq(r.top[0].count, 2);
	gt_overview_result_done(&r);
	gt_store_free(s);
}

/* every report of this area runs on every scenario and on an empty store */
Test(overview, reports_run_everywhere, .timeout = 120)
{
	static const char *const names[] = { "steps", "breakdown", "pipeline", "gputime",
					     "multigpu", "overview" };
	for (int sc = -1; sc < GT_SIM_SCENARIO_COUNT; sc++) {
		struct gt_sim_truth t;
		struct gt_store *s;
		if (sc < 0) {
			s = gt_store_new();
			cr_assert_eq(gt_store_finish(s), 0);
		} else {
			s = gen((enum gt_sim_scenario)sc, 2, 2, &t);
		}
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			const struct gt_report *rep = gt_report_find(names[i]);
			cr_assert(rep, "%s", names[i]);
			char *buf = report_text(s, names[i], GT_OUT_JSON);
			cr_assert(strlen(buf) > 10);
			free(buf);
		}
		gt_store_free(s);
	}
}

/* the overview reads a rank's events once and hands the unions to the
 * breakdown, pipeline, gputime and multigpu analyses: each must come out
 * exactly as when run on its own, whole trace, over a time range (edges
 * inside steps), on one GPU and on one step */
/* each rank's entry is its breakdown and pipeline run alone, and the
 * overview's breakdown averages every row of every rank */
static void per_rank_as_alone(const struct gt_store *s, const struct gt_scope *sc,
			      const struct gt_overview_result *o)
{
	char err[256];
	double cat[GT_BD_NCAT] = {0}, total = 0, any = 0;
	size_t rows = 0;
	enum gt_pipeline_verdict worst = GT_PL_NOT;
	for (size_t i = 0; i < o->nrk; i++) {
		const struct gt_overview_rank *k = &o->rk[i];
		struct gt_breakdown_result bd;
		struct gt_pipeline_result pl;
		cr_assert(i == 0 || k->rank > o->rk[i - 1].rank, "ranks ascending");
		cr_assert_eq(gt_breakdown_compute(s, k->rank, NULL, sc, &bd, err, sizeof(err)), 0);
		cr_assert_eq(gt_pipeline_compute(s, k->rank, NULL, sc, &pl, err, sizeof(err)), 0);
		cr_assert_eq(k->nsteps, bd.n);
		cr_assert_eq(k->avg_step_ns, bd.avg_total_ns, "rank %d", k->rank);
		for (int c = 0; c < GT_BD_NCAT; c++)
			cr_assert_eq(k->avg_ns[c], bd.avg_ns[c]);
		cr_assert_eq(k->verdict, pl.verdict);
		cr_assert_eq(k->input_pct, pl.input_pct);
		for (size_t j = 0; j < bd.n; j++) {
			for (int c = 0; c < GT_BD_NCAT; c++)
				cat[c] += (double)bd.rows[j].cat_ns[c];
			total += (double)bd.rows[j].total_ns;
			any += (double)bd.rows[j].kernel_any_ns;
		}
		rows += bd.n;
		if (pl.verdict > worst)
			worst = pl.verdict;
		gt_breakdown_result_done(&bd);
		gt_pipeline_result_done(&pl);
	}
	cr_assert_eq(o->pl.verdict, worst, "pl is the worst rank's");
	if (o->nrk > 1 && rows) {
		cr_assert(fabs(o->bd.avg_total_ns - total / (double)rows) < 1e-6 * (1 + total));
		for (int c = 0; c < GT_BD_NCAT; c++)
			cr_assert(fabs(o->bd.avg_ns[c] - cat[c] / (double)rows) < 1e-6 * (1 + total));
		cr_assert(fabs(o->bd.gpu_util_pct - 100.0 * any / total) < 1e-9);
	}
}

static void same_as_alone(const struct gt_store *s, const struct gt_scope *sc)
{
	struct gt_overview_result o;
	struct gt_breakdown_result bd;
	struct gt_pipeline_result pl;
	struct gt_gputime_result gt;
	struct gt_multigpu_result mg;
	char err[256];
	cr_assert_eq(gt_overview_compute(s, sc, &o, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(gt_breakdown_compute(s, o.bd.rank, NULL, sc, &bd, err, sizeof(err)), 0);
	cr_assert_eq(gt_pipeline_compute(s, o.pl.rank, NULL, sc, &pl, err, sizeof(err)), 0);
	cr_assert_eq(gt_gputime_compute(s, sc, &gt, err, sizeof(err)), 0);
	cr_assert_eq(gt_multigpu_compute(s, sc, &mg, err, sizeof(err)), 0);
	cr_assert_eq(bd.n, o.bd.n);
	for (size_t i = 0; i < bd.n; i++)
		cr_assert_eq(memcmp(&bd.rows[i], &o.bd.rows[i], sizeof(bd.rows[i])), 0, "bd row %zu", i);
	cr_assert_eq(pl.n, o.pl.n);
	for (size_t i = 0; i < pl.n; i++)
		cr_assert_eq(memcmp(&pl.rows[i], &o.pl.rows[i], sizeof(pl.rows[i])), 0, "pl row %zu", i);
	cr_assert_eq(pl.verdict, o.pl.verdict);
	cr_assert_eq(gt.ngpus, o.gt.ngpus);
	cr_assert_eq(gt.nstreams, o.gt.nstreams);
	for (size_t i = 0; i < gt.ngpus; i++)
		cr_assert_eq(memcmp(&gt.gpus[i], &o.gt.gpus[i], sizeof(gt.gpus[i])), 0, "gt gpu %zu", i);
	for (size_t i = 0; i < gt.nstreams; i++) {
		const struct gt_gputime_stream *a = &gt.streams[i], *b = &o.gt.streams[i];
		cr_assert(a->stream == b->stream && a->host_wait_ns == b->host_wait_ns &&
			  a->kernel_wait_ns == b->kernel_wait_ns && a->other_ns == b->other_ns &&
			  a->queue_max == b->queue_max && a->at_max_ns == b->at_max_ns);
	}
	per_rank_as_alone(s, sc, &o);
	cr_assert_eq(mg.nsteps, o.mg.nsteps);
	cr_assert_eq(mg.ngpus, o.mg.ngpus);
	cr_assert_eq(mg.straggler, o.mg.straggler);
	for (size_t i = 0; i < mg.nsteps * mg.ngpus; i++)
		cr_assert_eq(memcmp(&mg.cells[i], &o.mg.cells[i], sizeof(mg.cells[i])), 0, "cell %zu", i);
	gt_breakdown_result_done(&bd);
	gt_pipeline_result_done(&pl);
	gt_gputime_result_done(&gt);
	gt_multigpu_result_done(&mg);
	gt_overview_result_done(&o);
}

Test(overview, shared_pass_matches_each_analysis, .timeout = 120)
{
	struct gt_sim_truth t;
	struct gt_store *s = gen(GT_SIM_STRAGGLER, 2, 2, &t);
	struct gt_scope sc;
	gt_scope_all(&sc);
	same_as_alone(s, &sc);
	int64_t t0 = gt_store_t_min(s), len = gt_store_t_max(s) - t0;
	sc.t0_ns = t0 + len / 3 + 12345;     /* edges inside steps */
	sc.t1_ns = t0 + 2 * (len / 3) - 777;
	same_as_alone(s, &sc);
	sc.gpu = 1;
	same_as_alone(s, &sc);
	gt_scope_all(&sc);
	sc.step = 3;
	same_as_alone(s, &sc);
	gt_scope_all(&sc);
	sc.rank = 1;
	same_as_alone(s, &sc);
	gt_store_free(s);
}

/* core/analysis/analysis.h (private): frees the cached scratch blocks */
void analysis_mem_release(void);

/* large reports reuse cached scratch blocks (analysis_mem.c) that still hold the
 * previous report's data: the same report twice must agree, and agree with
 * the analyses run alone after the cache was emptied */
Test(overview, cached_blocks_give_same_results, .timeout = 120)
{
	struct gt_sim_opts so = { .scenario = GT_SIM_COMM_BOUND, .seed = 3, .gpus = 2, .events = 400000 };
	struct gt_store *s = gt_store_new();
	char err[256];
	cr_assert_eq(gt_sim_generate(&so, s, err, sizeof(err)), 0, "%s", err);
	struct gt_scope sc;
	gt_scope_all(&sc);
	int64_t t0 = gt_store_t_min(s), len = gt_store_t_max(s) - t0;
	sc.t0_ns = t0 + len / 4 + 999;
	sc.t1_ns = t0 + len - len / 4;
	struct gt_overview_result a, b;
	cr_assert_eq(gt_overview_compute(s, &sc, &a, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(gt_overview_compute(s, NULL, &b, err, sizeof(err)), 0, "%s", err);
	gt_overview_result_done(&b);
	cr_assert_eq(gt_overview_compute(s, &sc, &b, err, sizeof(err)), 0, "%s", err);
	cr_assert(a.bd.n > 10 && a.bd.n == b.bd.n && a.gt.ngpus == b.gt.ngpus);
	for (size_t i = 0; i < a.bd.n; i++)
		cr_assert_eq(memcmp(&a.bd.rows[i], &b.bd.rows[i], sizeof(a.bd.rows[i])), 0);
	for (size_t i = 0; i < a.gt.ngpus; i++)
		cr_assert_eq(memcmp(&a.gt.gpus[i], &b.gt.gpus[i], sizeof(a.gt.gpus[i])), 0);
	cr_assert_eq(a.pl.verdict, b.pl.verdict);
	cr_assert_eq(a.pl.input_pct, b.pl.input_pct);
	gt_overview_result_done(&a);
	gt_overview_result_done(&b);
	analysis_mem_release();
	same_as_alone(s, &sc);
	gt_store_free(s);
}

/* ---- the bottleneck planted in one rank of several ---- */

static struct gt_store *gen_one_rank(enum gt_sim_scenario sc, int ranks, int gpus, int rank,
				     struct gt_sim_truth *t)
{
	struct gt_sim_opts o = { .scenario = sc, .seed = 7, .ranks = ranks, .gpus = gpus,
			      .flags = GT_SIM_F_ONE_RANK, .scenario_rank = rank };
	struct gt_store *s = gt_store_new();
	char err[256];
	cr_assert(s);
	cr_assert_eq(gt_sim_generate_truth(&o, s, t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t->scenario_rank, rank);
	return s;
}

/* the recommendations of `kind` (count), the last one in *out */
static size_t recs_of(const struct gt_overview_result *r, const char *kind,
		      const struct gt_overview_rec **out)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nrecs; i++)
		if (!strcmp(r->recs[i].kind, kind)) {
			*out = &r->recs[i];
			n++;
		}
	return n;
}

/* 4 ranks x 2 GPUs, DataLoader 40 % planted in rank 2 only: the overview
 * says so, names rank 2 and no other rank; the other ranks are NOT
 * input-bound (before, only rank 0 was looked at: nothing was said) */
Test(overview, input_bound_in_one_rank, .timeout = 60)
{
	struct gt_sim_truth t;
	struct gt_store *s = gen_one_rank(GT_SIM_INPUT_BOUND, 4, 2, 2, &t);
	struct gt_overview_result r;
	char err[256];
	cr_assert_eq(gt_overview_compute(s, NULL, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.nrk, 4);
	for (size_t i = 0; i < r.nrk; i++) {
		const struct gt_overview_rank *k = &r.rk[i];
		cr_assert_eq(k->rank, (int32_t)i);
		cr_assert_eq(k->nsteps, (size_t)t.steps);
		if (k->rank == 2) {
			cr_assert_eq(k->verdict, GT_PL_HIGHLY, "rank 2: %s", gt_pipeline_verdict_name(k->verdict));
			cr_expect(fabs(k->host_wait_pct - t.input_pct) < 3.0, "host wait %.1f vs planted %.1f",
				  k->host_wait_pct, t.input_pct);
		} else {
			cr_assert_eq(k->verdict, GT_PL_NOT, "rank %d: %s", k->rank,
				     gt_pipeline_verdict_name(k->verdict));
			cr_assert_lt(k->host_wait_pct, 5.0);
		}
	}
	cr_assert_eq(r.pl.rank, 2, "pl is the worst rank's");
	cr_assert_eq(r.pl.verdict, GT_PL_HIGHLY);
	const struct gt_overview_rec *x = NULL;
	cr_assert_eq(recs_of(&r, "input-bound", &x), 1);
	cr_assert_eq(x->severity, GT_OVERVIEW_HIGH);
	cr_assert_eq(x->evidence, GT_OVERVIEW_EV_STEPS);
	cr_assert_eq(x->rank, 2);
	cr_assert_eq(x->step0, 0);
	cr_assert_eq(x->step1, t.steps - 1);
	cr_assert(!strncmp(x->text, "rank 2: ", 8), "%s", x->text);
	cr_assert(strstr(x->text, "HIGHLY input-bound"), "%s", x->text);
	cr_assert_null(strstr(x->text, "rank 0"), "%s", x->text);
	cr_assert_null(strstr(x->text, "rank 1"), "%s", x->text);
	cr_assert_null(strstr(x->text, "rank 3"), "%s", x->text);
	cr_assert_null(strstr(x->text, "also"), "%s", x->text);
	cr_expect(fabs(x->value - t.input_pct) < 3.0, "input %.1f vs planted %.1f", x->value,
		  t.input_pct);
	cr_assert_eq(recs_of(&r, "host-bound", &x), 0);
	/* the other ranks wait for rank 2 inside the AllReduce: when that shows as
	   exposed communication, the recommendation says who holds them up */
	cr_assert_eq(recs_of(&r, "comm-bound", &x), 1);
	cr_assert(strstr(x->text, "rank 2 is input-bound"), "%s", x->text);
	/* the cure is rank 2's input, not the interconnect */
	cr_assert(strstr(x->text, "fix rank 2's input first"), "%s", x->text);
	cr_assert_null(strstr(x->text, "interconnect"), "%s", x->text);
	cr_assert_eq(x->severity, GT_OVERVIEW_WARN);
	gt_overview_result_done(&r);
	/* the report: a per-rank table, a heading over all ranks */
	char *buf = report_text(s, "overview", GT_OUT_TABLE);
	cr_assert(strstr(buf, "Per rank"), "%s", buf);
	cr_assert(strstr(buf, "all 4 ranks"), "%s", buf);
	cr_assert_null(strstr(buf, "rank 0's average step"));
	free(buf);
	/* the scope of one rank: that rank alone */
	struct gt_scope sc;
	gt_scope_all(&sc);
	sc.rank = 1;
	cr_assert_eq(gt_overview_compute(s, &sc, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.nrk, 1);
	cr_assert_eq(r.rk[0].rank, 1);
	cr_assert_eq(recs_of(&r, "input-bound", &x), 0);
	gt_overview_result_done(&r);
	gt_store_free(s);
}

/* input-bound in every rank of 3: one recommendation, the worst rank named
 * with its numbers, the other two listed */
Test(overview, input_bound_every_rank, .timeout = 60)
{
	struct gt_overview_result r;
	struct gt_sim_truth t;
	struct gt_store *s;
	run(GT_SIM_INPUT_BOUND, 3, 1, &r, &t, &s);
	const struct gt_overview_rec *x = NULL;
	cr_assert_eq(recs_of(&r, "input-bound", &x), 1);
	for (size_t i = 0; i < r.nrk; i++)
		cr_assert_eq(r.rk[i].verdict, GT_PL_HIGHLY);
	char want[64];
	snprintf(want, sizeof(want), "rank %d: ", x->rank);
	cr_assert(!strncmp(x->text, want, strlen(want)), "%s", x->text);
	const char *also = strstr(x->text, "; also input-bound: ranks ");
	cr_assert(also, "%s", x->text);
	for (int k = 0; k < 3; k++) {
		snprintf(want, sizeof(want), "%d", k);
		cr_assert(k == x->rank || strstr(also, want), "rank %d not named: %s", k, x->text);
	}
	gt_overview_result_done(&r);
	gt_store_free(s);
}

/* several ranks, nothing planted: no alarm, every rank NOT input-bound */
Test(overview, balanced_ranks_no_input_alarm, .timeout = 60)
{
	struct gt_overview_result r;
	struct gt_sim_truth t;
	struct gt_store *s;
	run(GT_SIM_BALANCED, 4, 2, &r, &t, &s);
	only_alarm(&r, NULL);
	cr_assert_eq(r.nrk, 4);
	for (size_t i = 0; i < r.nrk; i++)
		cr_assert_eq(r.rk[i].verdict, GT_PL_NOT, "rank %d %s", r.rk[i].rank,
			     gt_pipeline_verdict_name(r.rk[i].verdict));
	gt_overview_result_done(&r);
	gt_store_free(s);
}

/* staggered launches planted in rank 1 of 3: the staggered GPU is rank 1's */
Test(overview, staggered_in_one_rank, .timeout = 60)
{
	struct gt_sim_truth t;
	struct gt_store *s = gen_one_rank(GT_SIM_STAGGERED, 3, 4, 1, &t);
	struct gt_overview_result r;
	char err[256];
	cr_assert_eq(gt_overview_compute(s, NULL, &r, err, sizeof(err)), 0, "%s", err);
	const struct gt_overview_rec *x = NULL;
	cr_assert_eq(recs_of(&r, "staggered", &x), 1);
	cr_assert_eq(x->rank, 1);
	cr_assert_eq(x->gpu, t.gpus - 1);
	for (size_t g = 0; g < r.mg.ngpus; g++)
		if (r.mg.gpus[g].rank != 1)
			cr_expect(r.mg.gpus[g].stagger_mean_ns < 50e3, "rank %d GPU %d stagger %.0f us",
				  r.mg.gpus[g].rank, r.mg.gpus[g].device, r.mg.gpus[g].stagger_mean_ns / 1e3);
	gt_overview_result_done(&r);
	gt_store_free(s);
}

Test(overview, shared_pass_per_rank_four_ranks, .timeout = 60)
{
	struct gt_sim_truth t;
	struct gt_store *s = gen_one_rank(GT_SIM_INPUT_BOUND, 4, 1, 3, &t);
	struct gt_scope sc;
	gt_scope_all(&sc);
	same_as_alone(s, &sc);
	int64_t t0 = gt_store_t_min(s), len = gt_store_t_max(s) - t0;
	sc.t0_ns = t0 + len / 3 + 4321;
	sc.t1_ns = t0 + 2 * (len / 3) - 99;
	same_as_alone(s, &sc);
	gt_store_free(s);
}

/* the straggler planted in rank 1's last GPU (not rank 0's): named there */
Test(overview, straggler_in_one_rank, .timeout = 60)
{
	struct gt_sim_truth t;
	struct gt_store *s = gen_one_rank(GT_SIM_STRAGGLER, 2, 2, 1, &t);
	cr_assert_eq(t.straggler_rank, 1);
	struct gt_overview_result r;
	char err[256];
	cr_assert_eq(gt_overview_compute(s, NULL, &r, err, sizeof(err)), 0, "%s", err);
	const struct gt_overview_rec *x = only_alarm(&r, "straggler");
	cr_assert_eq(x->rank, 1);
	cr_assert_eq(x->gpu, t.straggler_gpu);
	cr_assert(strstr(x->text, "rank 1 GPU 1"), "%s", x->text);
	cr_expect(fabs(x->value - t.straggler_pct) < 2.0, "skew %.1f vs planted %.1f", x->value,
		  t.straggler_pct);
	gt_overview_result_done(&r);
	gt_store_free(s);
}

/* the expected all-reduce time is compared with the GPU that spends the
 * least in collectives: in 4 ranks where rank 2 is input-bound, ranks 0, 1
 * and 3 wait for it inside the AllReduce (their collective time is several
 * times rank 2's); with a link that moves the bytes in rank 2's collective
 * time, the link is fine and nothing is blamed on it */
Test(overview, expected_time_ignores_waiting_ranks, .timeout = 60)
{
	struct gt_sim_truth t;
	struct gt_store *s = gen_one_rank(GT_SIM_INPUT_BOUND, 4, 2, 2, &t);
	struct gt_overview_result r;
	char err[256];
	cr_assert_eq(gt_overview_compute(s, NULL, &r, err, sizeof(err)), 0, "%s", err);
	double least = 0, most = 0;
	for (size_t g = 0; g < r.mg.ngpus; g++) {
		double c = r.mg.gpus[g].mean_comm_ns;
		if (r.mg.gpus[g].rank == 2)
			least = least > 0 && least < c ? least : c;
		else
			most = c > most ? c : most;
	}
	cr_assert(most > 2.0 * least, "the planted wait: %.0f vs %.0f ns", most, least);
	gt_overview_result_done(&r);
	struct gt_scope sc;
	gt_scope_all(&sc);
	sc.param_bytes = 1000000;
	sc.link_gbps = 1e6 / least;                 /* expected = rank 2's collective time */
	cr_assert_eq(gt_overview_compute(s, &sc, &r, err, sizeof(err)), 0, "%s", err);
	const struct gt_overview_rec *x = NULL;
	cr_assert_eq(recs_of(&r, "slow-collectives", &x), 1);
	cr_assert_eq(x->severity, GT_OVERVIEW_INFO, "%s", x->text);
	cr_assert_eq(x->rank, 2, "%s", x->text);
	cr_expect(fabs(x->value - 1.0) < 1e-9, "%.3fx", x->value);
	cr_assert(strstr(x->text, "waiting for slower ranks"), "%s", x->text);
	gt_overview_result_done(&r);
	gt_store_free(s);
}

/*
 * rank 0: a GPU kernel [0, 5000) and no steps; rank 1: steps 551 [0,1000)
 * and 552 [1000,2000), a kernel of 300 ns in each; rank 2: step 6
 * [0,1000), a kernel of 300 ns.  The averages are over the 3 real steps
 * (1000 ns each, kernel 300: 30 % GPU busy), not over rank 0's whole
 * capture; rank 0 is marked and left out of the verdicts; the steps are
 * numbered 6-552 and differ by rank, which the text says.
 */
Test(overview, rank_without_steps_left_out)
{
	struct gt_store *s = gt_store_new();
	uint32_t g0 = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
	uint32_t h1 = fx_lane(s, GT_LANE_HOST, 1, -1, 2), g1 = fx_lane(s, GT_LANE_GPU, 1, 0, 7);
	uint32_t h2 = fx_lane(s, GT_LANE_HOST, 2, -1, 3), g2 = fx_lane(s, GT_LANE_GPU, 2, 0, 7);
	fx_add(s, g0, GT_EV_KERNEL, "k_long", 0, 5000, 0, 0);
	fx_add(s, h1, GT_EV_STEP, "ProfilerStep#551", 0, 1000, 0, 551);
	fx_add(s, h1, GT_EV_STEP, "ProfilerStep#552", 1000, 2000, 0, 552);
	fx_add(s, g1, GT_EV_KERNEL, "k", 100, 400, 0, 0);
	fx_add(s, g1, GT_EV_KERNEL, "k", 1100, 1400, 0, 0);
	fx_add(s, h2, GT_EV_STEP, "ProfilerStep#6", 0, 1000, 0, 6);
	fx_add(s, g2, GT_EV_KERNEL, "k", 100, 400, 0, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_overview_result r;
	char err[256];
	cr_assert_eq(gt_overview_compute(s, NULL, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.nrk, 3);
	cr_assert(r.rk[0].no_steps);
	cr_assert(!r.rk[1].no_steps && !r.rk[2].no_steps);
	cr_assert_eq(r.step_rows, 3);
	cr_assert_float_eq(r.bd.avg_total_ns, 1000.0, 1e-9);
	cr_assert_float_eq(r.bd.gpu_util_pct, 30.0, 1e-9);
	cr_assert_eq(r.step_lo, 6);
	cr_assert_eq(r.step_hi, 552);
	cr_assert(r.steps_vary);
	cr_assert_neq(r.source, GT_STEPS_SRC_NONE);
	cr_assert_neq(r.pl.rank, 0, "the worst verdict comes from a rank with steps");
	const struct gt_overview_rec *x = NULL;
	cr_assert_eq(recs_of(&r, "low-utilization", &x), 1);
	cr_assert_eq(r.ranks_with_steps, 2);
	cr_assert(strstr(x->text, "the steps of 2 ranks (numbered 6-552)"), "%s", x->text);
	cr_assert_eq(x->evidence, GT_OVERVIEW_EV_STEPS);
	cr_assert_eq(x->step0, 6);
	cr_assert_eq(x->step1, 552);
	gt_overview_result_done(&r);
	/* the report says n/a for rank 0 */
	char *buf = report_text(s, "overview", GT_OUT_TABLE);
	cr_assert(strstr(buf, "every step of 2 ranks (1 more without steps, left out)"), "%s", buf);
	free(buf);
	/* the record and the per-rank table as CSV, one table each */
	buf = table_csv(s, "overview", "overview_ranks");
	cr_assert(strstr(buf, "\n0,0,n/a,n/a,n/a,n/a,n/a,n/a (no steps),n/a,n/a\n"), "%s", buf);
	free(buf);
	buf = table_csv(s, "overview", "overview");
	cr_assert(strstr(buf, "Steps,Step ranks,First step,Last step,"), "%s", buf);
	cr_assert(strstr(buf, ",3,2,6,552,"), "steps 3 over 2 ranks numbered 6-552: %s", buf);
	free(buf);
	gt_store_free(s);
}

/* launch-bound over 2 ranks: the launch share quoted is the named rank's */
Test(overview, launch_share_names_its_rank, .timeout = 120)
{
	struct gt_overview_result r;
	struct gt_sim_truth t;
	struct gt_store *s;
	run(GT_SIM_LAUNCH_BOUND, 2, 2, &r, &t, &s);
	const struct gt_overview_rec *x = NULL;
	cr_assert_eq(recs_of(&r, "launch-bound", &x), 1);
	const struct gt_overview_rank *w = &r.rk[0];
	for (size_t i = 1; i < r.nrk; i++)
		if (r.rk[i].launch_level > w->launch_level ||
		    (r.rk[i].launch_level == w->launch_level && r.rk[i].launch_pct > w->launch_pct))
			w = &r.rk[i];
	char want[96];
	snprintf(want, sizeof(want), "kernel launch %.1f %% of the step in rank %d", w->launch_pct, w->rank);
	cr_assert(strstr(x->text, want), "want '%s' in %s", want, x->text);
	gt_overview_result_done(&r);
	gt_store_free(s);
}

/* the ResNet-50 trace with 0 DataLoader workers is input-bound (MANIFEST.md):
 * its GPU idles while the host loads data, not because of launch overhead
 * (kernel launch calls take 1.4 % of the step), so the overview says
 * input-bound and nothing about launches; the 234 ms cudaMalloc of a
 * CUDA start-up (nsys cloverleaf) is no kernel launch either */
Test(overview, idle_gpu_waiting_for_input_is_not_launch_bound, .timeout = 60)
{
	static const char *const files[] = { "kineto/resnet50_num_workers_0.pt.trace.json.gz",
					      "nsys/a100_cloverleaf.nsys.sqlite" };
	for (size_t f = 0; f < 2; f++) {
		struct gt_store *s;
		char err[256];
		int rc = fx_testdata(files[f], &s, err, sizeof(err));
		if (rc && f == 1 && strstr(err, "SQLite"))
			continue;                 /* built without SQLite */
		cr_assert_eq(rc, 0, "%s", err);
		struct gt_overview_result r;
		cr_assert_eq(gt_overview_compute(s, NULL, &r, err, sizeof(err)), 0, "%s", err);
		const struct gt_overview_rec *x = NULL;
		cr_expect_eq(recs_of(&r, "launch-bound", &x), 0, "%s: %s", files[f], x ? x->text : "");
		cr_expect_lt(r.pl.launch_pct, 3.0, "%s: launch %.1f %%", files[f], r.pl.launch_pct);
		if (f == 0) {
			cr_assert_eq(recs_of(&r, "input-bound", &x), 1);
			cr_assert_eq(x->severity, GT_OVERVIEW_HIGH);
		}
		gt_overview_result_done(&r);
		gt_store_free(s);
	}
}
