/*
 * ops_bench.c - speed of the operator, memory-usage and diff reports
 * (issue 15) over simulated captures of EVENTS events (1 rank x 4 GPUs,
 * seed 1, allocator records planted with --memory leak): the "ops" and
 * "memory-usage" reports over the whole capture, then `gtrace diff` of
 * that capture (baseline) against a straggler capture of the same size
 * (experiment), each diff report.  Prints "name value unit" lines
 * (median wall time of RUNS runs; cpu = median CPU time, less sensitive
 * to a loaded machine).
 * usage: ops_bench [EVENTS] [RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "gtrace/diff.h"
#include "gtrace/report.h"
#include "gtrace/sim.h"
#include "gtrace/store.h"
#include "bench.h"

static struct gt_store *capture(uint64_t n, enum sim_scenario sc)
{
	struct gt_store *s = store_new();
	char err[256];
	struct sim_opts o = { .gpus = 4, .scenario = sc, .events = n, .seed = 1,
			      .flags = SIM_F_MEMORY | SIM_F_MEMLEAK };
	if (!s || sim_generate(&o, s, err, sizeof(err))) {
		fprintf(stderr, "sim: %s\n", err);
		exit(1);
	}
	return s;
}

/* one run of report `name` (diff when b != NULL); exits on failure */
static void run_once(const struct gt_store *a, const struct gt_store *b, const char *name)
{
	struct gt_report_out o = {0};
	char err[256] = "";
	int rc;
	if (b) {
		struct diff_opts d = { .rank = -1 };
		rc = diff_run(a, b, name, &d, &o, err, sizeof(err));
	} else {
		struct gt_scope sc;
		gt_scope_all(&sc);
		rc = gt_report_find(name)->run(a, &sc, &o, err, sizeof(err));
	}
	if (rc) {
		fprintf(stderr, "%s: %s\n", name, err);
		exit(1);
	}
	gt_report_out_done(&o);
}

static void timed(const char *label, const struct gt_store *a, const struct gt_store *b,
		  const char *name, int runs)
{
	double *t = calloc((size_t)runs, sizeof(*t)), *c = calloc((size_t)runs, sizeof(*c));
	for (int i = 0; i < runs; i++) {
		double w0 = bench_ms(CLOCK_MONOTONIC), c0 = bench_ms(CLOCK_PROCESS_CPUTIME_ID);
		run_once(a, b, name);
		t[i] = bench_ms(CLOCK_MONOTONIC) - w0;
		c[i] = bench_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
	}
	bench_sort(t, runs);
	bench_sort(c, runs);
	printf("%s %.1f ms (cpu %.1f ms)\n", label, t[runs / 2], c[runs / 2]);
	free(t);
	free(c);
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	if (runs < 1)
		runs = 1;
	struct gt_store *a = capture(n, SIM_BALANCED);
	printf("events %zu\n", store_event_count(a));
	timed("ops_report", a, NULL, "ops", runs);
	timed("memory_usage_report", a, NULL, "memory-usage", runs);
	struct gt_store *b = capture(n, SIM_STRAGGLER);
	printf("experiment_events %zu\n", store_event_count(b));
	timed("diff_breakdown", a, b, "breakdown", runs);
	timed("diff_kernels", a, b, "kernels", runs);
	timed("diff_ops", a, b, "ops", runs);
	store_free(a);
	store_free(b);
	return 0;
}
