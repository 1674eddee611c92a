/*
 * sim_bench.c - simulator speed: generate about EVENTS events RUNS times
 * (a) into a fresh store, finished (gt_sim_generate: what `gtrace sim` and the
 * tests do) and (b) into a counting callback only (the generator alone, as
 * the live synthetic source uses it); prints the median seconds and events/s
 * of each, and the store's resident bytes per event.
 * Prints "name value unit" lines.
 * usage: sim_bench [EVENTS] [RUNS] [--scenario NAME] [--gpus N] [--ranks R]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gtrace/sim.h"
#include "gtrace/store.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int count_emit(void *ctx, const struct gt_event *ev, size_t n)
{
	(void)ev;
	*(size_t *)ctx += n;
	return 0;
}

int main(int argc, char **argv)
{
	struct gt_sim_opts o = { .gpus = 8, .events = 10000000 };
	int runs = 5, pos = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--scenario") && i + 1 < argc) {
			int sc = gt_sim_scenario_parse(argv[++i]);
			if (sc < 0) {
				fprintf(stderr, "sim_bench: unknown scenario %s\n", argv[i]);
				return 2;
			}
			o.scenario = (enum gt_sim_scenario)sc;
		} else if (!strcmp(argv[i], "--gpus") && i + 1 < argc) {
			o.gpus = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--ranks") && i + 1 < argc) {
			o.ranks = atoi(argv[++i]);
		} else if (pos++ == 0) {
			o.events = strtoull(argv[i], NULL, 10);
		} else {
			runs = atoi(argv[i]);
		}
	}
	if (runs < 1 || runs > 100)
		runs = 5;
	double *tg = calloc((size_t)runs, sizeof(*tg)), *ts = calloc((size_t)runs, sizeof(*ts));
	size_t nev = 0, bytes = 0, ngen = 0;
	char err[256];
	for (int r = 0; r < runs; r++) {
		struct gt_store *s = gt_store_new();
		double t0 = now_s();
		if (gt_sim_generate(&o, s, err, sizeof(err))) {
			fprintf(stderr, "sim_bench: %s\n", err);
			return 1;
		}
		ts[r] = now_s() - t0;
		nev = gt_store_event_count(s);
		bytes = gt_store_bytes(s);
		gt_store_free(s);

		/* generator alone: a scratch store holds only the interned tables */
		s = gt_store_new();
		struct gt_sim *sim = gt_sim_new(&o, s, err, sizeof(err));
		if (!sim) {
			fprintf(stderr, "sim_bench: %s\n", err);
			return 1;
		}
		ngen = 0;
		t0 = now_s();
		while (gt_sim_next_step(sim, count_emit, &ngen) > 0)
			;
		tg[r] = now_s() - t0;
		gt_sim_free(sim);
		gt_store_free(s);
	}
	qsort(ts, (size_t)runs, sizeof(*ts), cmp_d);
	qsort(tg, (size_t)runs, sizeof(*tg), cmp_d);
	double ms = ts[runs / 2], mg = tg[runs / 2];
	printf("sim_scenario %s name\n", gt_sim_scenario_name(o.scenario));
	printf("sim_runs %d runs\n", runs);
	printf("sim_store_events %zu events\n", nev);
	printf("sim_store_median %.3f s\n", ms);
	printf("sim_store_rate %.0f events/s\n", (double)nev / ms);
	printf("sim_store_bytes_per_event %.1f bytes\n", (double)bytes / (double)nev);
	printf("sim_gen_median %.3f s\n", mg);
	printf("sim_gen_rate %.0f events/s\n", (double)ngen / mg);
	free(tg);
	free(ts);
	return 0;
}
