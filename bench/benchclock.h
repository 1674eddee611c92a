/*
 * benchclock.h - the clocks and the median sort shared by the import
 * benchmarks: wall seconds (monotonic), CPU seconds of the whole process
 * (user + sys, all threads), and a qsort comparator of doubles.
 */
#ifndef GTRACE_BENCH_BENCHCLOCK_H
#define GTRACE_BENCH_BENCHCLOCK_H

/* CLOCK_MONOTONIC now, in seconds */
double benchclock_now_s(void);
/* user + system CPU time of this process so far, in seconds */
double benchclock_cpu_s(void);
/* qsort comparator: ascending doubles */
int benchclock_cmpd(const void *a, const void *b);

#endif
