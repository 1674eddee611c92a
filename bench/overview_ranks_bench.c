/*
 * overview_ranks_bench.c - the overview over R ranks x G GPUs of a balanced
 * simulation of about N events, whole capture and a 1 M-event range in the
 * middle: median wall and CPU ms of RUNS calls of gt_overview_compute (which
 * analyses every rank in scope).
 * usage: overview_ranks_bench RANKS GPUS EVENTS [RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "gtrace/analysis.h"
#include "gtrace/sim.h"
#include "gtrace/store.h"
#include "bench.h"

#define MAX_RUNS 64

/* median wall and CPU ms of `runs` gt_overview_compute calls over `sc` */
static int timeit(const struct gt_store *s, const struct gt_scope *sc, int runs, const char *name)
{
	double w[MAX_RUNS], c[MAX_RUNS];
	char err[256];
	for (int i = 0; i < runs; i++) {
		struct gt_overview_result r;
		double a = bench_ms(CLOCK_MONOTONIC), b = bench_ms(CLOCK_PROCESS_CPUTIME_ID);
		if (gt_overview_compute(s, sc, &r, err, sizeof(err))) {
			fprintf(stderr, "overview_ranks_bench: %s\n", err);
			return 1;
		}
		w[i] = bench_ms(CLOCK_MONOTONIC) - a;
		c[i] = bench_ms(CLOCK_PROCESS_CPUTIME_ID) - b;
		gt_overview_result_done(&r);
	}
	bench_sort(w, runs);
	bench_sort(c, runs);
	printf("%s wall_ms %.1f cpu_ms %.1f\n", name, w[runs / 2], c[runs / 2]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: overview_ranks_bench RANKS GPUS EVENTS [RUNS]\n");
		return 2;
	}
	int runs = argc > 4 ? atoi(argv[4]) : 5;
	if (runs < 1 || runs > MAX_RUNS)
		runs = 5;
	struct gt_sim_opts o = { .scenario = GT_SIM_BALANCED, .ranks = atoi(argv[1]), .gpus = atoi(argv[2]),
			      .events = strtoull(argv[3], NULL, 10), .seed = 1 };
	struct gt_store *s = gt_store_new();
	char err[256];
	if (!s || gt_sim_generate(&o, s, err, sizeof(err))) {
		fprintf(stderr, "overview_ranks_bench: %s\n", s ? err : "out of memory");
		return 1;
	}
	struct gt_scope all, rng;
	gt_scope_all(&all);
	bench_mid_range(s, 1e6, &rng);
	printf("events %zu ranks %d gpus %d\n", (size_t)gt_store_event_count(s), o.ranks, o.gpus);
	int rc = timeit(s, &all, runs, "overview_whole") || timeit(s, &rng, runs, "overview_range1M");
	gt_store_free(s);
	return rc;
}
