/*
 * live.h - gtrace's side of a live capture: connect to a traced process's
 * control socket, start a capture, map the ring it hands over and move its
 * records into a store (producer ids mapped to the store's own).  A set of
 * connections (one per process: ranks of `gtrace run`) feeds one store.
 *
 * Also process discovery (live_proc.c).  This header declares only what
 * live/ defines: the session of several connections and the live commands
 * built on it are the viewer program's (tui/live_sess.h).
 */
#ifndef GTRACE_LIVE_LIVE_H
#define GTRACE_LIVE_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "gtrace/ring.h"
#include "gtrace/store.h"

/* called with each batch of events added to the store (store ids) */
typedef int (*live_events_fn)(void *ctx, struct gt_store *s, const struct gt_event *ev, size_t n);

/* producer id -> store id, open addressing: a producer's ids may be
 * anything (sparse, hostile), memory follows the ids defined, never their
 * values; at most LIVE_MAP_MAX ids per map */
struct live_map {
	uint32_t *key;           /* producer id */
	uint32_t *v;             /* store id + 1; 0 = empty slot */
	size_t cap, n;           /* slots (a power of two or 0), ids held */
};

#define LIVE_MAP_MAX (1u << 22)

/* ranks one process may publish (sim --live --ranks N: N ranks, one process) */
#define LIVE_RANKS_MAX 256

/* records one live_poll reads at most, and the time it spends */
#define LIVE_POLL_MAX_NS 50000000

struct live {
	pid_t pid;
	int rank;                /* rank given to lanes whose producer said -1 */
	int rank_n;              /* producer ranks mapped so far (one per rank a process publishes) */
	int32_t rank_want[LIVE_RANKS_MAX];  /* the producer's rank (-1 = unknown) ... */
	int32_t rank_final[LIVE_RANKS_MAX]; /* ... and its rank in the store */
	int ctl_fd;              /* -1 once the target is gone or detached */
	struct gt_ring ring;
	int guard;               /* mapguard slot + 1 of the ring mapping (0: none) */
	struct gt_store *s;
	struct live_map str, lane, kconf, nccl;
	char *text;              /* string reassembly buffer */
	size_t text_cap;
	uint64_t events;         /* events added to the store */
	uint64_t bad;            /* malformed records / unknown ids */
	int gone;                /* control socket closed: target exited */
	int done;                /* ring stopped/ended and drained */
	char reason[128];
	char ended[96];          /* the producer's reason when it ended its capture */
	struct gt_event *batch;
	size_t batch_n, batch_cap;
};

/* connect to pid, start a capture with a ring of `records` (0 = default),
 * map it; 0 or negative errno with a one-line message in err */
int live_open(struct live *l, pid_t pid, int rank, struct gt_store *s, uint32_t records,
	      char *err, size_t errlen);
/* move up to max_events ready records into the store (not finished),
 * reading at most one ring's capacity of records and for at most
 * LIVE_POLL_MAX_NS; events that fail gt_evcheck_event are counted bad, not
 * added; a corrupt ring ends the connection (done, with the reason).
 * on_events (may be NULL) sees each batch; returns events added or
 * negative errno (from on_events) */
long live_poll(struct live *l, size_t max_events, live_events_fn on_events, void *ctx);
/* loss counters of this connection's ring */
void live_drops(const struct live *l, struct gt_drops *d);
/* one word: capturing, stopped, ended, target-exited */
const char *live_state(const struct live *l);
/* detach but keep the ring mapped (its counters stay readable) */
void live_detach(struct live *l);
/* ask the target to stop capturing and deliver what its source still
 * holds (CUPTI's buffers) into the ring; read it with live_poll after */
void live_stop_capture(struct live *l);
/* detach (when still connected) and unmap; frees l's buffers */
void live_close(struct live *l);

/* processes with a gtrace control socket (@gtrace-PID in /proc/net/unix);
 * fills up to max pids, returns the count found (may exceed max) */
size_t live_list_pids(pid_t *pids, size_t max);
/* 1 when pid descends from ancestor (walks /proc/PID/stat) */
int live_is_descendant(pid_t pid, pid_t ancestor);

#endif
