/*
 * rss.h - the process's resident set size from /proc/self/statm, for the
 * benchmarks and the tests that bound memory (one reader for all of them),
 * and its peak by polling: a thread samples it every period until stopped
 * (bench/budget_bench.c, tests/store/test_budget.c).
 */
#ifndef GTRACE_BENCH_RSS_H
#define GTRACE_BENCH_RSS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

/* resident bytes now; 0 when statm cannot be read */
static inline size_t rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size = 0, res = 0;
	if (f) {
		if (fscanf(f, "%lu %lu", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

/* anonymous resident bytes now (the heap and other private memory, not
 * file pages such as a budget's cache file): RssAnon of /proc/self/status */
static inline size_t rss_anon_bytes(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long kb = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %lu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return (size_t)kb * 1024;
}

/* the peak resident size while a piece of work runs: a thread polls
 * rss_bytes (or rss_anon_bytes) every period_us (link with threads) */
struct rss_sampler {
	pthread_t th;
	unsigned period_us;
	size_t (*read)(void);
	_Atomic int on;
	_Atomic size_t peak;       /* the largest sample so far, from the size at start */
};

/* the sampler's thread: sample until on is cleared */
static inline void *rss_sampler_run(void *arg)
{
	struct rss_sampler *r = arg;
	while (atomic_load(&r->on)) {
		size_t b = r->read();
		if (b > atomic_load(&r->peak))
			atomic_store(&r->peak, b);
		usleep(r->period_us);
	}
	return NULL;
}

/* start sampling every period_us; the peak starts at the size now.
 * 0, or the error of pthread_create (nothing started) */
static inline int rss_sampler_start_of(struct rss_sampler *r, unsigned period_us,
					size_t (*read)(void))
{
	r->period_us = period_us;
	r->read = read;
	atomic_store(&r->peak, read());
	atomic_store(&r->on, 1);
	int rc = pthread_create(&r->th, NULL, rss_sampler_run, r);
	if (rc)
		atomic_store(&r->on, 0);
	return rc;
}

static inline int rss_sampler_start(struct rss_sampler *r, unsigned period_us)
{
	return rss_sampler_start_of(r, period_us, rss_bytes);
}

/* the same for the anonymous resident bytes */
static inline int rss_sampler_start_anon(struct rss_sampler *r, unsigned period_us)
{
	return rss_sampler_start_of(r, period_us, rss_anon_bytes);
}

/* the peak so far (the sampler keeps running) */
static inline size_t rss_sampler_peak(struct rss_sampler *r)
{
	return atomic_load(&r->peak);
}

/* stop and join the thread; the peak of the whole run */
static inline size_t rss_sampler_stop(struct rss_sampler *r)
{
	atomic_store(&r->on, 0);
	pthread_join(r->th, NULL);
	size_t b = r->read();   /* a last sample: the end counts too */
	if (b > atomic_load(&r->peak))
		atomic_store(&r->peak, b);
	return atomic_load(&r->peak);
}

#endif
