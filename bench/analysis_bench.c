/*
 * analysis_bench.c - speed of the step analyses' reports (steps, breakdown,
 * pipeline, gputime, multigpu, overview) over a simulated capture of
 * EVENTS events (balanced scenario, 1 rank x 4 GPUs, seed 1): whole trace,
 * and over a time range holding about 1 M events in the middle (with the
 * steps cache warm), then whole once more with the steps cache cleared.
 * Prints "name value unit" lines (median of RUNS runs).
 * usage: analysis_bench [EVENTS] [RUNS] [SCENARIO] [REPORT]
 * (REPORT: time only that report, over the range only - for profiling)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gtrace/report.h"
#include "gtrace/sim.h"
#include "gtrace/steps.h"
#include "gtrace/store.h"
#include "bench.h"

static double now_ms(void)
{
	return bench_ms(CLOCK_MONOTONIC);
}

static double cpu_ms(void)
{
	return bench_ms(CLOCK_PROCESS_CPUTIME_ID);
}

/* median wall time; *cpu gets the median CPU time (less sensitive to load) */
static double time_report(const struct gt_store *s, const struct gt_report *r,
			  const struct gt_scope *sc, int runs, double *cpu)
{
	double *t = calloc((size_t)runs, sizeof(*t)), *c = calloc((size_t)runs, sizeof(*c));
	for (int i = 0; i < runs; i++) {
		struct gt_report_out o = {0};
		char err[256] = "";
		double a = now_ms(), ca = cpu_ms();
		if (r->run(s, sc, &o, err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", r->name, err);
			exit(1);
		}
		t[i] = now_ms() - a;
		c[i] = cpu_ms() - ca;
		gt_report_out_done(&o);
	}
	bench_sort(t, runs);
	bench_sort(c, runs);
	double m = t[runs / 2];
	*cpu = c[runs / 2];
	free(t);
	free(c);
	return m;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	int scen = argc > 3 ? gt_sim_scenario_parse(argv[3]) : GT_SIM_BALANCED;
	const char *only = argc > 4 ? argv[4] : NULL;
	if (runs < 1 || scen < 0) {
		fprintf(stderr, "usage: analysis_bench [EVENTS] [RUNS] [SCENARIO] [REPORT]\n");
		return 2;
	}
	struct gt_sim_opts o = { .scenario = (enum gt_sim_scenario)scen, .events = n, .seed = 1 };
	struct gt_store *s = gt_store_new();
	char err[256];
	double a = now_ms();
	if (!s || gt_sim_generate(&o, s, err, sizeof(err))) {
		fprintf(stderr, "sim: %s\n", err);
		return 1;
	}
	printf("events %zu count\n", gt_store_event_count(s));
	printf("generate %.1f ms\n", now_ms() - a);
	static const char *const names[] = { "steps", "breakdown", "pipeline", "gputime",
					     "multigpu", "overview" };
	struct gt_scope all, rng;
	gt_scope_all(&all);
	bench_mid_range(s, 1e6, &rng);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct gt_report *r = gt_report_find(names[i]);
		if (!r) {
			fprintf(stderr, "report %s missing\n", names[i]);
			return 1;
		}
		double c, w1;
		if (only) {
			if (strcmp(only, names[i]))
				continue;
			w1 = time_report(s, r, &rng, runs, &c);
			printf("%s_range1M %.1f ms\n%s_range1M_cpu %.1f ms\n", names[i], w1, names[i], c);
			continue;
		}
		w1 = time_report(s, r, &all, runs, &c);
		printf("%s_whole %.1f ms\n%s_whole_cpu %.1f ms\n", names[i], w1, names[i], c);
		w1 = time_report(s, r, &rng, runs, &c);
		printf("%s_range1M %.1f ms\n%s_range1M_cpu %.1f ms\n", names[i], w1, names[i], c);
		gt_steps_cache_clear();
		w1 = time_report(s, r, &all, 1, &c);
		printf("%s_whole_cold %.1f ms\n%s_whole_cold_cpu %.1f ms\n", names[i], w1, names[i], c);
	}
	gt_store_free(s);
	return 0;
}
