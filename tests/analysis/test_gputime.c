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

/*
 * The queue length of a stream, worked out by hand.  2000 launch calls
 * [10i, 10i + 5) on one thread, their kernels back to back on stream 7 from
 * S = 15090, 100 ns each: kernel i runs [S + 100i, S + 100(i + 1)), the
 * ends (15190 + 100i) coming while launches still do.
 * - max: at the last launch, t = 19990, 2000 launched and the ends before
 *   it (k = 0..47) done: 1952.  An end falls at 19990 too (k = 48): on a
 *   tie the launch counts first (1951 the other way round).
 * - at or above 1024: from the 1024th launch (t = 10230, no end yet) to
 *   the 977th end (15190 + 97600 = 112790): 102560 ns.
 * - mean: area = sum(end - launch) = 2000 * 15190 + 90 * (1999 * 2000 / 2)
 *   = 210290000 over [0, 215090).
 * Variant 1 swaps the launch calls of kernels 1023 and 1024 (two threads
 * racing to one stream): the launches no longer come in the stream's
 * order; the times are the same, so are the figures.  Variant 2 ends
 * kernel 975 150 ns late (112840), after kernel 976 (112790): the ends
 * come out of order, the 977th end is 112840 (at 1024+: 102610 ns) and
 * the area 150 ns more.
 */
Test(gputime, queue_length_worked_out)
{
	for (int var = 0; var < 3; var++) {
		struct gt_store *s = gt_store_new();
		uint32_t h = fx_lane(s, GT_LANE_HOST, 0, -1, 1);
		uint32_t g = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
		const int64_t S = 15090;
		for (uint32_t i = 0; i < 2000; i++) {
			uint32_t k = var == 1 && i == 1023 ? 1024 : var == 1 && i == 1024 ? 1023 : i;
			fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 10 * (int64_t)i,
			       10 * (int64_t)i + 5, k + 1, 0);
		}
		for (uint32_t i = 0; i < 2000; i++)
			fx_add(s, g, GT_EV_KERNEL, "gemm", S + 100 * (int64_t)i,
			       S + 100 * (int64_t)(i + 1) + (var == 2 && i == 975 ? 150 : 0), i + 1, 0);
		cr_assert_eq(gt_store_finish(s), 0);
		struct gt_gputime_result r;
		char err[128];
		cr_assert_eq(gt_gputime_compute(s, NULL, &r, err, sizeof(err)), 0);
		cr_assert_eq(r.nstreams, 1);
		const struct gt_gputime_stream *st = &r.streams[0];
		cr_expect_eq(st->queue_max, 1952, "variant %d: max %lld", var, (long long)st->queue_max);
		cr_expect_eq(st->at_max_ns, var == 2 ? 102610 : 102560, "variant %d: at max %lld", var,
			     (long long)st->at_max_ns);
		cr_expect_float_eq(st->queue_mean, (210290000.0 + (var == 2 ? 150 : 0)) / 215090.0, 1e-9,
				   "variant %d: mean %f", var, st->queue_mean);
		cr_expect_eq(r.gpus[0].launches, 2000);
		gt_gputime_result_done(&r);
		gt_store_free(s);
	}
}
