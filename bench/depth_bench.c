/*
 * depth_bench.c - the nesting depth index of one host thread (the trace
 * view's `e`): build time and bytes per event for a lane of N events, then
 * a live capture's poll: extend the index by ADD new events in start order
 * (gt_store_depth_extend) against rebuilding it (gt_store_depth_build), mean over
 * 20 polls.  The lane is a step > op > four calls pattern, like a trainer's
 * main thread.
 * usage: depth_bench [N] [ADD]   (default 6000000 20000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "gtrace/store.h"
#include "bench.h"

#define POLLS 20

static double now_s(void)
{
	return bench_ms(CLOCK_MONOTONIC) / 1e3;
}

/* append about n events: an op of 1000 ns holding four calls of 150 ns */
static int chunk(struct gt_store *s, uint32_t lane, int64_t *t, size_t n)
{
	for (size_t i = 0; i < n; i += 5) {
		struct gt_event e = { .start_ns = *t, .dur_ns = 1000, .lane = lane, .kind = GT_EV_CPU_OP };
		if (gt_store_add(s, &e))
			return -1;
		for (int k = 0; k < 4; k++) {
			struct gt_event c = { .start_ns = *t + 10 + k * 200, .dur_ns = 150, .lane = lane,
					      .kind = GT_EV_CPU_OP };
			if (gt_store_add(s, &c))
				return -1;
		}
		*t += 1100;
	}
	return 0;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 6000000;
	size_t add = argc > 2 ? strtoul(argv[2], NULL, 10) : 20000;
	struct gt_store *s = gt_store_new();
	struct gt_lane_key k = { .type = GT_LANE_HOST, .pid = 1, .id = 1, .device = -1 };
	int64_t t = 0;
	if (!s)
		return 1;
	uint32_t lane = gt_store_lane(s, &k);
	if (lane == UINT32_MAX || chunk(s, lane, &t, n) || gt_store_finish(s)) {
		fprintf(stderr, "depth_bench: out of memory\n");
		return 1;
	}
	struct gt_depth *d;
	double b0 = now_s();
	if (gt_store_depth_build(gt_store_lane_at(s, lane), &d)) {
		fprintf(stderr, "depth_bench: out of memory\n");
		return 1;
	}
	double build = now_s() - b0;
	printf("depth_build_s %.3f\nlane_events %zu\ndepth_bytes_per_event %.1f\n", build,
	       (size_t)gt_store_lane_at(s, lane)->n,
	       (double)gt_store_depth_bytes(d) / (double)gt_store_lane_at(s, lane)->n);
	double ext = 0, full = 0;
	for (int r = 0; r < POLLS; r++) {
		if (chunk(s, lane, &t, add) || gt_store_finish(s))
			return 1;
		const struct gt_lane *l = gt_store_lane_at(s, lane);
		double t0 = now_s();
		if (gt_store_depth_extend(d, l))
			return 1;
		double t1 = now_s();
		struct gt_depth *f;
		if (gt_store_depth_build(l, &f))
			return 1;
		full += now_s() - t1;
		ext += t1 - t0;
		gt_store_depth_free(f);
	}
	printf("added_per_poll %zu\nextend_ms %.3f\nrebuild_ms %.1f\n", add, ext / POLLS * 1e3,
	       full / POLLS * 1e3);
	gt_store_depth_free(d);
	gt_store_free(s);
	return 0;
}
