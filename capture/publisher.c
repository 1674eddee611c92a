/*
 * publisher.c - the publisher of gtrace/publisher.h: per-ring "already sent" bitmaps
 * for each id space, definitions emitted lazily before the first event that
 * needs them.  Runs on the producer thread only (never the CUPTI callback).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/publisher.h"

void gt_publisher_init(struct gt_publisher *p)
{
	memset(p, 0, sizeof(*p));
}

static void bits_free(struct gt_publisher_bits *b)
{
	free(b->b);
	b->b = NULL;
	b->cap_bits = 0;
}

void gt_publisher_done(struct gt_publisher *p)
{
	bits_free(&p->str);
	bits_free(&p->lane);
	bits_free(&p->kconf);
	bits_free(&p->nccl);
	p->ring = NULL;
}

void gt_publisher_reset(struct gt_publisher *p, struct gt_ring *r)
{
	struct gt_publisher_bits *all[] = { &p->str, &p->lane, &p->kconf, &p->nccl };
	for (size_t i = 0; i < 4; i++)
		if (all[i]->b)
			memset(all[i]->b, 0, all[i]->cap_bits / 8);
	p->ring = r;
	p->resets++;
}

/* 1 when bit id is set, 0 when clear, -ENOMEM when it cannot be tracked */
static int bits_test(struct gt_publisher_bits *b, uint32_t id)
{
	if (id >= b->cap_bits) {
		size_t nc = b->cap_bits ? b->cap_bits : 4096;
		while (nc <= id)
			nc *= 2;
		uint8_t *nb = realloc(b->b, nc / 8);
		if (!nb)
			return -ENOMEM;
		memset(nb + b->cap_bits / 8, 0, (nc - b->cap_bits) / 8);
		b->b = nb;
		b->cap_bits = nc;
	}
	return (b->b[id >> 3] >> (id & 7)) & 1;
}

static void bits_set(struct gt_publisher_bits *b, uint32_t id)
{
	b->b[id >> 3] |= (uint8_t)(1u << (id & 7));
}

int gt_publisher_str(struct gt_publisher *p, uint32_t id, const struct gt_publisher_dict *d)
{
	if (id == 0)
		return 0;          /* id 0 is the empty string on both sides */
	int t = bits_test(&p->str, id);
	if (t)
		return t < 0 ? t : 0;
	size_t len = 0;
	const char *s = d->str ? d->str(d->ctx, id, &len) : NULL;
	if (!s)
		return -ENOENT;
	int rc = gt_ring_push_str(p->ring, id, s, len);
	if (rc == 0)
		bits_set(&p->str, id);
	return rc;
}

static int publisher_lane(struct gt_publisher *p, uint32_t id, const struct gt_publisher_dict *d)
{
	int t = bits_test(&p->lane, id);
	if (t)
		return t < 0 ? t : 0;
	struct gt_ring_rec m;
	memset(&m, 0, sizeof(m));
	m.type = GT_RING_REC_LANE;
	if (!d->lane || d->lane(d->ctx, id, &m.u.lane) != 0)
		return -ENOENT;
	m.u.lane.id = id;
	int rc = gt_publisher_str(p, m.u.lane.name, d);
	if (rc == 0)
		rc = gt_ring_push_rec(p->ring, &m);
	if (rc == 0)
		bits_set(&p->lane, id);
	return rc;
}

static int publisher_kconf(struct gt_publisher *p, uint32_t id, const struct gt_publisher_dict *d)
{
	if (id == 0)
		return 0;
	int t = bits_test(&p->kconf, id);
	if (t)
		return t < 0 ? t : 0;
	struct gt_ring_rec m;
	memset(&m, 0, sizeof(m));
	m.type = GT_RING_REC_KCONF;
	if (!d->kconf || d->kconf(d->ctx, id, &m.u.kconf.k) != 0)
		return -ENOENT;
	m.u.kconf.id = id;
	int rc = gt_ring_push_rec(p->ring, &m);
	if (rc == 0)
		bits_set(&p->kconf, id);
	return rc;
}

static int publisher_nccl(struct gt_publisher *p, uint32_t id, const struct gt_publisher_dict *d)
{
	if (id == 0)
		return 0;
	int t = bits_test(&p->nccl, id);
	if (t)
		return t < 0 ? t : 0;
	struct gt_ring_rec m;
	memset(&m, 0, sizeof(m));
	m.type = GT_RING_REC_NCCL;
	if (!d->nccl || d->nccl(d->ctx, id, &m.u.nccl.n) != 0)
		return -ENOENT;
	m.u.nccl.id = id;
	int rc = gt_publisher_str(p, m.u.nccl.n.collective, d);
	if (rc == 0)
		rc = gt_publisher_str(p, m.u.nccl.n.dtype, d);
	if (rc == 0)
		rc = gt_publisher_str(p, m.u.nccl.n.pg_name, d);
	if (rc == 0)
		rc = gt_ring_push_rec(p->ring, &m);
	if (rc == 0)
		bits_set(&p->nccl, id);
	return rc;
}

int gt_publisher_event(struct gt_publisher *p, const struct gt_event *e, const struct gt_publisher_dict *d)
{
	if (!p->ring)
		return -EPIPE;
	int rc = gt_publisher_str(p, e->name, d);
	if (rc == 0)
		rc = publisher_lane(p, e->lane, d);
	if (rc == 0 && e->kind == GT_EV_KERNEL) {
		rc = publisher_kconf(p, gt_event_kconf(e), d);
		if (rc == 0)
			rc = publisher_nccl(p, gt_event_nccl(e), d);
	}
	if (rc == 0)
		rc = gt_ring_push_event(p->ring, e);
	else if (rc == -ENOSPC)   /* a definition did not fit: the event is lost too */
		atomic_fetch_add_explicit(&p->ring->hdr->ring_overflow, 1, memory_order_relaxed);
	if (rc == 0)
		p->events++;
	else if (rc != -ENOSPC) {
		/* a definition the source could not give: counted, never silent */
		p->lost++;
		atomic_fetch_add_explicit(&p->ring->hdr->read_errors, 1, memory_order_relaxed);
	}
	return rc;
}

size_t gt_publisher_events(struct gt_publisher *p, const struct gt_event *e, size_t n, const struct gt_publisher_dict *d)
{
	size_t ok = 0;
	for (size_t i = 0; i < n; i++)
		ok += gt_publisher_event(p, &e[i], d) == 0;
	return ok;
}

int gt_publisher_device(struct gt_publisher *p, const struct gt_ring_device_def *dev, const struct gt_publisher_dict *d)
{
	if (!p->ring)
		return -EPIPE;
	int rc = gt_publisher_str(p, dev->name, d);
	if (rc)
		return rc;
	struct gt_ring_rec m;
	memset(&m, 0, sizeof(m));
	m.type = GT_RING_REC_DEVICE;
	m.u.dev = *dev;
	return gt_ring_push_rec(p->ring, &m);
}

int gt_publisher_rank(struct gt_publisher *p, const struct gt_ring_rank_def *rk, const struct gt_publisher_dict *d)
{
	if (!p->ring)
		return -EPIPE;
	int rc = gt_publisher_str(p, rk->host, d);
	if (rc)
		return rc;
	struct gt_ring_rec m;
	memset(&m, 0, sizeof(m));
	m.type = GT_RING_REC_RANK;
	m.u.rank = *rk;
	return gt_ring_push_rec(p->ring, &m);
}

int gt_publisher_clock(struct gt_publisher *p, const struct gt_ring_clock_def *c)
{
	if (!p->ring)
		return -EPIPE;
	struct gt_ring_rec m;
	memset(&m, 0, sizeof(m));
	m.type = GT_RING_REC_CLOCK;
	m.u.clock = *c;
	return gt_ring_push_rec(p->ring, &m);
}
