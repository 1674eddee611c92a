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
	for (int i = 0; i < SIM_SCENARIO_COUNT; i++) {
		const char *n = sim_scenario_name((enum sim_scenario)i);
		cr_assert_eq(sim_scenario_parse(n), i);
		cr_assert_not_null(strstr(sim_scenario_list(), n));
	}
	cr_assert_eq(sim_scenario_parse("straggler"), SIM_STRAGGLER);
	cr_assert_eq(sim_scenario_parse("nope"), -1);
	cr_assert_eq(sim_scenario_parse(""), -1);
	cr_assert_str_eq(sim_scenario_name(SIM_SCENARIO_COUNT), "unknown");
}

Test(sim, bad_options)
{
	char err[256];
	struct gt_store *s = store_new();
	struct sim_opts o = { 0 };
	o.gpus = 65;
	cr_assert_null(sim_new(&o, s, err, sizeof(err)));
	cr_assert_not_null(strstr(err, "1..64"));
	o.gpus = -1;
	cr_assert_null(sim_new(&o, s, err, sizeof(err)));
	o.gpus = 2;
	o.ranks = -3;
	cr_assert_null(sim_new(&o, s, err, sizeof(err)));
	o.ranks = 1;
	o.scenario = (enum sim_scenario)99;
	cr_assert_null(sim_new(&o, s, err, sizeof(err)));
	cr_assert_not_null(strstr(err, "comm-bound"));
	o.scenario = SIM_BALANCED;
	o.events = UINT64_MAX / 2;
	cr_assert_null(sim_new(&o, s, err, sizeof(err)));
	cr_assert_not_null(strstr(err, "too many"));
	store_free(s);
}

Test(sim, defaults)
{
	char err[256];
	struct gt_store *s = store_new();
	struct sim_opts o = { 0 };
	struct sim *sim = sim_new(&o, s, err, sizeof(err));
	cr_assert_not_null(sim, "%s", err);
	struct sim_truth t;
	sim_truth_get(sim, &t);
	cr_assert_eq(t.gpus, 4);
	cr_assert_eq(t.ranks, 1);
	cr_assert_eq(t.steps, 20);
	cr_assert_eq(sim_step_count(sim), 20);
	cr_assert_str_eq(store_meta_get(s, "seed"), "1");
	sim_free(sim);
	store_free(s);
	s = store_new();
	o.ranks = 2;
	sim = sim_new(&o, s, err, sizeof(err));
	sim_truth_get(sim, &t);
	cr_assert_eq(t.gpus, 1, "one GPU per rank when ranks > 1");
	sim_free(sim);
	store_free(s);
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
	struct gt_store *s = store_new();
	struct sim_opts o = { .gpus = 2, .steps = 3, .scenario = SIM_STRAGGLER };
	struct sim *sim = sim_new(&o, s, err, sizeof(err));
	cr_assert_not_null(sim, "%s", err);
	struct sim_truth t;
	sim_truth_get(sim, &t);
	struct counter c = { 0 };
	long k, steps = 0;
	while ((k = sim_next_step(sim, count_emit, &c)) > 0) {
		cr_assert_eq((uint64_t)k, t.events_per_step);
		steps++;
	}
	cr_assert_eq(k, 0);
	cr_assert_eq(steps, 3);
	cr_assert_eq((uint64_t)c.n, t.events);
	cr_assert_eq(sim_next_step(sim, count_emit, &c), 0, "done stays done");
	sim_free(sim);
	/* the emitter asks to stop */
	sim = sim_new(&o, s, err, sizeof(err));
	struct counter stop = { 0, 0, 2 };
	cr_assert_eq(sim_next_step(sim, count_emit, &stop), -ECANCELED);
	sim_free(sim);
	store_free(s);
}

static int same_events(const struct gt_store *a, const struct gt_store *b)
{
	if (store_event_count(a) != store_event_count(b) || store_lane_count(a) != store_lane_count(b))
		return 0;
	for (size_t i = 0; i < store_lane_count(a); i++) {
		const struct gt_lane *la = store_lane_at(a, (uint32_t)i), *lb = store_lane_at(b, (uint32_t)i);
		if (la->n != lb->n || memcmp(la->ev, lb->ev, la->n * sizeof(*la->ev)))
			return 0;
	}
	if (store_str_count(a) != store_str_count(b))
		return 0;
	for (uint32_t i = 0; i < store_str_count(a); i++)
		if (strcmp(store_str(a, i), store_str(b, i)))
			return 0;
	return 1;
}

Test(sim, deterministic_per_seed)
{
	for (int sc = 0; sc < SIM_SCENARIO_COUNT; sc++) {
		struct sim_truth t;
		struct gt_store *a = simcheck_gen((enum sim_scenario)sc, 2, 2, 3, 42, &t);
		struct gt_store *b = simcheck_gen((enum sim_scenario)sc, 2, 2, 3, 42, &t);
		struct gt_store *c = simcheck_gen((enum sim_scenario)sc, 2, 2, 3, 43, &t);
		cr_assert(same_events(a, b), "%s: same seed, different events", sim_scenario_name(sc));
		cr_assert_not(same_events(a, c), "%s: different seed, same events", sim_scenario_name(sc));
		store_free(a);
		store_free(b);
		store_free(c);
	}
}

static void valid_all(enum sim_scenario sc)
{
	static const int gpus[] = { 1, 2, 8, 16 };
	for (int r = 1; r <= 2; r++)
		for (size_t i = 0; i < sizeof(gpus) / sizeof(gpus[0]); i++) {
			struct sim_truth t;
			struct gt_store *s = simcheck_gen(sc, gpus[i], r, 3, 7, &t);
			cr_assert_eq(t.gpus, gpus[i]);
			cr_assert_eq(t.ranks, r);
			simcheck_valid(s, &t);
			store_free(s);
		}
}

Test(sim_valid, balanced) { valid_all(SIM_BALANCED); }
Test(sim_valid, input_bound) { valid_all(SIM_INPUT_BOUND); }
Test(sim_valid, launch_bound, .timeout = 120) { valid_all(SIM_LAUNCH_BOUND); }
Test(sim_valid, straggler) { valid_all(SIM_STRAGGLER); }
Test(sim_valid, comm_bound) { valid_all(SIM_COMM_BOUND); }
Test(sim_valid, copy_heavy) { valid_all(SIM_COPY_HEAVY); }
Test(sim_valid, staggered) { valid_all(SIM_STAGGERED); }

/* --events N lands within 10 % of N */
Test(sim, events_target)
{
	static const struct { enum sim_scenario sc; int gpus, ranks; } cfg[] = {
		{ SIM_BALANCED, 4, 1 }, { SIM_LAUNCH_BOUND, 8, 1 },
		{ SIM_STRAGGLER, 1, 2 }, { SIM_COMM_BOUND, 16, 2 }, { SIM_STAGGERED, 2, 1 },
	};
	for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
		struct sim_opts o = { .gpus = cfg[i].gpus, .ranks = cfg[i].ranks, .scenario = cfg[i].sc,
				      .events = 200000 };
		char err[256];
		struct gt_store *s = store_new();
		cr_assert_eq(sim_generate(&o, s, err, sizeof(err)), 0, "%s", err);
		size_t n = store_event_count(s);
		cr_assert(n >= 180000 && n <= 220000, "%s x%d: %zu events for 200000",
			  sim_scenario_name(cfg[i].sc), cfg[i].gpus, n);
		store_free(s);
	}
}

/* t0_ns moves the capture; the first event is the first step */
Test(sim, t0)
{
	char err[256];
	struct sim_opts o = { .gpus = 1, .steps = 2, .t0_ns = 5000000000ll };
	struct gt_store *s = store_new();
	cr_assert_eq(sim_generate(&o, s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(store_t_min(s), 5000000000ll);
	store_free(s);
}
