/*
 * test_gputime.c - HTA definitions on a planted store; every expected value
 * is worked out by hand in the comments.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "test_steps_fixture.h"

/*
 * stream 7: gemm [1000,2000) launched [900,950); gemm [2010,3000) launched
 *   [960,1000) (gap 10 ns, launch earlier: kernel wait); relu [103000,103005)
 *   launched [102000,102900) (gap 100 us, launch after: host wait, short
 *   kernel); relu [200000,200005) without launch (gap 96995 ns: other)
 * stream 8: NCCL [1500,2500) launched [1400,1450)
 * span 199005, busy 2010, idle 196995, compute 2000, non-compute 10,
 * comm 1000, comm & compute 990.  Delays 50, 1010, 100, 50.
 * Queue on stream 7: +900 +960 -2000 -3000 +102000 -103005: max 2.
 * GPU 1 has a lane but no GPU work: no row.
 */
static struct gt_store *planted(void)
{
	struct gt_store *s = gt_store_new();
	uint32_t h = fx_lane(s, GT_LANE_HOST, 0, -1, 1);
	uint32_t g7 = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
	uint32_t g8 = fx_lane(s, GT_LANE_GPU, 0, 0, 8);
	uint32_t g1 = fx_lane(s, GT_LANE_GPU, 0, 1, 7);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 900, 950, 1, 0);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 960, 1000, 2, 0);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 1400, 1450, 4, 0);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 102000, 102900, 3, 0);
	fx_add(s, g7, GT_EV_KERNEL, "gemm", 1000, 2000, 1, 0);
	fx_add(s, g7, GT_EV_KERNEL, "gemm", 2010, 3000, 2, 0);
	fx_add(s, g7, GT_EV_KERNEL, "relu", 103000, 103005, 3, 0);
	fx_add(s, g7, GT_EV_KERNEL, "relu", 200000, 200005, 0, 0);
	fx_add(s, g8, GT_EV_KERNEL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1500, 2500, 4, 0);
	fx_add(s, g1, GT_EV_INSTANT, "mark", 10, 10, 0, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	return s;
}

Test(gputime, planted_hta_definitions)
{
	struct gt_store *s = planted();
	struct gt_gputime_result r;
	char err[128];
	cr_assert_eq(gt_gputime_compute(s, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.ngpus, 1);
	const struct gt_gputime_gpu *g = &r.gpus[0];
	cr_assert_eq(g->span_ns, 199005);
	cr_assert_eq(g->idle_ns, 196995);
	cr_assert_eq(g->compute_ns, 2000);
	cr_assert_eq(g->noncompute_ns, 10);
	cr_assert_eq(g->comm_ns, 1000);
	cr_assert_eq(g->comm_overlap_ns, 990);
	cr_assert_eq(g->kernels, 5);
	cr_assert_eq(g->launches, 4);
	cr_assert_eq(g->delay_max_ns, 1010);
	cr_assert_eq(g->delay_sum_ns, 1210);
	cr_assert_eq(g->delay_med_ns, 75);     /* (50 + 100) / 2 */
	cr_assert_eq(g->short_kernels, 1);
	cr_assert_eq(g->under_10us, 5);
	cr_assert_eq(g->runtime_outliers, 0);
	cr_assert_eq(g->delay_outliers, 0);
	cr_assert_eq(r.nstreams, 2);
	const struct gt_gputime_stream *st = r.streams[0].stream == 7 ? &r.streams[0] : &r.streams[1];
	cr_assert_eq(st->gaps, 3);
	cr_assert_eq(st->kernel_wait_ns, 10);
	cr_assert_eq(st->host_wait_ns, 100000);
	cr_assert_eq(st->other_ns, 96995);
	cr_assert_eq(st->queue_max, 2);
	cr_assert_eq(st->at_max_ns, 0);
	gt_gputime_result_done(&r);
	/* a range holding only the first two gemms: [1000, 3000) */
	struct gt_scope sc;
	gt_scope_all(&sc);
	sc.t0_ns = 1000;
	sc.t1_ns = 3000;
	cr_assert_eq(gt_gputime_compute(s, &sc, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.gpus[0].span_ns, 2000);
	cr_assert_eq(r.gpus[0].idle_ns, 0);
	cr_assert_eq(r.gpus[0].kernels, 3);
	gt_gputime_result_done(&r);
	gt_store_free(s);
}

/*
 * HTA's outliers: "runtime event outliers" are CPU runtime (launch) events
 * longer than 50 us, not long kernels; launch delay outliers are kernels
 * starting over 100 us after their launch call ended.
 * k1 [100000,170000) (70 us) launched [1000,2000) (1 us call): delay 98 us,
 *   neither outlier;
 * k2 [300000,300005) launched [200000,260000) (60 us call): runtime outlier,
 *   delay 40 us;
 * k3 [500000,560000) (60 us) launched [380000,381000): delay 119 us, delay
 *   outlier.  (Counting long kernels instead would give 2 runtime outliers.)
 */
Test(gputime, outliers_are_hta_runtime_events)
{
	struct gt_store *s = gt_store_new();
	uint32_t h = fx_lane(s, GT_LANE_HOST, 0, -1, 1);
	uint32_t g = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 1000, 2000, 1, 0);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 200000, 260000, 2, 0);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 380000, 381000, 3, 0);
	fx_add(s, g, GT_EV_KERNEL, "long_gemm", 100000, 170000, 1, 0);
	fx_add(s, g, GT_EV_KERNEL, "relu", 300000, 300005, 2, 0);
	fx_add(s, g, GT_EV_KERNEL, "long_gemm", 500000, 560000, 3, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_gputime_result r;
	char err[128];
	cr_assert_eq(gt_gputime_compute(s, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.ngpus, 1);
	cr_assert_eq(r.gpus[0].launches, 3);
	cr_assert_eq(r.gpus[0].runtime_outliers, 1);
	cr_assert_eq(r.gpus[0].delay_outliers, 1);
	cr_assert_eq(r.gpus[0].short_kernels, 1);   /* k2: 5 ns < its 60 us call */
	gt_gputime_result_done(&r);
	gt_store_free(s);
}

Test(gputime, report_csv_header)
{
	struct gt_store *s = planted();
	const struct gt_report *rep = gt_report_find("gputime");
	cr_assert(rep);
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_report_out o = {0};
	char err[128];
	cr_assert_eq(rep->run(s, &sc, &o, err, sizeof(err)), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	gt_report_out_write(f, "gputime", &o, GT_OUT_CSV);
	fclose(f);
	cr_assert(strstr(buf, "Rank,GPU,Idle (us),Compute (us),Non-compute (us),Span (us),"), "%s", buf);
	cr_assert(strstr(buf, "0,0,197.0,2.0,0.0,199.0,"), "%s", buf);
	free(buf);
	gt_report_out_done(&o);
	gt_store_free(s);
}

/*
 * GPU annotation lanes are no streams: the planted capture above plus, on
 * GPU 0, a Kineto-like gpu_user_annotation lane (pid -1, id 7) and an
 * XPlane-like "TensorFlow Ops" lane (pid -1, id -559038734), both with
 * annotations over [0, 300000), wider than the GPU work.  Expected: the
 * same two stream rows (7 and 8) and the same figures as without them
 * (span 199005, idle 196995, compute 2000), as worked out above.
 */
Test(gputime, annotation_lanes_are_not_streams)
{
	struct gt_store *s = gt_store_new();
	uint32_t h = fx_lane(s, GT_LANE_HOST, 0, -1, 1);
	uint32_t g7 = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
	uint32_t g8 = fx_lane(s, GT_LANE_GPU, 0, 0, 8);
	struct gt_lane_key ka = { .type = GT_LANE_GPU, .rank = 0, .device = 0, .pid = -1, .id = 7 };
	struct gt_lane_key kx = { .type = GT_LANE_GPU, .rank = 0, .device = 0, .pid = -1, .id = -559038734 };
	uint32_t a = gt_store_lane(s, &ka), x = gt_store_lane(s, &kx);
	cr_assert(a != UINT32_MAX && x != UINT32_MAX);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 900, 950, 1, 0);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 960, 1000, 2, 0);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 1400, 1450, 4, 0);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 102000, 102900, 3, 0);
	fx_add(s, g7, GT_EV_KERNEL, "gemm", 1000, 2000, 1, 0);
	fx_add(s, g7, GT_EV_KERNEL, "gemm", 2010, 3000, 2, 0);
	fx_add(s, g7, GT_EV_KERNEL, "relu", 103000, 103005, 3, 0);
	fx_add(s, g7, GT_EV_KERNEL, "relu", 200000, 200005, 0, 0);
	fx_add(s, g8, GT_EV_KERNEL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1500, 2500, 4, 0);
	fx_add(s, a, GT_EV_GPU_ANNOT, "forward", 0, 150000, 0, 0);
	fx_add(s, a, GT_EV_GPU_ANNOT, "backward", 150000, 300000, 0, 0);
	fx_add(s, x, GT_EV_GPU_ANNOT, "MatMul", 0, 300000, 1, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_gputime_result r;
	char err[128];
	cr_assert_eq(gt_gputime_compute(s, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.ngpus, 1);
	cr_expect_eq(r.gpus[0].span_ns, 199005);
	cr_expect_eq(r.gpus[0].idle_ns, 196995);
	cr_expect_eq(r.gpus[0].compute_ns, 2000);
	cr_expect_eq(r.gpus[0].kernels, 5);
	cr_assert_eq(r.nstreams, 2);
	for (size_t i = 0; i < r.nstreams; i++)
		cr_expect(r.streams[i].stream == 7 || r.streams[i].stream == 8, "stream %lld",
			  (long long)r.streams[i].stream);
	const struct gt_gputime_stream *st = r.streams[0].stream == 7 ? &r.streams[0] : &r.streams[1];
	cr_expect_eq(st->gaps, 3);
	cr_expect_eq(st->other_ns, 96995);
	gt_gputime_result_done(&r);
	gt_store_free(s);
}
