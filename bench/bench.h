/*
 * bench.h - what the benchmark programs share: clocks in milliseconds,
 * sorting doubles for medians and percentiles, and the scope of about a
 * million events in the middle of a capture (the "visible range" the
 * range targets speak of).
 */
#ifndef GTRACE_BENCH_H
#define GTRACE_BENCH_H

#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include "gtrace/report.h"
#include "gtrace/store.h"

/* clock c (CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID, ...) in ms */
static inline double bench_ms(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* user + system CPU time of this process so far (all threads, getrusage), in s */
static inline double bench_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* sort v[0..n) ascending */
static inline void bench_sort(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
}

/* *sc = the whole capture narrowed to the span holding about `events`
 * events, centred (events spread evenly over the time span) */
static inline void bench_mid_range(const struct gt_store *s, double events, struct gt_scope *sc)
{
	gt_scope_all(sc);
	int64_t t0 = gt_store_t_min(s), t1 = gt_store_t_max(s);
	double frac = events / (double)gt_store_event_count(s);
	if (frac > 1)
		frac = 1;
	int64_t w = (int64_t)((double)(t1 - t0) * frac);
	sc->t0_ns = t0 + (t1 - t0) / 2 - w / 2;
	sc->t1_ns = sc->t0_ns + w;
}

#endif
