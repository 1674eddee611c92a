/*
 * ring_bench.c - capture throughput and loss.
 *
 *  1. publish / drain: one thread alternately publishes a ring-full of
 *     kernel events (gt_publisher_event: definition check + one 64-byte record) and
 *     drains it; each side timed alone (median of RUNS), events/s.
 *  2. ring to store: the drain side doing gtrace's whole receive path
 *     (live_poll: id mapping + gt_store_add, then gt_store_finish).
 *  3. sustained: the producer paced at RATE kernels/s for SECONDS into a
 *     1M-record ring (the default), the consumer as in 2, polling every
 *     20 ms like `gtrace record`; reports events lost (ring_overflow).
 *
 * usage: ring_bench [EVENTS [RUNS [RATE [SECONDS]]]]   (default 20000000 5 200000 5)
 * output: "name value unit" lines.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gtrace/ctl.h"
#include "gtrace/publisher.h"
#include "gtrace/ring.h"
#include "../live/live.h"

static char names[64][48];

static const char *d_str(void *ctx, uint32_t id, size_t *len)
{
	if (id < 1 || id > 64)
		return NULL;
	*len = strlen(names[id - 1]);
	return names[id - 1];
}

static int d_lane(void *ctx, uint32_t id, struct gt_ring_lane_def *o)
{
	o->type = 1;
	o->rank = -1;
	o->device = (int32_t)(id / 4);
	o->tid = 7 + id % 4;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct job {
	struct gt_ring prod;
	uint64_t events;
	double rate;          /* 0 = as fast as possible */
	double t_end;
	_Atomic int done;
};

static void *producer(void *arg)
{
	struct job *j = arg;
	struct gt_publisher p;
	gt_publisher_init(&p);
	gt_publisher_reset(&p, &j->prod);
	struct gt_publisher_dict d = { NULL, d_str, d_lane, NULL, NULL };
	struct gt_event e;
	memset(&e, 0, sizeof(e));
	e.kind = GT_EV_KERNEL;
	e.dur_ns = 1000;
	double t0 = now_s();
	for (uint64_t i = 0; i < j->events; i++) {
		e.start_ns = (int64_t)i * 1000;
		e.name = (uint32_t)(i % 64) + 1;
		e.lane = (uint32_t)(i % 16);
		e.corr = (uint32_t)i;
		gt_publisher_event(&p, &e, &d);
		if (j->rate > 0 && i % 1000 == 999) {
			/* pace: never ahead of rate, sleeping in small steps */
			double due = t0 + (double)(i + 1) / j->rate;
			double t;
			while ((t = now_s()) < due) {
				struct timespec ts = { 0, (long)((due - t) * 1e9) };
				nanosleep(&ts, NULL);
			}
		}
	}
	gt_publisher_done(&p);
	atomic_store(&j->done, 1);
	return NULL;
}

/* consume through live_poll into a store, polling every sleep_ms when idle */
static uint64_t consume_store(struct job *j, struct gt_ring *c, int sleep_ms)
{
	struct gt_store *s = gt_store_new();
	struct live l;
	memset(&l, 0, sizeof(l));
	l.ctl_fd = -1;
	l.ring = *c;
	l.s = s;
	double last_fin = now_s();
	for (;;) {
		int fin = atomic_load(&j->done);
		long r = live_poll(&l, 1u << 22, NULL, NULL);
		if (now_s() - last_fin > 0.2) {
			gt_store_finish(s);
			last_fin = now_s();
		}
		if (fin && gt_ring_readable(&l.ring) == 0)
			break;
		if (r == 0 && sleep_ms) {
			struct timespec ts = { 0, sleep_ms * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
	gt_store_finish(s);
	uint64_t n = l.events;
	l.ring.hdr = NULL;       /* not ours to unmap */
	live_close(&l);
	gt_store_free(s);
	return n;
}

/* one thread, alternating: publish a ring-full, drain it (raw or into a
 * store); times each side separately so a busy machine's scheduling does
 * not blur them.  Returns events/s of the producer and the consumer. */
static void alternate(uint64_t events, int to_store, double *prod_rate, double *cons_rate)
{
	uint64_t cap = 1u << 19;
	void *mem = aligned_alloc(4096, gt_ring_bytes(cap));
	memset(mem, 0, gt_ring_bytes(cap));
	struct gt_ring pr, c;
	gt_ring_init_mem(&pr, mem, cap, 1);
	memset(&c, 0, sizeof(c));
	c.hdr = pr.hdr;
	c.rec = pr.rec;
	c.mask = pr.mask;
	struct gt_publisher p;
	gt_publisher_init(&p);
	gt_publisher_reset(&p, &pr);
	struct gt_publisher_dict d = { NULL, d_str, d_lane, NULL, NULL };
	struct gt_store *s = to_store ? gt_store_new() : NULL;
	struct live l;
	memset(&l, 0, sizeof(l));
	l.ctl_fd = -1;
	l.ring = c;
	l.s = s;
	struct gt_event e;
	memset(&e, 0, sizeof(e));
	e.kind = GT_EV_KERNEL;
	e.dur_ns = 1000;
	double tp = 0, tc = 0;
	uint64_t i = 0, got = 0;
	while (i < events) {
		uint64_t n = events - i < cap - 256 ? events - i : cap - 256;
		double t0 = now_s();
		for (uint64_t k = 0; k < n; k++, i++) {
			e.start_ns = (int64_t)i * 1000;
			e.name = (uint32_t)(i % 64) + 1;
			e.lane = (uint32_t)(i % 16);
			e.corr = (uint32_t)i;
			gt_publisher_event(&p, &e, &d);
		}
		double t1 = now_s();
		if (to_store) {
			long r;
			while ((r = live_poll(&l, 1u << 22, NULL, NULL)) > 0)   /* each poll is bounded */
				got += (uint64_t)r;
		} else {
			uint32_t nr;
			const struct gt_ring_rec *m;
			while ((m = gt_ring_peek(&c, &nr))) {
				got += m->type == GT_RING_REC_EVENT;
				gt_ring_release(&c, nr);
			}
		}
		tp += t1 - t0;
		tc += now_s() - t1;
	}
	if (to_store) {
		double t0 = now_s();
		gt_store_finish(s);
		tc += now_s() - t0;
		l.ring.hdr = NULL;
		live_close(&l);
		gt_store_free(s);
	}
	if (got != events)
		fprintf(stderr, "ring_bench: received %llu of %llu\n", (unsigned long long)got,
			(unsigned long long)events);
	gt_publisher_done(&p);
	free(mem);
	*prod_rate = (double)events / tp;
	*cons_rate = (double)events / tc;
}

/* the sustained run: producer thread paced at rate, consumer as `record` */
static double run(uint64_t events, double rate, uint64_t *lost, uint64_t *got)
{
	struct job j;
	memset(&j, 0, sizeof(j));
	uint64_t cap = GT_CTL_RING_DEFAULT_RECORDS;
	void *mem = aligned_alloc(4096, gt_ring_bytes(cap));
	memset(mem, 0, gt_ring_bytes(cap));
	gt_ring_init_mem(&j.prod, mem, cap, 1);
	j.events = events;
	j.rate = rate;
	struct gt_ring c;
	memset(&c, 0, sizeof(c));
	c.hdr = j.prod.hdr;
	c.rec = j.prod.rec;
	c.mask = j.prod.mask;
	pthread_t t;
	double t0 = now_s();
	pthread_create(&t, NULL, producer, &j);
	*got = consume_store(&j, &c, 20);
	pthread_join(t, NULL);
	double dt = now_s() - t0;
	*lost = atomic_load(&j.prod.hdr->ring_overflow);
	free(mem);
	return dt;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	uint64_t events = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	double rate = argc > 3 ? atof(argv[3]) : 200000;
	double secs = argc > 4 ? atof(argv[4]) : 5;
	if (runs < 1 || runs > 99)
		runs = 5;
	for (int i = 0; i < 64; i++)
		snprintf(names[i], sizeof(names[i]), "void gemm_kernel_variant_%d<float, 128>", i);
	double pr[99], cr[99], sr[99], cs[99];
	for (int i = 0; i < runs; i++) {
		alternate(events, 0, &pr[i], &cr[i]);
		alternate(events / 4, 1, &sr[i], &cs[i]);
	}
	qsort(pr, (size_t)runs, sizeof(double), cmp);
	qsort(cr, (size_t)runs, sizeof(double), cmp);
	qsort(cs, (size_t)runs, sizeof(double), cmp);
	printf("ring_publish_events_per_s %.0f events/s\n", pr[runs / 2]);
	printf("ring_drain_events_per_s %.0f events/s\n", cr[runs / 2]);
	printf("ring_to_store_events_per_s %.0f events/s\n", cs[runs / 2]);
	uint64_t lost, got;
	uint64_t n = (uint64_t)(rate * secs);
	double dt = run(n, rate, &lost, &got);
	printf("sustained_rate %.0f kernels/s\n", (double)n / dt);
	printf("sustained_events %llu events\n", (unsigned long long)n);
	printf("sustained_received %llu events\n", (unsigned long long)got);
	printf("sustained_lost %llu events\n", (unsigned long long)lost);
	printf("ring_bench_runs %d runs\n", runs);
	return 0;
}
