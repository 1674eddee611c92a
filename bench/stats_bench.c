/*
 * stats_bench.c - speed of the table reports: kernel statistics over a
 * 10 M-event store (whole trace) and over a range holding 1 M events, and
 * every table report over the whole store.  The store is synthetic: 8 GPUs
 * x 4 streams of kernels with 200 names (log-normal-ish durations), copies,
 * memsets and host runtime calls; deterministic.
 * Prints "name value unit" lines (median of the runs).
 * With SOURCE = sim the store comes from the simulator (gt_sim_generate,
 * scenario balanced, 8 GPUs) instead.
 * usage: stats_bench [EVENTS] [RUNS] [synthetic|sim]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gtrace/kernel_stats.h"
#include "gtrace/report.h"
#include "gtrace/sim.h"
#include "gtrace/steps.h"
#include "gtrace/store.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* a synthetic finished store with about n events */
static struct gt_store *make_store(size_t n)
{
	struct gt_store *s = gt_store_new();
	uint32_t names[200], kconf[16];
	char buf[64];
	for (int i = 0; i < 200; i++) {
		snprintf(buf, sizeof(buf), "void kernel_%d<float, %d>(Params)", i, i % 7);
		names[i] = gt_store_intern_cstr(s, buf);
	}
	for (int i = 0; i < 16; i++) {
		struct gt_kconf k = { .grid = { 80u * (unsigned)(i + 1), 1, 1 },
				      .block = { 256, 1, 1 }, .regs_per_thread = 32 };
		kconf[i] = gt_store_kconf(s, &k);
	}
	uint32_t copy = gt_store_intern_cstr(s, "Memcpy HtoD"), launch =
		gt_store_intern_cstr(s, "cudaLaunchKernel");
	uint32_t lanes[32], host[8];
	for (int g = 0; g < 8; g++) {
		for (int st = 0; st < 4; st++) {
			struct gt_lane_key k = { .type = GT_LANE_GPU, .device = g, .id = 7 + st };
			lanes[g * 4 + st] = gt_store_lane(s, &k);
			gt_store_reserve(s, lanes[g * 4 + st], n / 40 + 16);
		}
		struct gt_lane_key h = { .type = GT_LANE_HOST, .device = -1, .pid = 1, .id = 100 + g };
		host[g] = gt_store_lane(s, &h);
		gt_store_reserve(s, host[g], n / 80 + 16);
	}
	int64_t t[32] = { 0 };
	for (size_t i = 0; i < n; i++) {
		int li = (int)(i % 36);
		struct gt_event e = { 0 };
		if (li < 32) {
			uint64_t r = next();
			e.lane = lanes[li];
			e.kind = (r & 63) == 0 ? GT_EV_MEMCPY : (r & 63) == 1 ? GT_EV_MEMSET : GT_EV_KERNEL;
			e.name = e.kind == GT_EV_KERNEL ? names[(r >> 8) % 200] : copy;
			e.dur_ns = 1000 + (int64_t)((r >> 20) % 50000) * (int64_t)((r >> 40) % 8 + 1);
			e.arg = e.kind == GT_EV_KERNEL ? kconf[((r >> 8) % 200 + ((r >> 50) % 10 == 0)) % 16] : (r >> 30) % (1 << 24);
			e.sub = e.kind == GT_EV_MEMCPY ? 1 + (r >> 56) % 3 : 0;
			e.start_ns = t[li];
			t[li] += e.dur_ns + 500;
		} else {
			int hi = li - 32 + 4 * (int)((i / 36) % 2);
			e.lane = host[hi];
			e.kind = GT_EV_RUNTIME;
			e.name = launch;
			e.start_ns = t[hi] + 7;
			e.dur_ns = 3000;
		}
		gt_store_add(s, &e);
	}
	gt_store_finish(s);
	return s;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmpd);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
	int runs = argc > 2 ? atoi(argv[2]) : 7;
	if (runs < 1 || runs > 100)
		runs = 7;
	int use_sim = argc > 3 && !strcmp(argv[3], "sim");
	double t0 = now_ms();
	struct gt_store *s;
	if (use_sim) {
		char serr[256];
		struct gt_sim_opts so = { .gpus = 8, .ranks = 1, .events = n, .seed = 1 };
		s = gt_store_new();
		if (!s || gt_sim_generate(&so, s, serr, sizeof(serr))) {
			fprintf(stderr, "sim: %s\n", serr);
			return 1;
		}
	} else {
		s = make_store(n);
	}
	printf("store_build_ms %.1f ms\n", now_ms() - t0);
	printf("events %zu count\n", gt_store_event_count(s));
	char err[256];
	double v[100], cpu[100];
	struct gt_kernel_stats_result r;
	/* whole trace */
	for (int i = 0; i < runs; i++) {
		double c0 = cpu_ms();
		t0 = now_ms();
		if (gt_kernel_stats_compute(s, NULL, NULL, &r, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		v[i] = now_ms() - t0;
		cpu[i] = cpu_ms() - c0;
		if (i == 0)
			printf("kernels_counted %llu count\n", (unsigned long long)r.count);
		gt_kernel_stats_result_done(&r);
	}
	printf("kernel_stats_whole_ms %.2f ms\n", median(v, runs));
	printf("kernel_stats_whole_cpu_ms %.2f ms\n", median(cpu, runs));
	/* a range holding about 1 M events: a tenth of the time span */
	struct gt_scope sc;
	gt_scope_all(&sc);
	int64_t a = gt_store_t_min(s), b = gt_store_t_max(s);
	sc.t0_ns = a + (b - a) * 4 / 10;
	sc.t1_ns = sc.t0_ns + (b - a) / 10 * (int64_t)(10000000.0 / (double)n * 1.0);
	if (sc.t1_ns > b)
		sc.t1_ns = b;
	for (int i = 0; i < runs; i++) {
		double c0 = cpu_ms();
		t0 = now_ms();
		gt_kernel_stats_compute(s, &sc, NULL, &r, err, sizeof(err));
		v[i] = now_ms() - t0;
		cpu[i] = cpu_ms() - c0;
		if (i == 0)
			printf("range_kernels_counted %llu count\n", (unsigned long long)r.count);
		gt_kernel_stats_result_done(&r);
	}
	printf("kernel_stats_range_ms %.2f ms\n", median(v, runs));
	printf("kernel_stats_range_cpu_ms %.2f ms\n", median(cpu, runs));
	/* each table report over the whole store */
	static const char *const mine[] = { "kernels", "memory", "api", "nvtx", "nccl", "summary" };
	for (size_t k = 0; k < sizeof(mine) / sizeof(mine[0]); k++) {
		const struct gt_report *rep = gt_report_find(mine[k]);
		if (!rep)
			continue;
		gt_scope_all(&sc);
		for (int i = 0; i < runs; i++) {
			struct gt_report_out o = { 0 };
			t0 = now_ms();
			int rc = rep->run(s, &sc, &o, err, sizeof(err));
			v[i] = now_ms() - t0;
			gt_report_out_done(&o);
			if (rc)
				break;
		}
		printf("report_%s_ms %.2f ms\n", rep->name, median(v, runs));
	}
	/* the kernels report with the steps analysis' cache cleared each run
	 * (what a single `gtrace stats` pays when the trace has steps) */
	const struct gt_report *kr = gt_report_find("kernels");
	for (int i = 0; kr && i < runs; i++) {
		struct gt_report_out o = { 0 };
		gt_steps_cache_clear();
		t0 = now_ms();
		kr->run(s, &sc, &o, err, sizeof(err));
		v[i] = now_ms() - t0;
		gt_report_out_done(&o);
	}
	printf("report_kernels_cold_ms %.2f ms\n", median(v, runs));
	gt_store_free(s);
	return 0;
}
