/*
 * ring_stress.c - a producer and a consumer thread hammer one small ring;
 * built with -fsanitize=thread.  Checks order, that nothing is lost besides
 * counted overflow, and that the producer never waits.  Exit 0 = pass.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/ring.h"

#define N_EVENTS 400000
static struct gt_ring prod, cons;
static atomic_int done;

static void *producer(void *arg)
{
	(void)arg;
	char text[200];
	memset(text, 's', sizeof(text));
	for (int64_t i = 0; i < N_EVENTS; i++) {
		struct gt_event e;
		memset(&e, 0, sizeof(e));
		e.start_ns = i;
		e.kind = GT_EV_KERNEL;
		gt_ring_push_event(&prod, &e);
		if (i % 1000 == 0)
			gt_ring_push_str(&prod, (uint32_t)i, text, (size_t)(i % 200));
	}
	atomic_store(&done, 1);
	return NULL;
}

int main(void)
{
	uint64_t cap = 256;
	void *mem = aligned_alloc(64, gt_ring_bytes(cap));
	gt_ring_init_mem(&prod, mem, cap, 1);
	cons.hdr = prod.hdr;
	cons.rec = prod.rec;
	cons.mask = prod.mask;
	pthread_t t;
	pthread_create(&t, NULL, producer, NULL);
	int64_t last = -1;
	uint64_t got = 0, strs = 0;
	char buf[256];
	for (;;) {
		int fin = atomic_load(&done);
		uint32_t n;
		const struct gt_ring_rec *m;
		while ((m = gt_ring_peek(&cons, &n))) {
			if (m->type == GT_RING_REC_EVENT) {
				if (m->u.ev.start_ns <= last) {
					fprintf(stderr, "order: %lld after %lld\n",
						(long long)m->u.ev.start_ns, (long long)last);
					return 1;
				}
				last = m->u.ev.start_ns;
				got++;
			} else if (m->type == GT_RING_REC_STR) {
				size_t len = gt_ring_str_text(&cons, buf, sizeof(buf));
				if (len != m->len || (len && buf[len - 1] != 's')) {
					fprintf(stderr, "bad string\n");
					return 1;
				}
				strs++;
			} else {
				fprintf(stderr, "bad record type %d\n", m->type);
				return 1;
			}
			gt_ring_release(&cons, n);
		}
		if (fin && gt_ring_readable(&cons) == 0)
			break;
	}
	pthread_join(t, NULL);
	uint64_t ovf = atomic_load(&prod.hdr->ring_overflow);
	printf("events %llu overflow %llu strings %llu\n", (unsigned long long)got,
	       (unsigned long long)ovf, (unsigned long long)strs);
	if (got + ovf != N_EVENTS) {
		fprintf(stderr, "lost uncounted events: %llu + %llu != %d\n",
			(unsigned long long)got, (unsigned long long)ovf, N_EVENTS);
		return 1;
	}
	free(mem);
	return 0;
}
