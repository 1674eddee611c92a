/*
 * gtrace/mem_lane.h - the allocated-bytes counter lane of allocator records
 * that come without the allocator's own totals: gtrace's live capture
 * (CUPTI MEMORY2 records, one GT_EVF_MEMORY instant per allocation or
 * release) and the .gtrace files it writes.  docs/analyses.md "memory-usage".
 *
 * What it counts: bytes the process got from the CUDA driver (cudaMalloc,
 * cuMemAlloc and the other calls CUPTI reports as MEMORY2 records, less
 * the frees) - in a PyTorch process the caching allocator's segments, what
 * torch calls reserved, not its allocated tensors.  The live session
 * (tui/live_sess.c) and the remote live nodes' session (tui/netsess.c:
 * open --live, open -, attach --hosts) both keep one.
 *
 * Per (rank, device) one counter lane "Driver allocated (GPU n)" /
 * "Driver allocated (CPU)" (GT_LANE_COUNTER, pid of the process whose host
 * lane holds the first record): one sample per record, at the record's time, holding the
 * sum of the Bytes of the records up to and including it in time order
 * (equal times: the order the records were noted, which is the store's
 * lane order for a file) - the memory-usage report's "allocated" running
 * sum (gtrace/mem_usage.h), so the lane's highest sample is the report's
 * Peak Allocated.  Samples are GT_EV_COUNTER with GT_EVF_MEMORY and
 * sub = GT_MEM_LANE_SUB (not the allocator's Total Allocated / Reserved,
 * sub 0 / 1: the report's Total columns do not read it).
 *
 * CUPTI hands records over in buffer order, not time order, so a record
 * may arrive after later ones: gt_mem_lane_sync puts its sample in place
 * and adds its bytes to every later sample (only the samples after the
 * earliest new record are touched), so the lane is exact after every sync.
 */
#ifndef GTRACE_MEM_LANE_H
#define GTRACE_MEM_LANE_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/store.h"

/* the counter samples' sub (event.h: 0 Total Allocated, 1 Total Reserved) */
#define GT_MEM_LANE_SUB 2
/* metadata key a live capture sets (written into its .gtrace): reading the
 * file back builds the lanes (gt_mem_lane_build) */
#define GT_MEM_LANE_META "memory.allocated_lane"

struct gt_mem_lane;

struct gt_mem_lane_stats {
	uint64_t records;     /* records folded into the lanes */
	uint64_t late;        /* of those, earlier than the lane's last sample when they came */
	uint64_t rewritten;   /* samples whose value a late record changed */
	uint64_t syncs;       /* syncs that folded records */
};

/* an empty tracker; NULL when out of memory */
struct gt_mem_lane *gt_mem_lane_new(void);
void gt_mem_lane_free(struct gt_mem_lane *m);

/* queue the allocator records (GT_EV_INSTANT with GT_EVF_MEMORY) among
 * ev[0..n), events already added to the store (their lane names a host
 * lane); others are ignored.  0 or -ENOMEM */
int gt_mem_lane_note(struct gt_mem_lane *m, const struct gt_event *ev, size_t n);

/* after gt_store_finish(s): fold the queued records into the counter
 * lanes of s (made on first use), then finish s again.  0 or -ENOMEM */
int gt_mem_lane_sync(struct gt_mem_lane *m, struct gt_store *s);

/* the lanes of a finished store read whole (a .gtrace of a live capture):
 * every record of s noted in lane order, then synced.  0 or -ENOMEM */
int gt_mem_lane_build(struct gt_store *s);

void gt_mem_lane_stats(const struct gt_mem_lane *m, struct gt_mem_lane_stats *out);

#endif
