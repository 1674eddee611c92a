/*
 * live.h - gtrace's side of a live capture: connect to a traced process's
 * control socket, start a capture, map the ring it hands over and move its
 * records into a store (producer ids mapped to the store's own).  A set of
 * connections (one per process: ranks of `gtrace run`) feeds one store.
 *
 * Also the entry points of the live commands that are not in cmd_*.c:
 * `gtrace sim --live` (live_sim_main) and process discovery.
 */
#ifndef GTRACE_TUI_LIVE_H
#define GTRACE_TUI_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "gtrace/ring.h"
#include "gtrace/store.h"

/* called with each batch of events added to the store (store ids) */
typedef int (*live_events_fn)(void *ctx, struct gt_store *s, const struct gt_event *ev, size_t n);

struct live_map {
	uint32_t *v;             /* producer id -> store id + 1 (0 = unknown) */
	size_t cap;
};

struct live {
	pid_t pid;
	int rank;                /* rank given to lanes whose producer said -1 */
	int ctl_fd;              /* -1 once the target is gone or detached */
	struct ring ring;
	struct gt_store *s;
	struct live_map str, lane, kconf, nccl;
	char *text;              /* string reassembly buffer */
	size_t text_cap;
	uint64_t events;         /* events added to the store */
	uint64_t bad;            /* malformed records / unknown ids */
	int gone;                /* control socket closed: target exited */
	int done;                /* ring stopped/ended and drained */
	char reason[128];
	struct gt_event *batch;
	size_t batch_n, batch_cap;
};

/* connect to pid, start a capture with a ring of `records` (0 = default),
 * map it; 0 or negative errno with a one-line message in err */
int live_open(struct live *l, pid_t pid, int rank, struct gt_store *s, uint32_t records,
	      char *err, size_t errlen);
/* move up to max_events ready records into the store (not finished);
 * on_events (may be NULL) sees each batch; returns events added or
 * negative errno (from on_events) */
long live_poll(struct live *l, size_t max_events, live_events_fn on_events, void *ctx);
/* loss counters of this connection's ring */
void live_drops(const struct live *l, struct gt_drops *d);
/* one word: capturing, stopped, ended, target-exited */
const char *live_state(const struct live *l);
/* detach (when still connected) and unmap; frees l's buffers */
void live_close(struct live *l);

/* processes with a gtrace control socket (@gtrace-PID in /proc/net/unix);
 * fills up to max pids, returns the count found (may exceed max) */
size_t live_list_pids(pid_t *pids, size_t max);
/* 1 when pid descends from ancestor (walks /proc/PID/stat) */
int live_is_descendant(pid_t pid, pid_t ancestor);

/* `gtrace sim --live ...`: the simulated trainer; returns the exit status */
int live_sim_main(int argc, char **argv);

#endif
