/*
 * live_graphs.c - CUDA graph launches a live capture could not trace
 * (live_sess.h).  CUPTI instruments a graph for kernel tracing when it is
 * instantiated; a graph instantiated before the capture could trace
 * kernels (a late attach) replays without any kernel record.  Its launch
 * calls are still recorded: they are what is counted here.
 */
#include <stdio.h>
#include <string.h>
#include "gtrace/store.h"
#include "live_sess.h"

/* 1 for cudaGraphLaunch / cuGraphLaunch and their _ptsz forms */
static int is_graph_launch(const char *n)
{
	return !strncmp(n, "cudaGraphLaunch", 15) || !strncmp(n, "cuGraphLaunch", 13);
}

size_t live_graphs_untraced(const struct gt_store *s)
{
	size_t n = 0;
	for (uint32_t l = 0; l < gt_store_lane_count(s); l++) {
		const struct gt_lane *ln = gt_store_lane_at(s, l);
		if (ln->key.type != GT_LANE_HOST)
			continue;
		for (size_t i = 0; i < ln->n; i++) {
			const struct gt_event *e = &ln->ev[i];
			if ((e->kind != GT_EV_RUNTIME && e->kind != GT_EV_DRIVER) || !e->corr ||
			    !is_graph_launch(gt_store_str(s, e->name)))
				continue;
			struct gt_ref me = { l, (uint32_t)i }, peer;
			n += gt_store_corr_peer(s, me, &peer) != 0;
		}
	}
	return n;
}

void live_graphs_note(const struct gt_store *s, const char *cmd)
{
	size_t n = live_graphs_untraced(s);
	if (n)
		fprintf(stderr, "gtrace %s: %zu CUDA graph launches have no kernels in the %s: their "
			"graphs were instantiated before the capture could trace kernels (attached "
			"late); start the program with 'gtrace run' to trace them\n", cmd, n,
			!strcmp(cmd, "record") ? "recording" : "capture");
}
