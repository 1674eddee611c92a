/*
 * live_cmd.c - what the live commands share: starting a command with the
 * injection library, the headless loop (record, run without a terminal)
 * and the choice between the viewer and the headless loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "live_sess.h"
#include "ui.h"

static volatile sig_atomic_t live_stop;

static void on_stop(int sig)
{
	(void)sig;
	live_stop = 1;
}

static int spawn_status = -1;     /* read end of the last spawn's status pipe */

int live_spawn_report(char *buf, size_t len)
{
	if (spawn_status < 0 || len < 2)
		return 0;
	ssize_t n = read(spawn_status, buf, len - 1);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;           /* the first report */
	return buf[0] != 0;
}

int live_spawn(char **argv, pid_t *pid, char *err, size_t errlen)
{
	return live_spawn_out(argv, -1, pid, err, errlen);
}

int live_spawn_out(char **argv, int out_fd, pid_t *pid, char *err, size_t errlen)
{
	char lib[PATH_MAX];
	if (live_inject_path(lib, sizeof(lib)) < 0) {
		snprintf(err, errlen, "libgtrace-inject.so not found next to the gtrace binary");
		return -ENOENT;
	}
	int pfd[2], sfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -errno;
	}
	/* the library's status pipe (capture/ireport.h): why it cannot be traced */
	if (pipe2(sfd, O_CLOEXEC) < 0)
		sfd[0] = sfd[1] = -1;
	pid_t p = fork();
	if (p < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -errno;
	}
	if (p == 0) {
		setenv("CUDA_INJECTION64_PATH", lib, 1);
		setenv("NVTX_INJECTION64_PATH", lib, 1);
		setenv("GTRACE_AUTOSTART", "1", 0);
		if (sfd[1] >= 0 && fcntl(sfd[1], F_SETFD, 0) == 0) {
			char v[16];
			snprintf(v, sizeof(v), "%d", sfd[1]);
			setenv("GTRACE_STATUS_FD", v, 1);
		}
		if (out_fd >= 0) {
			int nul = open("/dev/null", O_RDONLY);
			if (nul > 0) {
				dup2(nul, 0);
				close(nul);
			}
			dup2(out_fd, 1);
			dup2(out_fd, 2);
		}
		execvp(argv[0], argv);
		int e = errno;
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pfd[1]);
	if (sfd[1] >= 0) {
		close(sfd[1]);
		fcntl(sfd[0], F_SETFL, O_NONBLOCK);
		if (spawn_status >= 0)
			close(spawn_status);
		spawn_status = sfd[0];
	}
	int e = 0;
	ssize_t n = read(pfd[0], &e, sizeof(e));
	close(pfd[0]);
	if (n == (ssize_t)sizeof(e)) {
		snprintf(err, errlen, "%s: %s", argv[0], strerror(e));
		return -e;
	}
	*pid = p;
	return 0;
}

int live_headless_interrupted(void)
{
	return live_stop != 0;
}

int live_headless(struct live_sess *ss, double duration_s, double every_s)
{
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	live_stop = 0;
	int64_t t0 = live_mono_ns(), last_print = t0;
	int rc = 0;
	while (!live_stop) {
		int r = live_sess_poll(ss);
		if (r < 0) {
			rc = r;
			break;
		}
		if (live_sess_done(ss))
			break;
		int64_t now = live_mono_ns();
		if (duration_s > 0 && now - t0 >= (int64_t)(duration_s * 1e9))
			break;
		if (every_s > 0 && now - last_print >= (int64_t)(every_s * 1e9)) {
			char line[512];
			live_sess_status(ss, line, sizeof(line));
			fprintf(stderr, "%s\n", line);
			last_print = now;
		}
		if (r == 0) {
			struct timespec ts = { 0, 20000000 };
			nanosleep(&ts, NULL);
		}
	}
	/* what the targets wrote before we stopped is kept, including what
	 * CUPTI still held: stop first (it flushes into the ring), then read */
	for (int k = 0; rc == 0 && k < ss->n; k++)
		live_stop_capture(&ss->conn[k]);
	/* each poll is bounded (one ring lap, 50 ms): poll until nothing more
	 * came in, at most 64 times (the targets stopped; a hostile one that
	 * keeps writing cannot hold us) */
	for (int k = 0; rc == 0 && k < 64; k++) {
		int r = live_sess_poll(ss);
		if (r < 0)
			rc = r;
		if (r <= 0)
			break;
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}

/* a started command that never loaded the capture library: say so */
static int untraced(const struct live_sess *ss, const char *name)
{
	if (!ss->root || !ss->root_exited || ss->joined || ss->n_refused)
		return 0;
	char why[512];
	if (live_spawn_report(why, sizeof(why))) {
		/* "PID REASON" from the library that could not listen */
		char *sp = strchr(why, ' ');
		fprintf(stderr, "gtrace: nothing traced: %s: process %.*s could not be traced: %s\n", name,
			sp ? (int)(sp - why) : 0, why, sp ? sp + 1 : why);
		return 1;
	}
	fprintf(stderr, "gtrace: nothing traced: %s exited without initializing CUDA "
			"(the capture library loads at cuInit)\n", name);
	return 1;
}

int live_view(struct live_sess *ss, const char *name)
{
	if (isatty(0) && isatty(1) && getenv("TERM")) {
		struct ui_source src;
		live_sess_ui(ss, &src, name);
		int rc = ui_run(&src);
		live_sess_close(ss);
		untraced(ss, name);
		return rc;
	}
	int rc = live_headless(ss, 0, 1.0);
	char line[512];
	live_sess_status(ss, line, sizeof(line));
	if (!untraced(ss, name))
		fprintf(stderr, "%s\n", line);
	live_sess_close(ss);
	return rc < 0 ? 1 : 0;
}
