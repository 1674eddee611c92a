/*
 * test_breakdown.c - the TensorBoard plugin's step-time breakdown: on the
 * planted fixture (values worked out by hand below) and on the real Kineto
 * ResNet-50 trace against the plugin's published regression numbers
 * (shared/testdata/MANIFEST.md, kineto tb_plugin/test/result_check_file.txt).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "gtrace/load.h"
#include "test_steps_fixture.h"

/*
 * fx_basic, step 1 [0,1200): Kernel [250,1200) = 950; Runtime [100,150) = 50
 * ([300,350) is under a kernel); DataLoader [0,100) = 100; CPU Exec
 * [150,200) = 50; Other [200,250) = 50.
 * step 2 [1200,2000): Kernel [1300,1800) = 500; Memcpy [1800,1900) = 100;
 * Runtime [1200,1250) = 50; Other [1250,1300) + [1900,2000) = 150.
 */
Test(breakdown, planted_steps)
{
	struct gt_store *s = fx_basic();
	struct gt_breakdown_result r;
	char err[128];
	cr_assert_eq(gt_breakdown_compute(s, 0, NULL, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.n, 2);
	const int64_t want[2][GT_BD_NCAT] = {
		{ 950, 0, 0, 0, 50, 100, 50, 50 },
		{ 500, 100, 0, 0, 50, 0, 0, 150 },
	};
	for (int i = 0; i < 2; i++)
		for (int c = 0; c < GT_BD_NCAT; c++)
			cr_expect_eq(r.rows[i].cat_ns[c], want[i][c], "step %d cat %s: %lld",
				     i + 1, gt_breakdown_cat_name(c), (long long)r.rows[i].cat_ns[c]);
	cr_assert_eq(r.rows[0].total_ns, 1200);
	cr_assert_eq(r.rows[1].total_ns, 800);
	cr_assert_float_eq(r.avg_ns[GT_BD_KERNEL], 725.0, 1e-9);
	cr_assert_float_eq(r.avg_ns[GT_BD_OTHER], 100.0, 1e-9);
	cr_assert_float_eq(r.avg_total_ns, 1000.0, 1e-9);
	cr_assert_float_eq(r.gpu_util_pct, 72.5, 1e-9);
	gt_breakdown_result_done(&r);
	/* one step through the scope */
	struct gt_scope sc;
	gt_scope_all(&sc);
	sc.step = 2;
	cr_assert_eq(gt_breakdown_compute(s, 0, NULL, &sc, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.n, 1);
	cr_assert_eq(r.rows[0].cat_ns[GT_BD_MEMCPY], 100);
	gt_breakdown_result_done(&r);
	/* a time range cutting step 1: [1000, 1500) */
	gt_scope_all(&sc);
	sc.t0_ns = 1000;
	sc.t1_ns = 1500;
	cr_assert_eq(gt_breakdown_compute(s, 0, NULL, &sc, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.n, 2);
	cr_assert_eq(r.rows[0].total_ns, 200);
	cr_assert_eq(r.rows[0].cat_ns[GT_BD_KERNEL], 200);
	cr_assert_eq(r.rows[1].cat_ns[GT_BD_KERNEL], 200);   /* [1300,1500) */
	cr_assert_eq(r.rows[1].cat_ns[GT_BD_OTHER], 50);
	gt_breakdown_result_done(&r);
	gt_store_free(s);
}

/* overlapping kernels on two streams, an NCCL kernel, a zero-length kernel,
 * no step annotation: one pseudo-step over the whole rank */
Test(breakdown, overlap_comm_zero_length_no_steps)
{
	struct gt_store *s = gt_store_new();
	uint32_t g1 = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
	uint32_t g2 = fx_lane(s, GT_LANE_GPU, 0, 0, 8);
	uint32_t h = fx_lane(s, GT_LANE_HOST, 0, -1, 1);
	fx_add(s, h, GT_EV_PYTHON, "train.py(10): main", 0, 1000, 0, 0);
	fx_add(s, g1, GT_EV_KERNEL, "gemm", 100, 400, 0, 0);
	fx_add(s, g2, GT_EV_KERNEL, "relu", 300, 500, 0, 0);
	fx_add(s, g2, GT_EV_KERNEL, "zero", 600, 600, 0, 0);
	fx_add(s, g1, GT_EV_KERNEL, "ncclDevKernel_AllReduce_Sum_f32", 450, 700, 0, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_breakdown_result r;
	char err[128];
	cr_assert_eq(gt_breakdown_compute(s, 0, NULL, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.n, 1);
	cr_assert_eq(r.rows[0].step, -1);
	cr_assert_eq(r.rows[0].total_ns, 1000);
	cr_assert_eq(r.rows[0].cat_ns[GT_BD_KERNEL], 400);   /* [100,500) */
	cr_assert_eq(r.rows[0].cat_ns[GT_BD_COMM], 200);     /* [500,700) */
	cr_assert_eq(r.rows[0].cat_ns[GT_BD_CPU], 400);
	cr_assert_eq(r.rows[0].cat_ns[GT_BD_OTHER], 0);
	cr_assert_eq(r.rows[0].kernel_any_ns, 600);
	gt_breakdown_result_done(&r);
	gt_store_free(s);
}

static struct gt_store *load_resnet(void)
{
	struct gt_store *s;
	char err[256];
	int rc = fx_testdata("kineto/resnet50_num_workers_0.pt.trace.json.gz", &s, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	return s;
}

/* published by the plugin (MANIFEST.md): avg step 177,592 us; Kernel 98,589 /
 * Memcpy 1,915 / Memset 89 / Runtime 2,908 / DataLoader 59,262 / CPU Exec
 * 13,674 / Other 1,156; step 5: 98,598 1,941 90 2,796 69,317 14,091 1,115;
 * step 6: 98,570 1,947 89 2,762 57,669 12,968 1,148; GPU util 55.51 % */
Test(breakdown, resnet50_matches_tensorboard_plugin, .timeout = 60)
{
	struct gt_store *s = load_resnet();
	struct gt_breakdown_result r;
	char err[128];
	cr_assert_eq(gt_breakdown_compute(s, 0, NULL, NULL, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.source, GT_STEPS_SRC_PROFSTEP);
	cr_assert_eq(r.n, 6);
	const double avg[GT_BD_NCAT] = { 98589, 1915, 89, 0, 2908, 59262, 13674, 1156 };
	for (int c = 0; c < GT_BD_NCAT; c++)
		cr_expect(fabs(r.avg_ns[c] / 1000.0 - avg[c]) <= 1.0, "avg %s: %.1f us",
			  gt_breakdown_cat_name(c), r.avg_ns[c] / 1000.0);
	cr_expect(fabs(r.avg_total_ns / 1000.0 - 177592) <= 1.0, "avg step %.1f", r.avg_total_ns / 1000);
	const double s5[] = { 98598, 1941, 90, 0, 2796, 69317, 14091, 1115 };
	const double s6[] = { 98570, 1947, 89, 0, 2762, 57669, 12968, 1148 };
	cr_assert_eq(r.rows[0].step, 5);
	cr_assert_eq(r.rows[1].step, 6);
	for (int c = 0; c < GT_BD_NCAT; c++) {
		cr_expect(fabs((double)r.rows[0].cat_ns[c] / 1000.0 - s5[c]) <= 1.0, "step 5 %s: %lld ns",
			  gt_breakdown_cat_name(c), (long long)r.rows[0].cat_ns[c]);
		cr_expect(fabs((double)r.rows[1].cat_ns[c] / 1000.0 - s6[c]) <= 1.0, "step 6 %s: %lld ns",
			  gt_breakdown_cat_name(c), (long long)r.rows[1].cat_ns[c]);
	}
	cr_expect(fabs(r.gpu_util_pct - 55.51) < 0.005, "util %.3f", r.gpu_util_pct);
	gt_breakdown_result_done(&r);
	gt_store_free(s);
}

static char *run_report(const struct gt_store *s, const char *name, enum gt_format_out fmt)
{
	const struct gt_report *r = gt_report_find(name);
	cr_assert(r, "report %s registered", name);
	cr_assert(r->help && r->help[0]);
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_report_out o = {0};
	char err[256] = "";
	cr_assert_eq(r->run(s, &sc, &o, err, sizeof(err)), 0, "%s", err);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_eq(gt_report_out_write(f, name, &o, fmt), 0);
	fclose(f);
	gt_report_out_done(&o);
	return buf;
}

Test(breakdown, report_csv_columns_and_average)
{
	struct gt_store *s = fx_basic();
	char *csv = run_report(s, "breakdown", GT_OUT_CSV);
	cr_assert(strstr(csv, "Rank,Step,Row,Kernel (us),Memcpy (us),Memset (us),Communication (us),"
			 "Runtime (us),DataLoader (us),CPU Exec (us),Other (us),Total (us)\n"), "%s", csv);
	/* planted averages in us: 0.725 0.05 0 0 0.05 0.05 0.025 0.1, total 1.0 */
	/* the average row says what it is in Row, its Step empty (n/a): a
	   numeric Step column for pandas */
	cr_assert(strstr(csv, "\n0,n/a,average,0.7,0.1,0.0,0.0,0.1,0.1,0.0,0.1,1.0"), "%s", csv);
	free(csv);
	char *txt = run_report(s, "steps", GT_OUT_TABLE);
	cr_assert(strstr(txt, "ProfilerStep"), "%s", txt);
	cr_assert(strstr(txt, "dropped"), "%s", txt);
	free(txt);
	gt_store_free(s);
}
