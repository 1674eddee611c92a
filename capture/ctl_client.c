/*
 * ctl_client.c - the viewer side of gtrace/ctl.h: connect to a traced
 * process, send a command line, read the one-line reply and any memfd.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include "gtrace/ctl.h"

int ctl_connect(pid_t pid, char *err, size_t errlen)
{
	struct sockaddr_un a;
	size_t alen = ctl_addr(&a, pid);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	/* a target whose backlog is full (it serves another viewer and does
	 * not accept) must not hang us: connect gives up after 2 s */
	struct timeval tmo = { 2, 0 };
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tmo, sizeof(tmo));
	if (connect(fd, (struct sockaddr *)&a, (socklen_t)alen) < 0) {
		int e = errno;
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
		char buf[CTL_LINE_MAX];
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

int ctl_request(int fd, const char *cmd, char *reply, size_t replylen, int *fd_out,
		int timeout_ms)
{
	char line[CTL_LINE_MAX];
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

int ctl_status_get(const char *reply, const char *key, char *out, size_t outlen)
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
