/*
 * test_steps_infer.c - planted truth for step inference: the simulator's
 * GPU work copied into a store without host events, annotations or
 * correlations must give back the simulator's step count (sim_truth) and
 * windows as long as the annotated ones within 5 %.
 */
#include <criterion/criterion.h>
#include <math.h>
#include "gtrace/sim.h"
#include "gtrace/steps.h"

static void check(enum sim_scenario sc)
{
	struct sim_opts o = { .scenario = sc, .seed = 3, .gpus = 2 };
	struct gt_store *s = store_new(), *d = store_new();
	struct sim_truth t;
	char err[256];
	cr_assert_eq(sim_generate_truth(&o, s, &t, err, sizeof(err)), 0, "%s", err);
	for (size_t i = 0; i < store_lane_count(s); i++) {
		const struct gt_lane *l = store_lane_at(s, (uint32_t)i);
		if (l->key.type != GT_LANE_GPU)
			continue;
		uint32_t nl = store_lane(d, &l->key);
		for (size_t k = 0; k < l->n; k++) {
			struct gt_event e = l->ev[k];
			e.lane = nl;
			e.name = store_intern_cstr(d, store_str(s, e.name));
			e.corr = 0;
			cr_assert_eq(store_add(d, &e), 0);
		}
	}
	cr_assert_eq(store_finish(d), 0);
	struct steps_list inf, ann;
	cr_assert_eq(steps_find(d, 0, NULL, &inf, err, sizeof(err)), 0);
	cr_assert_eq(steps_find(s, 0, NULL, &ann, err, sizeof(err)), 0);
	cr_assert_eq(inf.source, STEPS_SRC_INFERRED);
	cr_assert_eq(ann.source, STEPS_SRC_PROFSTEP);
	cr_assert_eq((int)inf.n, t.steps, "%s: inferred %zu steps, planted %d",
		     sim_scenario_name(sc), inf.n, t.steps);
	for (size_t i = 1; i + 1 < inf.n && i < ann.n; i++) {
		double a = (double)(inf.v[i].t1_ns - inf.v[i].t0_ns);
		double b = (double)(ann.v[i].t1_ns - ann.v[i].t0_ns);
		cr_expect(fabs(a - b) < 0.05 * b, "step %zu: %.0f vs %.0f ns", i, a, b);
	}
	steps_list_done(&inf);
	steps_list_done(&ann);
	store_free(s);
	store_free(d);
}

Test(steps_infer, balanced) { check(SIM_BALANCED); }
Test(steps_infer, comm_bound) { check(SIM_COMM_BOUND); }
Test(steps_infer, launch_bound, .timeout = 60) { check(SIM_LAUNCH_BOUND); }
