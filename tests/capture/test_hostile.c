/*
 * test_hostile.c - the live channel against a hostile peer: a small server
 * speaking the control protocol (ctl.c's own server in a forked child, or
 * a raw socket for a squatter) whose ring header, records, ids and memfd
 * are attacked, and squatters (same uid, and `nobody` when run as root)
 * binding another process's @gtrace-<pid>.  Each test is an attack that
 * worked before the fix; the expected counts are what the test planted.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/ctl.h"
#include "gtrace/gtfile.h"
#include "gtrace/ring.h"
#include "../../live/live.h"

static pid_t kids[8];
static int n_kids;

static void kill_kids(void)
{
	for (int i = 0; i < n_kids; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	n_kids = 0;
}

TestSuite(hostile, .fini = kill_kids);

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* ---- the hostile target: ctl.c's server handing over an attacked ring ---- */

enum attack {
	ATK_BOGUS_HEAD,     /* head far beyond tail + capacity, only definitions before it */
	ATK_HEAD_BEHIND,    /* head rolled back behind tail */
	ATK_UNSEALED,       /* a plain memfd the peer can still shrink */
	ATK_SPARSE_IDS,     /* definitions with ids near 2^28 */
	ATK_BAD_EVENTS,     /* kind 255, negative dur, start + dur overflowing */
};

static enum attack atk;

static void push_str(struct gt_ring *r, uint32_t id, const char *s)
{
	cr_assert_eq(gt_ring_push_str(r, id, s, strlen(s)), 0);
}

static void push_lane(struct gt_ring *r, uint32_t id, uint32_t name)
{
	struct gt_ring_rec m;
	memset(&m, 0, sizeof(m));
	m.type = GT_RING_REC_LANE;
	m.u.lane.id = id;
	m.u.lane.name = name;
	m.u.lane.type = 1;     /* GT_LANE_GPU */
	m.u.lane.rank = 0;
	m.u.lane.tid = 7;
	cr_assert_eq(gt_ring_push_rec(r, &m), 0);
}

static struct gt_event ev(uint8_t kind, int64_t start, int64_t dur, uint32_t name, uint32_t lane)
{
	struct gt_event e;
	memset(&e, 0, sizeof(e));
	e.kind = kind;
	e.start_ns = start;
	e.dur_ns = dur;
	e.name = name;
	e.lane = lane;
	return e;
}

/* the ring of each attack; returns its fd */
static int attack_start(void *ctx, int records, char *err, size_t errlen)
{
	(void)ctx, (void)records, (void)err, (void)errlen;
	struct gt_ring r;
	int fd;
	if (atk == ATK_UNSEALED) {
		fd = memfd_create("not-a-gtrace-ring", MFD_CLOEXEC);
		ftruncate(fd, (off_t)gt_ring_bytes(64));
		void *mem = mmap(NULL, gt_ring_bytes(64), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		gt_ring_init_mem(&r, mem, 64, getpid());
		push_str(&r, 1, "k");
		return fd;
	}
	fd = gt_ring_create(&r, 64, getpid());
	if (atk == ATK_BOGUS_HEAD || atk == ATK_HEAD_BEHIND) {
		for (uint32_t i = 1; i <= 40; i++)
			push_str(&r, i, "definition");
		atomic_store(&r.hdr->head, atk == ATK_BOGUS_HEAD ? (1ull << 63) + 40 : (uint64_t)-5);
	} else if (atk == ATK_SPARSE_IDS) {
		uint32_t big = (1u << 28) - 1;
		push_str(&r, big, "sparse_kernel");
		push_str(&r, big - 1, "allreduce");
		push_lane(&r, big - 2, 0);
		struct gt_ring_rec m;
		memset(&m, 0, sizeof(m));
		m.type = GT_RING_REC_KCONF;
		m.u.kconf.id = big - 3;
		m.u.kconf.k.grid[0] = 3;
		cr_assert_eq(gt_ring_push_rec(&r, &m), 0);
		memset(&m, 0, sizeof(m));
		m.type = GT_RING_REC_NCCL;
		m.u.nccl.id = big - 4;
		m.u.nccl.n.collective = big - 1;
		cr_assert_eq(gt_ring_push_rec(&r, &m), 0);
		struct gt_event e = ev(1, 1000, 10, big, big - 2);
		e.arg = (uint64_t)(big - 3) | ((uint64_t)(big - 4) << 32);
		cr_assert_eq(gt_ring_push_event(&r, &e), 0);
	} else if (atk == ATK_BAD_EVENTS) {
		push_str(&r, 1, "k");
		push_lane(&r, 2, 0);
		struct gt_event e[] = {
			ev(1, 1000, 10, 1, 2),                   /* good */
			ev(255, 2000, 10, 1, 2),                 /* unknown kind */
			ev(1, 3000, -5, 1, 2),                   /* negative duration */
			ev(1, INT64_MAX - 10, 100, 1, 2),        /* end overflows int64 */
			ev(1, 4000, 10, 1, 2),                   /* good */
		};
		for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
			cr_assert_eq(gt_ring_push_event(&r, &e[i]), 0);
	}
	gt_ring_set_state(&r, GT_RING_ST_RUNNING, NULL);
	return fd;
}

static void nop(void *ctx)
{
	(void)ctx;
}

static void no_status(void *ctx, char *buf, size_t len)
{
	(void)ctx;
	if (len)
		buf[0] = 0;
}

/* fork a child serving @gtrace-<its pid> with attack a; returns its pid */
static pid_t hostile_target(enum attack a)
{
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	atk = a;
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[0]);
		struct gt_ctl_ops ops = { .start = attack_start, .stop = nop, .flush = nop,
				       .status = no_status };
		char err[256];
		if (gt_ctl_serve_start(&ops, err, sizeof(err)) < 0)
			_exit(3);
		if (write(pfd[1], "r", 1) != 1)
			_exit(4);
		for (;;)
			pause();
	}
	close(pfd[1]);
	kids[n_kids++] = pid;
	char c;
	cr_assert_eq(read(pfd[0], &c, 1), 1, "hostile target did not start");
	close(pfd[0]);
	return pid;
}

/* ---- ring attacks ---- */

static void poll_is_bounded(enum attack a)
{
	struct gt_store *s = gt_store_new();
	struct live l;
	char err[256];
	pid_t pid = hostile_target(a);
	cr_assert_eq(live_open(&l, pid, 0, s, 64, err, sizeof(err)), 0, "%s", err);
	int64_t t0 = now_ms();
	for (int i = 0; i < 100 && !l.done; i++)
		live_poll(&l, 1 << 22, NULL, NULL);
	cr_assert_lt(now_ms() - t0, 2000, "polls of a bogus ring took %lld ms",
		     (long long)(now_ms() - t0));
	cr_assert(l.done, "a corrupt ring must end the connection");
	cr_assert(strstr(l.reason, "corrupt"), "reason: %s", l.reason);
	cr_assert_eq(l.events, 0);
	live_close(&l);
	gt_store_free(s);
}

Test(hostile, bogus_head_does_not_spin, .timeout = 20)
{
	poll_is_bounded(ATK_BOGUS_HEAD);
}

Test(hostile, head_behind_tail_does_not_spin, .timeout = 20)
{
	poll_is_bounded(ATK_HEAD_BEHIND);
}

Test(hostile, unsealed_memfd_refused, .timeout = 20)
{
	struct gt_store *s = gt_store_new();
	struct live l;
	char err[256];
	pid_t pid = hostile_target(ATK_UNSEALED);
	int rc = live_open(&l, pid, 0, s, 64, err, sizeof(err));
	cr_assert_eq(rc, -EPERM, "rc %d: %s", rc, err);
	cr_assert(strstr(err, "not sealed"), "%s", err);
	gt_store_free(s);
}

/* our own rings cannot be resized by anyone holding the fd */
Test(hostile, ring_memfd_is_sealed)
{
	struct gt_ring r;
	int fd = gt_ring_create(&r, 64, getpid());
	cr_assert_geq(fd, 0);
	cr_assert_eq(fcntl(fd, F_GET_SEALS) & (int)GT_RING_SEALS, (int)GT_RING_SEALS);
	cr_assert_lt(ftruncate(fd, 4096), 0);
	cr_assert_eq(errno, EPERM);
	cr_assert_lt(ftruncate(fd, (off_t)gt_ring_bytes(128)), 0);
	cr_assert_lt(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), 0, "seals are sealed");
	gt_ring_unmap(&r);
	close(fd);
}

static long maxrss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

Test(hostile, sparse_ids_cost_no_memory, .timeout = 30)
{
	struct gt_store *s = gt_store_new();
	struct live l;
	char err[256];
	pid_t pid = hostile_target(ATK_SPARSE_IDS);
	cr_assert_eq(live_open(&l, pid, 0, s, 64, err, sizeof(err)), 0, "%s", err);
	long rss0 = maxrss_kb();
	for (int t = 0; t < 2000 && l.events < 1; t += 2)
		if (live_poll(&l, 1 << 20, NULL, NULL) == 0)
			msleep(2);
	long grew_mb = (maxrss_kb() - rss0) / 1024;
	cr_assert_lt(grew_mb, 64, "ids near 2^28 cost %ld MB", grew_mb);
	/* and the ids still work: the one event with its name and kconf */
	cr_assert_eq(l.events, 1);
	cr_assert_eq(l.bad, 0);
	gt_store_finish(s);
	struct gt_lane *ln = gt_store_lane_at(s, 0);
	cr_assert_eq(ln->n, 1);
	cr_assert_str_eq(gt_store_str(s, ln->ev[0].name), "sparse_kernel");
	cr_assert_eq(gt_store_kconf_at(s, gt_event_kconf(&ln->ev[0]))->grid[0], 3);
	cr_assert_str_eq(gt_store_str(s, gt_store_nccl_at(s, gt_event_nccl(&ln->ev[0]))->collective),
			 "allreduce");
	live_close(&l);
	gt_store_free(s);
}

Test(hostile, out_of_range_events_stay_out, .timeout = 30)
{
	struct gt_store *s = gt_store_new();
	struct live l;
	char err[256];
	pid_t pid = hostile_target(ATK_BAD_EVENTS);
	cr_assert_eq(live_open(&l, pid, 0, s, 64, err, sizeof(err)), 0, "%s", err);
	for (int t = 0; t < 2000 && l.events + l.bad < 5; t += 2)
		if (live_poll(&l, 1 << 20, NULL, NULL) == 0)
			msleep(2);
	cr_assert_eq(l.events, 2, "the two good events of five");
	cr_assert_eq(l.bad, 3, "kind 255, dur -5, overflowing end");
	gt_store_finish(s);
	cr_assert_eq(gt_store_t_min(s), 1000);
	cr_assert_eq(gt_store_t_max(s), 4010);
	live_close(&l);
	gt_store_free(s);
}

/* ---- squatters: a name bound for a pid the binder is not ---- */

static pid_t sleeper(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	kids[n_kids++] = pid;
	return pid;
}

/* serve one "ok ring" with a valid, sealed ring of one event to anyone */
static void squat_serve(int lfd)
{
	struct gt_ring r;
	int rfd = gt_ring_create(&r, 64, getpid());
	push_str(&r, 1, "attacker");
	push_lane(&r, 2, 0);
	struct gt_event e = ev(1, 1000, 10, 1, 2);
	gt_ring_push_event(&r, &e);
	for (;;) {
		int c = accept(lfd, NULL, NULL);
		if (c < 0)
			continue;
		char buf[128];
		if (read(c, buf, sizeof(buf)) <= 0) {
			close(c);
			continue;
		}
		char line[] = "ok ring\n";
		struct iovec iov = { line, sizeof(line) - 1 };
		union {
			char b[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} cm;
		memset(&cm, 0, sizeof(cm));
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
				     .msg_controllen = sizeof(cm.b) };
		struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(h), &rfd, sizeof(int));
		sendmsg(c, &mh, MSG_NOSIGNAL);
		/* answer later commands with ok, keep the connection */
		while (read(c, buf, sizeof(buf)) > 0)
			if (write(c, "ok\n", 3) != 3)
				break;
		close(c);
	}
}

/* fork a squatter binding @gtrace-<victim>, as uid (or -1: ours) */
static void squatter(pid_t victim, uid_t uid, gid_t gid, int as_other)
{
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[0]);
		if (as_other && (setgid(gid) < 0 || setuid(uid) < 0))
			_exit(5);
		struct sockaddr_un a;
		size_t alen = gt_ctl_addr(&a, victim);
		int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (bind(lfd, (struct sockaddr *)&a, (socklen_t)alen) < 0 || listen(lfd, 4) < 0)
			_exit(6);
		if (write(pfd[1], "r", 1) != 1)
			_exit(7);
		squat_serve(lfd);
		_exit(0);
	}
	close(pfd[1]);
	kids[n_kids++] = pid;
	char c;
	cr_assert_eq(read(pfd[0], &c, 1), 1, "squatter did not start");
	close(pfd[0]);
}

static void squat_refused(void)
{
	pid_t victim = kids[0];
	struct gt_store *s = gt_store_new();
	struct live l;
	char err[256] = "";
	int rc = live_open(&l, victim, 0, s, 64, err, sizeof(err));
	if (rc == 0)
		live_close(&l);
	cr_assert_eq(rc, -EPERM, "a squatter's ring was accepted (rc %d)", rc);
	cr_assert(strstr(err, "squatted"), "%s", err);
	cr_assert_eq(gt_store_event_count(s), 0);
	gt_store_free(s);
	/* the status query of attach --list is refused the same way */
	cr_assert_eq(gt_ctl_connect(victim, err, sizeof(err)), -EPERM);
}

Test(hostile, same_uid_squatter_refused, .timeout = 20)
{
	pid_t victim = sleeper();
	squatter(victim, 0, 0, 0);
	squat_refused();
}

Test(hostile, other_uid_squatter_refused, .timeout = 20)
{
	if (getuid() != 0)
		cr_skip_test("needs root to become another user");
	struct passwd *pw = getpwnam("nobody");
	if (!pw)
		cr_skip_test("no user 'nobody'");
	pid_t victim = sleeper();
	squatter(victim, pw->pw_uid, pw->pw_gid, 1);
	squat_refused();
}

/* ---- the recorder on a bogus ring: ends, and its file is complete ---- */

Test(hostile, recorder_ends_on_bogus_ring, .timeout = 40)
{
	const char *b = getenv("GTRACE_BUILD");
	char exe[1024], out[256], pidarg[32];
	snprintf(exe, sizeof(exe), "%s/tui/gtrace", b ? b : ".");
	snprintf(out, sizeof(out), "/tmp/gtrace-hostile-%d.gtrace", (int)getpid());
	unlink(out);
	pid_t target = hostile_target(ATK_BOGUS_HEAD);
	snprintf(pidarg, sizeof(pidarg), "%d", (int)target);
	pid_t rec = fork();
	if (rec == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int dn = open("/dev/null", O_WRONLY);
		dup2(dn, 2);
		execl(exe, "gtrace", "record", "-q", "-o", out, "--pid", pidarg, (char *)NULL);
		_exit(127);
	}
	kids[n_kids++] = rec;
	int st = 0, ended = 0;
	int64_t t0 = now_ms();
	while (now_ms() - t0 < 10000) {
		if (waitpid(rec, &st, WNOHANG) == rec) {
			ended = 1;
			break;
		}
		if (now_ms() - t0 > 3000)
			kill(rec, SIGTERM);   /* it should have ended alone; SIGTERM must do */
		msleep(20);
	}
	if (ended)
		n_kids--;
	cr_assert(ended, "gtrace record still running 10 s after SIGTERM on a bogus ring");
	cr_assert(WIFEXITED(st), "recorder killed by a signal (%d)", WTERMSIG(st));
	struct gt_store *s = gt_store_new();
	char err[256];
	cr_assert_eq(gt_file_read(out, s, NULL, err, sizeof(err)), 0, "%s", err);
	gt_store_free(s);
	unlink(out);
}

/* ---- a server that never accepts: connect gives up instead of hanging ---- */

Test(hostile, full_backlog_connect_gives_up, .timeout = 30)
{
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		struct sockaddr_un a;
		size_t alen = gt_ctl_addr(&a, getpid());
		int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (bind(lfd, (struct sockaddr *)&a, (socklen_t)alen) < 0 || listen(lfd, 0) < 0)
			_exit(6);
		if (write(pfd[1], "r", 1) != 1)
			_exit(7);
		for (;;)
			pause();          /* never accepts */
	}
	kids[n_kids++] = pid;
	close(pfd[1]);
	char c, err[256];
	cr_assert_eq(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	int fds[8], n = 0, rc = 0;
	int64_t t0 = now_ms();
	while (n < 8 && (rc = gt_ctl_connect(pid, err, sizeof(err))) >= 0)
		fds[n++] = rc;
	cr_assert_eq(rc, -ETIMEDOUT, "rc %d after %d connections: %s", rc, n, err);
	cr_assert(strstr(err, "not accepting"), "%s", err);
	cr_assert_lt(now_ms() - t0, GT_CTL_CONNECT_MS + 1500);
	while (n > 0)
		close(fds[--n]);
}

/* found by fuzz_ring: a string length near 2^32 wrapped in the record
 * count check and passed as a one-record string (4 GiB for its text) */
Test(hostile, string_length_near_2_32_is_malformed)
{
	static _Alignas(64) unsigned char mem[GT_RING_HDR_BYTES + 64 * GT_RING_REC_BYTES];
	struct gt_ring r;
	gt_ring_init_mem(&r, mem, 64, 1);
	struct gt_ring_rec *m = gt_ring_slot(&r, 0);
	memset(m, 0, sizeof(*m));
	m->type = GT_RING_REC_STR;
	m->nrec = 1;
	m->len = 0xfffffffbu;
	gt_ring_commit(&r, 1);
	uint32_t n;
	const struct gt_ring_rec *got = gt_ring_peek(&r, &n);
	cr_assert_not_null(got);
	cr_assert_eq(got->type, GT_RING_REC_NONE, "accepted as a string of %u bytes", m->len);
	cr_assert_eq(n, 1);
}

/* a squatter took @gtrace-<pid> before the target started: the target
 * listens on a random fallback name, and the viewer finds it there (by
 * pid, checked) and gets the target's events, never the squatter's */
Test(hostile, squatted_target_still_found, .timeout = 30)
{
	int gate[2], ready[2];
	cr_assert_eq(pipe(gate), 0);
	cr_assert_eq(pipe(ready), 0);
	atk = ATK_BAD_EVENTS;       /* two good events of five, all its own */
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		char c;
		if (read(gate[0], &c, 1) != 1)
			_exit(2);
		struct gt_ctl_ops ops = { .start = attack_start, .stop = nop, .flush = nop,
				       .status = no_status };
		char err[256];
		if (gt_ctl_serve_start(&ops, err, sizeof(err)) < 0)
			_exit(3);          /* before the fix: "Address already in use" */
		if (write(ready[1], "r", 1) != 1)
			_exit(4);
		for (;;)
			pause();
	}
	kids[n_kids++] = pid;
	close(gate[0]);
	close(ready[1]);             /* a target that dies reads as EOF here */
	struct passwd *pw = getuid() == 0 ? getpwnam("nobody") : NULL;
	squatter(pid, pw ? pw->pw_uid : 0, pw ? pw->pw_gid : 0, pw != NULL);
	cr_assert_eq(write(gate[1], "g", 1), 1);
	char c;
	cr_assert_eq(read(ready[0], &c, 1), 1, "the target could not listen beside the squatter");
	pid_t found[64];
	size_t nf = live_list_pids(found, 64), hits = 0;
	for (size_t i = 0; i < nf && i < 64; i++)
		hits += found[i] == pid;
	cr_assert_eq(hits, 1, "attach --list shows the target once");
	struct gt_store *s = gt_store_new();
	struct live l;
	char err[256];
	cr_assert_eq(live_open(&l, pid, 0, s, 64, err, sizeof(err)), 0, "%s", err);
	for (int t = 0; t < 2000 && l.events + l.bad < 5; t += 2)
		if (live_poll(&l, 1 << 20, NULL, NULL) == 0)
			msleep(2);
	cr_assert_eq(l.events, 2, "the target's own events");
	cr_assert_eq(gt_store_str_find(s, "attacker", 8), UINT32_MAX, "the squatter's ring was read");
	live_close(&l);
	gt_store_free(s);
}
