/*
 * test_cudaemu_attach.c - `gtrace record --pid` on the stand-in trainer of
 * the emulated driver and CUPTI (tests/cudaemu/) started without gtrace:
 * the library is loaded with ptrace and CUPTI enabled late, three times
 * (attach, record 2 s, detach).  Each recording is compared with the
 * trainer's ground truth exactly: every GPU event and launch call it holds
 * is the trainer's own (start, end, device, stream, name, configuration,
 * bytes, thread), none twice, and, per kind, every piece of work whose
 * correlation id lies between the first and last one recorded is there (no
 * gap inside an attached window).  The windows do not overlap, the
 * emulator's CUPTI wrote no record outside them, and the trainer's launch
 * rate after the last detach is back to what it was before the first.
 * And a process whose CUPTI another client holds: the start is refused
 * with that reason, the process and its client run on.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/gtfile.h"
#include "gtrace/store.h"
#include "truth.h"

static struct truth T;

static char build[1024];

static void setup(void)
{
	snprintf(build, sizeof(build), "%s", getenv("GTRACE_BUILD"));
	char lp[1200];
	snprintf(lp, sizeof(lp), "%s/tests/cudaemu", build);
	setenv("LD_LIBRARY_PATH", lp, 1);   /* the emulated libcuda.so.1 and libcupti.so.13 */
	unsetenv("GTRACE_AUTOSTART");
	unsetenv("CUDA_INJECTION64_PATH");
}

TestSuite(cudaemu_attach, .init = setup, .timeout = 120);

static unsigned long long realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static pid_t spawn(const char *log, char *const argv[])
{
	pid_t p = fork();
	if (p == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	return p;
}

static int wait_exit(pid_t p)
{
	int st;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* the truth at path; correlation ids are the driver's process-wide
 * counter: calls that submit no work take ids too, so the work's ids have
 * gaps, but none is on two W lines */
static void read_truth(const char *path)
{
	char err[300];
	cr_assert_eq(truth_read(path, &T, err, sizeof(err)), 0, "%s", err);
	if (T.have_stats) {
		cr_assert_eq(T.dropped, 0);
		cr_assert_eq(T.refused, 0);
	}
	truth_by_corr(&T, 0);          /* builds the index */
	cr_assert_not_null(T.idx);
	for (size_t i = 0; i < T.n; i++)
		cr_assert(T.w[i].corr >= 1 && T.idx[T.w[i].corr] == &T.w[i],
			  "correlation %u twice in the truth", T.w[i].corr);
}

static const char *const api_names[] = { "", "cudaLaunchKernel", "cudaMemcpyAsync",
					 "cudaMemsetAsync" };

/* one recording against the truth; marks what it holds with `round`;
 * returns the number of GPU events + launch calls; lo/hi get the lowest
 * and highest correlation id per kind (index 0: launch calls) */
static size_t compare_round(const char *path, int round, unsigned lo[4], unsigned hi[4])
{
	struct gt_store *s = store_new();
	struct gtfile_info info;
	char err[512];
	cr_assert_eq(gtfile_read(path, s, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(info.truncated, 0);
	const struct gt_drops *d = store_drops(s);
	cr_assert_eq(d->cupti_dropped + d->buffers_declined + d->zero_timestamps + d->ring_overflow, 0);
	for (int k = 0; k < 4; k++) {
		lo[k] = UINT32_MAX;
		hi[k] = 0;
	}
	size_t n = 0;
	for (uint32_t l = 0; l < store_lane_count(s); l++) {
		const struct gt_lane *ln = store_lane_at(s, l);
		for (size_t i = 0; i < ln->n; i++) {
			const struct gt_event *e = &ln->ev[i];
			int api = e->kind == GT_EV_RUNTIME;
			if (!api && e->kind != GT_EV_KERNEL && e->kind != GT_EV_MEMCPY &&
			    e->kind != GT_EV_MEMSET)
				continue;
			struct truth_w *w = e->corr >= 1 && e->corr <= T.max_corr ? T.idx[e->corr] : NULL;
			cr_assert_not_null(w, "round %d: unknown correlation %u", round, e->corr);
			int k = api ? 0 : w->kind;
			lo[k] = e->corr < lo[k] ? e->corr : lo[k];
			hi[k] = e->corr > hi[k] ? e->corr : hi[k];
			n++;
			if (api) {
				cr_assert_eq(w->seen_api, 0, "launch %u in rounds %d and %d", e->corr,
					     w->seen_api, round);
				w->seen_api = round;
				cr_assert_str_eq(store_str(s, e->name), api_names[w->kind]);
				cr_assert_eq(ln->key.id, (int64_t)w->tid);
				cr_assert_eq(ln->key.pid, T.pid);
				cr_assert_eq(e->start_ns, (int64_t)w->api_start);
				cr_assert_eq(e->dur_ns, (int64_t)(w->api_end - w->api_start));
				continue;
			}
			cr_assert_eq(w->seen, 0, "work %u in rounds %d and %d", e->corr, w->seen, round);
			w->seen = round;
			cr_assert_eq(e->kind, w->kind, "corr %u", e->corr);
			cr_assert_eq(e->start_ns, (int64_t)w->start, "corr %u", e->corr);
			cr_assert_eq(e->dur_ns, (int64_t)(w->end - w->start), "corr %u", e->corr);
			cr_assert_eq(ln->key.device, w->device, "corr %u", e->corr);
			cr_assert_eq(ln->key.id, (int64_t)w->stream, "corr %u", e->corr);
			if (w->kind == GT_EV_KERNEL) {
				cr_assert_str_eq(store_str(s, e->name), w->name);
				const struct gt_kconf *kc = store_kconf_at(s, (uint32_t)e->arg);
				cr_assert_not_null(kc);
				for (int a = 0; a < 3; a++) {
					cr_assert_eq(kc->grid[a], w->grid[a]);
					cr_assert_eq(kc->block[a], w->block[a]);
				}
			} else {
				cr_assert_eq(e->arg, w->bytes, "corr %u", e->corr);
			}
		}
	}
	store_free(s);
	return n;
}

/* launches per second with api_start in [a, b) */
static double rate(unsigned long long a, unsigned long long b)
{
	size_t n = 0;
	for (size_t i = 0; i < T.n; i++)
		n += T.w[i].api_start >= a && T.w[i].api_start < b;
	return (double)n * 1e9 / (double)(b - a);
}

Test(cudaemu_attach, three_windows_equal_ground_truth)
{
	char gtrace[1100], trainer[1100];
	snprintf(gtrace, sizeof(gtrace), "%s/tui/gtrace", build);
	snprintf(trainer, sizeof(trainer), "%s/tests/cudaemu/cudaemu_trainer", build);
	/* ~0.35 ms a launch per thread: about 12 s, launching before,
	 * between and after the three windows */
	char *targv[] = { trainer, "--out", "emu_attach.tsv", "--threads", "2", "--work", "30000",
			  "--gap-us", "300", NULL };
	pid_t tp = spawn("emu_attach_trainer.log", targv);
	struct timespec ts = { 1, 200000000 };
	nanosleep(&ts, NULL);
	char pid[16], out[3][64], log[3][64];
	snprintf(pid, sizeof(pid), "%d", (int)tp);
	unsigned long long t_first = 0, t_last = 0;
	for (int r = 0; r < 3; r++) {
		snprintf(out[r], sizeof(out[r]), "emu_attach_%d.gtrace", r + 1);
		snprintf(log[r], sizeof(log[r]), "emu_attach_%d.log", r + 1);
		char *args[] = { gtrace, "record", "-q", "--force", "-o", out[r], "--duration", "2", "--pid", pid,
				 NULL };
		unsigned long long t0 = realtime_ns();
		cr_assert_eq(wait_exit(spawn(log[r], args)), 0, "round %d (see %s)", r + 1, log[r]);
		if (r == 0)
			t_first = t0;
		t_last = realtime_ns();
		cr_assert_eq(kill(tp, 0), 0, "the trainer ended before round %d was over", r + 1);
	}
	cr_assert_eq(wait_exit(tp), 0);
	read_truth("emu_attach.tsv");
	cr_assert_eq(T.n, 60000);
	cr_assert(T.have_stats);
	size_t total = 0;
	unsigned prev_hi = 0;
	for (int r = 0; r < 3; r++) {
		unsigned lo[4], hi[4];
		size_t n = compare_round(out[r], r + 1, lo, hi);
		cr_assert_gt(n, 1000, "round %d recorded %zu", r + 1, n);
		total += n;
		/* no gap inside the window, per kind; windows in order, apart */
		for (int k = 0; k < 4; k++) {
			cr_assert_leq(lo[k], hi[k], "round %d: nothing of kind %d", r + 1, k);
			cr_assert_gt(lo[k], prev_hi, "round %d overlaps the one before", r + 1);
			for (unsigned c = lo[k]; c <= hi[k]; c++) {
				struct truth_w *w = T.idx[c];
				if (!w)
					continue;       /* an id of a call without work */
				if (k == 0)
					cr_assert_eq(w->seen_api, r + 1, "round %d: launch %u missing", r + 1, c);
				else if (w->kind == k)
					cr_assert_eq(w->seen, r + 1, "round %d: work %u missing", r + 1, c);
			}
		}
		for (int k = 0; k < 4; k++)
			prev_hi = hi[k] > prev_hi ? hi[k] : prev_hi;
	}
	/* the emulated CUPTI wrote nothing outside the windows: its record
	 * count is what the recordings hold plus, per attach, the late dump of
	 * each device and its context */
	cr_assert_eq(T.records, total + 3 * 2 * (unsigned long long)T.devices,
		     "emulator wrote %llu records, recordings hold %zu", T.records, total);
	/* after the last detach the trainer launches as fast as before */
	double before = rate(t_first - 1000000000ull, t_first);
	double after = rate(t_last, t_last + 1000000000ull);
	cr_assert_gt(before, 1000, "too few launches before the first attach: %.0f/s", before);
	cr_assert_geq(after, 0.7 * before, "launch rate %.0f/s after detach, %.0f/s before", after,
		      before);
	truth_free(&T);
	for (int r = 0; r < 3; r++)
		unlink(out[r]);
}

/* CUPTI held by another client of the process: gtrace loads, is told
 * why it cannot start, and leaves the process and its client alone */
Test(cudaemu_attach, cupti_held_by_another_client)
{
	char gtrace[1100], holder[1100], buf[4096] = "";
	snprintf(gtrace, sizeof(gtrace), "%s/tui/gtrace", build);
	snprintf(holder, sizeof(holder), "%s/tests/cudaemu/cudaemu_holder", build);
	char *hargv[] = { holder, "3", NULL };
	pid_t hp = spawn("emu_holder.log", hargv);
	struct timespec ts = { 0, 800000000 };
	nanosleep(&ts, NULL);
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)hp);
	char *args[] = { gtrace, "record", "-q", "--force", "-o", "emu_holder.gtrace", "--pid", pid, NULL };
	cr_assert_eq(wait_exit(spawn("emu_holder_rec.log", args)), 1);
	FILE *f = fopen("emu_holder_rec.log", "r");
	cr_assert_not_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	cr_assert(strstr(buf, "loaded the capture library"), "%s", buf);
	cr_assert(strstr(buf, "CUPTI is in use by another profiler in this process (CUPTI for "
			      "emulated client); gtrace stays out of its way"), "%s", buf);
	cr_assert_eq(wait_exit(hp), 0, "the holder lost its subscription or failed");
	f = fopen("emu_holder.log", "r");
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	cr_assert_str_eq(buf, "held\ndone ok\n");
}
