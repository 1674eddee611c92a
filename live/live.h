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

/* ---- a session: every traced process of one command, one store ---- */

#define LIVE_SESS_MAX 64

struct live_rec;

struct live_sess {
	struct gt_store *s;
	struct live conn[LIVE_SESS_MAX];
	int n;
	int joined;              /* connections ever made (n drops at close) */
	pid_t root;              /* `run`: the started command; its traced
				  * descendants join as ranks; 0 = none */
	int root_exited;
	int root_status;         /* wait status of root */
	uint32_t records;        /* ring size asked of each target */
	struct live_rec *rec;    /* the capture file events are streamed to (live_rec.h) */
	int64_t last_flush_ns;
	uint64_t events;
	/* event rate, sampled once per second */
	int64_t rate_t_ns;
	uint64_t rate_events;
	double rate;
	int paused;              /* receive but do not add (viewer pause) */
	pid_t refused[LIVE_SESS_MAX];   /* descendants that refused a start (passive) */
	int n_refused;
	char msg[256];           /* the last error or event worth telling */
	struct gt_mem_lane *ml;  /* allocated-bytes lanes of the records (gtrace/mem_lane.h) */
};

void live_sess_init(struct live_sess *ss, struct gt_store *s, uint32_t records);
/* connect pid as the next rank; 0 or negative errno with err */
int live_sess_add(struct live_sess *ss, pid_t pid, char *err, size_t errlen);
/* receive from every connection (and, with a root, join new traced
 * descendants); streams to ss->rec when set (flushed once a second); finishes the store when events
 * came in.  Returns 1 when the store changed, 0 when not, negative errno
 * from the writer. */
int live_sess_poll(struct live_sess *ss);
/* 1 when every connection is done (target ended or exited) and, with a
 * root, the root has exited */
int live_sess_done(struct live_sess *ss);
/* one status line: "live: 2 procs capturing, 120k ev/s, 1.2M events, 0 lost,
 * mem 120M/1.0G, file 34M" (with --ring, what it discarded) */
void live_sess_status(struct live_sess *ss, char *buf, size_t len);
/* sum of the connections' loss counters into the store's drops */
void live_sess_drops(struct live_sess *ss);
/* detach from every target */
void live_sess_close(struct live_sess *ss);
/* the ui_source callbacks over a session (ctx = struct live_sess *) */
struct ui_source;
void live_sess_ui(struct live_sess *ss, struct ui_source *src, const char *name);

/* the injection library next to the running gtrace binary (build tree or
 * installed libdir); 0 with the path, -ENOENT */
int live_inject_path(char *out, size_t len);
/* CUDA graph launch calls in s without any GPU work of theirs (graphs
 * instantiated before the capture could trace their kernels) */
size_t live_graphs_untraced(const struct gt_store *s);
/* print that count, when not 0, in one line on stderr for the subcommand
 * cmd ("record", "attach") with the way out */
void live_graphs_note(const struct gt_store *s, const char *cmd);

/* start argv with the injection library in its environment (and
 * GTRACE_AUTOSTART so capture begins at CUDA's start); 0 or negative
 * errno with err */
int live_spawn(char **argv, pid_t *pid, char *err, size_t errlen);
/* the same with the command's stdout and stderr on out_fd (>= 0) and its
 * stdin on /dev/null, so it does not write over (or read from) a viewer */
int live_spawn_out(char **argv, int out_fd, pid_t *pid, char *err, size_t errlen);
/* what the capture library of the last spawned command (or a descendant)
 * reported on its status pipe ("PID REASON": it could not listen); 1 with
 * the first line in buf, 0 when nothing came */
int live_spawn_report(char *buf, size_t len);
/* drive a session without a terminal until it is done, SIGINT/SIGTERM or
 * duration_s (0 = none); every_s > 0 prints a status line that often to
 * stderr.  Returns 0, or negative errno from the writer. */
int live_headless(struct live_sess *ss, double duration_s, double every_s);
/* 1 when the last live_headless ended on SIGINT/SIGTERM */
int live_headless_interrupted(void);
/* the live viewer on a session when stdin/stdout are a terminal, else
 * live_headless with a status line per second; returns the exit status */
int live_view(struct live_sess *ss, const char *name);

/* `gtrace sim --live ...`: the simulated trainer; returns the exit status */
int live_sim_main(int argc, char **argv);

/* ---- processes not started under gtrace (live_attach.c) ---- */

struct gt_pinj_result;
/* 1 when pid listens on its gtrace control socket */
int live_listening(pid_t pid);
/* make pid attachable: nothing when it listens already, else load the
 * capture library with ptrace and wait for its socket (a process mapping no
 * CUDA driver is refused, -GT_PINJ_ENOCUDA, unless LIVE_ATTACH_FORCE or it sets
 * GTRACE_SYNTH); 0 (res says which) or negative errno / -PINJ_* with one
 * line in err */
#define LIVE_ATTACH_QUIET 0x1   /* live_attach_add: say nothing on stderr */
#define LIVE_ATTACH_FORCE 0x2   /* inject into a process that maps no CUDA driver too */
int live_attach_prepare(pid_t pid, int flags, struct gt_pinj_result *res, char *err, size_t errlen);
/* live_attach_prepare then live_sess_add; says on stderr what was loaded
 * unless LIVE_ATTACH_QUIET; flags LIVE_ATTACH_* */
int live_attach_add(struct live_sess *ss, pid_t pid, int flags, char *err, size_t errlen);
/* processes that map a CUDA driver or listen (of our uid when mine_only);
 * fills up to max, returns the count found */
size_t live_cuda_pids(pid_t *pids, size_t max, int mine_only);
/* join every process of ours that uses CUDA (RANK order, then pid) to
 * ss, loading the library where needed; a process that cannot join is
 * named on stderr and skipped.  Returns how many joined, or -ENOENT with
 * err when none did */
int live_attach_all(struct live_sess *ss, int quiet, char *err, size_t errlen);
/* value of key in pid's environment; 0 or -ENOENT */
int live_proc_env(pid_t pid, const char *key, char *out, size_t len);
/* GPUs pid has open (/dev/nvidiaN) as "0,1"; 0 or -ENOENT */
int live_proc_gpus(pid_t pid, char *out, size_t len);

/* CLOCK_MONOTONIC in ns (rates, timeouts of the live session) */
int64_t live_mono_ns(void);

/* the path W saves a live capture to: CWD/gtrace-TIME.gtrace, absolute
 * (relative only when the directory cannot be read) */
void live_save_path(char *out, size_t len);

#endif
