/*
 * store_bench.c - the store's own figures: finish (index build) speed,
 * resident bytes per event, and the zoom query a viewer frame makes
 * (every lane, 200 columns) at several zoom levels.
 * Prints one "key value" line per figure (machine-readable).
 * usage: store_bench [EVENTS]   (default 10,000,000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "gtrace/sim.h"
#include "gtrace/store.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
	enum { LANES = 48, COLS = 200, REPS = 31 };
	struct gt_store *s = gt_store_new();
	uint32_t lanes[LANES], names[64];
	for (int i = 0; i < 64; i++) {
		char b[32];
		snprintf(b, sizeof(b), "kernel_%d", i);
		names[i] = gt_store_intern_cstr(s, b);
	}
	for (int i = 0; i < LANES; i++) {
		struct gt_lane_key k = { .type = GT_LANE_GPU, .rank = i / 24, .device = (i / 3) % 8, .id = i };
		lanes[i] = gt_store_lane(s, &k);
		gt_store_reserve(s, lanes[i], n / LANES + 1);
	}
	uint64_t x = 88172645463325252ull;
	int64_t t[LANES] = { 0 };
	double t0 = now_s();
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		int l = (int)(i % LANES);
		int64_t d = 1000 + (int64_t)(x % 50000);
		struct gt_event e = { .start_ns = t[l] + (int64_t)(x >> 40) % 4000, .dur_ns = d,
				      .lane = lanes[l], .name = names[x % 64], .kind = GT_EV_KERNEL };
		t[l] = e.start_ns + d;
		gt_store_add(s, &e);
	}
	double t1 = now_s();
	gt_store_finish(s);
	double t2 = now_s();
	printf("events %zu\n", n);
	printf("add_events_per_s %.0f\n", (double)n / (t1 - t0));
	printf("finish_events_per_s %.0f\n", (double)n / (t2 - t1));
	printf("bytes_per_event %.2f\n", (double)gt_store_bytes(s) / (double)n);

	int64_t lo = gt_store_t_min(s), hi = gt_store_t_max(s);
	struct gt_bucket b[COLS];
	/* zoom levels: whole trace, 1/100, 1/10000, 1/1000000 of it */
	for (int z = 0; z < 4; z++) {
		int64_t span = (hi - lo);
		for (int k = 0; k < z; k++)
			span /= 100;
		if (span < COLS)
			span = COLS;
		double ms[REPS];
		for (int r = 0; r < REPS; r++) {
			int64_t a = lo + (int64_t)((double)(hi - lo - span) * ((double)r / REPS));
			double q0 = now_s();
			for (int l = 0; l < LANES; l++)
				gt_store_lane_buckets(gt_store_lane_at(s, lanes[l]), a, span / COLS, COLS, b);
			ms[r] = (now_s() - q0) * 1e3;
		}
		qsort(ms, REPS, sizeof(ms[0]), cmp_d);
		printf("frame_query_ms_zoom%d p50 %.3f p99 %.3f (%d lanes x %d columns)\n",
		       z, ms[REPS / 2], ms[REPS - 1], LANES, COLS);
	}
	gt_store_free(s);

	/* resident bytes per event on a realistic capture (simulator, 8 GPUs),
	 * before and after the correlation index is built by a first lookup */
	struct gt_sim_opts so = { .gpus = 8, .events = n, .seed = 1 };
	char err[256];
	s = gt_store_new();
	if (gt_sim_generate(&so, s, err, sizeof(err)) == 0) {
		size_t ne = gt_store_event_count(s);
		printf("sim_events %zu\n", ne);
		printf("sim_bytes_per_event %.2f\n", (double)gt_store_bytes(s) / (double)ne);
		struct gt_ref r;
		double c0 = now_s();
		gt_store_corr_find(s, 0, 1, 1, &r);
		printf("corr_index_build_s %.3f\n", now_s() - c0);
		printf("sim_bytes_per_event_with_corr_index %.2f\n", (double)gt_store_bytes(s) / (double)ne);
	}
	gt_store_free(s);
	return 0;
}
