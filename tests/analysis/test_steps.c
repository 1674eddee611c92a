/*
 * test_steps.c - step finding on planted stores: annotation spans with the
 * TensorBoard plugin's device widening and tail rule, NVTX patterns,
 * inference from a repeating kernel sequence, and the edge cases (no
 * steps, one step, cut-off step, ranks with different step counts, GPUs
 * without work).  Expected windows are worked out in the fixture comments.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include "gtrace/analysis.h"
#include "gtrace/report.h"
#include "gtrace/steps.h"
#include "test_steps_fixture.h"

Test(steps, annotated_widened_and_cut_off_dropped)
{
	struct gt_store *s = fx_basic();
	struct gt_steps_list l;
	char err[128];
	cr_assert_eq(gt_steps_find(s, 0, NULL, &l, err, sizeof(err)), 0);
	cr_assert_eq(l.source, GT_STEPS_SRC_PROFSTEP);
	cr_assert_eq(l.widened, 1);
	cr_assert_eq(l.n, 2);
	cr_assert_eq(l.dropped, 1);
	cr_assert_eq(l.v[0].number, 1);
	cr_assert_eq(l.v[0].t0_ns, 0);
	cr_assert_eq(l.v[0].t1_ns, 1200);
	cr_assert_eq(l.v[0].acts, 2);
	cr_assert_eq(l.v[1].number, 2);
	cr_assert_eq(l.v[1].t0_ns, 1200);
	cr_assert_eq(l.v[1].t1_ns, 2000);
	cr_assert_eq(l.v[1].host_t0_ns, 1000);
	cr_assert_eq(l.ngpus, 1);
	cr_assert_eq(l.v[1].gpu[0].first_ns, 1300);
	cr_assert_eq(l.v[1].gpu[0].last_ns, 1900);
	int64_t a, b;
	cr_assert_eq(gt_steps_range(s, 2, &a, &b), 0);
	cr_assert_eq(a, 1200);
	cr_assert_eq(b, 2000);
	cr_assert_eq(gt_steps_range(s, 3, &a, &b), -ENOENT);
	gt_steps_list_done(&l);
	gt_store_free(s);
}

/* a GPU activity launched before the first step and ending before the first
 * step's first activity moves the first window's start (plugin rule) */
Test(steps, first_step_starts_after_earlier_work)
{
	struct gt_store *s = gt_store_new();
	uint32_t h = fx_lane(s, GT_LANE_HOST, 0, -1, 1);
	uint32_t g = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", -600, -550, 9, 0);
	fx_add(s, g, GT_EV_KERNEL, "early", 10, 60, 9, 0);
	fx_add(s, h, GT_EV_STEP, "ProfilerStep#0", 0, 1000, 0, 0);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 100, 150, 1, 0);
	fx_add(s, g, GT_EV_KERNEL, "k", 250, 900, 1, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_steps_list l;
	char err[128];
	cr_assert_eq(gt_steps_find(s, 0, NULL, &l, err, sizeof(err)), 0);
	cr_assert_eq(l.n, 1);   /* one step: never dropped */
	cr_assert_eq(l.v[0].t0_ns, 60);
	cr_assert_eq(l.v[0].t1_ns, 1000);
	gt_steps_list_done(&l);
	gt_store_free(s);
}

Test(steps, nvtx_pattern_outermost)
{
	struct gt_store *s = gt_store_new();
	uint32_t h = fx_lane(s, GT_LANE_HOST, 0, -1, 1);
	uint32_t g = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
	fx_add(s, h, GT_EV_NVTX, "train_step 4", 0, 1000, 0, 0);
	fx_add(s, h, GT_EV_NVTX, "step_inner", 100, 200, 0, 0);   /* nested: not a step */
	fx_add(s, h, GT_EV_NVTX, "forward", 200, 500, 0, 0);      /* no match */
	fx_add(s, h, GT_EV_NVTX, "train_step 5", 1000, 2000, 0, 0);
	fx_add(s, g, GT_EV_KERNEL, "k", 100, 300, 0, 0);
	fx_add(s, g, GT_EV_KERNEL, "k", 1100, 1300, 0, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_steps_list l;
	char err[128];
	cr_assert_eq(gt_steps_find(s, 0, NULL, &l, err, sizeof(err)), 0);
	cr_assert_eq(l.source, GT_STEPS_SRC_NVTX);
	cr_assert_eq(l.n, 2);
	cr_assert_eq(l.v[0].number, 4);
	cr_assert_eq(l.v[1].number, 5);
	cr_assert_eq(l.widened, 0);
	cr_assert_eq(l.v[1].gpu[0].acts, 1);   /* tied by window without correlation */
	gt_steps_list_done(&l);
	struct gt_steps_opts o = { .pattern = "^forward" };
	cr_assert_eq(gt_steps_find(s, 0, &o, &l, err, sizeof(err)), 0);
	cr_assert_eq(l.n, 1);
	gt_steps_list_done(&l);
	o.pattern = "([";
	cr_assert_eq(gt_steps_find(s, 0, &o, &l, err, sizeof(err)), -EINVAL);
	gt_store_free(s);
}

/* A B C repeated 3 times then a partial A B: period 3, the partial step is
 * cut off (2 < 80 % of 3) */
Test(steps, inferred_from_kernel_period)
{
	struct gt_store *s = gt_store_new();
	uint32_t g = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
	const char *seq[] = { "A", "B", "C", "A", "B", "C", "A", "B", "C", "A", "B" };
	for (int i = 0; i < 11; i++)
		fx_add(s, g, GT_EV_KERNEL, seq[i], i * 100, i * 100 + 50, 0, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_steps_list l;
	char err[128];
	cr_assert_eq(gt_steps_find(s, 0, NULL, &l, err, sizeof(err)), 0);
	cr_assert_eq(l.source, GT_STEPS_SRC_INFERRED);
	cr_assert_eq(l.n, 3);
	cr_assert_eq(l.dropped, 1);
	cr_assert(l.v[0].flags & GT_EVF_INFERRED);
	cr_assert_eq(l.v[1].t0_ns, 300);
	cr_assert_eq(l.v[1].t1_ns, 600);
	cr_assert_eq(l.v[2].acts, 3);
	gt_steps_list_done(&l);
	gt_store_free(s);
}

Test(steps, no_steps_and_empty_store)
{
	struct gt_store *s = gt_store_new();
	uint32_t h = fx_lane(s, GT_LANE_HOST, 0, -1, 1);
	fx_add(s, h, GT_EV_CPU_OP, "aten::add", 0, 10, 0, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_steps_list l;
	char err[128];
	cr_assert_eq(gt_steps_find(s, 0, NULL, &l, err, sizeof(err)), 0);
	cr_assert_eq(l.source, GT_STEPS_SRC_NONE);
	cr_assert_eq(l.n, 0);
	gt_steps_list_done(&l);
	cr_assert_eq(gt_steps_find(s, 5, NULL, &l, err, sizeof(err)), 0);   /* unknown rank */
	cr_assert_eq(l.n, 0);
	gt_steps_list_done(&l);
	int64_t a, b;
	cr_assert_eq(gt_steps_range(s, 0, &a, &b), -ENOENT);
	gt_store_free(s);
	s = gt_store_new();
	cr_assert_eq(gt_store_finish(s), 0);
	int32_t *ranks;
	cr_assert_eq(gt_steps_ranks(s, &ranks), 0);
	gt_store_free(s);
}

/* rank 0 with 3 steps, rank 1 with 2; GPU 1 of rank 0 has no work */
Test(steps, ranks_with_different_step_counts)
{
	struct gt_store *s = gt_store_new();
	uint32_t h0 = fx_lane(s, GT_LANE_HOST, 0, -1, 1);
	uint32_t h1 = fx_lane(s, GT_LANE_HOST, 1, -1, 2);
	uint32_t g0 = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
	uint32_t g01 = fx_lane(s, GT_LANE_GPU, 0, 1, 7);
	uint32_t g1 = fx_lane(s, GT_LANE_GPU, 1, 0, 7);
	uint32_t c = 1;
	for (int i = 0; i < 3; i++) {
		fx_add(s, h0, GT_EV_STEP, "ProfilerStep", i * 1000, i * 1000 + 900, 0, (uint64_t)i);
		fx_add(s, h0, GT_EV_RUNTIME, "cudaLaunchKernel", i * 1000 + 10, i * 1000 + 20, c, 0);
		fx_add(s, g0, GT_EV_KERNEL, "k", i * 1000 + 30, i * 1000 + 950, c++, 0);
	}
	fx_add(s, g01, GT_EV_INSTANT, "marker", 5, 5, 0, 0);
	for (int i = 0; i < 2; i++) {
		fx_add(s, h1, GT_EV_STEP, "ProfilerStep", i * 1000, i * 1000 + 900, 0, (uint64_t)i);
		fx_add(s, h1, GT_EV_RUNTIME, "cudaLaunchKernel", i * 1000 + 10, i * 1000 + 20, c, 0);
		fx_add(s, g1, GT_EV_KERNEL, "k", i * 1000 + 40, i * 1000 + 990, c++, 0);
	}
	cr_assert_eq(gt_store_finish(s), 0);
	int32_t *ranks;
	cr_assert_eq(gt_steps_ranks(s, &ranks), 2);
	cr_assert_eq(ranks[1], 1);
	free(ranks);
	struct gt_steps_list l0, l1;
	char err[128];
	cr_assert_eq(gt_steps_find(s, 0, NULL, &l0, err, sizeof(err)), 0);
	cr_assert_eq(gt_steps_find(s, 1, NULL, &l1, err, sizeof(err)), 0);
	cr_assert_eq(l0.n, 3);
	cr_assert_eq(l1.n, 2);
	cr_assert_eq(l0.ngpus, 2);
	cr_assert_eq(l0.v[0].gpu[1].acts, 0);
	cr_assert_eq(l0.v[0].t1_ns, 950);
	int64_t a, b;
	cr_assert_eq(gt_steps_range(s, 1, &a, &b), 0);
	cr_assert_eq(a, 1000);
	cr_assert_eq(b, 1990);
	cr_assert_eq(gt_steps_range(s, 2, &a, &b), 0);
	cr_assert_eq(b, 2950);
	gt_steps_list_done(&l0);
	gt_steps_list_done(&l1);
	gt_store_free(s);
}

/* a step becomes a time window in one place (steps_scope.c); planted:
 * rank 0 steps #1 [0,1000) #2 [1000,2000), rank 1 #1 [500,1500) #2
 * [1500,2600), no correlation, so the windows are the host spans */
Test(steps, step_to_window_in_one_place)
{
	struct gt_steps_step st = { .number = 3, .t0_ns = 100, .t1_ns = 200 };
	struct gt_scope sc;
	int64_t a = 0, b = 0;
	gt_scope_all(&sc);
	cr_assert_eq(gt_steps_window(&st, NULL, &a, &b), 1);
	cr_assert(a == 100 && b == 200);
	sc.step = 4;                               /* another step's scope */
	cr_assert_eq(gt_steps_window(&st, &sc, &a, &b), 0);
	sc.step = 3;
	sc.t0_ns = 150;                            /* clipped to the range */
	cr_assert_eq(gt_steps_window(&st, &sc, &a, &b), 1);
	cr_assert(a == 150 && b == 200, "%lld %lld", (long long)a, (long long)b);
	gt_scope_all(&sc);
	sc.t0_ns = 200;                            /* no overlap */
	cr_assert_eq(gt_steps_window(&st, &sc, &a, &b), 0);
	struct gt_steps_step empty = { .number = 1, .t0_ns = 250, .t1_ns = 250 };
	sc.t1_ns = 300;                            /* an empty step inside the range counts */
	cr_assert_eq(gt_steps_window(&empty, &sc, &a, &b), 1);
	cr_assert(a == 250 && b == 250);

	struct gt_store *s = gt_store_new();
	uint32_t h0 = fx_lane(s, GT_LANE_HOST, 0, -1, 1);
	uint32_t h1 = fx_lane(s, GT_LANE_HOST, 1, -1, 2);
	fx_add(s, h0, GT_EV_STEP, "ProfilerStep#1", 0, 1000, 0, 1);
	fx_add(s, h0, GT_EV_STEP, "ProfilerStep#2", 1000, 2000, 0, 2);
	fx_add(s, h1, GT_EV_STEP, "ProfilerStep#1", 500, 1500, 0, 1);
	fx_add(s, h1, GT_EV_STEP, "ProfilerStep#2", 1500, 2600, 0, 2);
	cr_assert_eq(gt_store_finish(s), 0);
	gt_steps_cache_clear();
	cr_assert_eq(gt_steps_range(s, 2, &a, &b), 0);   /* over all ranks */
	cr_assert(a == 1000 && b == 2600, "%lld %lld", (long long)a, (long long)b);
	struct gt_scope in, out;
	char err[128] = "";
	gt_scope_all(&in);
	in.step = 2;
	in.t0_ns = 1300;
	cr_assert_eq(gt_steps_scope(s, &in, &out, err, sizeof(err)), 0, "%s", err);
	cr_assert(out.t0_ns == 1300 && out.t1_ns == 2600 && out.step == 2);
	cr_assert_eq(gt_steps_scope(s, &out, &out, err, sizeof(err)), 0);   /* in == out */
	cr_assert(out.t0_ns == 1300 && out.t1_ns == 2600);
	gt_scope_all(&in);
	cr_assert_eq(gt_steps_scope(s, &in, &out, err, sizeof(err)), 0);   /* no step: range kept */
	cr_assert(out.t0_ns == INT64_MIN && out.t1_ns == INT64_MAX);
	in.step = 9;
	cr_assert_eq(gt_steps_scope(s, &in, &out, err, sizeof(err)), -ENOENT);
	cr_assert_str_eq(err, "no step 9 in the trace");
	/* the analyses' windows: rank 1's step 2 inside the same scope */
	struct gt_steps_list l;
	cr_assert_eq(gt_steps_find(s, 1, NULL, &l, err, sizeof(err)), 0, "%s", err);
	in.step = 2;
	in.t0_ns = 1300;
	struct gt_breakdown_result r;
	cr_assert_eq(gt_breakdown_compute(s, 1, &l, &in, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.n, 1);
	cr_assert(r.rows[0].step == 2 && r.rows[0].t0_ns == 1500 && r.rows[0].t1_ns == 2600);
	gt_breakdown_result_done(&r);
	gt_steps_list_done(&l);
	gt_store_free(s);
}
