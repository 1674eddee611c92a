/*
 * test_live.c - the live path end to end on a planted target
 * (capture_target): control socket, ring handover, records -> store,
 * detach / re-attach, kill -9 of the target, a dying viewer, another uid.
 * The expected counts are the target's construction (see target.c).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/ctl.h"
#include "../../live/live.h"

static pid_t spawned[16];
static int n_spawned;

/* kill what a test started, also when one of its assertions failed */
static void kill_targets(void)
{
	for (int i = 0; i < n_spawned; i++) {
		kill(spawned[i], SIGKILL);
		waitpid(spawned[i], NULL, 0);
	}
	n_spawned = 0;
}

TestSuite(live, .fini = kill_targets);

/* forget pid (already reaped) */
static void forget(pid_t pid)
{
	for (int i = 0; i < n_spawned; i++)
		if (spawned[i] == pid)
			spawned[i] = spawned[--n_spawned];
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	forget(pid);
}

static pid_t spawn_target(const char *n, const char *mode)
{
	char path[1024];
	const char *b = getenv("GTRACE_BUILD");
	snprintf(path, sizeof(path), "%s/tests/capture/capture_target", b ? b : ".");
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(pfd[1], 1);
		close(pfd[0]);
		execl(path, path, n, mode, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	if (n_spawned < 16)
		spawned[n_spawned++] = pid;
	char buf[64] = "";
	FILE *f = fdopen(pfd[0], "r");
	cr_assert(fgets(buf, sizeof(buf), f), "target did not start (%s)", path);
	fclose(f);
	cr_assert(!strncmp(buf, "ready", 5));
	return pid;
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* poll until the live connection is done or timeout; returns events */
static uint64_t drain(struct live *l, int timeout_ms)
{
	for (int t = 0; t < timeout_ms && !l->done; t += 2) {
		if (live_poll(l, 1 << 20, NULL, NULL) == 0)
			msleep(2);
	}
	return l->events;
}

Test(live, exact_events_from_planted_target, .timeout = 30)
{
	pid_t pid = spawn_target("20000", "once");
	struct gt_store *s = gt_store_new();
	struct live l;
	char err[256];
	cr_assert_eq(live_open(&l, pid, 0, s, 1 << 16, err, sizeof(err)), 0, "%s", err);
	drain(&l, 20000);
	cr_assert(l.done, "capture did not end: %s", live_state(&l));
	cr_assert_eq(l.events, 20000);
	cr_assert_eq(l.bad, 0);
	struct gt_drops d;
	live_drops(&l, &d);
	cr_assert_eq(d.ring_overflow, 0);
	cr_assert_str_eq(live_state(&l), "ended");
	cr_assert_str_eq(l.reason, "test target done");
	live_close(&l);
	cr_assert_eq(gt_store_finish(s), 0);
	cr_assert_eq(gt_store_event_count(s), 20000);
	cr_assert_eq(gt_store_lane_count(s), 3);
	/* per name: 2000 each of k0..k9 */
	size_t per[10] = { 0 };
	for (uint32_t li = 0; li < gt_store_lane_count(s); li++) {
		const struct gt_lane *ln = gt_store_lane_at(s, li);
		for (size_t i = 0; i < ln->n; i++) {
			const char *nm = gt_store_str(s, ln->ev[i].name);
			cr_assert_eq(nm[0], 'k');
			per[nm[1] - '0']++;
			cr_assert_eq(ln->ev[i].start_ns / 1000 % 3, (int64_t)ln->key.id - 7);
		}
	}
	for (int i = 0; i < 10; i++)
		cr_assert_eq(per[i], 2000, "k%d: %zu", i, per[i]);
	int st;
	waitpid(pid, &st, 0);
	forget(pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	gt_store_free(s);
}

Test(live, status_detach_reattach, .timeout = 30)
{
	pid_t pid = spawn_target("0", "forever");
	char err[256], reply[GT_CTL_LINE_MAX], v[64];
	int fd = gt_ctl_connect(pid, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	cr_assert_eq(gt_ctl_request(fd, "status", reply, sizeof(reply), NULL, 2000), 0);
	cr_assert_eq(gt_ctl_status_get(reply, "state", v, sizeof(v)), 0);
	cr_assert_str_eq(v, "dormant");
	cr_assert_eq(gt_ctl_status_get(reply, "gpus", v, sizeof(v)), 0);
	cr_assert_str_eq(v, "1");
	cr_assert_eq(gt_ctl_request(fd, "bogus", reply, sizeof(reply), NULL, 2000), -EREMOTEIO);
	close(fd);

	for (int round = 0; round < 3; round++) {
		struct gt_store *s = gt_store_new();
		struct live l;
		cr_assert_eq(live_open(&l, pid, 0, s, 1 << 14, err, sizeof(err)), 0, "%s", err);
		for (int t = 0; t < 5000 && l.events < 5000; t += 2) {
			live_poll(&l, 1 << 20, NULL, NULL);
			msleep(2);
		}
		cr_assert_geq(l.events, 5000, "round %d: %llu events", round,
			      (unsigned long long)l.events);
		cr_assert_eq(l.bad, 0);
		cr_assert_str_eq(live_state(&l), "capturing");
		live_close(&l);
		gt_store_free(s);
		cr_assert_eq(kill(pid, 0), 0, "target died after detach");
	}
	reap(pid);
}

Test(live, target_killed_mid_capture, .timeout = 30)
{
	pid_t pid = spawn_target("0", "forever");
	struct gt_store *s = gt_store_new();
	struct live l;
	char err[256];
	cr_assert_eq(live_open(&l, pid, 0, s, 1 << 14, err, sizeof(err)), 0, "%s", err);
	for (int t = 0; t < 5000 && l.events < 2000; t += 2) {
		live_poll(&l, 1 << 20, NULL, NULL);
		msleep(2);
	}
	reap(pid);
	uint64_t before = l.events;
	drain(&l, 5000);
	cr_assert(l.done);
	cr_assert(l.gone);
	cr_assert_str_eq(live_state(&l), "target-exited");
	cr_assert_geq(l.events, before);
	cr_assert_eq(gt_store_finish(s), 0);
	cr_assert_eq(gt_store_event_count(s), l.events);
	live_close(&l);
	gt_store_free(s);
}

Test(live, viewer_killed_target_keeps_running, .timeout = 30)
{
	pid_t pid = spawn_target("0", "forever");
	pid_t v = fork();
	if (v == 0) {
		struct gt_store *s = gt_store_new();
		struct live l;
		char err[256];
		if (live_open(&l, pid, 0, s, 1 << 14, err, sizeof(err)) < 0)
			_exit(3);
		for (;;) {
			live_poll(&l, 1 << 20, NULL, NULL);
			msleep(1);
		}
	}
	msleep(300);
	kill(v, SIGKILL);
	int st;
	waitpid(v, &st, 0);
	cr_assert(WIFSIGNALED(st), "viewer failed to attach (exit %d)", WEXITSTATUS(st));
	msleep(100);
	cr_assert_eq(kill(pid, 0), 0, "target died with its viewer");
	/* the next viewer attaches and receives */
	struct gt_store *s = gt_store_new();
	struct live l;
	char err[256];
	cr_assert_eq(live_open(&l, pid, 0, s, 1 << 14, err, sizeof(err)), 0, "%s", err);
	for (int t = 0; t < 5000 && l.events < 1000; t += 2) {
		live_poll(&l, 1 << 20, NULL, NULL);
		msleep(2);
	}
	cr_assert_geq(l.events, 1000);
	live_close(&l);
	gt_store_free(s);
	reap(pid);
}

Test(live, other_user_refused, .timeout = 30)
{
	if (getuid() != 0)
		cr_skip_test("needs root to switch to another uid");
	struct passwd *pw = getpwnam("nobody");
	if (!pw)
		cr_skip_test("no user 'nobody'");
	pid_t pid = spawn_target("0", "forever");
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	pid_t c = fork();
	if (c == 0) {
		close(pfd[0]);
		if (setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0)
			_exit(4);
		char err[256], reply[GT_CTL_LINE_MAX] = "";
		int fd = gt_ctl_connect(pid, err, sizeof(err));
		if (fd < 0)
			_exit(5);
		int rc = gt_ctl_request(fd, "status", reply, sizeof(reply), NULL, 3000);
		dprintf(pfd[1], "%d %s", rc, reply);
		_exit(0);
	}
	close(pfd[1]);
	char buf[512] = "";
	ssize_t n = read(pfd[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	int st;
	waitpid(c, &st, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "client exit %d", WEXITSTATUS(st));
	cr_assert(strstr(buf, "permission denied"), "reply: %s", buf);
	cr_assert_eq(atoi(buf), -EREMOTEIO);
	/* the owner is still served */
	char err[256], reply[GT_CTL_LINE_MAX];
	int fd = gt_ctl_connect(pid, err, sizeof(err));
	cr_assert_geq(fd, 0);
	cr_assert_eq(gt_ctl_request(fd, "status", reply, sizeof(reply), NULL, 2000), 0);
	close(fd);
	reap(pid);
}

Test(live, list_finds_listening_target, .timeout = 30)
{
	pid_t pid = spawn_target("0", "forever");
	pid_t pids[256];
	size_t n = live_list_pids(pids, 256);
	int found = 0;
	for (size_t i = 0; i < n && i < 256; i++)
		found |= pids[i] == pid;
	cr_assert(found, "pid %d not among %zu listed", (int)pid, n);
	cr_assert(live_is_descendant(pid, getpid()));
	cr_assert(!live_is_descendant(getpid(), pid));
	reap(pid);
}

Test(live, source_that_cannot_start_says_why, .timeout = 30)
{
	pid_t pid = spawn_target("0", "busy");
	struct gt_store *s = gt_store_new();
	struct live l;
	char err[256];
	cr_assert_lt(live_open(&l, pid, 0, s, 1 << 14, err, sizeof(err)), 0);
	cr_assert(strstr(err, "in use by another profiler (test holder)") ||
		  strstr(err, "in use by another profiler in this process (test holder)"), "%s", err);
	/* the process is untouched and still answers */
	cr_assert_eq(kill(pid, 0), 0);
	char reply[GT_CTL_LINE_MAX], v[32];
	int fd = gt_ctl_connect(pid, err, sizeof(err));
	cr_assert_geq(fd, 0);
	cr_assert_eq(gt_ctl_request(fd, "status", reply, sizeof(reply), NULL, 2000), 0);
	cr_assert_eq(gt_ctl_status_get(reply, "state", v, sizeof(v)), 0);
	cr_assert_str_eq(v, "dormant");
	close(fd);
	gt_store_free(s);
	reap(pid);
}

/* a second viewer while one is attached is refused at once with one clear
 * line (it used to sit in the listen backlog until its 10 s start timeout),
 * and the first viewer keeps receiving */
Test(live, second_viewer_refused_busy, .timeout = 30)
{
	pid_t pid = spawn_target("0", "forever");
	struct gt_store *s = gt_store_new(), *s2 = gt_store_new();
	struct live l, l2;
	char err[256];
	cr_assert_eq(live_open(&l, pid, 0, s, 1 << 14, err, sizeof(err)), 0, "%s", err);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_lt(live_open(&l2, pid, 1, s2, 1 << 14, err, sizeof(err)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert(strstr(err, "busy: another gtrace viewer or recorder"), "%s", err);
	cr_assert_lt(t1.tv_sec - t0.tv_sec, 2, "refusal took %ld s", (long)(t1.tv_sec - t0.tv_sec));
	for (int t = 0; t < 5000 && l.events < 1000; t += 2) {
		live_poll(&l, 1 << 20, NULL, NULL);
		msleep(2);
	}
	cr_assert_geq(l.events, 1000);
	live_close(&l);
	/* after the first detaches, the next one is served */
	cr_assert_eq(live_open(&l2, pid, 1, s2, 1 << 14, err, sizeof(err)), 0, "%s", err);
	live_close(&l2);
	gt_store_free(s);
	gt_store_free(s2);
	reap(pid);
}

/* records the source still holds when the viewer stops (CUPTI's buffers)
 * reach the viewer: stop makes the source deliver them into the ring
 * before it is retired, and the viewer reads them after the reply */
Test(live, stop_delivers_held_records, .timeout = 30)
{
	pid_t pid = spawn_target("3000", "held");
	struct gt_store *s = gt_store_new();
	struct live l;
	char err[256];
	cr_assert_eq(live_open(&l, pid, 0, s, 1 << 14, err, sizeof(err)), 0, "%s", err);
	for (int t = 0; t < 5000 && l.events < 2500; t += 2) {
		if (live_poll(&l, 1 << 20, NULL, NULL) == 0)
			msleep(2);
	}
	msleep(50);
	live_poll(&l, 1 << 20, NULL, NULL);
	cr_assert_eq(l.events, 2500, "before stop: %llu", (unsigned long long)l.events);
	live_stop_capture(&l);
	live_poll(&l, 1 << 20, NULL, NULL);
	cr_assert_eq(l.events, 3000, "after stop: %llu", (unsigned long long)l.events);
	live_close(&l);
	gt_store_free(s);
	int st;
	waitpid(pid, &st, 0);
	forget(pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "target exit %d", WEXITSTATUS(st));
}

/* a pid that does not exist is named as such, not as "no library" */
Test(live, connect_to_a_dead_pid_says_no_such_process)
{
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	waitpid(c, NULL, 0);
	char err[256] = "";
	cr_assert_lt(gt_ctl_connect(c, err, sizeof(err)), 0);
	char want[64];
	snprintf(want, sizeof(want), "process %d: no such process", (int)c);
	cr_assert_str_eq(err, want);
	/* a live process without the library */
	cr_assert_lt(gt_ctl_connect(getpid(), err, sizeof(err)), 0);
	cr_assert(strstr(err, "no gtrace capture library listening"), "%s", err);
}
