/*
 * live_sess.h - the gtrace program's side of live capture, built on live/
 * (../live/live.h: one connection, its ring into a store): a session of
 * every traced process of one command feeding one store (live_sess.c), the
 * commands' helpers (spawn, attach a running process, headless or viewer
 * drive, CUDA graph note, the save path) and `gtrace sim --live`.  All of
 * it is defined in tui/; live/ declares none of it.
 */
#ifndef GTRACE_TUI_LIVE_SESS_H
#define GTRACE_TUI_LIVE_SESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "../live/live.h"

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
