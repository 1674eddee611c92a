/*
 * ctl.c - the control socket of gtrace/ctl.h, target side: a thread that
 * accepts one viewer at a time on @gtrace-<pid>, checks its credentials,
 * answers line commands and passes the ring memfd with SCM_RIGHTS.  A
 * viewer that closes (or dies) is a detach.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "gtrace/ctl.h"

static struct {
	struct gt_ctl_ops ops;
	int lfd;
	int wake[2];         /* pipe to end the thread */
	pthread_t thr;
	int running;
} srv = { .lfd = -1, .wake = { -1, -1 } };

size_t gt_ctl_addr(void *p, pid_t pid)
{
	struct sockaddr_un *a = p;
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	int n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, GT_CTL_SOCK_PREFIX "%d", (int)pid);
	return offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n;
}

static int send_line(int fd, const char *line, int pass_fd)
{
	char buf[GT_CTL_LINE_MAX + 2];
	int n = snprintf(buf, sizeof(buf), "%s\n", line);
	if (n > (int)sizeof(buf) - 1)
		n = (int)sizeof(buf) - 1;
	struct iovec iov = { buf, (size_t)n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cm;
	if (pass_fd >= 0) {
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.b;
		mh.msg_controllen = sizeof(cm.b);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
	}
	return sendmsg(fd, &mh, MSG_NOSIGNAL) == n ? 0 : -1;
}

/* serve one command line; returns 1 to close the connection */
static int serve_cmd(int cfd, char *line)
{
	char err[256] = "", reply[GT_CTL_LINE_MAX];
	if (!strncmp(line, "start", 5)) {
		unsigned long recs = strtoul(line + 5, NULL, 10);
		if (recs == 0)
			recs = GT_CTL_RING_DEFAULT_RECORDS;
		if (recs > (1ul << 26))
			recs = 1ul << 26;
		int rc = srv.ops.start(srv.ops.ctx, (int)recs, err, sizeof(err));
		if (rc < 0) {
			snprintf(reply, sizeof(reply), "err %s", err[0] ? err : strerror(-rc));
			send_line(cfd, reply, -1);
			return 0;
		}
		send_line(cfd, "ok ring", rc);
		close(rc);
		return 0;
	}
	if (!strcmp(line, "stop")) {
		srv.ops.stop(srv.ops.ctx);
		send_line(cfd, "ok stopped", -1);
		return 0;
	}
	if (!strcmp(line, "flush")) {
		if (srv.ops.flush)
			srv.ops.flush(srv.ops.ctx);
		send_line(cfd, "ok flushed", -1);
		return 0;
	}
	if (!strcmp(line, "status")) {
		int n = snprintf(reply, sizeof(reply), "ok pid=%d", (int)getpid());
		srv.ops.status(srv.ops.ctx, reply + n, sizeof(reply) - (size_t)n);
		send_line(cfd, reply, -1);
		return 0;
	}
	if (!strcmp(line, "detach")) {
		srv.ops.stop(srv.ops.ctx);
		send_line(cfd, "ok detached", -1);
		return 1;
	}
	snprintf(reply, sizeof(reply), "err unknown command '%.60s'", line);
	send_line(cfd, reply, -1);
	return 0;
}

/* is the peer on cfd allowed (same uid or root)?  *peer gets its pid */
static int peer_allowed(int cfd, char *msg, size_t len, pid_t *peer)
{
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0) {
		snprintf(msg, len, "err cannot check credentials");
		return 0;
	}
	if (peer)
		*peer = cr.pid;
	if (cr.uid == getuid() || cr.uid == 0)
		return 1;
	snprintf(msg, len, "err permission denied: uid %u may not attach to process %d of uid %u",
		 (unsigned)cr.uid, (int)getpid(), (unsigned)getuid());
	return 0;
}

/* a second viewer while one is served: refuse it at once with one line
 * (rather than leaving it in the listen backlog until it times out) */
static void refuse_busy(pid_t viewer)
{
	int cfd = accept4(srv.lfd, NULL, NULL, SOCK_CLOEXEC);
	if (cfd < 0)
		return;
	char msg[200];
	if (peer_allowed(cfd, msg, sizeof(msg), NULL))
		snprintf(msg, sizeof(msg), "err busy: another gtrace viewer or recorder (pid %d) "
			 "is attached; one at a time", (int)viewer);
	send_line(cfd, msg, -1);
	close(cfd);
}

static void serve_conn(int cfd, pid_t viewer)
{
	char buf[GT_CTL_LINE_MAX];
	size_t have = 0;
	int started = 0;
	for (;;) {
		struct pollfd pf[3] = { { cfd, POLLIN, 0 }, { srv.wake[0], POLLIN, 0 },
					{ srv.lfd, POLLIN, 0 } };
		if (poll(pf, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		if (!pf[0].revents) {
			/* only while the viewer's end is still open: a viewer
			 * that closed and reconnects is served next */
			if (pf[2].revents & POLLIN)
				refuse_busy(viewer);
			continue;
		}
		ssize_t n = read(cfd, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			break;                  /* viewer gone: detach */
		have += (size_t)n;
		buf[have] = 0;
		char *nl;
		int quit = 0;
		while (!quit && (nl = memchr(buf, '\n', have))) {
			*nl = 0;
			if (!strncmp(buf, "start", 5))
				started = 1;
			quit = serve_cmd(cfd, buf);
			size_t used = (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have - used);
			have -= used;
			buf[have] = 0;
		}
		if (quit)
			return;
		if (have == sizeof(buf) - 1)
			break;                  /* line too long: drop the viewer */
	}
	if (started)
		srv.ops.stop(srv.ops.ctx);
}

static void *serve_thread(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd pf[2] = { { srv.lfd, POLLIN, 0 }, { srv.wake[0], POLLIN, 0 } };
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		int cfd = accept4(srv.lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0)
			continue;
		char msg[160];
		pid_t viewer = 0;
		if (peer_allowed(cfd, msg, sizeof(msg), &viewer))
			serve_conn(cfd, viewer);
		else
			send_line(cfd, msg, -1);
		close(cfd);
	}
	return NULL;
}

/* a forked child must not serve its parent's socket */
static void atfork_child(void)
{
	if (srv.lfd >= 0)
		close(srv.lfd);
	srv.lfd = -1;
	srv.running = 0;
}

int gt_ctl_serve_start(const struct gt_ctl_ops *ops, char *err, size_t errlen)
{
	static int atfork_done;
	if (srv.running) {
		snprintf(err, errlen, "control channel already running");
		return -EBUSY;
	}
	srv.ops = *ops;
	struct sockaddr_un a;
	size_t alen = gt_ctl_addr(&a, getpid());
	srv.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (srv.lfd < 0)
		goto err;
	int brc = bind(srv.lfd, (struct sockaddr *)&a, (socklen_t)alen);
	if (brc < 0 && errno == EADDRINUSE) {
		/* another process holds our name: a random one nobody can
		 * have taken first (clients find it and check our pid) */
		char name[GT_CTL_NAME_MAX];
		gt_ctl_alt_name(getpid(), name, sizeof(name));
		alen = gt_ctl_addr_name(&a, name);
		brc = bind(srv.lfd, (struct sockaddr *)&a, (socklen_t)alen);
	}
	if (brc < 0 || listen(srv.lfd, 4) < 0)
		goto err;
	if (pipe2(srv.wake, O_CLOEXEC) < 0)
		goto err;
	int rc = pthread_create(&srv.thr, NULL, serve_thread, NULL);
	if (rc) {
		errno = rc;
		goto err;
	}
	if (!atfork_done) {
		pthread_atfork(NULL, NULL, atfork_child);
		atfork_done = 1;
	}
	srv.running = 1;
	return 0;
err:;
	int e = errno;
	snprintf(err, errlen, "control socket @%s%d: %s", GT_CTL_SOCK_PREFIX, (int)getpid(), strerror(e));
	if (srv.lfd >= 0)
		close(srv.lfd);
	srv.lfd = -1;
	return -e;
}

void gt_ctl_serve_stop(void)
{
	if (!srv.running)
		return;
	if (write(srv.wake[1], "x", 1) < 0) {
		/* the thread is then left to die with the process */
	}
	pthread_join(srv.thr, NULL);
	close(srv.lfd);
	close(srv.wake[0]);
	close(srv.wake[1]);
	srv.lfd = srv.wake[0] = srv.wake[1] = -1;
	srv.running = 0;
}
