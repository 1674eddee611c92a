/*
 * test_attach.c - `gtrace attach`/`record --pid`/`--all` on processes that
 * were not started under gtrace: the capture library is loaded with
 * ptrace.  The targets (tests/capture/attach/) know nothing of gtrace; each
 * case checks that the target's output and exit status are exactly what
 * they are without gtrace, and that its threads kept running.  Targets get
 * GTRACE_SYNTH in their environment so the loaded library has a source
 * without a GPU.  Refusals: another uid, a traced target, a static target,
 * another mount namespace without the library,
 * a library of another version, a target that dies mid-injection.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/pinj.h"

#define NOBODY 65534
#define GTRACE_VERSION_TEST "0.1.0"     /* meson.build's project version */

static char gtrace[1024], tdir[1024], dir[256];
static pid_t kids[16];
static int n_kids;

static void setup(void)
{
	snprintf(gtrace, sizeof(gtrace), "%s/tui/gtrace", getenv("GTRACE_BUILD"));
	snprintf(tdir, sizeof(tdir), "%s/tests/capture/attach", getenv("GTRACE_BUILD"));
	snprintf(dir, sizeof(dir), "/tmp/gtrace-attach-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	chmod(dir, 0777);          /* targets and gtrace run as nobody in some cases */
}

static void teardown(void)
{
	for (int i = 0; i < n_kids; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	n_kids = 0;
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(attach, .init = setup, .fini = teardown, .timeout = 90);

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* dir/name */
static const char *at(const char *name)
{
	static char buf[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

/* fork and exec argv as uid (-1: ours) with stdin from in_fd (-1:
 * /dev/null), stdout (and stderr when err is NULL) to out, env "K=V" */
static pid_t spawn(char *const argv[], const char *out, const char *err, int in_fd, int uid,
		   const char *env1, const char *env2)
{
	pid_t p = fork();
	if (p == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		int efd = err ? open(err, O_WRONLY | O_CREAT | O_TRUNC, 0666) : fd;
		int ifd = in_fd >= 0 ? in_fd : open("/dev/null", O_RDONLY);
		dup2(ifd, 0);
		dup2(fd, 1);
		dup2(efd, 2);
		unsetenv("GTRACE_AUTOSTART");
		unsetenv("GTRACE_SYNTH");
		unsetenv("RANK");
		if (env1)
			putenv((char *)env1);
		if (env2)
			putenv((char *)env2);
		if (uid >= 0 && (setgid((gid_t)uid) < 0 || setuid((uid_t)uid) < 0))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	kids[n_kids++] = p;
	return p;
}

static int wait_exit(pid_t p)
{
	int st;
	waitpid(p, &st, 0);
	for (int i = 0; i < n_kids; i++)
		if (kids[i] == p)
			kids[i] = kids[--n_kids];
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
}

/* wait until path holds text */
static void wait_for(const char *path, const char *text)
{
	char buf[8192];
	for (int t = 0; t < 10000; t += 10) {
		slurp(path, buf, sizeof(buf));
		if (strstr(buf, text))
			return;
		msleep(10);
	}
	cr_assert_fail("'%s' never appeared in %s: %s", text, path, buf);
}

/* run gtrace args as uid; its stderr into err[]; exit status */
static int run_gtrace(char *const args[], int uid, char *err, size_t len)
{
	char *argv[16] = { gtrace };
	for (int i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	pid_t p = spawn(argv, at("gtrace.out"), at("gtrace.err"), -1, uid, NULL, NULL);
	int rc = wait_exit(p);
	slurp(at("gtrace.err"), err, len);
	return rc;
}

/* the output a sleeper of n ticks prints */
static void ticks(char *buf, size_t len, int n)
{
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "tick %d\n", i);
}

/* events recorded, from "gtrace record: FILE: N events" */
static long recorded(const char *err)
{
	const char *p = strstr(err, "gtrace record: ");
	p = p ? strstr(p, ": ") : NULL;
	p = p ? strstr(p + 2, ": ") : NULL;
	return p ? atol(p + 2) : -1;
}

static int maps_have(pid_t pid, const char *what)
{
	char path[64], buf[65536];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	slurp(path, buf, sizeof(buf));
	return strstr(buf, what) != NULL;
}

static int asan_build(void)
{
	const char *s = getenv("GTRACE_SANITIZE");
	return s && strcmp(s, "none") != 0;
}

Test(attach, c_program_recorded_three_times_output_unchanged)
{
	char prog[1100], exp[2048], out[8192], err[4096];   /* 100 ticks: 990 bytes */
	snprintf(prog, sizeof(prog), "%s/att_sleeper", tdir);
	char *argv[] = { prog, "100", "50000", "7", NULL };
	pid_t t = spawn(argv, at("t.out"), NULL, -1, -1, "GTRACE_SYNTH=20000", NULL);
	wait_for(at("t.out"), "tick 2\n");
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)t);
	for (int k = 0; k < 3; k++) {
		char *args[] = { "record", "-q", "--force", "-o", (char *)at("r.gtrace"), "--duration", "0.3",
				 "--pid", pid, NULL };
		cr_assert_eq(run_gtrace(args, -1, err, sizeof(err)), 0, "round %d: %s", k, err);
		/* loaded once; the second and third attach reuse the dormant library */
		cr_assert_eq(strstr(err, "loaded the capture library") != NULL, k == 0, "%s", err);
		cr_assert_gt(recorded(err), 100, "%s", err);
		cr_assert(maps_have(t, "libgtrace-inject.so"));
	}
	char *list[] = { "attach", "--list", NULL };
	cr_assert_eq(run_gtrace(list, -1, err, sizeof(err)), 0);
	char lout[16384], want[64];
	slurp(at("gtrace.out"), lout, sizeof(lout));
	snprintf(want, sizeof(want), "%-8d %-5s %-10s ", (int)t, "1", "dormant");
	cr_assert(strstr(lout, want), "no '%s' in:\n%s", want, lout);
	cr_assert_eq(wait_exit(t), 7);
	slurp(at("t.out"), out, sizeof(out));
	ticks(exp, sizeof(exp), 100);
	cr_assert_str_eq(out, exp);
}

Test(attach, python_program_output_unchanged)
{
	if (asan_build())
		cr_skip_test("an ASan-built library cannot load into a python without ASan");
	if (access("/usr/bin/python3", X_OK) < 0)
		cr_skip_test("no /usr/bin/python3");
	char *argv[] = { "/usr/bin/python3", "-c",
			 "import time, sys\n"
			 "for i in range(30):\n"
			 "    print('tick', i, flush=True)\n"
			 "    time.sleep(0.05)\n"
			 "sys.exit(5)\n", NULL };
	pid_t t = spawn(argv, at("py.out"), NULL, -1, -1, "GTRACE_SYNTH=20000", NULL);
	wait_for(at("py.out"), "tick 3\n");
	char pid[16], err[4096], out[4096], exp[2048];
	snprintf(pid, sizeof(pid), "%d", (int)t);
	char *args[] = { "record", "-q", "-o", (char *)at("py.gtrace"), "--duration", "0.3",
			 "--pid", pid, NULL };
	cr_assert_eq(run_gtrace(args, -1, err, sizeof(err)), 0, "%s", err);
	cr_assert_gt(recorded(err), 100, "%s", err);
	cr_assert_eq(wait_exit(t), 5);
	slurp(at("py.out"), out, sizeof(out));
	ticks(exp, sizeof(exp), 30);      /* print('tick', i) writes the same lines */
	cr_assert_str_eq(out, exp);
}

Test(attach, threads_busy_in_syscalls_keep_running)
{
	char prog[1100], err[4096], out[4096];
	snprintf(prog, sizeof(prog), "%s/att_threads", tdir);
	char *argv[] = { prog, "4", "2500", NULL };
	pid_t t = spawn(argv, at("th.out"), NULL, -1, -1, "GTRACE_SYNTH=20000", NULL);
	wait_for(at("th.out"), "started 4\n");
	msleep(300);
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)t);
	char *args[] = { "record", "-q", "-o", (char *)at("th.gtrace"), "--duration", "0.5",
			 "--pid", pid, NULL };
	cr_assert_eq(run_gtrace(args, -1, err, sizeof(err)), 0, "%s", err);
	cr_assert_gt(recorded(err), 100, "%s", err);
	int rc = wait_exit(t);
	slurp(at("th.out"), out, sizeof(out));
	cr_assert_str_eq(out, "started 4\nerrors 0\nstalled 0\n");
	cr_assert_eq(rc, 0);
}

/* the main thread spins (never in a syscall): a sleeping thread is
 * borrowed instead, and both run on */
Test(attach, spinning_main_thread_borrows_a_sleeping_one)
{
	char prog[1100], lib[1100], err[512], out[4096];
	snprintf(prog, sizeof(prog), "%s/att_spin", tdir);
	snprintf(lib, sizeof(lib), "%s/capture/libgtrace-inject.so", getenv("GTRACE_BUILD"));
	char *argv[] = { prog, "1500", NULL };
	pid_t t = spawn(argv, at("sp.out"), NULL, -1, -1, "GTRACE_SYNTH=20000", NULL);
	wait_for(at("sp.out"), "spinning\n");
	msleep(200);
	struct gt_pinj_opts o = { .lib_path = lib, .version = GTRACE_VERSION_TEST };
	struct gt_pinj_result res;
	int rc = gt_pinj_inject(t, &o, &res, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_neq(res.tid, t, "the spinning main thread was borrowed");
	cr_assert_gt(res.tid, 0);
	cr_assert(maps_have(t, "libgtrace-inject.so"));
	cr_assert_eq(wait_exit(t), 0);
	slurp(at("sp.out"), out, sizeof(out));
	cr_assert_str_eq(out, "spinning\nsum ok\nsleeper ran\n");
}

/* a target blocked in read() on a pipe: the read restarts, no EINTR */
Test(attach, blocked_in_read_restarts)
{
	char prog[1100], err[4096], out[4096];
	snprintf(prog, sizeof(prog), "%s/att_reader", tdir);
	int p[2];
	cr_assert_eq(pipe(p), 0);
	char *argv[] = { prog, NULL };
	pid_t t = spawn(argv, at("rd.out"), NULL, p[0], -1, "GTRACE_SYNTH=20000", NULL);
	close(p[0]);
	wait_for(at("rd.out"), "ready\n");
	msleep(100);
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)t);
	char *args[] = { "record", "-q", "-o", (char *)at("rd.gtrace"), "--duration", "0.3",
			 "--pid", pid, NULL };
	cr_assert_eq(run_gtrace(args, -1, err, sizeof(err)), 0, "%s", err);
	cr_assert(strstr(err, "loaded the capture library"), "%s", err);
	msleep(100);
	cr_assert_eq(write(p[1], "hello\n", 6), 6);
	close(p[1]);
	int rc = wait_exit(t);
	slurp(at("rd.out"), out, sizeof(out));
	cr_assert_str_eq(out, "ready\ngot hello\n");
	cr_assert_eq(rc, 3);
}

/* a SIGALRM every millisecond while blocked in read(): signals that
 * arrive during the injection are delivered after it, the read restarts */
Test(attach, signals_during_injection)
{
	char prog[1100], err[4096], out[4096];
	snprintf(prog, sizeof(prog), "%s/att_reader", tdir);
	int p[2];
	cr_assert_eq(pipe(p), 0);
	char *argv[] = { prog, "alarm", NULL };
	pid_t t = spawn(argv, at("al.out"), NULL, p[0], -1, "GTRACE_SYNTH=20000", NULL);
	close(p[0]);
	wait_for(at("al.out"), "ready\n");
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)t);
	char *args[] = { "record", "-q", "-o", (char *)at("al.gtrace"), "--duration", "0.3",
			 "--pid", pid, NULL };
	cr_assert_eq(run_gtrace(args, -1, err, sizeof(err)), 0, "%s", err);
	cr_assert(strstr(err, "loaded the capture library"), "%s", err);
	cr_assert_eq(write(p[1], "sig\n", 4), 4);
	close(p[1]);
	int rc = wait_exit(t);
	slurp(at("al.out"), out, sizeof(out));
	cr_assert_str_eq(out, "ready\ngot sig\nalarms ok\n");
	cr_assert_eq(rc, 3);
}

/* the stand-in for kernel.yama.ptrace_scope: a target of another uid */
Test(attach, refused_other_uid)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to run gtrace as another uid");
	char prog[1100], err[4096], out[4096], exp[1024];
	snprintf(prog, sizeof(prog), "%s/att_sleeper", tdir);
	char *argv[] = { prog, "12", "50000", "7", NULL };
	pid_t t = spawn(argv, at("u.out"), NULL, -1, -1, NULL, NULL);
	wait_for(at("u.out"), "tick 1\n");
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)t);
	char *args[] = { "attach", pid, NULL };
	cr_assert_eq(run_gtrace(args, NOBODY, err, sizeof(err)), 1, "%s", err);
	cr_assert(strstr(err, "belongs to uid 0") && strstr(err, "run gtrace as that user"), "%s", err);
	cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
	cr_assert(!maps_have(t, "libgtrace-inject.so"));
	cr_assert_eq(wait_exit(t), 7);
	slurp(at("u.out"), out, sizeof(out));
	ticks(exp, sizeof(exp), 12);
	cr_assert_str_eq(out, exp);
}

Test(attach, refused_already_traced)
{
	char prog[1100], err[4096], out[4096], exp[1024];
	snprintf(prog, sizeof(prog), "%s/att_sleeper", tdir);
	/* 40 ticks (2 s): it must still run when it is let go; 12 (0.6 s) ended
	 * once under ASan while traced, the refused gtrace slow to start */
	char *argv[] = { prog, "40", "50000", "7", NULL };
	pid_t t = spawn(argv, at("tr.out"), NULL, -1, -1, NULL, NULL);
	wait_for(at("tr.out"), "tick 1\n");
	cr_assert_eq(ptrace(PTRACE_SEIZE, t, NULL, NULL), 0, "%s", strerror(errno));
	char pid[16], want[64];
	snprintf(pid, sizeof(pid), "%d", (int)t);
	char *args[] = { "record", "-o", (char *)at("tr.gtrace"), "--pid", pid, NULL };
	cr_assert_eq(run_gtrace(args, -1, err, sizeof(err)), 1, "%s", err);
	snprintf(want, sizeof(want), "already traced by process %d", (int)getpid());
	cr_assert(strstr(err, want) && strstr(err, "detach it first"), "%s", err);
	cr_assert(access(at("tr.gtrace"), F_OK) < 0, "no file for a refused attach");
	/* let it go: interrupt, then detach */
	cr_assert_eq(ptrace(PTRACE_INTERRUPT, t, NULL, NULL), 0);
	int st;
	cr_assert_eq(waitpid(t, &st, __WALL), t);
	int stop = WIFSTOPPED(st) ? st >> 8 : -1;
	cr_assert_eq(ptrace(PTRACE_DETACH, t, NULL, NULL), 0);
	/* (once, at load, not 7: which, after which stop, and what it printed) */
	int code = wait_exit(t);
	slurp(at("tr.out"), out, sizeof(out));
	cr_assert_eq(code, 7, "exit %d after stop 0x%x; it printed:\n%s", code, stop, out);
	ticks(exp, sizeof(exp), 40);
	cr_assert_str_eq(out, exp);
}

Test(attach, refused_static_target)
{
	char prog[1100], err[4096], out[4096];
	snprintf(prog, sizeof(prog), "%s/att_static", tdir);
	if (access(prog, X_OK) < 0)
		cr_skip_test("no static linking here");
	int p[2];
	cr_assert_eq(pipe(p), 0);
	char *argv[] = { prog, NULL };
	pid_t t = spawn(argv, at("st.out"), NULL, p[0], -1, NULL, NULL);
	close(p[0]);
	wait_for(at("st.out"), "ready\n");
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)t);
	char *args[] = { "attach", pid, NULL };
	cr_assert_eq(run_gtrace(args, -1, err, sizeof(err)), 1, "%s", err);
	cr_assert(strstr(err, "no glibc") && strstr(err, "gtrace run -- CMD"), "%s", err);
	cr_assert_eq(write(p[1], "x\n", 2), 2);
	close(p[1]);
	cr_assert_eq(wait_exit(t), 3);
	slurp(at("st.out"), out, sizeof(out));
	cr_assert_str_eq(out, "ready\ngot x\n");
}

Test(attach, refused_other_version_loaded)
{
	char prog[1100], lib[1100], err[4096];
	snprintf(prog, sizeof(prog), "%s/att_sleeper", tdir);
	snprintf(lib, sizeof(lib), "%s/libgtrace-inject.so", tdir);
	char *argv[] = { prog, "12", "50000", "7", lib, NULL };
	pid_t t = spawn(argv, at("v.out"), NULL, -1, -1, NULL, NULL);
	wait_for(at("v.out"), "tick 1\n");
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)t);
	char *args[] = { "attach", pid, NULL };
	cr_assert_eq(run_gtrace(args, -1, err, sizeof(err)), 1, "%s", err);
	cr_assert(strstr(err, "gtrace 0.0.9 loaded") && strstr(err, "restart the process"), "%s", err);
	cr_assert_eq(wait_exit(t), 7);
}

/* a process that maps no CUDA driver has nothing to record: attach and
 * record --pid refuse it in one line before any ptrace (it keeps no library,
 * no thread, and runs on untouched); --force-inject loads the library anyway */
Test(attach, refused_no_cuda)
{
	char prog[1100], err[4096], out[4096], exp[1024];
	snprintf(prog, sizeof(prog), "%s/att_sleeper", tdir);
	char *argv[] = { prog, "40", "50000", "7", NULL };
	pid_t t = spawn(argv, at("nc.out"), NULL, -1, -1, NULL, NULL);
	wait_for(at("nc.out"), "tick 1\n");
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)t);
	char *args[] = { "attach", pid, NULL };
	cr_assert_eq(run_gtrace(args, -1, err, sizeof(err)), 1, "%s", err);
	char want[200];
	snprintf(want, sizeof(want), "gtrace: process %d does not use CUDA (no libcuda.so in its maps)",
		 (int)t);
	cr_assert(!strncmp(err, want, strlen(want)) && strstr(err, "--force-inject") &&
		  strchr(err, '\n') == err + strlen(err) - 1, "%s", err);
	char *rec[] = { "record", "-q", "-o", (char *)at("nc.gtrace"), "--pid", pid, NULL };
	cr_assert_eq(run_gtrace(rec, -1, err, sizeof(err)), 1, "%s", err);
	cr_assert(strstr(err, "does not use CUDA"), "%s", err);
	cr_assert(access(at("nc.gtrace"), F_OK) < 0, "no file for a refused attach");
	cr_assert(!maps_have(t, "libgtrace-inject.so"));
	/* forced: the library is loaded (it then finds no driver to record) */
	char *force[] = { "record", "-q", "--force-inject", "-o", (char *)at("nf.gtrace"), "--duration", "0.2",
			  "--pid", pid, NULL };
	run_gtrace(force, -1, err, sizeof(err));
	cr_assert(!strstr(err, "does not use CUDA"), "%s", err);
	cr_assert(maps_have(t, "libgtrace-inject.so"), "%s", err);
	cr_assert_eq(wait_exit(t), 7);
	slurp(at("nc.out"), out, sizeof(out));
	ticks(exp, sizeof(exp), 40);
	cr_assert_str_eq(out, exp);
}

/* dlopen fails inside the target: dlerror's text comes back, the thread is
 * put back and the process runs on as if nothing happened */
Test(attach, failed_dlopen_puts_target_back)
{
	char prog[1100], lib[1100], err[512], out[4096], exp[1024];
	snprintf(prog, sizeof(prog), "%s/att_sleeper", tdir);
	snprintf(lib, sizeof(lib), "%s/libbadinject.so", tdir);
	char *argv[] = { prog, "12", "50000", "7", NULL };
	pid_t t = spawn(argv, at("b.out"), NULL, -1, -1, NULL, NULL);
	wait_for(at("b.out"), "tick 1\n");
	struct gt_pinj_opts o = { .lib_path = lib, .version = GTRACE_VERSION_TEST };
	struct gt_pinj_result res;
	int rc = gt_pinj_inject(t, &o, &res, err, sizeof(err));
	cr_assert_eq(rc, -GT_PINJ_ECALL, "rc %d: %s", rc, err);
	cr_assert(strstr(err, "dlopen failed in the target") &&
		  strstr(err, "gtrace_test_nowhere_defined") && strstr(err, "put back"), "%s", err);
	cr_assert(!maps_have(t, "libbadinject.so"));
	cr_assert_eq(wait_exit(t), 7);
	slurp(at("b.out"), out, sizeof(out));
	ticks(exp, sizeof(exp), 12);
	cr_assert_str_eq(out, exp);
}

/* a target in its own network namespace (a container boundary): its
 * control socket could not be reached, so it is refused untouched */
Test(attach, refused_other_network_namespace)
{
	if (geteuid() != 0 || access("/usr/bin/unshare", X_OK) < 0)
		cr_skip_test("needs root and unshare");
	char prog[1100], err[4096], out[4096], exp[1024];
	snprintf(prog, sizeof(prog), "%s/att_sleeper", tdir);
	/* unshare without --fork execs the program in its own pid */
	char *argv[] = { "/usr/bin/unshare", "--net", "--", prog, "12", "50000", "7", NULL };
	pid_t t = spawn(argv, at("ns.out"), NULL, -1, -1, NULL, NULL);
	wait_for(at("ns.out"), "tick 1\n");
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)t);
	char *args[] = { "attach", pid, NULL };
	cr_assert_eq(run_gtrace(args, -1, err, sizeof(err)), 1, "%s", err);
	cr_assert(strstr(err, "another network namespace (a container)") &&
		  strstr(err, "run gtrace inside the container"), "%s", err);
	cr_assert(!maps_have(t, "libgtrace-inject.so"));
	cr_assert_eq(wait_exit(t), 7);
	slurp(at("ns.out"), out, sizeof(out));
	ticks(exp, sizeof(exp), 12);
	cr_assert_str_eq(out, exp);
}

/* a target in another mount namespace where the library is not visible
 * at gtrace's path (a tmpfs mounted over build/capture in it): refused in
 * one line before any ptrace, the target untouched */
Test(attach, refused_other_mount_namespace)
{
	if (geteuid() != 0 || access("/usr/bin/unshare", X_OK) < 0)
		cr_skip_test("needs root and unshare (a mount namespace of its own)");
	/* can this machine make one at all (a container may forbid it)? */
	if (system("/usr/bin/unshare -m true >/dev/null 2>&1") != 0)
		cr_skip_test("unshare -m is not permitted here");
	char prog[1100], err[4096], out[4096], exp[1024], libdir[1100], sh[9000];
	snprintf(prog, sizeof(prog), "%s/att_sleeper", tdir);
	snprintf(libdir, sizeof(libdir), "%s/capture", getenv("GTRACE_BUILD"));
	char real[4096];
	cr_assert_not_null(realpath(libdir, real));
	/* the shell execs the sleeper in its own pid, after hiding the library */
	snprintf(sh, sizeof(sh), "mount -t tmpfs gtrace-test '%s' && exec '%s' 12 50000 7", real, prog);
	char *argv[] = { "/usr/bin/unshare", "-m", "--propagation", "private", "--", "/bin/sh", "-c",
			 sh, NULL };
	pid_t t = spawn(argv, at("mnt.out"), NULL, -1, -1, NULL, NULL);
	wait_for(at("mnt.out"), "tick 1\n");
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)t);
	char *args[] = { "attach", pid, "--force-inject", NULL };
	cr_assert_eq(run_gtrace(args, -1, err, sizeof(err)), 1, "%s", err);
	cr_assert(strstr(err, "another mount namespace (a container)") &&
		  strstr(err, "is not visible") && strstr(err, "libgtrace-inject.so"), "%s", err);
	cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
	cr_assert(!maps_have(t, "libgtrace-inject.so"));
	cr_assert_eq(wait_exit(t), 7);
	slurp(at("mnt.out"), out, sizeof(out));
	ticks(exp, sizeof(exp), 12);
	cr_assert_str_eq(out, exp);
}

static void kill_target(void *ctx, pid_t tid)
{
	(void)tid;
	kill(*(pid_t *)ctx, SIGKILL);
}

/* the target dies while its thread is stopped: a clear error, no hang */
Test(attach, target_dies_mid_injection)
{
	char prog[1100], lib[1100], err[512];
	snprintf(prog, sizeof(prog), "%s/att_sleeper", tdir);
	snprintf(lib, sizeof(lib), "%s/capture/libgtrace-inject.so", getenv("GTRACE_BUILD"));
	char *argv[] = { prog, "100", "50000", "7", NULL };
	pid_t t = spawn(argv, at("d.out"), NULL, -1, -1, NULL, NULL);
	wait_for(at("d.out"), "tick 1\n");
	struct gt_pinj_opts o = { .lib_path = lib, .version = GTRACE_VERSION_TEST, .on_stopped = kill_target,
			       .hook_ctx = &t };
	struct gt_pinj_result res;
	int rc = gt_pinj_inject(t, &o, &res, err, sizeof(err));
	cr_assert_eq(rc, -GT_PINJ_EEXITED, "rc %d: %s", rc, err);
	cr_assert(strstr(err, "exited during the injection"), "%s", err);
	cr_assert_eq(wait_exit(t), 128 + SIGKILL);
}

Test(attach, list_injectable_and_record_all_as_ranks)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to run the targets as nobody");
	/* nobody's processes only: --all must not reach anyone else's */
	char prog[1100], cuda[1100], err[8192], out[16384], want[1300], exp[2048];
	snprintf(prog, sizeof(prog), "%s/att_sleeper", tdir);
	snprintf(cuda, sizeof(cuda), "%s/libcuda.so.1", tdir);
	char *argv[] = { prog, "50", "50000", "9", cuda, NULL };
	pid_t t1 = spawn(argv, at("a1.out"), NULL, -1, NOBODY, "GTRACE_SYNTH=20000", "RANK=1");
	pid_t t0 = spawn(argv, at("a0.out"), NULL, -1, NOBODY, "GTRACE_SYNTH=20000", "RANK=0");
	wait_for(at("a1.out"), "tick 2\n");
	wait_for(at("a0.out"), "tick 2\n");
	char *list[] = { "attach", "--list", NULL };
	cr_assert_eq(run_gtrace(list, -1, err, sizeof(err)), 0, "%s", err);
	slurp(at("gtrace.out"), out, sizeof(out));
	snprintf(want, sizeof(want), "%-8d %-5s %-10s %-5s %s", (int)t1, "?", "injectable", "1", prog);
	cr_assert(strstr(out, want), "no '%s' in:\n%s", want, out);
	snprintf(want, sizeof(want), "%-8d %-5s %-10s %-5s %s", (int)t0, "?", "injectable", "0", prog);
	cr_assert(strstr(out, want), "no '%s' in:\n%s", want, out);
	char *rec[] = { "record", "-q", "-o", (char *)at("all.gtrace"), "--duration", "0.4", "--all",
			NULL };
	cr_assert_eq(run_gtrace(rec, NOBODY, err, sizeof(err)), 0, "%s", err);
	char w0[96], w1[96];
	snprintf(w0, sizeof(w0), "into process %d ", (int)t0);
	snprintf(w1, sizeof(w1), "into process %d ", (int)t1);
	cr_assert(strstr(err, w0) && strstr(err, w1), "%s", err);
	cr_assert(strstr(err, "live: 2 procs"), "%s", err);
	cr_assert_gt(recorded(err), 100, "%s", err);
	cr_assert_eq(wait_exit(t1), 9);
	cr_assert_eq(wait_exit(t0), 9);
	ticks(exp, sizeof(exp), 50);
	slurp(at("a1.out"), out, sizeof(out));
	cr_assert_str_eq(out, exp);
	slurp(at("a0.out"), out, sizeof(out));
	cr_assert_str_eq(out, exp);
}
