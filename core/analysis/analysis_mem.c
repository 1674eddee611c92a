/*
 * analysis_mem.c - a small cache of large scratch blocks for the step analyses.
 * A report over a visible range allocates tens of MB of interval lists and
 * vectors and frees them again; the C library gives such memory back to the
 * system and the next report (the viewer recomputes on every zoom) pays a
 * page fault per 4 KiB to get it back.  Blocks of at least ANALYSIS_MEM_MIN bytes
 * are kept here instead (at most ANALYSIS_MEM_MAX bytes in ANALYSIS_MEM_SLOTS blocks,
 * the least recently returned given up first) and handed out again;
 * anything else goes to malloc/free.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "analysis.h"

#define ANALYSIS_MEM_SLOTS 24
#define ANALYSIS_MEM_MAX ((size_t)128 << 20)

struct slot {
	void *p;
	size_t bytes;
	uint64_t stamp;        /* when it was returned */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct slot cache[ANALYSIS_MEM_SLOTS];
static size_t cached_bytes;
static uint64_t clock_now;

/* the occupied slot returned longest ago, or ANALYSIS_MEM_SLOTS */
static size_t oldest(void)
{
	size_t v = ANALYSIS_MEM_SLOTS;
	for (size_t i = 0; i < ANALYSIS_MEM_SLOTS; i++)
		if (cache[i].p && (v == ANALYSIS_MEM_SLOTS || cache[i].stamp < cache[v].stamp))
			v = i;
	return v;
}

static void drop(size_t i)
{
	free(cache[i].p);
	cached_bytes -= cache[i].bytes;
	cache[i].p = NULL;
}

void *analysis_mem_get(size_t bytes, size_t *got)
{
	*got = bytes;
	if (bytes >= ANALYSIS_MEM_MIN) {
		size_t best = ANALYSIS_MEM_SLOTS;
		pthread_mutex_lock(&mu);
		for (size_t i = 0; i < ANALYSIS_MEM_SLOTS; i++)   /* smallest that fits, <= 4x */
			if (cache[i].p && cache[i].bytes >= bytes && cache[i].bytes / 4 <= bytes &&
			    (best == ANALYSIS_MEM_SLOTS || cache[i].bytes < cache[best].bytes))
				best = i;
		if (best < ANALYSIS_MEM_SLOTS) {
			void *p = cache[best].p;
			*got = cache[best].bytes;
			cached_bytes -= cache[best].bytes;
			cache[best].p = NULL;
			pthread_mutex_unlock(&mu);
			return p;
		}
		pthread_mutex_unlock(&mu);
	}
	return malloc(bytes ? bytes : 1);
}

void analysis_mem_put(void *p, size_t bytes)
{
	if (!p)
		return;
	if (bytes >= ANALYSIS_MEM_MIN && bytes <= ANALYSIS_MEM_MAX) {
		pthread_mutex_lock(&mu);
		size_t free_slot = ANALYSIS_MEM_SLOTS;
		for (size_t i = 0; i < ANALYSIS_MEM_SLOTS; i++)
			if (!cache[i].p)
				free_slot = i;
		if (free_slot == ANALYSIS_MEM_SLOTS) {   /* full: give up the oldest */
			free_slot = oldest();
			drop(free_slot);
		}
		while (cached_bytes + bytes > ANALYSIS_MEM_MAX && oldest() < ANALYSIS_MEM_SLOTS)
			drop(oldest());
		if (free_slot < ANALYSIS_MEM_SLOTS && cached_bytes + bytes <= ANALYSIS_MEM_MAX) {
			cache[free_slot].p = p;
			cache[free_slot].bytes = bytes;
			cache[free_slot].stamp = ++clock_now;
			cached_bytes += bytes;
			pthread_mutex_unlock(&mu);
			return;
		}
		pthread_mutex_unlock(&mu);
	}
	free(p);
}

void analysis_mem_release(void)
{
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < ANALYSIS_MEM_SLOTS; i++) {
		free(cache[i].p);
		cache[i].p = NULL;
	}
	cached_bytes = 0;
	pthread_mutex_unlock(&mu);
}
