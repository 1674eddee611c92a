/*
 * gtjob_priv.h - the job's nodes (gtjob.c merges, gtjob_clock.c aligns).
 * Private to core/file/.
 */
#ifndef GTRACE_GTJOB_PRIV_H
#define GTRACE_GTJOB_PRIV_H

#include <string.h>
#include "gtrace/gtjob.h"

#define GTJOB_MAX_RANKS 256
#define GTJOB_BATCH 4096

struct gt_job_node {
	char label[160];
	char name[64];                    /* what its stream's messages start with */
	char host[128];
	char msg[320];
	struct gt_stream *st;
	struct gt_store *ns;              /* the node's own store (writer's ids) */
	uint32_t *str, *lane, *lane_name, *kconf, *nccl;   /* node id -> job id */
	size_t cap_str, cap_lane, cap_lane_name, cap_kconf, cap_nccl;
	size_t n_str, n_lane, n_kconf, n_nccl, n_meta;    /* entries copied */
	int32_t rk_from[GTJOB_MAX_RANKS], rk_to[GTJOB_MAX_RANKS];
	int n_ranks;
	struct gt_event *batch;
	size_t nb;
	uint64_t bytes, events;
	int ended;
	int clock_synced;
	int64_t clock_maxerror_us, clock_esterror_us;
	int have_residual, reference;
	int64_t residual_ns, spread_ns, coll_dur_ns, applied_ns;
	uint32_t matches;
};

struct gt_job {
	struct gt_store *s;
	struct gt_job_node *node[GT_JOB_MAX_NODES];
	size_t n;
	int applied;                      /* gt_job_apply was called */
};

#endif
