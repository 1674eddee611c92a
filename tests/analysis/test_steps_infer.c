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

static void check(enum gt_sim_scenario sc)
{
	struct gt_sim_opts o = { .scenario = sc, .seed = 3, .gpus = 2 };
	struct gt_store *s = gt_store_new(), *d = gt_store_new();
	struct gt_sim_truth t;
	char err[256];
	cr_assert_eq(gt_sim_generate_truth(&o, s, &t, err, sizeof(err)), 0, "%s", err);
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type != GT_LANE_GPU)
			continue;
		uint32_t nl = gt_store_lane(d, &l->key);
		for (size_t k = 0; k < l->n; k++) {
			struct gt_event e = l->ev[k];
			e.lane = nl;
			e.name = gt_store_intern_cstr(d, gt_store_str(s, e.name));
			e.corr = 0;
			cr_assert_eq(gt_store_add(d, &e), 0);
		}
	}
	cr_assert_eq(gt_store_finish(d), 0);
	struct gt_steps_list inf, ann;
	cr_assert_eq(gt_steps_find(d, 0, NULL, &inf, err, sizeof(err)), 0);
	cr_assert_eq(gt_steps_find(s, 0, NULL, &ann, err, sizeof(err)), 0);
	cr_assert_eq(inf.source, GT_STEPS_SRC_INFERRED);
	cr_assert_eq(ann.source, GT_STEPS_SRC_PROFSTEP);
	cr_assert_eq((int)inf.n, t.steps, "%s: inferred %zu steps, planted %d",
		     gt_sim_scenario_name(sc), inf.n, t.steps);
	for (size_t i = 1; i + 1 < inf.n && i < ann.n; i++) {
		double a = (double)(inf.v[i].t1_ns - inf.v[i].t0_ns);
		double b = (double)(ann.v[i].t1_ns - ann.v[i].t0_ns);
		cr_expect(fabs(a - b) < 0.05 * b, "step %zu: %.0f vs %.0f ns", i, a, b);
	}
	gt_steps_list_done(&inf);
	gt_steps_list_done(&ann);
	gt_store_free(s);
	gt_store_free(d);
}

Test(steps_infer, balanced) { check(GT_SIM_BALANCED); }
Test(steps_infer, comm_bound) { check(GT_SIM_COMM_BOUND); }
Test(steps_infer, launch_bound, .timeout = 60) { check(GT_SIM_LAUNCH_BOUND); }
