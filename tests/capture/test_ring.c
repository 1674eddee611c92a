/* test_ring.c - the capture ring: wraparound, full ring, strings, publisher */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gtrace/ring.h"
#include "gtrace/publisher.h"

static struct gt_ring mk(uint64_t cap, void **mem)
{
	struct gt_ring r;
	*mem = aligned_alloc(64, gt_ring_bytes(cap));
	gt_ring_init_mem(&r, *mem, cap, 1);
	return r;
}

/* the consumer view of the same memory */
static struct gt_ring consumer(struct gt_ring *p)
{
	struct gt_ring c;
	memset(&c, 0, sizeof(c));
	c.hdr = p->hdr;
	c.rec = p->rec;
	c.mask = p->mask;
	return c;
}

static struct gt_event ev(int64_t t)
{
	struct gt_event e;
	memset(&e, 0, sizeof(e));
	e.start_ns = t;
	e.dur_ns = 10;
	e.kind = GT_EV_KERNEL;
	e.name = 1;
	return e;
}

Test(ring, wraparound_keeps_order)
{
	void *mem;
	struct gt_ring p = mk(64, &mem), c = consumer(&p);
	int64_t next = 0, got = 0;
	/* 1000 events through 64 slots, 37 at a time: wraps many times */
	while (got < 1000) {
		for (int i = 0; i < 37 && next < 1000; i++) {
			struct gt_event e = ev(next);
			cr_assert_eq(gt_ring_push_event(&p, &e), 0);
			next++;
		}
		uint32_t n;
		const struct gt_ring_rec *m;
		while ((m = gt_ring_peek(&c, &n))) {
			cr_assert_eq(m->type, GT_RING_REC_EVENT);
			cr_assert_eq(m->u.ev.start_ns, got);
			got++;
			gt_ring_release(&c, n);
		}
	}
	cr_assert_eq(atomic_load(&p.hdr->ring_overflow), 0);
	cr_assert_eq(atomic_load(&p.hdr->events_published), 1000);
	free(mem);
}

Test(ring, full_ring_counts_drops_and_returns)
{
	void *mem;
	struct gt_ring p = mk(64, &mem), c = consumer(&p);
	for (int i = 0; i < 100; i++) {
		struct gt_event e = ev(i);
		int rc = gt_ring_push_event(&p, &e);
		cr_assert_eq(rc, i < 64 ? 0 : -ENOSPC);
	}
	cr_assert_eq(atomic_load(&p.hdr->ring_overflow), 36);
	cr_assert_eq(gt_ring_readable(&c), 64);
	/* draining makes room again */
	uint32_t n;
	for (int i = 0; i < 10; i++) {
		const struct gt_ring_rec *m = gt_ring_peek(&c, &n);
		cr_assert_eq(m->u.ev.start_ns, i);
		gt_ring_release(&c, n);
	}
	struct gt_event e = ev(500);
	cr_assert_eq(gt_ring_push_event(&p, &e), 0);
	free(mem);
}

Test(ring, long_string_spans_records_across_the_wrap)
{
	void *mem;
	struct gt_ring p = mk(64, &mem), c = consumer(&p);
	/* move the positions near the end so the string wraps */
	for (int i = 0; i < 60; i++) {
		struct gt_event e = ev(i);
		gt_ring_push_event(&p, &e);
	}
	uint32_t n;
	while (gt_ring_peek(&c, &n))
		gt_ring_release(&c, n);
	char text[300];
	for (int i = 0; i < 299; i++)
		text[i] = (char)('a' + i % 26);
	text[299] = 0;
	cr_assert_eq(gt_ring_push_str(&p, 7, text, 299), 0);
	const struct gt_ring_rec *m = gt_ring_peek(&c, &n);
	cr_assert_eq(m->type, GT_RING_REC_STR);
	cr_assert_eq(n, 1 + (299 - 52 + 63) / 64);
	cr_assert_eq(m->u.str.id, 7);
	char out[400];
	cr_assert_eq(gt_ring_str_text(&c, out, sizeof(out)), 299);
	cr_assert_str_eq(out, text);
	gt_ring_release(&c, n);
	/* a string that cannot fit is refused whole and counted */
	char big[64 * 70];
	memset(big, 'x', sizeof(big));
	cr_assert_eq(gt_ring_push_str(&p, 8, big, sizeof(big)), -ENOSPC);
	cr_assert_eq(atomic_load(&p.hdr->msgs_overflow), 1);
	cr_assert_null(gt_ring_peek(&c, &n));
	free(mem);
}

Test(ring, corrupt_record_is_reported_not_trusted)
{
	void *mem;
	struct gt_ring p = mk(64, &mem), c = consumer(&p);
	struct gt_ring_rec *s = gt_ring_slot(&p, 0);
	memset(s, 0, sizeof(*s));
	s->type = GT_RING_REC_STR;
	s->nrec = 3;
	s->len = 1000000;      /* claims more records than nrec */
	gt_ring_commit(&p, 1);
	uint32_t n;
	const struct gt_ring_rec *m = gt_ring_peek(&c, &n);
	cr_assert_not_null(m);
	cr_assert_eq(m->type, GT_RING_REC_NONE);
	cr_assert_eq(n, 1);
	free(mem);
}

Test(ring, memfd_create_and_map)
{
	struct gt_ring p, c;
	int fd = gt_ring_create(&p, 100, getpid());
	cr_assert_geq(fd, 0);
	cr_assert_eq(p.mask + 1, 128);
	char err[128];
	cr_assert_eq(gt_ring_map(&c, fd, err, sizeof(err)), 0, "%s", err);
	struct gt_event e = ev(42);
	gt_ring_push_event(&p, &e);
	uint32_t n;
	const struct gt_ring_rec *m = gt_ring_peek(&c, &n);
	cr_assert_eq(m->u.ev.start_ns, 42);
	gt_ring_unmap(&c);
	gt_ring_unmap(&p);
	close(fd);
}

/* ---- publisher ---- */
static const char *names[] = { "", "gemm_kernel", "stream 7", "allreduce", "Float" };

static const char *d_str(void *ctx, uint32_t id, size_t *len)
{
	if (id >= 5)
		return NULL;
	*len = strlen(names[id]);
	return names[id];
}

static int d_lane(void *ctx, uint32_t id, struct gt_ring_lane_def *o)
{
	o->type = 1;
	o->device = (int32_t)id;
	o->tid = 7;
	o->name = 2;
	return 0;
}

static int d_kconf(void *ctx, uint32_t id, struct gt_kconf *k)
{
	memset(k, 0, sizeof(*k));
	k->grid[0] = id;
	return 0;
}

static int d_nccl(void *ctx, uint32_t id, struct gt_nccl *n)
{
	memset(n, 0, sizeof(*n));
	n->collective = 3;
	n->dtype = 4;
	return 0;
}

Test(pub, definitions_sent_once_before_use)
{
	void *mem;
	struct gt_ring p = mk(256, &mem), c = consumer(&p);
	struct gt_publisher pb;
	gt_publisher_init(&pb);
	gt_publisher_reset(&pb, &p);
	struct gt_publisher_dict d = { NULL, d_str, d_lane, d_kconf, d_nccl };
	struct gt_event e = ev(1);
	e.lane = 3;
	e.arg = 5 | (2ull << 32);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(gt_publisher_event(&pb, &e, &d), 0);
	/* expected: str1, str2, lane3, kconf5, str3, str4, nccl2, ev, ev, ev */
	int want[] = { GT_RING_REC_STR, GT_RING_REC_STR, GT_RING_REC_LANE, GT_RING_REC_KCONF, GT_RING_REC_STR,
		       GT_RING_REC_STR, GT_RING_REC_NCCL, GT_RING_REC_EVENT, GT_RING_REC_EVENT, GT_RING_REC_EVENT };
	uint32_t n;
	for (int i = 0; i < 10; i++) {
		const struct gt_ring_rec *m = gt_ring_peek(&c, &n);
		cr_assert_not_null(m, "record %d", i);
		cr_assert_eq(m->type, want[i], "record %d: type %d", i, m->type);
		gt_ring_release(&c, n);
	}
	cr_assert_null(gt_ring_peek(&c, &n));
	/* a reset (new viewer) sends the definitions again */
	gt_publisher_reset(&pb, &p);
	cr_assert_eq(gt_publisher_event(&pb, &e, &d), 0);
	cr_assert_eq(gt_ring_readable(&c), 8);
	/* an unknown string id loses the event, counted */
	e.name = 99;
	cr_assert_eq(gt_publisher_event(&pb, &e, &d), -ENOENT);
	cr_assert_eq(pb.lost, 1);
	gt_publisher_done(&pb);
	free(mem);
}
