/*
 * fuzz_ring.c - libFuzzer target for the consumer side of a capture ring
 * (capture/ring.c peeks, live/live.c's id mapping and evcheck) fed by a
 * hostile producer: the first 8 bytes are the header's head, the rest
 * fills the records of a 64-record ring.  live_poll runs until it reads
 * nothing more; every poll must end (bounded in records and time), ids of
 * any value must cost no memory, and whatever enters the store must pass
 * gt_store_finish.  Crashes, hangs, leaks and huge allocations are bugs.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/ring.h"
#include "gtrace/store.h"
#include "../live/live.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP 64u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static _Alignas(64) unsigned char mem[GT_RING_HDR_BYTES + CAP * GT_RING_REC_BYTES];
	if (size < 8)
		return 0;
	struct gt_ring r;
	gt_ring_init_mem(&r, mem, CAP, 1);
	memset(mem + GT_RING_HDR_BYTES, 0, CAP * GT_RING_REC_BYTES);
	size_t body = size - 8 < CAP * GT_RING_REC_BYTES ? size - 8 : CAP * GT_RING_REC_BYTES;
	memcpy(mem + GT_RING_HDR_BYTES, data + 8, body);
	uint64_t head;
	memcpy(&head, data, 8);
	atomic_store(&r.hdr->head, head);
	atomic_store(&r.hdr->state, GT_RING_ST_ENDED);
	struct live l;
	memset(&l, 0, sizeof(l));
	l.ctl_fd = -1;
	l.s = gt_store_new();
	if (!l.s)
		return 0;
	l.ring = r;
	for (int i = 0; i < 4 && !l.done; i++)
		if (live_poll(&l, 1u << 20, NULL, NULL) <= 0)
			break;
	gt_store_finish(l.s);
	l.ring.hdr = NULL;          /* static memory: nothing to unmap */
	live_close(&l);
	gt_store_free(l.s);
	return 0;
}
