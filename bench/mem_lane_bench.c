/*
 * mem_lane_bench.c - the cost of the live capture's allocated-bytes lanes
 * (gtrace/mem_lane.h): N allocator records on 8 devices of one process,
 * delivered in batches of B the way CUPTI hands buffers over (buffers of 64
 * records, a group of 4 handed back newest first), each batch added, the
 * store finished and the lanes synced; then the whole build of a store read
 * from a file (gt_mem_lane_build).  Prints CPU and wall time of the syncs
 * (total, median per sync), the late records and rewritten samples, and the
 * build's time, median of R runs.
 *
 * usage: mem_lane_bench N B R
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "gtrace/mem_lane.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct rec {
	int64_t t, b;
	uint32_t dev;
};

/* n records in time order: per device an allocation every ~1 us, freed
 * 8 allocations later (steady), sizes 4 KiB - 1 MiB */
static void plant(struct rec *r, size_t n)
{
	int64_t t = 1000;
	int64_t live[8][8] = { { 0 } };
	size_t k[8] = { 0 };
	for (size_t i = 0; i < n; i++) {
		uint32_t d = (uint32_t)(next() % 8);
		t += 100 + (int64_t)(next() % 200);
		if (k[d] >= 8 && next() % 2) {
			r[i] = (struct rec){ t, -live[d][k[d] % 8], d };
			live[d][k[d] % 8] = 0;
			k[d]++;
			continue;
		}
		int64_t b = (int64_t)(1 + next() % 256) * 4096;
		if (live[d][k[d] % 8] == 0)
			live[d][k[d] % 8] = b;
		else
			b = live[d][k[d] % 8];
		r[i] = (struct rec){ t, b, d };
		if (k[d] < 8)
			k[d]++;
	}
}

/* the delivery order: buffers of 64 records, groups of 4 buffers newest first */
static void deliver_order(const struct rec *r, struct rec *d, size_t n)
{
	size_t o = 0;
	for (size_t g = 0; g < n; g += 256) {
		size_t end = g + 256 < n ? g + 256 : n;
		size_t nb = (end - g + 63) / 64;
		for (size_t b = nb; b-- > 0;) {
			size_t a = g + b * 64, e = a + 64 < end ? a + 64 : end;
			for (size_t i = a; i < e; i++)
				d[o++] = r[i];
		}
	}
}

static double run(const struct rec *d, size_t n, size_t batch, double *cpu_ms, double *med_ms,
		  struct gt_mem_lane_stats *st, double *build_ms, double *build_cpu_ms)
{
	struct gt_store *s = gt_store_new();
	struct gt_lane_key k = { .type = GT_LANE_HOST, .rank = 0, .device = -1, .pid = 1, .id = 1 };
	uint32_t lane = gt_store_lane(s, &k);
	uint32_t name = gt_store_intern_cstr(s, "[memory]");
	struct gt_mem_lane *m = gt_mem_lane_new();
	struct gt_event *ev = malloc(batch * sizeof(*ev));
	size_t nsync = (n + batch - 1) / batch, si = 0;
	double *per = malloc(nsync * sizeof(*per));
	double wall = 0, cpu = 0;
	for (size_t i = 0; i < n; i += batch) {
		size_t c = i + batch < n ? batch : n - i;
		for (size_t j = 0; j < c; j++) {
			memset(&ev[j], 0, sizeof(ev[j]));
			ev[j].kind = GT_EV_INSTANT;
			ev[j].flags = GT_EVF_MEMORY;
			ev[j].start_ns = d[i + j].t;
			ev[j].aux = d[i + j].dev;
			ev[j].name = name;
			ev[j].lane = lane;
			memcpy(&ev[j].arg, &d[i + j].b, sizeof(int64_t));
			if (gt_store_add(s, &ev[j]))
				abort();
		}
		if (gt_store_finish(s))
			abort();
		double w0 = bench_ms(CLOCK_MONOTONIC), c0 = bench_ms(CLOCK_PROCESS_CPUTIME_ID);
		if (gt_mem_lane_note(m, ev, c) || gt_mem_lane_sync(m, s))
			abort();
		double w = bench_ms(CLOCK_MONOTONIC) - w0;
		cpu += bench_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
		wall += w;
		per[si++] = w;
	}
	gt_mem_lane_stats(m, st);
	bench_sort(per, (int)si);
	*med_ms = per[si / 2];
	*cpu_ms = cpu;
	gt_mem_lane_free(m);
	gt_store_free(s);
	/* the whole build: the same records, one finish, one build */
	s = gt_store_new();
	lane = gt_store_lane(s, &k);
	name = gt_store_intern_cstr(s, "[memory]");
	for (size_t i = 0; i < n; i++) {
		struct gt_event e;
		memset(&e, 0, sizeof(e));
		e.kind = GT_EV_INSTANT;
		e.flags = GT_EVF_MEMORY;
		e.start_ns = d[i].t;
		e.aux = d[i].dev;
		e.name = name;
		e.lane = lane;
		memcpy(&e.arg, &d[i].b, sizeof(int64_t));
		if (gt_store_add(s, &e))
			abort();
	}
	if (gt_store_finish(s))
		abort();
	double w0 = bench_ms(CLOCK_MONOTONIC), c0 = bench_ms(CLOCK_PROCESS_CPUTIME_ID);
	if (gt_mem_lane_build(s))
		abort();
	*build_ms = bench_ms(CLOCK_MONOTONIC) - w0;
	*build_cpu_ms = bench_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
	gt_store_free(s);
	free(per);
	free(ev);
	return wall;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: mem_lane_bench N B R\n");
		return 2;
	}
	size_t n = strtoull(argv[1], NULL, 10), batch = strtoull(argv[2], NULL, 10);
	int runs = atoi(argv[3]);
	if (!n || !batch || runs < 1)
		return 2;
	struct rec *r = malloc(n * sizeof(*r)), *d = malloc(n * sizeof(*d));
	plant(r, n);
	deliver_order(r, d, n);
	double *w = malloc((size_t)runs * sizeof(double)), *c = malloc((size_t)runs * sizeof(double));
	double *m = malloc((size_t)runs * sizeof(double)), *bw = malloc((size_t)runs * sizeof(double));
	double *bc = malloc((size_t)runs * sizeof(double));
	struct gt_mem_lane_stats st;
	for (int i = 0; i < runs; i++)
		w[i] = run(d, n, batch, &c[i], &m[i], &st, &bw[i], &bc[i]);
	bench_sort(w, runs);
	bench_sort(c, runs);
	bench_sort(m, runs);
	bench_sort(bw, runs);
	bench_sort(bc, runs);
	printf("records %zu, batch %zu, runs %d: syncs %llu, late %llu, rewritten %llu\n", n, batch,
	       runs, (unsigned long long)st.syncs, (unsigned long long)st.late,
	       (unsigned long long)st.rewritten);
	printf("live syncs: wall %.1f ms, CPU %.1f ms in all (medians), %.1f ns CPU a record; "
	       "median sync %.3f ms\n", w[runs / 2], c[runs / 2], c[runs / 2] * 1e6 / (double)n,
	       m[runs / 2]);
	printf("file build: wall %.1f ms, CPU %.1f ms (medians)\n", bw[runs / 2], bc[runs / 2]);
	free(w);
	free(c);
	free(m);
	free(bw);
	free(bc);
	free(r);
	free(d);
	return 0;
}
