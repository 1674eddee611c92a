/*
 * gtrace/publisher.h - the publisher: the producer side of a capture ring that
 * knows which definitions (strings, lanes, kernel configurations, NCCL
 * arguments) the current ring has already carried, and sends each one once,
 * before the first event that uses it.  Sources (the CUPTI drain, the
 * synthetic source) describe their ids through a struct gt_publisher_dict.
 *
 * One publisher per ring and one producer thread; gt_publisher_reset starts over
 * with a new ring (a new viewer gets every definition again).
 */
#ifndef GTRACE_PUB_H
#define GTRACE_PUB_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/event.h"
#include "gtrace/ring.h"

/* how a source resolves its own ids; each returns 0 when found */
struct gt_publisher_dict {
	void *ctx;
	const char *(*str)(void *ctx, uint32_t id, size_t *len);
	int (*lane)(void *ctx, uint32_t id, struct gt_ring_lane_def *out);
	int (*kconf)(void *ctx, uint32_t id, struct gt_kconf *out);
	int (*nccl)(void *ctx, uint32_t id, struct gt_nccl *out);
};

struct gt_publisher_bits {
	uint8_t *b;
	size_t cap_bits;
};

struct gt_publisher {
	struct gt_ring *ring;       /* not owned; NULL = nothing to publish to */
	struct gt_publisher_bits str, lane, kconf, nccl;
	uint64_t events;         /* events published */
	uint64_t lost;           /* events lost to an unknown id */
	uint64_t resets;         /* gt_publisher_reset calls: a source sees a new ring */
};

void gt_publisher_init(struct gt_publisher *p);
void gt_publisher_done(struct gt_publisher *p);
/* forget what was sent; publish to r (may be NULL) from now on */
void gt_publisher_reset(struct gt_publisher *p, struct gt_ring *r);
/* publish one event, its definitions first; 0, -ENOSPC (ring full, counted
 * in the ring), -ENOENT (an id the dictionary does not know, counted in
 * p->lost), -ENOMEM */
int gt_publisher_event(struct gt_publisher *p, const struct gt_event *e, const struct gt_publisher_dict *d);
/* publish a batch; returns events published */
size_t gt_publisher_events(struct gt_publisher *p, const struct gt_event *e, size_t n, const struct gt_publisher_dict *d);
/* send a string definition if not sent yet; 0 or negative errno */
int gt_publisher_str(struct gt_publisher *p, uint32_t id, const struct gt_publisher_dict *d);
/* device, rank and clock records (not deduplicated); 0 or -ENOSPC */
int gt_publisher_device(struct gt_publisher *p, const struct gt_ring_device_def *dev, const struct gt_publisher_dict *d);
int gt_publisher_rank(struct gt_publisher *p, const struct gt_ring_rank_def *rk, const struct gt_publisher_dict *d);
int gt_publisher_clock(struct gt_publisher *p, const struct gt_ring_clock_def *c);

#endif
