/*
 * gtrace/ctl.h - the control channel between a traced process and a viewer.
 *
 * Each traced process listens on the abstract Unix socket "@gtrace-<pid>"
 * (a control thread of libgtrace-inject.so or of `gtrace sim --live`), or
 * on a random fallback name when that one is squatted (see below).
 * Only a peer with the same uid (or root) is served; others get one "err"
 * line and are closed.  One viewer at a time; viewers in turn.
 *
 * Protocol: the viewer sends one command per line, the target answers one
 * line, "ok ..." or "err MESSAGE".
 *   start [RECORDS]  begin capture into a fresh ring; the reply carries the
 *                    ring's memfd (SCM_RIGHTS)
 *   stop             stop capture (ring state STOPPED), stay connected
 *   flush            ask the source to deliver what it holds
 *   status           "ok key=value ..." (see gt_ctl_status_get), reason last
 *   detach           stop and close; a closed connection means the same
 * The trainer is never affected by what the viewer does or fails to do.
 */
#ifndef GTRACE_CTL_H
#define GTRACE_CTL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GT_CTL_SOCK_PREFIX "gtrace-"
#define GT_CTL_LINE_MAX 512
#define GT_CTL_RING_DEFAULT_RECORDS (1u << 20)   /* 64 MiB */
#define GT_CTL_CONNECT_MS 2000                    /* a connect waits this long at most */

/* fill addr (a struct sockaddr_un) for pid; returns the address length */
size_t gt_ctl_addr(void *sockaddr_un, pid_t pid);

/* When "@gtrace-<pid>" is taken by another process (a squatter: any local
 * user can bind an abstract name), the target listens on
 * "@gtrace-<pid>-<16 random hex digits>" instead, a name nobody can take
 * first; clients find it in /proc/net/unix and check its SO_PEERCRED. */
#define GT_CTL_NAME_MAX 64
/* fill addr for an abstract name (without the '@'); the address length */
size_t gt_ctl_addr_name(void *sockaddr_un, const char *name);
/* a fresh random fallback name for pid into name */
void gt_ctl_alt_name(pid_t pid, char *name, size_t len);
/* listening fallback names of pid (without '@'), up to max; the count */
size_t gt_ctl_alt_names(pid_t pid, char (*names)[GT_CTL_NAME_MAX], size_t max);

/* ---- viewer side ---- */

/* connect to pid's control socket; fd or negative errno with err.  The
 * server must be pid itself (SO_PEERCRED pid) and run as pid's owner
 * (uid of /proc/PID): -EPERM otherwise (a name squatted by another
 * process or user); -ETIMEDOUT when its backlog stays full GT_CTL_CONNECT_MS */
int gt_ctl_connect(pid_t pid, char *err, size_t errlen);
/* send cmd (no newline) and read the one-line reply into reply (newline
 * stripped); *fd_out (may be NULL) gets a passed descriptor or -1.
 * 0 when the reply starts with "ok", -EREMOTEIO for "err" (reply holds
 * the message), other negative errno on I/O failure (-EPIPE: target gone) */
int gt_ctl_request(int fd, const char *cmd, char *reply, size_t replylen, int *fd_out,
		int timeout_ms);
/* value of key in a status reply ("key=value ..." ; reason= takes the rest
 * of the line) into out; 0 or -ENOENT */
int gt_ctl_status_get(const char *reply, const char *key, char *out, size_t outlen);

/* ---- target side ---- */

/* what the serving process plugs in: a source of events */
struct gt_ctl_ops {
	void *ctx;
	/* begin capturing into a fresh ring of `records` records; returns
	 * the ring's memfd (>= 0, the caller closes it after passing it) or
	 * negative errno with a one-line message in err */
	int (*start)(void *ctx, int records, char *err, size_t errlen);
	void (*stop)(void *ctx);
	void (*flush)(void *ctx);
	/* append " key=value" pairs describing the source to buf */
	void (*status)(void *ctx, char *buf, size_t len);
};

/* start the control thread listening on @gtrace-<getpid()>; 0 or negative
 * errno with err.  ops is copied. */
int gt_ctl_serve_start(const struct gt_ctl_ops *ops, char *err, size_t errlen);
/* stop serving (closes the socket, joins the thread) */
void gt_ctl_serve_stop(void);

#endif
