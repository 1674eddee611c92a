/*
 * test_tables_kstats.c - kernel statistics on a hand-built store with
 * planted durations (expected medians and standard deviations worked out
 * by hand in the comments), Tensor Core detection, scopes, the kernels
 * report's columns, and quickselect against a full sort.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/kernel_stats.h"
#include "gtrace/report.h"
#include "gtrace/store.h"

static uint32_t lane(struct gt_store *s, int type, int rank, int dev, int64_t id)
{
	struct gt_lane_key k = { .type = (uint8_t)type, .rank = rank, .device = dev, .id = id };
	uint32_t l = gt_store_lane(s, &k);
	cr_assert_neq(l, UINT32_MAX);
	return l;
}

static void add(struct gt_store *s, uint32_t l, int kind, const char *name, int64_t start,
		int64_t dur, uint64_t arg)
{
	struct gt_event e = { .start_ns = start, .dur_ns = dur, .arg = arg, .lane = l,
			      .kind = (uint8_t)kind };
	e.name = gt_store_intern_cstr(s, name);
	cr_assert_eq(gt_store_add(s, &e), 0);
}

/*
 * A: 10, 20, 30, 40 ns (GPU 0) -> total 100, avg 25, med (20+30)/2 = 25,
 *    sample sd sqrt((225+25+25+225)/3) = sqrt(166.67) = 12.9099
 * B: 5, 100, 7 ns (GPU 1, rank 0) -> total 112, avg 37.333, med 7,
 *    sd sqrt((10074 - 112^2/3)/2) = sqrt(2946.33) = 54.2801
 * C: 50 ns once on rank 1 -> sd 0
 * plus a memcpy and a runtime call that the kernel table must ignore
 */
static struct gt_store *planted(void)
{
	struct gt_store *s = gt_store_new();
	cr_assert(s);
	uint32_t g0 = lane(s, GT_LANE_GPU, 0, 0, 7);
	uint32_t g1 = lane(s, GT_LANE_GPU, 0, 1, 7);
	uint32_t r1 = lane(s, GT_LANE_GPU, 1, 0, 7);
	uint32_t h = lane(s, GT_LANE_HOST, 0, -1, 100);
	struct gt_kconf kc = { .grid = { 80, 1, 1 }, .block = { 256, 1, 1 },
			       .regs_per_thread = 32, .smem_static_bytes = 1024,
			       .smem_dynamic_bytes = 512, .occupancy_pct = -1 };
	uint64_t k1 = gt_store_kconf(s, &kc);
	kc.grid[0] = 160;
	uint64_t k2 = gt_store_kconf(s, &kc);
	add(s, g0, GT_EV_KERNEL, "A", 1000, 10, k1);
	add(s, g0, GT_EV_KERNEL, "A", 2000, 20, k2);
	add(s, g0, GT_EV_KERNEL, "A", 3000, 30, k1);
	add(s, g1, GT_EV_KERNEL, "A", 4000, 40, k1);
	add(s, g1, GT_EV_KERNEL, "B", 1500, 5, 0);
	add(s, g1, GT_EV_KERNEL, "B", 2500, 100, 0);
	add(s, g1, GT_EV_KERNEL, "B", 3500, 7, 0);
	add(s, r1, GT_EV_KERNEL, "C", 1200, 50, 0);
	add(s, g0, GT_EV_MEMCPY, "Memcpy HtoD", 500, 999, 4096);
	add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 900, 5000, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	return s;
}

static const struct gt_kernel_stats_row *find_row(const struct gt_store *s, const struct gt_kernel_stats_result *r,
					 const char *name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(gt_store_str(s, r->rows[i].name), name))
			return &r->rows[i];
	return NULL;
}

Test(kernel_stats, planted_whole_trace)
{
	struct gt_store *s = planted();
	struct gt_kernel_stats_result r;
	char err[128];
	cr_assert_eq(gt_kernel_stats_compute(s, NULL, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.nrows, 3);
	cr_assert_eq(r.count, 8);
	cr_assert_eq(r.total_ns, 262);
	/* sorted by total: B 112, A 100, C 50 */
	cr_assert_str_eq(gt_store_str(s, r.rows[0].name), "B");
	cr_assert_str_eq(gt_store_str(s, r.rows[1].name), "A");
	cr_assert_str_eq(gt_store_str(s, r.rows[2].name), "C");
	const struct gt_kernel_stats_row *a = find_row(s, &r, "A");
	cr_assert_eq(a->count, 4);
	cr_assert_eq(a->total_ns, 100);
	cr_assert_eq(a->min_ns, 10);
	cr_assert_eq(a->max_ns, 40);
	cr_assert_float_eq(a->avg_ns, 25.0, 1e-9);
	cr_assert_float_eq(a->med_ns, 25.0, 1e-9);
	cr_assert_float_eq(a->stddev_ns, 12.9099, 1e-4);
	cr_assert_float_eq(a->pct, 100.0 * 100 / 262, 1e-9);
	cr_assert_eq(a->nkconf, 2);
	const struct gt_kconf *kc = gt_store_kconf_at(s, a->kconf);
	cr_assert_eq(kc->grid[0], 80, "most common grid is 80 (3 of 4)");
	char buf[64];
	gt_kernel_stats_gpus_str(&r, a->gpu_mask, buf, sizeof(buf));
	cr_assert_str_eq(buf, "0:0,0:1", "two ranks present -> rank:gpu");
	const struct gt_kernel_stats_row *b = find_row(s, &r, "B");
	cr_assert_float_eq(b->med_ns, 7.0, 1e-9);
	cr_assert_float_eq(b->avg_ns, 112.0 / 3, 1e-9);
	cr_assert_float_eq(b->stddev_ns, 54.2801, 1e-4);
	cr_assert_eq(b->kconf, 0);
	const struct gt_kernel_stats_row *c = find_row(s, &r, "C");
	cr_assert_float_eq(c->stddev_ns, 0.0, 1e-12);
	cr_assert_float_eq(c->med_ns, 50.0, 1e-12);
	gt_kernel_stats_result_done(&r);
	gt_store_free(s);
}

Test(kernel_stats, scopes)
{
	struct gt_store *s = planted();
	struct gt_kernel_stats_result r;
	char err[128];
	struct gt_scope sc;
	gt_scope_all(&sc);
	/* events whose start lies in [2000, 3500): A@2000, A@3000, B@2500 */
	sc.t0_ns = 2000;
	sc.t1_ns = 3500;
	cr_assert_eq(gt_kernel_stats_compute(s, &sc, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.count, 3);
	const struct gt_kernel_stats_row *a = find_row(s, &r, "A");
	cr_assert_eq(a->count, 2);
	cr_assert_float_eq(a->med_ns, 25.0, 1e-9);
	cr_assert_float_eq(a->stddev_ns, sqrt(50.0), 1e-9);
	cr_assert_eq(find_row(s, &r, "B")->total_ns, 100);
	gt_kernel_stats_result_done(&r);
	/* GPU 1 of every rank: A@4000 and the three B */
	gt_scope_all(&sc);
	sc.gpu = 1;
	cr_assert_eq(gt_kernel_stats_compute(s, &sc, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.count, 4);
	cr_assert_eq(r.nrows, 2);
	gt_kernel_stats_result_done(&r);
	/* rank 1 only: C */
	gt_scope_all(&sc);
	sc.rank = 1;
	cr_assert_eq(gt_kernel_stats_compute(s, &sc, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.nrows, 1);
	cr_assert_str_eq(gt_store_str(s, r.rows[0].name), "C");
	gt_kernel_stats_result_done(&r);
	/* empty range */
	gt_scope_all(&sc);
	sc.t0_ns = 10;
	sc.t1_ns = 20;
	cr_assert_eq(gt_kernel_stats_compute(s, &sc, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.nrows, 0);
	gt_kernel_stats_result_done(&r);
	gt_store_free(s);
}

Test(kernel_stats, instances_sorted)
{
	struct gt_store *s = planted();
	struct gt_ref *v;
	size_t n;
	uint32_t a = gt_store_str_find(s, "A", 1);
	cr_assert_eq(gt_kernel_stats_instances(s, NULL, a, 0, GT_KERNEL_STATS_ORDER_DUR_DESC, &v, &n), 0);
	cr_assert_eq(n, 4);
	int64_t want[] = { 40, 30, 20, 10 };
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(gt_store_ev(s, v[i])->dur_ns, want[i]);
	free(v);
	cr_assert_eq(gt_kernel_stats_instances(s, NULL, a, 0, GT_KERNEL_STATS_ORDER_TIME, &v, &n), 0);
	int64_t ts[] = { 1000, 2000, 3000, 4000 };
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(gt_store_ev(s, v[i])->start_ns, ts[i]);
	free(v);
	gt_store_free(s);
}

Test(kernel_stats, tensor_core_names)
{
	const char *yes[] = {
		"volta_h884gemm_64x64_ldg8_nn",
		"ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn",
		"turing_fp16_s1688gemm_fp16_256x128_ldg8_f2f_tn",
		"sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32",
		"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1",
		"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4>(Params)",
		"sm90_gemm_bf16_wgmma_tile", "void wmma_kernel<half>()",
		"void gemmk1_kernel<int, float, 256, 5, false, false, false, true, false, hmma>",
	};
	const char *no[] = {
		"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
		"volta_sgemm_128x64_nn", "ncclKernel_AllReduce_RING_LL_Sum_float",
		"void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>",
		"kernel_18840", "cutlass_80_simt_sgemm_128x128_8x4_nn_align1",
	};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		cr_assert(gt_kernel_stats_is_tensor_core(yes[i]), "%s", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		cr_assert(!gt_kernel_stats_is_tensor_core(no[i]), "%s", no[i]);
}

/* windows: instances starting inside a window of their rank are summed */
Test(kernel_stats, windows)
{
	struct gt_store *s = planted();
	/* rank 0 windows [1000, 2001) and [3500, 5000): A@1000 (10), A@2000 (20),
	 * A@4000 (40), B@1500 (5), B@3500 (7); rank 1 has none -> C gets 0 */
	int64_t w0[] = { 1000, 2001, 3500, 5000 };
	struct gt_kernel_stats_windows win = { .rank = 0, .t = w0, .n = 2 };
	struct gt_kernel_stats_opts o = { .kinds_mask = 1u << GT_EV_KERNEL, .win = &win, .nwin = 1 };
	struct gt_kernel_stats_result r;
	char err[128];
	cr_assert_eq(gt_kernel_stats_compute(s, NULL, &o, &r, err, sizeof(err)), 0);
	cr_assert_eq(find_row(s, &r, "A")->in_windows_ns, 70);
	cr_assert_eq(find_row(s, &r, "B")->in_windows_ns, 12);
	cr_assert_eq(find_row(s, &r, "C")->in_windows_ns, 0);
	gt_kernel_stats_result_done(&r);
	gt_store_free(s);
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

Test(kernel_stats, quickselect_matches_sort)
{
	srand(42);
	for (size_t n = 1; n < 300; n++) {
		int64_t *v = malloc(n * sizeof(*v)), *w = malloc(n * sizeof(*w));
		for (size_t i = 0; i < n; i++)
			v[i] = w[i] = (n % 3 == 0) ? rand() % 5 : rand() % 100000; /* many ties too */
		qsort(w, n, sizeof(*w), cmp64);
		double want = (n & 1) ? (double)w[n / 2] : ((double)w[n / 2 - 1] + (double)w[n / 2]) / 2;
		cr_assert_float_eq(gt_kernel_stats_median(v, n), want, 1e-9, "n=%zu", n);
		free(v);
		free(w);
	}
	/* the histogram path (n >= 4096): wide, narrow, skewed and negative values */
	size_t sizes[] = { 4096, 4097, 5000, 10001, 65536, 100000 };
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		for (int dist = 0; dist < 4; dist++) {
			size_t n = sizes[si];
			int64_t *v = malloc(n * sizeof(*v)), *w = malloc(n * sizeof(*w));
			for (size_t i = 0; i < n; i++) {
				int64_t x = rand();
				if (dist == 0)
					x = x % 7;
				else if (dist == 1)
					x = x * 4096 + rand();
				else if (dist == 2)
					x = (i % 10) ? 1000 + x % 3 : x * 100000LL;
				else
					x = x - RAND_MAX / 2;
				v[i] = w[i] = x;
			}
			qsort(w, n, sizeof(*w), cmp64);
			double want = (n & 1) ? (double)w[n / 2] :
				      ((double)w[n / 2 - 1] + (double)w[n / 2]) / 2;
			cr_assert_float_eq(gt_kernel_stats_median(v, n), want, 1e-6, "n=%zu dist=%d", n, dist);
			free(v);
			free(w);
		}
	}
}

Test(kernel_stats, kernels_report_columns)
{
	struct gt_store *s = planted();
	const struct gt_report *rep = gt_report_find("kernels");
	cr_assert(rep);
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_report_out o = { 0 };
	char err[128];
	cr_assert_eq(rep->run(s, &sc, &o, err, sizeof(err)), 0);
	cr_assert_eq(o.n, 1);
	const struct gt_table *t = o.tables[0];
	const char *cols[] = { "Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)",
			       "Min (ns)", "Max (ns)", "StdDev (ns)", "Name", "GPU(s)", "Grid",
			       "Block", "Regs/Thread", "Shared Mem (bytes)", "TC",
			       "Step Share (%)", "Configs" };
	cr_assert_eq(t->ncols, sizeof(cols) / sizeof(cols[0]));
	for (size_t i = 0; i < t->ncols; i++)
		cr_assert_str_eq(t->cols[i].name, cols[i]);
	cr_assert_eq(t->nrows, 3);
	/* row 1 is A: grid 80x1x1, block 256x1x1, 32 regs, 1536 bytes smem */
	cr_assert_str_eq(gt_table_cell(t, 1, 8)->s, "A");
	cr_assert_str_eq(gt_table_cell(t, 1, 10)->s, "80x1x1");
	cr_assert_str_eq(gt_table_cell(t, 1, 11)->s, "256x1x1");
	cr_assert_eq(gt_table_cell(t, 1, 12)->i, 32);
	cr_assert_eq(gt_table_cell(t, 1, 13)->i, 1536);
	/* B has no launch configuration: n/a, not 0 */
	cr_assert(gt_table_is_null(t, 0, 10));
	cr_assert(gt_table_is_null(t, 0, 12));
	cr_assert(gt_table_is_null(t, 0, 13));
	/* no steps in this store: Step Share is n/a */
	cr_assert(gt_table_is_null(t, 0, 15));
	/* A ran with two launch configurations (grid 80 three times, 160 once) */
	cr_assert_eq(gt_table_cell(t, 1, 16)->i, 2);
	cr_assert(gt_table_is_null(t, 0, 16), "B has no configuration");
	gt_report_out_done(&o);
	gt_store_free(s);
}

/* sort helpers for the brute-force reference below */
struct nd {
	uint32_t name;
	int64_t dur;
};

static int nd_cmp(const void *pa, const void *pb)
{
	const struct nd *a = pa, *b = pb;
	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	return (a->dur > b->dur) - (a->dur < b->dur);
}

/*
 * Big enough for the two-thread path (>= 200,000 events, lanes cut into
 * 1 M-event slices: one lane of 1.2 M events plus three small ones) and the
 * histogram median (groups >= 4096): every row against a brute-force
 * reference computed here by sorting.
 */
Test(kernel_stats, parallel_path_matches_reference, .timeout = 60)
{
	struct gt_store *s = gt_store_new();
	uint32_t lanes[4];
	for (int i = 0; i < 4; i++)
		lanes[i] = lane(s, GT_LANE_GPU, 0, i, 7);
	uint32_t names[7];
	char buf[32];
	for (int i = 0; i < 7; i++) {
		snprintf(buf, sizeof(buf), "k%d", i);
		names[i] = gt_store_intern_cstr(s, buf);
	}
	size_t n = 1500000, ni = 0;
	struct nd *ref = malloc(n * sizeof(*ref));
	uint64_t x = 12345;
	int64_t t[4] = { 0 };
	for (size_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		int li = i % 5 == 0 ? (int)(x >> 60) % 4 : 0;   /* lane 0 gets most */
		struct gt_event e = { .lane = lanes[li], .kind = GT_EV_KERNEL };
		int k = (int)((x >> 33) % 7);
		e.name = names[k];
		/* k0: many ties; k6: rare (small group) */
		if (k == 6 && (x >> 20) % 500)
			e.name = names[k = 5];
		e.dur_ns = k == 0 ? (int64_t)((x >> 40) % 3) : (int64_t)((x >> 24) % 1000000);
		e.start_ns = t[li];
		t[li] += e.dur_ns + 1;
		cr_assert_eq(gt_store_add(s, &e), 0);
		ref[ni++] = (struct nd){ e.name, e.dur_ns };
	}
	cr_assert_eq(gt_store_finish(s), 0);
	qsort(ref, ni, sizeof(*ref), nd_cmp);
	struct gt_kernel_stats_result r;
	char err[128];
	cr_assert_eq(gt_kernel_stats_compute(s, NULL, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.count, n);
	size_t groups = 0;
	for (size_t i = 0; i < ni;) {
		size_t j = i;
		int64_t sum = 0;
		while (j < ni && ref[j].name == ref[i].name)
			sum += ref[j++].dur;
		size_t m = j - i;
		double mean = (double)sum / (double)m, ss = 0;
		for (size_t q = i; q < j; q++)
			ss += ((double)ref[q].dur - mean) * ((double)ref[q].dur - mean);
		double med = (m & 1) ? (double)ref[i + m / 2].dur :
			     ((double)ref[i + m / 2 - 1].dur + (double)ref[i + m / 2].dur) / 2;
		const struct gt_kernel_stats_row *row = find_row(s, &r, gt_store_str(s, ref[i].name));
		cr_assert(row);
		cr_assert_eq(row->count, m);
		cr_assert_eq(row->total_ns, sum);
		cr_assert_eq(row->min_ns, ref[i].dur);
		cr_assert_eq(row->max_ns, ref[j - 1].dur);
		cr_assert_float_eq(row->med_ns, med, 1e-9);
		cr_assert_float_eq(row->stddev_ns, m > 1 ? sqrt(ss / (double)(m - 1)) : 0, 1e-6);
		groups++;
		i = j;
	}
	cr_assert_eq(groups, r.nrows);
	gt_kernel_stats_result_done(&r);
	free(ref);
	gt_store_free(s);
}

/* bytes statistics on the two-thread path (memory report): 400,000 H2D
 * copies over two lanes, checked against sorting */
Test(kernel_stats, parallel_bytes_match_reference, .timeout = 60)
{
	struct gt_store *s = gt_store_new();
	uint32_t l0 = lane(s, GT_LANE_GPU, 0, 0, 7), l1 = lane(s, GT_LANE_GPU, 0, 1, 7);
	uint32_t nm = gt_store_intern_cstr(s, "Memcpy HtoD");
	size_t n = 400000;
	int64_t *b = malloc(n * sizeof(*b));
	uint64_t x = 99;
	int64_t bsum = 0;
	for (size_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		struct gt_event e = { .lane = i & 1 ? l1 : l0, .kind = GT_EV_MEMCPY,
				      .sub = GT_COPY_H2D, .name = nm,
				      .start_ns = (int64_t)i * 10, .dur_ns = 5,
				      .arg = (x >> 30) % 100000000 };
		b[i] = (int64_t)e.arg;
		bsum += b[i];
		cr_assert_eq(gt_store_add(s, &e), 0);
	}
	cr_assert_eq(gt_store_finish(s), 0);
	qsort(b, n, sizeof(*b), cmp64);
	struct gt_kernel_stats_opts o = { .kinds_mask = 1u << GT_EV_MEMCPY, .group = GT_KERNEL_STATS_BY_COPY_KIND,
				 .flags = GT_KERNEL_STATS_WANT_BYTES };
	struct gt_kernel_stats_result r;
	char err[128];
	cr_assert_eq(gt_kernel_stats_compute(s, NULL, &o, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.nrows, 1);
	cr_assert_eq(r.rows[0].cls, GT_COPY_H2D);
	cr_assert_eq(r.rows[0].count, n);
	cr_assert_eq(r.rows[0].bytes_total, (uint64_t)bsum);
	cr_assert_eq(r.rows[0].bytes_min, b[0]);
	cr_assert_eq(r.rows[0].bytes_max, b[n - 1]);
	cr_assert_float_eq(r.rows[0].bytes_med, ((double)b[n / 2 - 1] + (double)b[n / 2]) / 2, 1e-9);
	cr_assert_float_eq(r.rows[0].med_ns, 5.0, 1e-12);
	gt_kernel_stats_result_done(&r);
	free(b);
	gt_store_free(s);
}

/* Configs: the number of distinct launch configurations is exact up to 8
 * (the grid shown is only the most common one); more than 8 is n/a, not a
 * made-up count.  Planted: K8 with grids 1..8, K20 with grids 1..20. */
Test(kernel_stats, configs_column)
{
	struct gt_store *s = gt_store_new();
	uint32_t g = lane(s, GT_LANE_GPU, 0, 0, 7);
	struct gt_kconf kc = { .grid = { 1, 1, 1 }, .block = { 32, 1, 1 }, .occupancy_pct = -1 };
	int64_t t = 0;
	for (uint32_t i = 1; i <= 20; i++) {
		kc.grid[0] = i;
		uint64_t k = gt_store_kconf(s, &kc);
		if (i <= 8)
			add(s, g, GT_EV_KERNEL, "K8", t += 100, 10, k);
		add(s, g, GT_EV_KERNEL, "K20", t += 100, 10, k);
		add(s, g, GT_EV_KERNEL, "K20", t += 100, 10, k);
	}
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_report_out o = { 0 };
	char err[128];
	cr_assert_eq(gt_report_find("kernels")->run(s, &sc, &o, err, sizeof(err)), 0);
	const struct gt_table *t0 = o.tables[0];
	cr_assert_eq(t0->nrows, 2);
	/* sorted by total: K20 (400 ns) then K8 (80 ns) */
	cr_assert_str_eq(gt_table_cell(t0, 0, 8)->s, "K20");
	cr_assert(gt_table_is_null(t0, 0, 16), "more than 8 configurations: n/a");
	cr_assert_str_eq(gt_table_cell(t0, 1, 8)->s, "K8");
	cr_assert_eq(gt_table_cell(t0, 1, 16)->i, 8);
	gt_report_out_done(&o);
	gt_store_free(s);
}

/* GPU(s) of a kernel that ran on more GPUs than the cell holds (70 ranks,
 * one GPU each): whole "rank:gpu" items, then ",...", never a cut number
 * or a trailing comma */
Test(kernel_stats, gpus_cell_many_ranks)
{
	struct gt_store *s = gt_store_new();
	for (int r = 0; r < 70; r++)
		add(s, lane(s, GT_LANE_GPU, r, 0, 7), GT_EV_KERNEL, "K", 1000 + r, 10, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_report_out o = { 0 };
	char err[128];
	cr_assert_eq(gt_report_find("kernels")->run(s, &sc, &o, err, sizeof(err)), 0);
	const char *g = gt_table_cell(o.tables[0], 0, 9)->s;
	size_t n = strlen(g);
	cr_assert(n > 4 && !strcmp(g + n - 4, ",..."), "%s", g);
	cr_assert(!strncmp(g, "0:0,1:0,2:0,", 12), "%s", g);
	/* every item before the ellipsis is a whole "r:0" */
	char *copy = strndup(g, n - 4), *save = NULL;
	int items = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save), items++)
		cr_assert_eq(atoi(tok), items, "%s in %s", tok, g);
	cr_assert(items > 10 && items < 70, "%d items", items);
	free(copy);
	gt_report_out_done(&o);
	gt_store_free(s);
}
