/*
 * gtrace/pub.h - the publisher: the producer side of a capture ring that
 * knows which definitions (strings, lanes, kernel configurations, NCCL
 * arguments) the current ring has already carried, and sends each one once,
 * before the first event that uses it.  Sources (the CUPTI drain, the
 * synthetic source) describe their ids through a struct pub_dict.
 *
 * One publisher per ring and one producer thread; pub_reset starts over
 * with a new ring (a new viewer gets every definition again).
 */
#ifndef GTRACE_PUB_H
#define GTRACE_PUB_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/event.h"
#include "gtrace/ring.h"

/* how a source resolves its own ids; each returns 0 when found */
struct pub_dict {
	void *ctx;
	const char *(*str)(void *ctx, uint32_t id, size_t *len);
	int (*lane)(void *ctx, uint32_t id, struct ring_lane_def *out);
	int (*kconf)(void *ctx, uint32_t id, struct gt_kconf *out);
	int (*nccl)(void *ctx, uint32_t id, struct gt_nccl *out);
};

struct pub_bits {
	uint8_t *b;
	size_t cap_bits;
};

struct pub {
	struct ring *ring;       /* not owned; NULL = nothing to publish to */
	struct pub_bits str, lane, kconf, nccl;
	uint64_t events;         /* events published */
	uint64_t lost;           /* events lost to an unknown id */
	uint64_t resets;         /* pub_reset calls: a source sees a new ring */
};

void pub_init(struct pub *p);
void pub_done(struct pub *p);
/* forget what was sent; publish to r (may be NULL) from now on */
void pub_reset(struct pub *p, struct ring *r);
/* publish one event, its definitions first; 0, -ENOSPC (ring full, counted
 * in the ring), -ENOENT (an id the dictionary does not know, counted in
 * p->lost), -ENOMEM */
int pub_event(struct pub *p, const struct gt_event *e, const struct pub_dict *d);
/* publish a batch; returns events published */
size_t pub_events(struct pub *p, const struct gt_event *e, size_t n, const struct pub_dict *d);
/* send a string definition if not sent yet; 0 or negative errno */
int pub_str(struct pub *p, uint32_t id, const struct pub_dict *d);
/* device, rank and clock records (not deduplicated); 0 or -ENOSPC */
int pub_device(struct pub *p, const struct ring_device_def *dev, const struct pub_dict *d);
int pub_rank(struct pub *p, const struct ring_rank_def *rk, const struct pub_dict *d);
int pub_clock(struct pub *p, const struct ring_clock_def *c);

#endif
