/*
 * test_pipeline.c - input-pipeline analysis on the planted fixture (values
 * worked out by hand below) and the TensorFlow thresholds on planted
 * category mixes.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "test_steps_fixture.h"

/*
 * fx_basic step 1 [0,1200): compute 950, host wait (DataLoader) 100,
 * launch (cudaLaunchKernel) [100,150) 50, host compute [150,200) 50, other
 * [200,250) 50.  step 2 [1200,2000): compute 500, H2D 100, host compute 50
 * (cudaMemcpyAsync [1200,1250): a copy call, not a kernel launch), other 150.
 * Input = 200 / 2000 = 10 % -> MODERATELY; launch 50 / 2000 = 2.5 % (below
 * the 3 % "moderate"); all others (host compute + other) = 300 / 2000 = 15 %.
 * Step 2 has the larger input share (100/800 = 12.5 % vs 8.33 %).
 */
Test(pipeline, planted_fixture)
{
	struct gt_store *s = fx_basic();
	struct gt_pipeline_result r;
	char err[128];
	cr_assert_eq(gt_pipeline_compute(s, 0, NULL, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.n, 2);
	cr_assert_eq(r.rows[0].cat_ns[GT_PL_COMPUTE], 950);
	cr_assert_eq(r.rows[0].cat_ns[GT_PL_HOST_WAIT], 100);
	cr_assert_eq(r.rows[0].cat_ns[GT_PL_LAUNCH], 50);
	cr_assert_eq(r.rows[0].cat_ns[GT_PL_HOST_COMPUTE], 50);
	cr_assert_eq(r.rows[0].cat_ns[GT_PL_OTHER], 50);
	cr_assert_eq(r.rows[1].cat_ns[GT_PL_H2D], 100);
	cr_assert_eq(r.rows[1].cat_ns[GT_PL_LAUNCH], 0);
	cr_assert_eq(r.rows[1].cat_ns[GT_PL_HOST_COMPUTE], 50);
	cr_assert_eq(r.rows[1].cat_ns[GT_PL_OTHER], 150);
	cr_assert_float_eq(r.input_pct, 10.0, 1e-9);
	cr_assert_eq(r.verdict, GT_PL_MODERATELY);
	cr_assert_float_eq(r.launch_pct, 2.5, 1e-9);
	cr_assert_eq(r.launch_level, 0);
	cr_assert_float_eq(r.others_pct, 15.0, 1e-9);
	cr_assert_eq(r.nworst, 2);
	cr_assert_eq(r.rows[r.worst[0]].step, 2);
	char adv[8][GT_PIPELINE_ADVICE_LEN];
	size_t na = gt_pipeline_advice(&r, adv, 8);
	cr_assert(na >= 4);
	int workers = 0, graphs = 0;
	for (size_t i = 0; i < na; i++) {
		workers |= strstr(adv[i], "num_workers") != NULL;
		graphs |= strstr(adv[i], "CUDA graphs") != NULL;
	}
	cr_assert(workers);
	cr_assert(!graphs, "launch is below 3 %%: no CUDA-graphs advice");
	gt_pipeline_result_done(&r);
	gt_store_free(s);
}

/* one step [0, 1000) with `wait` ns of DataLoader then a kernel to the end;
 * `py` ns of Python while the GPU is idle */
static struct gt_store *mix(int64_t wait, int64_t py)
{
	struct gt_store *s = gt_store_new();
	uint32_t h = fx_lane(s, GT_LANE_HOST, 0, -1, 1);
	uint32_t g = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
	fx_add(s, h, GT_EV_STEP, "ProfilerStep#0", 0, 1000, 0, 0);
	if (wait)
		fx_add(s, h, GT_EV_CPU_OP, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
		       0, wait, 0, 0);
	if (py)
		fx_add(s, h, GT_EV_PYTHON, "loop.py(3): step", wait, wait + py, 0, 0);
	fx_add(s, g, GT_EV_KERNEL, "gemm", wait + py, 1000, 0, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	return s;
}

Test(pipeline, thresholds)
{
	struct { int64_t wait, py; enum gt_pipeline_verdict v; } cases[] = {
		{ 200, 0, GT_PL_HIGHLY }, { 199, 0, GT_PL_MODERATELY }, { 50, 0, GT_PL_MODERATELY },
		{ 49, 0, GT_PL_NOT }, { 40, 30, GT_PL_POTENTIALLY }, { 0, 29, GT_PL_NOT },
		{ 0, 0, GT_PL_NOT },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gt_store *s = mix(cases[i].wait, cases[i].py);
		struct gt_pipeline_result r;
		char err[128];
		cr_assert_eq(gt_pipeline_compute(s, 0, NULL, NULL, &r, err, sizeof(err)), 0);
		cr_expect_eq(r.verdict, cases[i].v, "case %zu: got %s", i, gt_pipeline_verdict_name(r.verdict));
		gt_pipeline_result_done(&r);
		gt_store_free(s);
	}
	cr_assert_str_eq(gt_pipeline_verdict_name(GT_PL_POTENTIALLY), "POTENTIALLY input-bound (I/O or Python)");
}

Test(pipeline, report_notes)
{
	struct gt_store *s = fx_basic();
	const struct gt_report *rep = gt_report_find("pipeline");
	cr_assert(rep);
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_report_out o = {0};
	char err[128];
	cr_assert_eq(rep->run(s, &sc, &o, err, sizeof(err)), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	gt_report_out_write(f, "pipeline", &o, GT_OUT_TABLE);
	fclose(f);
	cr_assert(strstr(buf, "MODERATELY input-bound"), "%s", buf);
	cr_assert(strstr(buf, "Worst steps by input: 2"), "%s", buf);
	/* fx_basic: input 10 % and unaccounted 10 % tie; input is named first */
	cr_assert(strstr(buf, "Largest non-GPU cost: input, 10.0 % of the step"), "%s", buf);
	free(buf);
	gt_report_out_done(&o);
	gt_store_free(s);
}

/* a POTENTIALLY verdict fires on all others, not on input: the verdict line
 * says so with the share (planted: 0.8 % wait, 30 % Python of a 1000 ns step) */
Test(pipeline, potentially_says_all_others)
{
	struct gt_store *s = mix(8, 300);
	const struct gt_report *rep = gt_report_find("pipeline");
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_report_out o = {0};
	char err[128];
	cr_assert_eq(rep->run(s, &sc, &o, err, sizeof(err)), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	gt_report_out_write(f, "pipeline", &o, GT_OUT_TABLE);
	fclose(f);
	cr_expect(strstr(buf, "Verdict: POTENTIALLY input-bound (I/O or Python) (input 0.8 %; all others "
			 "(host compute + unaccounted) 30.0 % >= 3 % of step time"), "%s", buf);
	free(buf);
	gt_report_out_done(&o);
	struct gt_pipeline_result r;
	char why[160];
	cr_assert_eq(gt_pipeline_compute(s, 0, NULL, NULL, &r, err, sizeof(err)), 0);
	gt_pipeline_verdict_why(&r, why, sizeof(why));
	cr_expect_str_eq(why, "input 0.8 %; all others (host compute + unaccounted) 30.0 % >= 3 %");
	gt_pipeline_result_done(&r);
	gt_store_free(s);
}

/* the verdict stays TensorFlow's, and the largest non-GPU cost is named
 * beside it: a DataLoader of 0.8 % and 30 % of Python is POTENTIALLY
 * input-bound whose cost is host compute, not input (planted mixes) */
Test(pipeline, largest_non_gpu_cost)
{
	struct { int64_t wait, py; enum gt_pipeline_verdict v; enum gt_pipeline_host_cost c; double pct; }
	cases[] = {
		{ 8, 300, GT_PL_POTENTIALLY, GT_PL_COST_HOST, 30.0 },
		{ 40, 30, GT_PL_POTENTIALLY, GT_PL_COST_INPUT, 4.0 },
		{ 250, 100, GT_PL_HIGHLY, GT_PL_COST_INPUT, 25.0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gt_store *s = mix(cases[i].wait, cases[i].py);
		struct gt_pipeline_result r;
		char err[128];
		cr_assert_eq(gt_pipeline_compute(s, 0, NULL, NULL, &r, err, sizeof(err)), 0);
		cr_expect_eq(r.verdict, cases[i].v, "case %zu: %s", i, gt_pipeline_verdict_name(r.verdict));
		double pct = -1;
		cr_expect_eq(gt_pipeline_host_cost(&r, &pct), cases[i].c, "case %zu", i);
		cr_expect_float_eq(pct, cases[i].pct, 1e-9, "case %zu: %.3f", i, pct);
		gt_pipeline_result_done(&r);
		/* the overview says it: its record, and the host-bound recommendation */
		if (cases[i].c == GT_PL_COST_HOST) {
			struct gt_overview_result o;
			cr_assert_eq(gt_overview_compute(s, NULL, &o, err, sizeof(err)), 0, "%s", err);
			int found = 0;
			for (size_t k = 0; k < o.nrecs; k++)
				if (!strcmp(o.recs[k].kind, "host-bound")) {
					found = 1;
					cr_expect(strstr(o.recs[k].text, "POTENTIALLY input-bound"), "%s", o.recs[k].text);
					cr_expect(strstr(o.recs[k].text, "the largest non-GPU cost is host compute "
								       "(Python, CPU ops), 30.0 %"), "%s", o.recs[k].text);
					cr_expect(strstr(o.recs[k].text, "(input 0.8 %)"), "%s", o.recs[k].text);
				}
			cr_expect(found, "no host-bound recommendation");
			gt_overview_result_done(&o);
		}
		gt_store_free(s);
	}
	cr_assert_str_eq(gt_pipeline_host_cost_name(GT_PL_COST_HOST), "host compute (Python, CPU ops)");
}
