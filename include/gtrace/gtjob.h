/*
 * gtrace/gtjob.h - one job from several nodes: .gtrace streams (or files),
 * one per node, merged into one store as they arrive.
 *
 * Each node's bytes go through a gtstream into a store of its own; after
 * every feed the new table entries and events are copied into the job's
 * store with their ids mapped.  Ranks keep the number their node gave
 * them (the trainers' global RANK); a rank another node already holds is
 * moved past every rank and world size known (and said in the node's
 * message).  A rank whose host is unknown gets its node's host (the
 * stream's "node.host" metadata, else the node's label).
 *
 * Clocks: every stream says how its host's CLOCK_REALTIME is disciplined
 * (gt_job_stamp writes it: adjtimex status, maxerror, esterror).  The
 * residual offset between nodes is estimated from NCCL collectives, which
 * end together on every rank (gt_job_align); it is reported, and applied
 * only on request (gt_job_apply).
 */
#ifndef GTRACE_GTJOB_H
#define GTRACE_GTJOB_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/gtstream.h"
#include "gtrace/store.h"

struct gt_job;

/* called with each batch of events added to the job's store (its ids) */
typedef int (*gt_job_events_fn)(void *ctx, struct gt_store *s, const struct gt_event *ev, size_t n);

#define GT_JOB_MAX_NODES 256

struct gt_job_node_info {
	const char *label;       /* the command or file it came from */
	const char *name;        /* the label as messages start with it ("NAME: ..."), a
	                            long one cut to 56 bytes and "..." */
	const char *host;        /* its host */
	enum gt_stream_state state;
	uint64_t bytes, events;
	const char *msg;         /* why it ended (cut off, bad stream), a rank moved; "" */
	/* the host clock as the stream reported it (-1: not said) */
	int clock_synced;        /* 1 synchronized (NTP/PTP), 0 not */
	int64_t clock_maxerror_us, clock_esterror_us;
	/* residual offset against the reference node (gt_job_align) */
	int have_residual;
	int64_t residual_ns;     /* this node's clock minus the reference's */
	int64_t spread_ns;       /* median absolute deviation of the matches */
	int64_t coll_dur_ns;     /* median duration of the collectives matched */
	uint32_t matches;        /* collectives matched */
	int64_t applied_ns;      /* shift applied to its events (gt_job_apply) */
	int reference;           /* 1 for the reference node */
	/* the stream's metadata "memory.allocated_lane" (gtrace/mem_lane.h: a
	 * live capture's allocator records, to make its lanes of); NULL when
	 * not said (yet) */
	const char *mem_lane;
};

/* a job merging into s (finished once, may hold nothing); NULL on ENOMEM */
struct gt_job *gt_job_new(struct gt_store *s);
void gt_job_free(struct gt_job *j);
/* a new node; its index, or negative errno */
int gt_job_add_node(struct gt_job *j, const char *label);
/* name node i HOST until its stream says its host (the caller knows it:
 * attach --hosts), instead of the short form of its label */
void gt_job_set_host(struct gt_job *j, int i, const char *host);
/* a node's name until its stream says its host: GTRACE_HOSTNAME=X in the
 * command's leading assignments, ssh's or srun's (-w) host, else the
 * command's first word without its directory ("echo hello" -> "echo") */
void gt_job_short_name(const char *cmd, char *out, size_t len);
/* bytes of node i: decoded, merged into the store (not finished), each
 * batch of new events passed to fn (may be NULL).  Events added, or a
 * negative errno: from fn (the job stops), or -EINVAL when the node's
 * stream is bad (the node ends with its message; the rest go on) */
long gt_job_feed(struct gt_job *j, int i, const void *buf, size_t n, gt_job_events_fn fn, void *ctx);
/* node i closed (EOF); its state becomes complete, cut (message), or error */
void gt_job_close(struct gt_job *j, int i);
size_t gt_job_count(const struct gt_job *j);
void gt_job_node(const struct gt_job *j, int i, struct gt_job_node_info *out);
/* sum of the nodes' loss counters into the store's drops */
void gt_job_drops(struct gt_job *j);
/* estimate each node's residual offset from the store (finished); the
 * number of nodes with an estimate */
int gt_job_align(struct gt_job *j);
/* shift every node with an estimate by minus its residual (now and for
 * events still to come); finishes the store again when it moved any;
 * the number of nodes moved, or -ENOMEM */
int gt_job_apply(struct gt_job *j);
/* one line on the clocks: "clock: node2 +3.012 ms vs node1 (212
 * collectives, +-0.004 ms; not applied)" or "" when nothing to say */
void gt_job_clock_line(const struct gt_job *j, char *buf, size_t len);
/* the nodes, clocks and residuals into the store's metadata (job.*, node.N.*) */
void gt_job_meta(struct gt_job *j);
/* load several .gtrace files as the nodes of one job into s (empty),
 * finished; 0 or negative errno with "FILE: problem" in err; a file cut
 * off is kept with a warning in warn ("" when none) */
int gt_job_load_files(const char *const *paths, size_t n, struct gt_store *s, int apply_clock,
		     char *warn, size_t warnlen, char *err, size_t errlen);

/* the name gtrace gives this host: $GTRACE_HOSTNAME, else gethostname */
void gt_job_hostname(char *buf, size_t len);
/* what a recording says of the host it was made on: node.host and the
 * clock's discipline (adjtimex) as metadata of s; 0 or -ENOMEM */
int gt_job_stamp(struct gt_store *s);

#endif
