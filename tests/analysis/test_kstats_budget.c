/*
 * test_kstats_budget.c - the kernel table under a memory budget (issue 16):
 * its durations live in a spill (core/util/spill.h) instead of the heap.
 * 4.5 M kernels of two names and 1 M copies on 4 GPU lanes, durations from
 * generators whose distributions make the median's histogram recurse (a
 * dense cluster inside a wide range; three values a million times): every
 * statistic equals the test's own count (sums, extremes, a full sort for
 * the median, two-pass standard deviation), with and without a budget, and
 * under the budget the table's pass leaves the durations off the heap
 * (36 MB here; 2.7 GB at a billion events): the heap's resident bytes rise
 * by under 10 MB (59.5 MB unbudgeted), the whole RSS by under 64.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/kernel_stats.h"
#include "gtrace/store.h"
#include "../../bench/rss.h"
#include "../../core/analysis/analysis.h"

#define NA 3000000
#define NB 1500000
#define NC 1000000

/* A: half in a 5,000 ns cluster at 1 ms, half spread to 1 s */
static int64_t dur_a(size_t i)
{
	uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull;
	x ^= x >> 29;
	return i % 2 ? 1000000 + (int64_t)(x % 5000) : 1000 + (int64_t)(x % 1000000000);
}

/* B: three values */
static int64_t dur_b(size_t i)
{
	return 7000 + (int64_t)(i % 3) * 10;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

struct want {
	uint64_t n;
	int64_t sum, min, max;
	double med, sd;
};

static struct want want_of(int64_t *v, size_t n)
{
	struct want w = { .n = n, .min = INT64_MAX, .max = INT64_MIN };
	for (size_t i = 0; i < n; i++) {
		w.sum += v[i];
		w.min = v[i] < w.min ? v[i] : w.min;
		w.max = v[i] > w.max ? v[i] : w.max;
	}
	double mean = (double)w.sum / (double)n, ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += ((double)v[i] - mean) * ((double)v[i] - mean);
	w.sd = sqrt(ss / (double)(n - 1));
	qsort(v, n, sizeof(*v), cmp64);
	w.med = n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2.0;
	return w;
}

static struct gt_store *build(size_t budget, uint32_t *na, uint32_t *nb)
{
	struct gt_store *s = gt_store_new();
	cr_assert(s);
	if (budget)
		cr_assert_eq(gt_store_set_budget(s, budget), 0);
	uint32_t lanes[4];
	for (int i = 0; i < 4; i++) {
		struct gt_lane_key k = { .type = GT_LANE_GPU, .device = i, .id = 7 };
		lanes[i] = gt_store_lane(s, &k);
	}
	*na = gt_store_intern_cstr(s, "gemm_a");
	*nb = gt_store_intern_cstr(s, "elementwise_b");
	uint32_t nc = gt_store_intern_cstr(s, "Memcpy HtoD");
	size_t ia = 0, ib = 0, ic = 0;
	for (size_t k = 0; ia < NA || ib < NB || ic < NC; k++) {
		struct gt_event e = { .lane = lanes[k % 4], .start_ns = (int64_t)k * 100 };
		if (k % 11 < 6 && ia < NA) {
			e.kind = GT_EV_KERNEL, e.name = *na, e.dur_ns = dur_a(ia++);
		} else if (k % 11 < 9 && ib < NB) {
			e.kind = GT_EV_KERNEL, e.name = *nb, e.dur_ns = dur_b(ib++);
		} else if (ic < NC) {
			e.kind = GT_EV_MEMCPY, e.name = nc, e.sub = GT_COPY_H2D;
			e.dur_ns = 50 + (int64_t)(ic % 1000);
			e.arg = 4096 * (ic % 257 + 1);
			ic++;
		} else {
			continue;
		}
		cr_assert_eq(gt_store_add(s, &e), 0);
	}
	cr_assert_eq(gt_store_finish(s), 0);
	return s;
}

static void check_row(const struct gt_kernel_stats_row *r, const struct want *w, const char *what)
{
	cr_assert_eq(r->count, w->n, "%s count", what);
	cr_assert_eq(r->total_ns, w->sum, "%s total", what);
	cr_assert_eq(r->min_ns, w->min, "%s min", what);
	cr_assert_eq(r->max_ns, w->max, "%s max", what);
	cr_assert_eq(r->med_ns, w->med, "%s median %.1f, want %.1f", what, r->med_ns, w->med);
	cr_assert_float_eq(r->stddev_ns, w->sd, 1e-6 * w->sd + 1e-9, "%s sd", what);
}

/* the table by name, and the copies' bytes; the rise of the heap's
 * resident bytes during the table's pass, and of the whole RSS in *all */
static size_t table(size_t *all, size_t budget, const struct want *wa, const struct want *wb,
		    const struct want *wbytes)
{
	uint32_t na, nb;
	struct gt_store *s = build(budget, &na, &nb);
	char err[256];
	struct gt_kernel_stats_result r;
	size_t base = rss_bytes(), abase = rss_anon_bytes();
	struct rss_sampler rs, as;
	cr_assert_eq(rss_sampler_start(&rs, 500), 0);
	cr_assert_eq(rss_sampler_start_anon(&as, 500), 0);
	cr_assert_eq(gt_kernel_stats_compute(s, NULL, NULL, &r, err, sizeof(err)), 0, "%s", err);
	size_t peak = rss_sampler_stop(&rs), apeak = rss_sampler_stop(&as);
	*all = peak > base ? peak - base : 0;
	cr_assert_eq(r.nrows, 2);
	const struct gt_kernel_stats_row *ra = r.rows[0].name == na ? &r.rows[0] : &r.rows[1];
	const struct gt_kernel_stats_row *rb = r.rows[0].name == nb ? &r.rows[0] : &r.rows[1];
	check_row(ra, wa, "gemm_a");
	check_row(rb, wb, "elementwise_b");
	gt_kernel_stats_result_done(&r);

	struct gt_kernel_stats_opts o = { .kinds_mask = 1u << GT_EV_MEMCPY,
					  .group = GT_KERNEL_STATS_BY_COPY_KIND,
					  .flags = GT_KERNEL_STATS_WANT_BYTES };
	cr_assert_eq(gt_kernel_stats_compute(s, NULL, &o, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.nrows, 1);
	cr_assert_eq(r.rows[0].cls, GT_COPY_H2D);
	cr_assert_eq(r.rows[0].bytes_total, (uint64_t)wbytes->sum);
	cr_assert_eq(r.rows[0].bytes_min, wbytes->min);
	cr_assert_eq(r.rows[0].bytes_max, wbytes->max);
	cr_assert_eq(r.rows[0].bytes_med, wbytes->med);
	gt_kernel_stats_result_done(&r);
	gt_store_free(s);
	return apeak > abase ? apeak - abase : 0;
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#else
#define UNDER_ASAN 0
#endif

Test(kstats_budget, exact_in_a_spill_and_resident_bounded, .timeout = 240)
{
	int64_t *v = malloc(NA * sizeof(*v));
	cr_assert(v);
	for (size_t i = 0; i < NA; i++)
		v[i] = dur_a(i);
	struct want wa = want_of(v, NA);
	for (size_t i = 0; i < NB; i++)
		v[i] = dur_b(i);
	struct want wb = want_of(v, NB);
	for (size_t i = 0; i < NC; i++)
		v[i] = 4096 * (int64_t)(i % 257 + 1);
	struct want wbytes = want_of(v, NC);
	free(v);
	/* the generators do what the comments say: the cluster holds the median */
	cr_assert(wa.med >= 1000000 && wa.med < 1005000, "%.1f", wa.med);
	cr_assert_eq(wb.med, 7010);

	size_t unb_all, bud_all;
	size_t unb = table(&unb_all, 0, &wa, &wb, &wbytes);
	/* 16 MiB budget: the spill's share is capped at its 8 MiB floor */
	size_t bud = table(&bud_all, (size_t)16 << 20, &wa, &wb, &wbytes);
	printf("kernel table's heap rise: unbounded %.1f MB, 16 MiB budget %.1f MB; "
	       "RSS rise %.1f / %.1f MB\n", unb / 1e6, bud / 1e6, unb_all / 1e6, bud_all / 1e6);
	if (UNDER_ASAN)
		return;   /* ASan's allocator holds freed memory in quarantine */
	/* unbounded: the 4.5 M durations (36 MB) on the heap at least */
	cr_assert_gt(unb, (size_t)36000000, "unbounded heap rise %zu", unb);
	/* budgeted: only vectors under 64 KiB on the heap (two threads, three
	   groups), the rest in the spill */
	cr_assert_lt(bud, (size_t)10000000, "budgeted heap rise %zu", bud);
	/* and in all, a sanity bound (the heap's rise above is the test): the
	   spill's 8 MiB and a block, the store's reads under its 16 MiB
	   (checked every 4 MiB read) and the samplers' lag, 28-45 MB seen
	   (45 beside CI's other tests), under the durations plus the store */
	cr_assert_lt(bud_all, (size_t)64000000, "budgeted RSS rise %zu", bud_all);
}

/* 64 names in turn: every group's vector fills at once (2 threads x 64
 * vectors of 256-512 KiB in the spill, each moved there from the heap and
 * grown by copies): exact for every group, and the RSS rise stays under
 * the durations' size.  (This does not tell whether pushes announce their
 * writes: the store's own checks count the spill's file pages too and
 * drop the store's pages for them; 21-31 MB either way.) */
#define NG 64
#define PER_G 70000

static int64_t dur_g(size_t g, size_t i)
{
	return 100 + (int64_t)((g * 7919 + i * 104729) % 100003);
}

Test(kstats_budget, many_groups_filling_at_once, .timeout = 240)
{
	struct gt_store *s = gt_store_new();
	cr_assert_eq(gt_store_set_budget(s, (size_t)16 << 20), 0);
	uint32_t lanes[4], names[NG];
	for (int i = 0; i < 4; i++) {
		struct gt_lane_key k = { .type = GT_LANE_GPU, .device = i, .id = 7 };
		lanes[i] = gt_store_lane(s, &k);
	}
	for (size_t g = 0; g < NG; g++) {
		char nm[32];
		snprintf(nm, sizeof(nm), "kernel_%02zu", g);
		names[g] = gt_store_intern_cstr(s, nm);
	}
	for (size_t k = 0; k < (size_t)NG * PER_G; k++) {
		size_t g = k % NG, i = k / NG;
		struct gt_event e = { .lane = lanes[k % 4], .start_ns = (int64_t)k * 100,
				      .kind = GT_EV_KERNEL, .name = names[g], .dur_ns = dur_g(g, i) };
		cr_assert_eq(gt_store_add(s, &e), 0);
	}
	cr_assert_eq(gt_store_finish(s), 0);
	char err[256];
	struct gt_kernel_stats_result r;
	size_t base = rss_bytes();
	struct rss_sampler rs;
	cr_assert_eq(rss_sampler_start(&rs, 500), 0);
	cr_assert_eq(gt_kernel_stats_compute(s, NULL, NULL, &r, err, sizeof(err)), 0, "%s", err);
	size_t peak = rss_sampler_stop(&rs), rise = peak > base ? peak - base : 0;
	printf("64 groups: RSS rise %.1f MB (durations %.1f MB)\n", rise / 1e6,
	       NG * PER_G * 8 / 1e6);
	cr_assert_eq(r.nrows, NG);
	int64_t *v = malloc(PER_G * sizeof(*v));
	cr_assert(v);
	for (size_t k = 0; k < r.nrows; k++) {
		size_t g = 0;
		while (g < NG && names[g] != r.rows[k].name)
			g++;
		cr_assert_lt(g, NG);
		for (size_t i = 0; i < PER_G; i++)
			v[i] = dur_g(g, i);
		struct want w = want_of(v, PER_G);
		check_row(&r.rows[k], &w, gt_store_str(s, names[g]));
	}
	free(v);
	gt_kernel_stats_result_done(&r);
	gt_store_free(s);
	if (UNDER_ASAN)
		return;
	/* a sanity bound, as above: the spill's 8 MiB, 8 MB unannounced, the
	   store's reads under 16 MiB (17-31 MB seen) */
	cr_assert_lt(rise, (size_t)64000000, "RSS rise %zu", rise);
}

/*
 * The exact median of an array in a spill, selected without writing to it
 * (its pages dropped and read back between passes), equals the one of a
 * sorted copy: the middle value, or lo + (hi - lo) / 2 of the two middle
 * ones.  Arrays over the 2^18 values gathered to the heap (so the range is
 * narrowed by histograms first) and under, odd and even, with values
 * spread wide, 90 % on one value, 60 % packed in a band 2^20 wide inside a
 * range of 2^50 (two histogram passes), all equal, negative, the
 * extremes of int64, and the middle on 2^25 - 1 among 0 and 2^40: the top
 * value of the bucket holding it in every pass (narrowed to it, or
 * gathered with it).
 */
static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

Test(kstats_budget, spill_median_reads_only_and_is_exact, .timeout = 120)
{
	static const size_t sizes[] = { 5000, 5001, 700001, 700002 };
	uint64_t seed = 88172645463325252ULL;
	const int64_t X = ((int64_t)1 << 25) - 1, T = (int64_t)1 << 40;
	for (int shape = 0; shape < 8; shape++)
		for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
			size_t n = sizes[z];
			struct spill *sp;
			cr_assert_eq(spill_new(1 << 20, &sp), 0);
			int64_t *v = spill_alloc(sp, n * sizeof(*v)), *c = malloc(n * sizeof(*c));
			int64_t *orig = malloc(n * sizeof(*orig));
			cr_assert(v && c && orig);
			for (size_t i = 0; i < n; i++) {
				seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
				int64_t x;
				switch (shape) {
				case 0: x = (int64_t)(seed % 1000000007u); break;
				case 1: x = seed % 10 ? 4242 : (int64_t)(seed % 100000); break;
				case 2: x = seed % 10 < 6 ? ((int64_t)1 << 40) + (int64_t)(seed % (1u << 20)) :
						(int64_t)(seed % ((uint64_t)1 << 50)); break;
				case 3: x = 77; break;
				case 4: x = -(int64_t)(seed % 5000) - 1; break;
				case 5: x = seed % 3 == 0 ? INT64_MIN : seed % 3 == 1 ? INT64_MAX :
						(int64_t)seed; break;
				/* the middle on the top value of a bucket of every pass */
				case 6: x = seed % 5 == 0 ? 0 : seed % 5 == 1 ? T : X; break;
				default: x = seed % 5 < 2 ? 0 : seed % 5 == 2 ? X : T; break;
				}
				if (!(i & 8191))
					spill_touch(sp, 8192 * sizeof(*v));
				v[i] = c[i] = orig[i] = x;
			}
			qsort(c, n, sizeof(*c), cmp_i64);
			int64_t lo = c[(n - 1) / 2], hi = c[n / 2];
			int64_t want = (n & 1) ? hi : lo + (hi - lo) / 2;
			int64_t got = analysis_median_i64_spill(sp, v, n);
			cr_expect_eq(got, want, "shape %d, n %zu: %lld, sorted %lld", shape, n,
				     (long long)got, (long long)want);
			/* nothing moved: the same values in the same places (a
			 * write would have made the dropped pages dirty) */
			cr_expect_eq(memcmp(v, orig, n * sizeof(*v)), 0, "shape %d, n %zu: moved", shape, n);
			if (n > 100000)
				cr_expect_gt(spill_drops(sp), 0, "the spill dropped its pages between passes");
			spill_release(sp, v, n * sizeof(*v));
			spill_free(sp);
			free(c);
			free(orig);
		}
}
