/*
 * netsess.h - a live session over .gtrace streams: one node per command
 * whose stdout is `gtrace record -o -` (`ssh HOST gtrace record --all -o -`,
 * `srun -w HOST ...`, `kubectl exec ...`) or per file descriptor (stdin),
 * merged as one job (core gtjob) as the bytes arrive, optionally streamed
 * to a recording; the viewer's ui_source over it, and the headless loop.
 *
 * Reads never block: every descriptor is non-blocking and each poll reads
 * at most NETSESS_POLL_BYTES per node, so a node that stalls or floods
 * cannot stop the viewer from drawing.
 */
#ifndef GTRACE_TUI_NETSESS_H
#define GTRACE_TUI_NETSESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "gtrace/gtjob.h"

#define NETSESS_POLL_BYTES (16u << 20)
/* a node that sent nothing for this long is said to stall */
#define NETSESS_STALL_NS 5000000000LL

struct netsess_node {
	pid_t pid;               /* the command (its own process group); 0 = an fd */
	int fd, efd;             /* its stdout, stderr (-1 when closed / none) */
	int64_t last_ns;         /* monotonic time of its last bytes */
	char eline[160];         /* its stderr's last line */
	size_t elen;
	char epart[160];         /* the line being read */
	int left;                /* an fd (stdin) still open when the session stopped:
	                            closed by us, not failed */
	int64_t bad_ns;          /* when its stream turned out bad: the command is
	                            stopped a grace period later (its stderr's reason) */
};

struct gt_file_writer;
struct gt_mem_lane;

struct netsess {
	struct gt_store *s;
	struct gt_job *j;
	struct netsess_node node[GT_JOB_MAX_NODES];
	int n;
	int apply_clock;         /* --align-clocks: apply the residual offsets */
	struct gt_file_writer *w; /* record: the merged store is streamed here */
	const char *out;         /* w's path (the status line's file figure); NULL: none or stdout */
	int64_t last_flush_ns, last_align_ns;
	uint64_t events;
	int64_t rate_t_ns;
	uint64_t rate_events;
	double rate;
	unsigned char *buf;      /* read buffer */
	char msg[256];
	struct gt_mem_lane *ml;  /* allocated-bytes lanes of the nodes' records (gtrace/mem_lane.h) */
	int ml_off;              /* a stream brought its lanes made: none made here */
	int feeding;             /* the node whose bytes are being merged */
};

/* 0 or negative errno; s is finished once here and given a memory budget
 * of `memory` bytes (0: none; SIZE_MAX: the default, unbounded when its
 * cache file cannot be made) */
int netsess_init(struct netsess *ns, struct gt_store *s, int apply_clock, size_t memory);
/* start `sh -c CMD` as a node (stdout a .gtrace stream); 0 or negative errno with err */
int netsess_add_cmd(struct netsess *ns, const char *cmd, char *err, size_t errlen);
/* an open descriptor as a node (made non-blocking; closed by the session) */
int netsess_add_fd(struct netsess *ns, int fd, const char *label, char *err, size_t errlen);
/* read what every node sent; merges it, finishes the store when events
 * came, streams to ns->w, re-estimates the clocks each second.  1 when the
 * store changed, 0 when not, negative errno from the writer */
int netsess_poll(struct netsess *ns);
/* 1 when every node's stream ended (closed) */
int netsess_done(const struct netsess *ns);
/* "nodes: 2 receiving, 120k ev/s, 1.2M events, 0 lost, mem 210M/1.0G[, file 96M] | ..." */
void netsess_status(struct netsess *ns, char *buf, size_t len);
/* one stderr line "PROG: node HOST failed: why" per node that ended without
 * completing its stream or sent no events */
void netsess_name_failed(const struct netsess *ns, const char *prog);
/* stop the commands (SIGTERM to each process group), read what they still
 * send for up to wait_s seconds, close everything; metadata written */
void netsess_stop(struct netsess *ns, double wait_s);
void netsess_free(struct netsess *ns);
/* without a terminal: poll until done, SIGINT/SIGTERM or duration_s (0 =
 * none); a status line every every_s seconds (0 = none) on stderr; 0 or
 * negative errno from the writer */
int netsess_headless(struct netsess *ns, double duration_s, double every_s);
/* the viewer on the session when stdin/stdout are a terminal, else the
 * headless loop with a status line per second; the exit status */
int netsess_view(struct netsess *ns, const char *name);
/* `gtrace record -o OUT --from CMD...`: the commands' streams merged
 * into OUT as they arrive; the exit status */
int netsess_record(const char *out, char **cmds, int n, int force, double duration, int quiet,
		   int apply_clock);
/* `gtrace open [-] [--live CMD...]`: the viewer on stdin's stream (path
 * "-") and the commands' streams (hosts[i], when given, names command i's
 * node until its stream says its host), streamed to `record` too when
 * given (FILE kept unless force); without a terminal: recorded headless
 * to `record` when given (no paths), else refused with one line naming
 * the way out; the exit status */
int netsess_open_live(const char *const *paths, int np, char **cmds, char **hosts, int ncmd,
		      int align, size_t memory, const char *record, int force);
/* `gtrace open A.gtrace B.gtrace ...`: the files as the nodes of one job */
int netsess_open_files(const char *const *paths, int np, int align);
/* 1 when there are at least two paths and each is a .gtrace file */
int netsess_all_gtrace(const char *const *paths, int np);
/* `gtrace attach --hosts H1,H2 [--ssh CMD] [--gtrace PATH] [--align-clocks]`;
 * argv[1] is "--hosts"; the exit status */
int netsess_attach_hosts(int argc, char **argv);

#endif
