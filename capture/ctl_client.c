/*
 * ctl_client.c - the viewer side of gtrace/ctl.h: connect to a traced
 * process, send a command line, read the one-line reply and any memfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/ctl.h"

/* is the server on fd the process pid itself, run by pid's owner?  Any
 * local user can bind an abstract name, so the name proves nothing: the
 * kernel's SO_PEERCRED (taken when the server called listen) does.
 * 0, or -EPERM with err */
static int peer_is_target(int fd, pid_t pid, char *err, size_t errlen)
{
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0) {
		snprintf(err, errlen, "process %d: cannot check who serves @%s%d: %s", (int)pid,
			 GT_CTL_SOCK_PREFIX, (int)pid, strerror(errno));
		return -EPERM;
	}
	if (cr.pid != pid) {
		snprintf(err, errlen, "process %d: refused: @%s%d is served by process %d (uid %u), "
			 "not by process %d (a squatted name)", (int)pid, GT_CTL_SOCK_PREFIX, (int)pid,
			 (int)cr.pid, (unsigned)cr.uid, (int)pid);
		return -EPERM;
	}
	char proc[64];
	struct stat st;
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (stat(proc, &st) < 0) {
		snprintf(err, errlen, "process %d: cannot check its owner: %s", (int)pid,
			 strerror(errno));
		return -EPERM;
	}
	if (cr.uid != st.st_uid) {
		snprintf(err, errlen, "process %d: refused: its control socket was opened by uid %u "
			 "but the process belongs to uid %u", (int)pid, (unsigned)cr.uid,
			 (unsigned)st.st_uid);
		return -EPERM;
	}
	return 0;
}

/* connect without blocking for ever: a server whose listen backlog is
 * full (one that never accepts) makes a blocking connect wait without end.
 * 0, or -1 with errno (EAGAIN: still full after wait_ms) */
static int connect_bounded(int fd, const struct sockaddr_un *a, size_t alen, int wait_ms)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -1;
	int rc;
	for (int waited = 0;; waited += 10) {
		rc = connect(fd, (const struct sockaddr *)a, (socklen_t)alen);
		if (rc == 0 || errno != EAGAIN || waited >= wait_ms)
			break;
		struct timespec ts = { 0, 10 * 1000000L };
		nanosleep(&ts, NULL);
	}
	int e = errno;
	if (fcntl(fd, F_SETFL, fl) < 0 && rc == 0)
		return -1;
	errno = e;
	return rc;
}

/* connect to the name in a, waiting wait_ms at most on a full backlog,
 * and check that pid serves it; fd or negative errno with err */
static int try_connect(pid_t pid, const struct sockaddr_un *a, size_t alen, int wait_ms,
		       char *err, size_t errlen)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	/* a target whose backlog is full (it serves another viewer and does
	 * not accept) must not hang us: connect_bounded gives up */
	if (connect_bounded(fd, a, alen, wait_ms) < 0) {
		int e = errno;
		if (e == EAGAIN) {
			snprintf(err, errlen, "process %d: control socket not accepting connections "
				 "(gave up after %d ms)", (int)pid, wait_ms);
			close(fd);
			return -ETIMEDOUT;
		}
		if ((e == ECONNREFUSED || e == ENOENT) && kill(pid, 0) < 0 && errno == ESRCH)
			snprintf(err, errlen, "process %d: no such process", (int)pid);
		else if (e == ECONNREFUSED || e == ENOENT)
			snprintf(err, errlen, "process %d: no gtrace capture library listening "
				 "(not started with 'gtrace run', or not using CUDA yet)", (int)pid);
		else
			snprintf(err, errlen, "process %d: connect: %s", (int)pid, strerror(e));
		close(fd);
		return -e;
	}
	int rc = peer_is_target(fd, pid, err, errlen);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int gt_ctl_connect(pid_t pid, char *err, size_t errlen)
{
	struct sockaddr_un a;
	size_t alen = gt_ctl_addr(&a, pid);
	int fd = try_connect(pid, &a, alen, GT_CTL_CONNECT_MS, err, errlen);
	if (fd >= 0 || fd == -ESRCH)
		return fd;
	/* the name may be squatted and pid listening on its fallback name;
	 * squatters of fallback names cost 100 ms each at most */
	char (*names)[GT_CTL_NAME_MAX] = malloc(64 * sizeof(*names));
	size_t n = names ? gt_ctl_alt_names(pid, names, 64) : 0;
	for (size_t i = 0; i < n; i++) {
		char e2[256];
		alen = gt_ctl_addr_name(&a, names[i]);
		int f2 = try_connect(pid, &a, alen, 100, e2, sizeof(e2));
		if (f2 >= 0) {
			free(names);
			return f2;
		}
	}
	free(names);
	return fd;
}

/* read one line (and a passed fd) with a timeout; 0 or negative errno */
static int read_reply(int fd, char *reply, size_t replylen, int *fd_out, int timeout_ms)
{
	size_t have = 0;
	if (fd_out)
		*fd_out = -1;
	for (;;) {
		struct pollfd pf = { fd, POLLIN, 0 };
		int pr = poll(&pf, 1, timeout_ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			return pr == 0 ? -ETIMEDOUT : -errno;
		char buf[GT_CTL_LINE_MAX];
		struct iovec iov = { buf, sizeof(buf) };
		union {
			char b[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} cm;
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cm.b, .msg_controllen = sizeof(cm.b) };
		/* peek first so that only this reply's bytes are consumed */
		ssize_t n = recvmsg(fd, &mh, MSG_PEEK | MSG_CMSG_CLOEXEC);
		if (n <= 0)
			return n == 0 ? -EPIPE : -errno;
		char *nl = memchr(buf, '\n', (size_t)n);
		size_t take = nl ? (size_t)(nl - buf) + 1 : (size_t)n;
		iov.iov_len = take;
		mh.msg_controllen = sizeof(cm.b);
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
		if (n <= 0)
			return n == 0 ? -EPIPE : -errno;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
				int pfd;
				memcpy(&pfd, CMSG_DATA(c), sizeof(int));
				if (fd_out && *fd_out < 0)
					*fd_out = pfd;
				else
					close(pfd);
			}
		}
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				reply[have < replylen ? have : replylen - 1] = 0;
				return 0;
			}
			if (have + 1 < replylen)
				reply[have] = buf[i];
			have++;
		}
	}
}

int gt_ctl_request(int fd, const char *cmd, char *reply, size_t replylen, int *fd_out,
		int timeout_ms)
{
	char line[GT_CTL_LINE_MAX];
	int n = snprintf(line, sizeof(line), "%s\n", cmd);
	if (n >= (int)sizeof(line))
		return -EINVAL;
	int sent = send(fd, line, (size_t)n, MSG_NOSIGNAL) == n;
	/* a refused peer finds the target's "err" line waiting even when
	 * the send itself failed */
	int rc = read_reply(fd, reply, replylen, fd_out, sent ? timeout_ms : 200);
	if (!sent && rc < 0)
		return -EPIPE;
	if (rc < 0)
		return rc;
	if (!strncmp(reply, "ok", 2))
		return 0;
	if (!strncmp(reply, "err ", 4))
		memmove(reply, reply + 4, strlen(reply + 4) + 1);
	if (fd_out && *fd_out >= 0) {
		close(*fd_out);
		*fd_out = -1;
	}
	return -EREMOTEIO;
}

int gt_ctl_status_get(const char *reply, const char *key, char *out, size_t outlen)
{
	size_t kl = strlen(key);
	for (const char *p = reply; (p = strstr(p, key)); p += kl) {
		if ((p != reply && p[-1] != ' ') || p[kl] != '=')
			continue;
		const char *v = p + kl + 1;
		size_t n = !strcmp(key, "reason") ? strlen(v) : strcspn(v, " ");
		if (outlen == 0)
			return 0;
		if (n >= outlen)
			n = outlen - 1;
		memcpy(out, v, n);
		out[n] = 0;
		return 0;
	}
	return -ENOENT;
}
