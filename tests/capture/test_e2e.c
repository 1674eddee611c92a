/*
 * test_e2e.c - the gtrace binary end to end on the synthetic source:
 * `gtrace record` of the simulated trainer gets exactly the events the
 * simulator generates for the same options (compared with gt_sim_generate of
 * the core simulator: counts and total durations per kind and name), and
 * the recording survives the target's kill -9, Ctrl-C and re-attaching.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/gtfile.h"
#include "gtrace/sim.h"

static char gtrace[1024];
static pid_t kids[8];
static int n_kids;

static void setup(void)
{
	snprintf(gtrace, sizeof(gtrace), "%s/tui/gtrace", getenv("GTRACE_BUILD"));
}

static void teardown(void)
{
	for (int i = 0; i < n_kids; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	n_kids = 0;
}

TestSuite(e2e, .init = setup, .fini = teardown, .timeout = 60);

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* start gtrace with args; stdout/stderr to errfile (may be NULL) */
static pid_t start(const char *errfile, char *const args[])
{
	pid_t p = fork();
	if (p == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int fd = open(errfile ? errfile : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		unsetenv("GTRACE_AUTOSTART");
		execv(gtrace, args);
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

/* the trainer: first line of its output is "... pid N ..." once listening */
static pid_t start_trainer(const char *out, char *const args[])
{
	unlink(out);     /* a previous run's line must not be mistaken for this one's */
	pid_t p = start(out, args);
	for (int t = 0; t < 5000; t += 10) {
		FILE *f = fopen(out, "r");
		char line[256] = "";
		if (f) {
			if (!fgets(line, sizeof(line), f))
				line[0] = 0;
			fclose(f);
		}
		if (strstr(line, "socket @gtrace-"))
			return p;
		msleep(10);
	}
	cr_assert_fail("trainer did not start");
	return -1;
}

struct tally {
	size_t n;
	char **name;
	int *kind;
	uint64_t *count;
	int64_t *dur;
};

static void tally_store(struct gt_store *s, struct tally *t)
{
	memset(t, 0, sizeof(*t));
	size_t cap = 4096;
	t->name = calloc(cap, sizeof(char *));
	t->kind = calloc(cap, sizeof(int));
	t->count = calloc(cap, sizeof(uint64_t));
	t->dur = calloc(cap, sizeof(int64_t));
	for (uint32_t l = 0; l < gt_store_lane_count(s); l++) {
		const struct gt_lane *ln = gt_store_lane_at(s, l);
		for (size_t i = 0; i < ln->n; i++) {
			const struct gt_event *e = &ln->ev[i];
			const char *nm = gt_store_str(s, e->name);
			size_t k;
			for (k = 0; k < t->n; k++)
				if (t->kind[k] == e->kind && !strcmp(t->name[k], nm))
					break;
			if (k == t->n) {
				cr_assert_lt(t->n, cap);
				t->name[k] = strdup(nm);
				t->kind[k] = e->kind;
				t->n++;
			}
			t->count[k]++;
			t->dur[k] += e->dur_ns;
		}
	}
}

static void tally_free(struct tally *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->name[i]);
	free(t->name);
	free(t->kind);
	free(t->count);
	free(t->dur);
}

static size_t read_capture(const char *path, struct gt_store **out, struct gt_file_info *info)
{
	struct gt_store *s = gt_store_new();
	char err[512];
	int rc = gt_file_read(path, s, info, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	*out = s;
	return gt_store_event_count(s);
}

Test(e2e, record_gets_exactly_what_the_simulator_generates)
{
	const char *file = "e2e_exact.gtrace";
	char *args[] = { "gtrace", "record", "-o", (char *)file, "-q", "--force", "--", gtrace, "demo",
			 "--trainer", "--steps", "6", "--gpus", "2", "--scenario", "comm-bound",
			 "--rate", "5000000", NULL };
	cr_assert_eq(wait_exit(start("e2e_exact.log", args)), 0);
	struct gt_store *got;
	struct gt_file_info info;
	read_capture(file, &got, &info);
	cr_assert_eq(info.truncated, 0);
	const struct gt_drops *d = gt_store_drops(got);
	cr_assert_eq(d->ring_overflow, 0);

	struct gt_sim_opts o;
	memset(&o, 0, sizeof(o));
	o.gpus = 2;
	o.steps = 6;
	o.seed = 1;
	o.scenario = GT_SIM_COMM_BOUND;
	struct gt_store *want = gt_store_new();
	char err[256];
	cr_assert_eq(gt_sim_generate(&o, want, err, sizeof(err)), 0, "%s", err);
	cr_assert_gt(gt_store_event_count(want), 1000);
	cr_assert_eq(gt_store_event_count(got), gt_store_event_count(want));
	cr_assert_eq(gt_store_lane_count(got), gt_store_lane_count(want));
	struct tally tg, tw;
	tally_store(got, &tg);
	tally_store(want, &tw);
	cr_assert_eq(tg.n, tw.n);
	for (size_t i = 0; i < tw.n; i++) {
		size_t k;
		for (k = 0; k < tg.n; k++)
			if (tg.kind[k] == tw.kind[i] && !strcmp(tg.name[k], tw.name[i]))
				break;
		cr_assert_lt(k, tg.n, "missing %s", tw.name[i]);
		cr_assert_eq(tg.count[k], tw.count[i], "%s", tw.name[i]);
		cr_assert_eq(tg.dur[k], tw.dur[i], "%s", tw.name[i]);
	}
	tally_free(&tg);
	tally_free(&tw);
	gt_store_free(got);
	gt_store_free(want);
	unlink(file);
}

Test(e2e, attach_detach_reattach_and_sigint)
{
	char *targs[] = { "gtrace", "demo", "--trainer", "--seconds", "40", "--rate", "20000", NULL };
	pid_t tr = start_trainer("e2e_tr1.log", targs);
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)tr);
	for (int round = 0; round < 2; round++) {
		char *args[] = { "gtrace", "record", "-o", "e2e_r.gtrace", "-q", "--force", "--duration", "0.5",
				 "--pid", pid, NULL };
		cr_assert_eq(wait_exit(start(NULL, args)), 0, "round %d", round);
		struct gt_store *s;
		struct gt_file_info info;
		size_t n = read_capture("e2e_r.gtrace", &s, &info);
		cr_assert_gt(n, 1000, "round %d: %zu events", round, n);
		cr_assert_eq(info.truncated, 0);
		gt_store_free(s);
		cr_assert_eq(kill(tr, 0), 0, "trainer died after a detach");
	}
	/* Ctrl-C: stops cleanly and keeps everything */
	char *args[] = { "gtrace", "record", "-o", "e2e_int.gtrace", "-q", "--force", "--pid", pid, NULL };
	pid_t rec = start(NULL, args);
	msleep(600);
	kill(rec, SIGINT);
	cr_assert_eq(wait_exit(rec), 0);
	struct gt_store *s;
	struct gt_file_info info;
	cr_assert_gt(read_capture("e2e_int.gtrace", &s, &info), 1000);
	cr_assert_eq(info.truncated, 0);
	gt_store_free(s);
	cr_assert_eq(kill(tr, 0), 0);
	unlink("e2e_r.gtrace");
	unlink("e2e_int.gtrace");
}

Test(e2e, target_killed_during_recording)
{
	char *targs[] = { "gtrace", "demo", "--trainer", "--seconds", "40", "--rate", "20000", NULL };
	pid_t tr = start_trainer("e2e_tr2.log", targs);
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)tr);
	char *args[] = { "gtrace", "record", "-o", "e2e_k.gtrace", "-q", "--force", "--pid", pid, NULL };
	pid_t rec = start("e2e_k.log", args);
	msleep(600);
	kill(tr, SIGKILL);
	wait_exit(tr);
	cr_assert_eq(wait_exit(rec), 0);          /* ends by itself */
	struct gt_store *s;
	struct gt_file_info info;
	cr_assert_gt(read_capture("e2e_k.gtrace", &s, &info), 1000);
	cr_assert_eq(info.truncated, 0);
	gt_store_free(s);
	FILE *f = fopen("e2e_k.log", "r");
	char buf[1024] = "";
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	cr_assert(strstr(buf, "exited"), "record said: %s", buf);
	unlink("e2e_k.gtrace");
}

Test(e2e, recorder_killed_target_runs_on)
{
	char *targs[] = { "gtrace", "demo", "--trainer", "--seconds", "40", "--rate", "20000", NULL };
	pid_t tr = start_trainer("e2e_tr3.log", targs);
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)tr);
	char *args[] = { "gtrace", "record", "-o", "e2e_v.gtrace", "-q", "--force", "--pid", pid, NULL };
	pid_t rec = start(NULL, args);
	msleep(1500);     /* past the first periodic flush */
	kill(rec, SIGKILL);
	wait_exit(rec);
	msleep(100);
	cr_assert_eq(kill(tr, 0), 0, "trainer died with its recorder");
	/* what was flushed opens (cut off: truncated) */
	struct gt_store *s;
	struct gt_file_info info;
	cr_assert_gt(read_capture("e2e_v.gtrace", &s, &info), 0);
	cr_assert_eq(info.truncated, 1);
	gt_store_free(s);
	/* and the trainer takes the next recorder */
	char *args2[] = { "gtrace", "record", "-o", "e2e_v2.gtrace", "-q", "--force", "--duration", "0.3",
			  "--pid", pid, NULL };
	cr_assert_eq(wait_exit(start(NULL, args2)), 0);
	unlink("e2e_v.gtrace");
	unlink("e2e_v2.gtrace");
}

Test(e2e, children_of_a_command_join_as_ranks)
{
	/* two simulated trainers started by a shell, RANK set as launchers do */
	char sh[4096];
	snprintf(sh, sizeof(sh), "RANK=0 %s demo --trainer --steps 3 --gpus 2 --rate 2000000 & "
		 "RANK=1 %s demo --trainer --steps 3 --gpus 2 --rate 2000000; wait", gtrace, gtrace);
	char *args[] = { "gtrace", "record", "-o", "e2e_ranks.gtrace", "-q", "--force", "--", "/bin/sh", "-c",
			 sh, NULL };
	cr_assert_eq(wait_exit(start(NULL, args)), 0);
	struct gt_store *got;
	struct gt_file_info info;
	size_t n = read_capture("e2e_ranks.gtrace", &got, &info);
	struct gt_sim_opts o;
	memset(&o, 0, sizeof(o));
	o.gpus = 2;
	o.steps = 3;
	o.seed = 1;
	struct gt_store *one = gt_store_new();
	char err[256];
	cr_assert_eq(gt_sim_generate(&o, one, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(n, 2 * gt_store_event_count(one));
	int seen[2] = { 0, 0 };
	for (uint32_t l = 0; l < gt_store_lane_count(got); l++) {
		int32_t r = gt_store_lane_at(got, l)->key.rank;
		cr_assert(r == 0 || r == 1, "rank %d", r);
		seen[r] = 1;
	}
	cr_assert(seen[0] && seen[1]);
	cr_assert_eq(gt_store_lane_count(got), 2 * gt_store_lane_count(one));
	gt_store_free(one);
	gt_store_free(got);
	unlink("e2e_ranks.gtrace");
}

Test(e2e, passive_library_reported_by_record_and_list)
{
	char prog[1024], lib[1024];
	snprintf(prog, sizeof(prog), "%s/tests/capture/passive_prog", getenv("GTRACE_BUILD"));
	snprintf(lib, sizeof(lib), "%s/capture/libgtrace-inject.so", getenv("GTRACE_BUILD"));
	if (access("/usr/lib/x86_64-linux-gnu/libcuda.so.1", F_OK) == 0)
		cr_skip_test("this machine has a CUDA driver");
	char *args[] = { "gtrace", "record", "-o", "e2e_passive.gtrace", "-q", "--force", "--", prog, lib,
			 "1500", NULL };
	pid_t rec = start("e2e_passive.log", args);
	/* while it runs, --list shows it as passive */
	msleep(700);
	char *largs[] = { "gtrace", "attach", "--list", NULL };
	cr_assert_eq(wait_exit(start("e2e_list.log", largs)), 0);
	cr_assert_eq(wait_exit(rec), 0);
	char buf[4096] = "";
	FILE *f = fopen("e2e_list.log", "r");
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	cr_assert(strstr(buf, "passive") && strstr(buf, "passive_prog"), "list: %s", buf);
	f = fopen("e2e_passive.log", "r");
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	cr_assert(strstr(buf, "no CUDA driver") || strstr(buf, "built without CUPTI"), "record said: %s", buf);
	unlink("e2e_passive.gtrace");
}

Test(e2e, list_shows_a_trainer)
{
	char *targs[] = { "gtrace", "demo", "--trainer", "--seconds", "20", "--gpus", "3", NULL };
	pid_t tr = start_trainer("e2e_tr4.log", targs);
	char *largs[] = { "gtrace", "attach", "--list", NULL };
	cr_assert_eq(wait_exit(start("e2e_list2.log", largs)), 0);
	char buf[4096] = "", want[64];
	FILE *f = fopen("e2e_list2.log", "r");
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	snprintf(want, sizeof(want), "%-8d %-5s %-10s ", (int)tr, "3", "dormant");
	cr_assert(strstr(buf, want), "no '%s' in:\n%s", want, buf);
	cr_assert(strstr(buf, "demo --trainer"));
}

Test(e2e, injected_library_with_builtin_synthetic_source)
{
	char prog[1024], lib[1024];
	snprintf(prog, sizeof(prog), "%s/tests/capture/passive_prog", getenv("GTRACE_BUILD"));
	snprintf(lib, sizeof(lib), "%s/capture/libgtrace-inject.so", getenv("GTRACE_BUILD"));
	char *args[] = { "gtrace", "record", "-o", "e2e_syn.gtrace", "-q", "--force", "--", prog, lib,
			 "800", NULL };
	setenv("GTRACE_SYNTH", "50000", 1);
	pid_t rec = start("e2e_syn.log", args);
	unsetenv("GTRACE_SYNTH");
	cr_assert_eq(wait_exit(rec), 0);
	struct gt_store *s;
	struct gt_file_info info;
	size_t n = read_capture("e2e_syn.gtrace", &s, &info);
	cr_assert_gt(n, 5000);
	cr_assert_eq(gt_store_lane_count(s), 4);
	cr_assert_eq(gt_store_drops(s)->ring_overflow, 0);
	/* kernel i is named synth_kernel_(i % 10): counts differ by at most 1 */
	struct tally t;
	tally_store(s, &t);
	cr_assert_eq(t.n, 10);
	uint64_t lo = UINT64_MAX, hi = 0, sum = 0;
	for (size_t i = 0; i < t.n; i++) {
		cr_assert(!strncmp(t.name[i], "synth_kernel_", 13));
		cr_assert_eq(t.dur[i], (int64_t)t.count[i] * 1000);
		lo = t.count[i] < lo ? t.count[i] : lo;
		hi = t.count[i] > hi ? t.count[i] : hi;
		sum += t.count[i];
	}
	cr_assert_eq(sum, n);
	cr_assert_leq(hi - lo, 1);
	tally_free(&t);
	gt_store_free(s);
	unlink("e2e_syn.gtrace");
}

/* `record --duration` stops the capture before its last read, so what the
 * source still held (CUPTI's buffers; here the planted target's last 500
 * events, released only by the stop) is in the file: 3000 events */
Test(e2e, record_gets_what_the_source_held_at_stop)
{
	char target[1100], out[] = "/tmp/gtrace-e2e-held.out", file[] = "/tmp/gtrace-e2e-held.gtrace";
	snprintf(target, sizeof(target), "%s/tests/capture/capture_target", getenv("GTRACE_BUILD"));
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	pid_t tp = fork();
	if (tp == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(pfd[1], 1);
		close(pfd[0]);
		execl(target, target, "3000", "held", (char *)NULL);
		_exit(127);
	}
	kids[n_kids++] = tp;
	close(pfd[1]);
	char line[64] = "";
	cr_assert_gt(read(pfd[0], line, sizeof(line) - 1), 0, "target did not start");
	close(pfd[0]);
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)tp);
	unlink(file);
	pid_t r = start(out, (char *const[]){ gtrace, "record", "-q", "--force", "-o", file, "--pid", pid,
					      "--duration", "1", NULL });
	cr_assert_eq(wait_exit(r), 0);
	struct gt_store *s;
	struct gt_file_info info;
	cr_assert_eq(read_capture(file, &s, &info), 3000);
	gt_store_free(s);
	cr_assert_eq(wait_exit(tp), 0);
	unlink(file);
	unlink(out);
}

/* a command that never initializes CUDA: one clear line, the command's
 * exit status, no hang (headless: stdin is not a terminal) */
Test(e2e, run_of_a_command_without_cuda_says_nothing_traced)
{
	char out[] = "/tmp/gtrace-e2e-nocuda.out", buf[1024] = "";
	pid_t r = start(out, (char *const[]){ gtrace, "run", "--", "true", NULL });
	cr_assert_eq(wait_exit(r), 0);
	FILE *f = fopen(out, "r");
	cr_assert_not_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	cr_assert(strstr(buf, "gtrace: nothing traced: true exited without initializing CUDA"), "%s", buf);
	cr_assert_eq(strchr(buf, '\n'), buf + n - 1, "one line expected: %s", buf);
	r = start(out, (char *const[]){ gtrace, "run", "--", "false", NULL });
	cr_assert_eq(wait_exit(r), 1);
	unlink(out);
}

/* a command whose capture library could not listen (it reports on the
 * status pipe of GTRACE_STATUS_FD: test_inject.c listen_failure_is_reported;
 * here the command writes that report itself): run and record say why,
 * not "without initializing CUDA" */
Test(e2e, library_that_could_not_listen_is_named)
{
	char out[] = "/tmp/gtrace-e2e-nolisten.out", file[] = "/tmp/gtrace-e2e-nolisten.gtrace";
	char buf[2048] = "";
	const char *sh = "echo \"4242 control socket @gtrace-4242: Too many open files\" >&$GTRACE_STATUS_FD";
	pid_t r = start(out, (char *const[]){ gtrace, "run", "--", "sh", "-c", (char *)sh, NULL });
	cr_assert_eq(wait_exit(r), 0);
	FILE *f = fopen(out, "r");
	cr_assert_not_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	cr_assert(strstr(buf, "gtrace: nothing traced: sh: process 4242 could not be traced: control "
			 "socket @gtrace-4242: Too many open files"), "%s", buf);
	r = start(out, (char *const[]){ gtrace, "record", "-q", "--force", "-o", file, "--", "sh", "-c",
					(char *)sh, NULL });
	cr_assert_eq(wait_exit(r), 0);
	f = fopen(out, "r");
	cr_assert_not_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	cr_assert(strstr(buf, "nothing traced: sh: process 4242 could not be traced: control socket"),
		  "%s", buf);
	unlink(out);
	unlink(file);
}

/* `record --duration` of a command that outlives it: the capture ends on
 * time, then the recorder waits for the command and returns its failure;
 * a command killed by a signal is a failure too */
Test(e2e, record_duration_waits_for_the_command_status)
{
	char out[] = "/tmp/gtrace-e2e-dur.out", file[] = "/tmp/gtrace-e2e-dur.gtrace";
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t r = start(out, (char *const[]){ gtrace, "record", "-q", "--force", "-o", file, "--duration", "0.3",
					      "--", "sh", "-c", "sleep 1; exit 3", NULL });
	cr_assert_eq(wait_exit(r), 1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	cr_assert_geq(s, 0.95, "returned after %.2f s, before the command ended", s);
	cr_assert_eq(access(file, R_OK), 0);
	r = start(out, (char *const[]){ gtrace, "record", "-q", "--force", "-o", file, "--", "sh", "-c",
					"kill -9 $$", NULL });
	cr_assert_eq(wait_exit(r), 1);
	unlink(file);
	unlink(out);
}
