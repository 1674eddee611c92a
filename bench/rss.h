/*
 * rss.h - the process's resident set size from /proc/self/statm, for the
 * benchmarks and the tests that bound memory (one reader for all of them).
 */
#ifndef GTRACE_BENCH_RSS_H
#define GTRACE_BENCH_RSS_H

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

#endif
