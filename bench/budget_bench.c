/*
 * budget_bench.c - a large capture opened under a memory budget (issue 16):
 * open time (the first frame today: the whole file is decoded before it),
 * peak RSS sampled every 5 ms, zoom/pan frames (every lane's 200 columns
 * over a random window, log-uniform widths from the whole span down to
 * 10 us) with the cache file's pages out of the process and out of the
 * page cache before each frame (fdatasync + POSIX_FADV_DONTNEED: the frame
 * reads the disk), the same frames warm, and the whole-capture kernel table
 * (kstats_compute) cold.  Make the capture with bench/budget_gen.sh.
 * Prints "name value unit" lines.
 * usage: budget_bench FILE [BUDGET (default 1G)] [FRAMES (default 200)]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/store/store_priv.h"
#include "gtrace/kstats.h"
#include "gtrace/load.h"
#include "gtrace/report.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static _Atomic int sampling = 1;
static _Atomic size_t rss_peak;

static size_t rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long sz = 0, res = 0;
	if (f) {
		if (fscanf(f, "%lu %lu", &sz, &res) != 2)
			res = 0;
		fclose(f);
	}
	return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

static void *sampler(void *arg)
{
	(void)arg;
	while (atomic_load(&sampling)) {
		size_t r = rss_bytes();
		if (r > atomic_load(&rss_peak))
			atomic_store(&rss_peak, r);
		usleep(5000);
	}
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double unif(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* one frame: 200 columns of every lane over [t0, t0 + w) */
static double frame(const struct gt_store *s, int64_t t0, int64_t w, uint64_t *sink)
{
	struct gt_bucket b[200];
	double t = now_s();
	for (uint32_t i = 0; i < store_lane_count(s); i++) {
		store_lane_buckets(store_lane_at(s, i), t0, w / 200 + 1, 200, b);
		for (int c = 0; c < 200; c++)
			*sink += (uint64_t)b[c].busy_ns + b[c].count;
	}
	return now_s() - t;
}

static void frames(struct gt_store *s, int n, int cold, const char *tag)
{
	double *ms = calloc((size_t)n, sizeof(*ms));
	int64_t lo = store_t_min(s), span = store_t_max(s) - lo;
	uint64_t sink = 0;
	for (int k = 0; k < n; k++) {
		/* width log-uniform in [10 us, span]; start uniform */
		double lw = unif() * __builtin_log((double)span / 1e4);
		int64_t w = (int64_t)(1e4 * __builtin_exp(lw));
		int64_t t0 = lo + (int64_t)(unif() * (double)(span - w));
		if (cold && s->arena)
			store_arena_cold(s->arena);
		ms[k] = frame(s, t0, w, &sink) * 1e3;
	}
	qsort(ms, (size_t)n, sizeof(*ms), cmp_d);
	printf("frame_%s_p50 %.2f ms\n", tag, ms[n / 2]);
	printf("frame_%s_p99 %.2f ms\n", tag, ms[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1]);
	printf("frame_%s_max %.2f ms\n", tag, ms[n - 1]);
	fprintf(stderr, "(sink %llu)\n", (unsigned long long)sink);
	free(ms);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: budget_bench FILE [BUDGET] [FRAMES]\n");
		return 2;
	}
	size_t budget = (size_t)1 << 30;
	if (argc > 2 && gt_parse_size(argv[2], &budget)) {
		fprintf(stderr, "budget_bench: bad budget '%s'\n", argv[2]);
		return 2;
	}
	int nf = argc > 3 ? atoi(argv[3]) : 200;
	pthread_t th;
	pthread_create(&th, NULL, sampler, NULL);
	size_t base = rss_bytes();
	struct gt_load_opts lo = { .memory_bytes = budget };
	struct gt_store *s = NULL;
	char err[512];
	double t = now_s();
	if (gt_load((const char *const *)&argv[1], 1, &lo, &s, err, sizeof(err))) {
		fprintf(stderr, "budget_bench: %s\n", err);
		return 1;
	}
	double t_open = now_s() - t;
	uint64_t sink = 0;
	double t_first = frame(s, store_t_min(s), store_t_max(s) - store_t_min(s), &sink);
	printf("events %zu\n", store_event_count(s));
	printf("lanes %zu\n", store_lane_count(s));
	printf("budget %.0f MB\n", budget / 1e6);
	printf("decoded_bytes %.0f MB\n", store_bytes(s) / 1e6);
	printf("open %.2f s\n", t_open);
	printf("first_frame_after_open %.1f ms\n", t_first * 1e3);
	printf("open_rate %.1f Mevents/s\n", store_event_count(s) / t_open / 1e6);
	printf("rss_peak_open %.0f MB\n", atomic_load(&rss_peak) / 1e6);
	printf("rss_base %.0f MB\n", base / 1e6);
	frames(s, nf, 0, "warm");
	frames(s, nf, 1, "cold");
	if (s->arena)
		store_arena_cold(s->arena);
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct kstats_result kr;
	t = now_s();
	if (kstats_compute(s, &sc, NULL, &kr, err, sizeof(err))) {
		fprintf(stderr, "budget_bench: %s\n", err);
		return 1;
	}
	double t_k = now_s() - t;
	printf("kernel_table_cold %.2f s\n", t_k);
	printf("kernel_table_rows %zu\n", kr.nrows);
	printf("kernel_table_count %llu\n", (unsigned long long)kr.count);
	kstats_result_done(&kr);
	atomic_store(&sampling, 0);
	pthread_join(th, NULL);
	printf("rss_peak %.0f MB\n", atomic_load(&rss_peak) / 1e6);
	printf("resident_at_end %.0f MB\n", store_resident_bytes(s) / 1e6);
	store_free(s);
	return 0;
}
