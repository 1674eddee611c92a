/*
 * test_multigpu.c - multi-GPU health on a hand-planted two-GPU store; the
 * expected values are worked out in the comments.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "test_steps_fixture.h"

static void copy(struct gt_store *s, uint32_t l, int sub, int64_t a, int64_t b, uint64_t bytes)
{
	struct gt_event e = { .start_ns = a, .dur_ns = b - a, .arg = bytes, .lane = l,
			      .kind = GT_EV_MEMCPY, .sub = (uint8_t)sub };
	e.name = gt_store_intern_cstr(s, "Memcpy HtoD");
	cr_assert_eq(gt_store_add(s, &e), 0);
}

/*
 * rank 0, steps [0,1000) and [1000,2000) (no correlation: windows = spans)
 * GPU 0: compute [100,500) [1100,1500); NCCL [500,700) [1500,1700);
 *        H2D 4096 B [50,100) [1050,1100)
 * GPU 1: compute [150,650) [1200,1700); NCCL [600,750) [1650,1800)
 * GPU 1 is slowest in both steps, 500 vs 400: +25 %.
 * Stagger of GPU 1: 50 and 100 -> mean 75, max 100.
 * Comm share: GPU 0 400/2000 = 20 %, GPU 1 300/2000 = 15 %; GPU 1 overlap
 * 50 of 150 per step = 33.3 %.  Copies: 100 of 4000 GPU-step ns = 2.5 %.
 */
static struct gt_store *planted(int with_rank1)
{
	struct gt_store *s = gt_store_new();
	uint32_t h = fx_lane(s, GT_LANE_HOST, 0, -1, 1);
	uint32_t g0 = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
	uint32_t g1 = fx_lane(s, GT_LANE_GPU, 0, 1, 7);
	uint32_t n1 = fx_lane(s, GT_LANE_GPU, 0, 1, 21);
	const char *nccl = "ncclKernel_AllReduce_RING_LL_Sum_float";
	for (int i = 0; i < 2; i++) {
		int64_t o = i * 1000;
		fx_add(s, h, GT_EV_STEP, "ProfilerStep", o, o + 1000, 0, (uint64_t)i);
		fx_add(s, g0, GT_EV_KERNEL, "gemm", o + 100, o + 500, 0, 0);
		fx_add(s, g0, GT_EV_KERNEL, nccl, o + 500, o + 700, 0, 0);
		copy(s, g0, GT_COPY_H2D, o + 50, o + 100, 4096);
	}
	fx_add(s, g1, GT_EV_KERNEL, "gemm", 150, 650, 0, 0);
	fx_add(s, n1, GT_EV_KERNEL, nccl, 600, 750, 0, 0);
	fx_add(s, g1, GT_EV_KERNEL, "gemm", 1200, 1700, 0, 0);
	fx_add(s, n1, GT_EV_KERNEL, nccl, 1650, 1800, 0, 0);
	if (with_rank1) {   /* rank 1: one GPU, step 0 only, compute [100,400) */
		uint32_t h1 = fx_lane(s, GT_LANE_HOST, 1, -1, 2);
		uint32_t r1 = fx_lane(s, GT_LANE_GPU, 1, 0, 7);
		fx_add(s, h1, GT_EV_STEP, "ProfilerStep", 0, 1000, 0, 0);
		fx_add(s, r1, GT_EV_KERNEL, "gemm", 100, 400, 0, 0);
	}
	cr_assert_eq(gt_store_finish(s), 0);
	return s;
}

Test(multigpu, planted_two_gpus)
{
	struct gt_store *s = planted(0);
	struct gt_multigpu_result r;
	char err[128];
	cr_assert_eq(gt_multigpu_compute(s, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.nsteps, 2);
	cr_assert_eq(r.ngpus, 2);
	cr_assert_eq(r.straggler, 1);
	cr_assert_float_eq(r.straggler_pct, 25.0, 1e-9);
	cr_assert_eq(r.gpus[1].slowest, 2);
	cr_assert_float_eq(r.gpus[1].stagger_mean_ns, 75.0, 1e-9);
	cr_assert_float_eq(r.gpus[1].stagger_max_ns, 100.0, 1e-9);
	cr_assert_float_eq(r.gpus[0].stagger_mean_ns, 0.0, 1e-9);
	cr_assert_float_eq(r.gpus[0].comm_share_pct, 20.0, 1e-9);
	cr_assert_float_eq(r.gpus[1].comm_share_pct, 15.0, 1e-9);
	cr_assert_float_eq(r.gpus[1].comm_overlap_pct, 100.0 / 3.0, 1e-9);
	cr_assert_float_eq(r.gpus[0].comm_overlap_pct, 0.0, 1e-9);
	cr_assert_float_eq(r.mean_step_ns, 1000.0, 1e-9);
	cr_assert_eq(r.ncopies, 1);
	cr_assert_eq(r.copies[0].kind, GT_COPY_H2D);
	cr_assert_eq(r.copies[0].bytes, 4096);
	cr_assert_eq(r.copies[0].steps, 2);
	cr_assert_float_eq(r.copies[0].mean_offset_ns, 50.0, 1e-9);
	cr_assert_float_eq(r.copy_share_pct, 2.5, 1e-9);
	/* busy: step 0 GPU 0 [50,700) 650, GPU 1 [150,750) 600, union 700;
	 * step 1 650, 600, union [1050,1800) 750 -> (550 + 500) / (600 + 600) */
	cr_assert_float_eq(r.gpus[0].parallel_pct, 87.5, 1e-9);
	cr_assert_float_eq(r.gpus[1].parallel_pct, 87.5, 1e-9);
	gt_multigpu_result_done(&r);
	/* one GPU only: nothing to compare */
	struct gt_scope sc;
	gt_scope_all(&sc);
	sc.gpu = 0;
	cr_assert_eq(gt_multigpu_compute(s, &sc, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.ngpus, 1);
	cr_assert_eq(r.straggler, -1);
	gt_multigpu_result_done(&r);
	gt_store_free(s);
}

/*
 * plus rank 1 with step 0 only: step 0 has 400 / 500 / 300 -> GPU (0,1)
 * exceeds the others' mean 350 by 42.857 %; step 1 as before 25 %:
 * skew = mean 33.93 %.
 */
Test(multigpu, ranks_with_different_step_counts)
{
	struct gt_store *s = planted(1);
	struct gt_multigpu_result r;
	char err[128];
	cr_assert_eq(gt_multigpu_compute(s, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.nsteps, 2);
	cr_assert_eq(r.ngpus, 3);
	cr_assert_eq(r.gpus[2].rank, 1);
	cr_assert(!r.cells[1 * 3 + 2].valid);
	cr_assert_eq(r.straggler, 1);
	cr_assert_float_eq(r.straggler_pct, (100.0 * 150.0 / 350.0 + 25.0) / 2.0, 1e-9);
	gt_multigpu_result_done(&r);
	const struct gt_report *rep = gt_report_find("multigpu");
	cr_assert(rep);
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_report_out o = {0};
	cr_assert_eq(rep->run(s, &sc, &o, err, sizeof(err)), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	gt_report_out_write(f, "multigpu", &o, GT_OUT_TABLE);
	fclose(f);
	cr_assert(strstr(buf, "Straggler: rank 0 GPU 1"), "%s", buf);
	free(buf);
	gt_report_out_done(&o);
	gt_store_free(s);
}

/*
 * expected all-reduce time = parameter bytes / link bandwidth (docs/analyses.md §6):
 * 1000 B at 5 GB/s = 200 ns per step.  NCCL per step: GPU 0 200 ns (1.0x),
 * GPU 1 150 ns (0.75x).  Without the two numbers nothing is claimed.
 */
Test(multigpu, expected_allreduce_time)
{
	struct gt_store *s = planted(0);
	struct gt_multigpu_result r;
	struct gt_scope sc;
	char err[128];
	gt_scope_all(&sc);
	cr_assert_eq(gt_multigpu_compute(s, &sc, &r, err, sizeof(err)), 0);
	cr_assert_float_eq(r.expected_comm_ns, 0.0, 1e-12);
	cr_assert_float_eq(r.gpus[0].comm_vs_expected, 0.0, 1e-12);
	gt_multigpu_result_done(&r);
	sc.param_bytes = 1000;
	sc.link_gbps = 5.0;
	cr_assert_eq(gt_multigpu_compute(s, &sc, &r, err, sizeof(err)), 0);
	cr_assert_float_eq(r.expected_comm_ns, 200.0, 1e-9);
	cr_assert_float_eq(r.gpus[0].comm_vs_expected, 1.0, 1e-9);
	cr_assert_float_eq(r.gpus[1].comm_vs_expected, 0.75, 1e-9);
	gt_multigpu_result_done(&r);
	const struct gt_report *rep = gt_report_find("multigpu");
	struct gt_report_out o = {0};
	cr_assert_eq(rep->run(s, &sc, &o, err, sizeof(err)), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	gt_report_out_write(f, "multigpu", &o, GT_OUT_CSV);
	fclose(f);
	cr_assert(strstr(buf, ",Comm/Expected (x)"), "%s", buf);
	cr_assert(strstr(buf, ",1.00\n") && strstr(buf, ",0.75\n"), "%s", buf);
	free(buf);
	gt_report_out_done(&o);
	gt_store_free(s);
}

/* GPU 1 only runs while GPU 0 is idle: sequential execution, 0 % parallel */
Test(multigpu, sequential_execution)
{
	struct gt_store *s = gt_store_new();
	uint32_t h = fx_lane(s, GT_LANE_HOST, 0, -1, 1);
	uint32_t g0 = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
	uint32_t g1 = fx_lane(s, GT_LANE_GPU, 0, 1, 7);
	fx_add(s, h, GT_EV_STEP, "ProfilerStep", 0, 1000, 0, 0);
	fx_add(s, g0, GT_EV_KERNEL, "gemm", 100, 500, 0, 0);
	fx_add(s, g1, GT_EV_KERNEL, "gemm", 500, 900, 0, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_multigpu_result r;
	char err[128];
	cr_assert_eq(gt_multigpu_compute(s, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.ngpus, 2);
	cr_assert_float_eq(r.gpus[0].parallel_pct, 0.0, 1e-9);
	gt_multigpu_result_done(&r);
	gt_store_free(s);
}
