/*
 * test_sim.c - the simulator: API contract, determinism, structural
 * validity of every scenario at 1-16 GPUs and 1-2 ranks, --events sizing.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "simcheck.h"

Test(sim, scenario_names)
{
	for (int i = 0; i < GT_SIM_SCENARIO_COUNT; i++) {
		const char *n = gt_sim_scenario_name((enum gt_sim_scenario)i);
		cr_assert_eq(gt_sim_scenario_parse(n), i);
		cr_assert_not_null(strstr(gt_sim_scenario_list(), n));
	}
	cr_assert_eq(gt_sim_scenario_parse("straggler"), GT_SIM_STRAGGLER);
	cr_assert_eq(gt_sim_scenario_parse("nope"), -1);
	cr_assert_eq(gt_sim_scenario_parse(""), -1);
	cr_assert_str_eq(gt_sim_scenario_name(GT_SIM_SCENARIO_COUNT), "unknown");
}

Test(sim, bad_options)
{
	char err[256];
	struct gt_store *s = gt_store_new();
	struct gt_sim_opts o = { 0 };
	o.gpus = 65;
	cr_assert_null(gt_sim_new(&o, s, err, sizeof(err)));
	cr_assert_not_null(strstr(err, "1..64"));
	o.gpus = -1;
	cr_assert_null(gt_sim_new(&o, s, err, sizeof(err)));
	o.gpus = 2;
	o.ranks = -3;
	cr_assert_null(gt_sim_new(&o, s, err, sizeof(err)));
	o.ranks = 1;
	o.scenario = (enum gt_sim_scenario)99;
	cr_assert_null(gt_sim_new(&o, s, err, sizeof(err)));
	cr_assert_not_null(strstr(err, "comm-bound"));
	o.scenario = GT_SIM_BALANCED;
	o.events = UINT64_MAX / 2;
	cr_assert_null(gt_sim_new(&o, s, err, sizeof(err)));
	cr_assert_not_null(strstr(err, "too many"));
	gt_store_free(s);
}

Test(sim, defaults)
{
	char err[256];
	struct gt_store *s = gt_store_new();
	struct gt_sim_opts o = { 0 };
	struct gt_sim *sim = gt_sim_new(&o, s, err, sizeof(err));
	cr_assert_not_null(sim, "%s", err);
	struct gt_sim_truth t;
	gt_sim_truth_get(sim, &t);
	cr_assert_eq(t.gpus, 4);
	cr_assert_eq(t.ranks, 1);
	cr_assert_eq(t.steps, 20);
	cr_assert_eq(gt_sim_step_count(sim), 20);
	cr_assert_str_eq(gt_store_meta_get(s, "seed"), "1");
	gt_sim_free(sim);
	gt_store_free(s);
	s = gt_store_new();
	o.ranks = 2;
	sim = gt_sim_new(&o, s, err, sizeof(err));
	gt_sim_truth_get(sim, &t);
	cr_assert_eq(t.gpus, 1, "one GPU per rank when ranks > 1");
	gt_sim_free(sim);
	gt_store_free(s);
}

struct counter {
	long n, calls, stop_after;
};

static int count_emit(void *ctx, const struct gt_event *ev, size_t n)
{
	struct counter *c = ctx;
	c->n += (long)n;
	for (size_t i = 0; i < n; i++)
		cr_assert_geq(ev[i].dur_ns, 0);
	return ++c->calls == c->stop_after;
}

Test(sim, next_step_api)
{
	char err[256];
	struct gt_store *s = gt_store_new();
	struct gt_sim_opts o = { .gpus = 2, .steps = 3, .scenario = GT_SIM_STRAGGLER };
	struct gt_sim *sim = gt_sim_new(&o, s, err, sizeof(err));
	cr_assert_not_null(sim, "%s", err);
	struct gt_sim_truth t;
	gt_sim_truth_get(sim, &t);
	struct counter c = { 0 };
	long k, steps = 0;
	while ((k = gt_sim_next_step(sim, count_emit, &c)) > 0) {
		cr_assert_eq((uint64_t)k, t.events_per_step);
		steps++;
	}
	cr_assert_eq(k, 0);
	cr_assert_eq(steps, 3);
	cr_assert_eq((uint64_t)c.n, t.events);
	cr_assert_eq(gt_sim_next_step(sim, count_emit, &c), 0, "done stays done");
	gt_sim_free(sim);
	/* the emitter asks to stop */
	sim = gt_sim_new(&o, s, err, sizeof(err));
	struct counter stop = { 0, 0, 2 };
	cr_assert_eq(gt_sim_next_step(sim, count_emit, &stop), -ECANCELED);
	gt_sim_free(sim);
	gt_store_free(s);
}

static int same_events(const struct gt_store *a, const struct gt_store *b)
{
	if (gt_store_event_count(a) != gt_store_event_count(b) || gt_store_lane_count(a) != gt_store_lane_count(b))
		return 0;
	for (size_t i = 0; i < gt_store_lane_count(a); i++) {
		const struct gt_lane *la = gt_store_lane_at(a, (uint32_t)i), *lb = gt_store_lane_at(b, (uint32_t)i);
		if (la->n != lb->n || memcmp(la->ev, lb->ev, la->n * sizeof(*la->ev)))
			return 0;
	}
	if (gt_store_str_count(a) != gt_store_str_count(b))
		return 0;
	for (uint32_t i = 0; i < gt_store_str_count(a); i++)
		if (strcmp(gt_store_str(a, i), gt_store_str(b, i)))
			return 0;
	return 1;
}

Test(sim, deterministic_per_seed)
{
	for (int sc = 0; sc < GT_SIM_SCENARIO_COUNT; sc++) {
		struct gt_sim_truth t;
		struct gt_store *a = simcheck_gen((enum gt_sim_scenario)sc, 2, 2, 3, 42, &t);
		struct gt_store *b = simcheck_gen((enum gt_sim_scenario)sc, 2, 2, 3, 42, &t);
		struct gt_store *c = simcheck_gen((enum gt_sim_scenario)sc, 2, 2, 3, 43, &t);
		cr_assert(same_events(a, b), "%s: same seed, different events", gt_sim_scenario_name(sc));
		cr_assert_not(same_events(a, c), "%s: different seed, same events", gt_sim_scenario_name(sc));
		gt_store_free(a);
		gt_store_free(b);
		gt_store_free(c);
	}
}

static void valid_all(enum gt_sim_scenario sc)
{
	static const int gpus[] = { 1, 2, 8, 16 };
	for (int r = 1; r <= 2; r++)
		for (size_t i = 0; i < sizeof(gpus) / sizeof(gpus[0]); i++) {
			struct gt_sim_truth t;
			struct gt_store *s = simcheck_gen(sc, gpus[i], r, 3, 7, &t);
			cr_assert_eq(t.gpus, gpus[i]);
			cr_assert_eq(t.ranks, r);
			simcheck_valid(s, &t);
			gt_store_free(s);
		}
}

Test(sim_valid, balanced) { valid_all(GT_SIM_BALANCED); }
Test(sim_valid, input_bound) { valid_all(GT_SIM_INPUT_BOUND); }
Test(sim_valid, launch_bound, .timeout = 120) { valid_all(GT_SIM_LAUNCH_BOUND); }
Test(sim_valid, straggler) { valid_all(GT_SIM_STRAGGLER); }
Test(sim_valid, comm_bound) { valid_all(GT_SIM_COMM_BOUND); }
Test(sim_valid, copy_heavy) { valid_all(GT_SIM_COPY_HEAVY); }
Test(sim_valid, staggered) { valid_all(GT_SIM_STAGGERED); }

/* --events N lands within 10 % of N */
Test(sim, events_target)
{
	static const struct { enum gt_sim_scenario sc; int gpus, ranks; } cfg[] = {
		{ GT_SIM_BALANCED, 4, 1 }, { GT_SIM_LAUNCH_BOUND, 8, 1 },
		{ GT_SIM_STRAGGLER, 1, 2 }, { GT_SIM_COMM_BOUND, 16, 2 }, { GT_SIM_STAGGERED, 2, 1 },
	};
	for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
		struct gt_sim_opts o = { .gpus = cfg[i].gpus, .ranks = cfg[i].ranks, .scenario = cfg[i].sc,
				      .events = 200000 };
		char err[256];
		struct gt_store *s = gt_store_new();
		cr_assert_eq(gt_sim_generate(&o, s, err, sizeof(err)), 0, "%s", err);
		size_t n = gt_store_event_count(s);
		cr_assert(n >= 180000 && n <= 220000, "%s x%d: %zu events for 200000",
			  gt_sim_scenario_name(cfg[i].sc), cfg[i].gpus, n);
		gt_store_free(s);
	}
}

/* t0_ns moves the capture; the first event is the first step */
Test(sim, t0)
{
	char err[256];
	struct gt_sim_opts o = { .gpus = 1, .steps = 2, .t0_ns = 5000000000ll };
	struct gt_store *s = gt_store_new();
	cr_assert_eq(gt_sim_generate(&o, s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(gt_store_t_min(s), 5000000000ll);
	gt_store_free(s);
}
