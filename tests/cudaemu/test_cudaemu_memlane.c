/*
 * test_cudaemu_memlane.c - the allocated-bytes counter lane of a live
 * capture (gtrace/mem_lane.h) on the stand-in trainer's allocations
 * (`--allocs K`: cuMemAlloc / cuMemFree, CUPTI MEMORY2 records), with the
 * emulated CUPTI handing its buffers back newest first (CUDAEMU_SHUFFLE):
 *
 * - received live in this process (the viewer's receive loop: poll, note
 *   the batch, finish, sync; 8 events a poll), the lane of each device must hold one sample
 *   per A line of the trainer's truth, at its time, with the running sum
 *   of the truth's bytes in time order (summed here), and records must
 *   really have come late (the lane rewrote samples);
 * - recorded with `gtrace record` and read back, the same, and the lane's
 *   peak (the first highest sample, its time) equals the truth's peak and
 *   the memory-usage report's.
 */
#include <criterion/criterion.h>
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
#include "gtrace/mem_lane.h"
#include "gtrace/mem_usage.h"
#include "gtrace/store.h"
#include "../../live/live.h"
#include "emutest.h"
#include "truth.h"

static char build[1024];

static void setup(void)
{
	emutest_env(build, sizeof(build), 1);
	unsetenv("CUDA_INJECTION64_PATH");
	setenv("CUDAEMU_SHUFFLE", "64", 1);  /* 64 records a buffer, handed back newest first */
}

TestSuite(cudaemu_memlane, .init = setup, .timeout = 120);

static pid_t spawn(const char *log, char *const argv[], int inject)
{
	pid_t p = fork();
	if (p == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		if (inject) {
			char lib[1200];
			snprintf(lib, sizeof(lib), "%s/capture/libgtrace-inject.so", build);
			setenv("CUDA_INJECTION64_PATH", lib, 1);
			setenv("GTRACE_AUTOSTART", "1", 1);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return p;
}

#define wait_exit emutest_wait

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* pid's control socket listens */
static int listening(pid_t pid)
{
	pid_t pids[1024];
	size_t n = live_list_pids(pids, 1024);
	for (size_t i = 0; i < n && i < 1024; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

static int a_by_ts(const void *x, const void *y)
{
	const struct truth_a *a = x, *b = y;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static const struct gt_lane *lane_of(const struct gt_store *s, int dev)
{
	char nm[64];
	snprintf(nm, sizeof(nm), "Driver allocated (GPU %d)", dev);
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type == GT_LANE_COUNTER && l->name && !strcmp(gt_store_str(s, l->name), nm))
			return l;
	}
	return NULL;
}

/* each device's lane against the truth's A lines (sorted by time here):
 * sample k at the k-th record's time holding the running sum; the first
 * highest sample is the truth's peak (and the report's) */
static void check_lanes(const struct gt_store *s, struct truth *t, const char *what)
{
	qsort(t->a, t->n_a, sizeof(*t->a), a_by_ts);
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_mem_usage_result m;
	char err[256];
	cr_assert_eq(gt_mem_usage_compute(s, &sc, &m, err, sizeof(err)), 0, "%s", err);
	for (int dev = 0; dev < 2; dev++) {
		const struct gt_lane *l = lane_of(s, dev);
		cr_assert_not_null(l, "%s: no lane Driver allocated (GPU %d)", what, dev);
		size_t k = 0;
		long long sum = 0, peak = 0;
		unsigned long long peak_ts = 0;
		for (size_t i = 0; i < t->n_a; i++) {
			if (t->a[i].device != dev)
				continue;
			sum += t->a[i].op == 1 ? (long long)t->a[i].bytes : -(long long)t->a[i].bytes;
			if (!k || sum > peak) {
				peak = sum;
				peak_ts = t->a[i].ts;
			}
			cr_assert_lt(k, l->n, "%s: GPU %d: %zu samples, the truth has more", what, dev, l->n);
			double v;
			memcpy(&v, &l->ev[k].arg, sizeof(v));
			cr_assert_eq((unsigned long long)l->ev[k].start_ns, t->a[i].ts,
				     "%s: GPU %d sample %zu at %lld, truth %llu", what, dev, k,
				     (long long)l->ev[k].start_ns, t->a[i].ts);
			cr_assert_eq((long long)v, sum, "%s: GPU %d sample %zu: %lld, truth %lld", what, dev,
				     k, (long long)v, sum);
			k++;
		}
		cr_assert_eq(k, l->n, "%s: GPU %d: %zu samples, truth %zu records", what, dev, l->n, k);
		double hi = 0;
		int64_t at = 0;
		for (size_t j = 0; j < l->n; j++) {
			double v;
			memcpy(&v, &l->ev[j].arg, sizeof(v));
			if (!j || v > hi) {
				hi = v;
				at = l->ev[j].start_ns;
			}
		}
		cr_expect_eq((long long)hi, peak, "%s: GPU %d lane peak %lld, truth %lld", what, dev,
			     (long long)hi, peak);
		cr_expect_eq((unsigned long long)at, peak_ts);
		for (size_t i = 0; i < m.n; i++)
			if (m.dev[i].device == (uint32_t)dev) {
				cr_expect_eq(m.dev[i].peak_bytes, peak);
				cr_expect_eq((unsigned long long)m.dev[i].peak_ns, peak_ts);
			}
	}
	gt_mem_usage_result_done(&m);
}

static int note(void *ctx, struct gt_store *s, const struct gt_event *ev, size_t n)
{
	(void)s;
	return gt_mem_lane_note(ctx, ev, n);
}

Test(cudaemu_memlane, live_lane_exact_with_buffers_out_of_order)
{
	char trainer[1100];
	snprintf(trainer, sizeof(trainer), "%s/tests/cudaemu/cudaemu_trainer", build);
	char *argv[] = { trainer, "--out", "emu_memlane_live.tsv", "--threads", "2", "--work", "600",
			 "--allocs", "4", "--rate", "4000", NULL };
	pid_t pid = spawn("emu_memlane_live.log", argv, 1);
	struct gt_store *s = gt_store_new();
	struct live l;
	char err[256] = "";
	int open_rc = -1;
	for (int ms = 0; ms < 10000 && open_rc; ms += 2) {
		if (listening(pid))
			open_rc = live_open(&l, pid, 0, s, 1 << 16, err, sizeof(err));
		else
			msleep(2);
	}
	cr_assert_eq(open_rc, 0, "no capture of the trainer: %s", err);
	struct gt_mem_lane *ml = gt_mem_lane_new();
	cr_assert_eq(gt_store_finish(s), 0);
	/* a few events a poll, each poll a sync: records of buffers handed back
	   newest first arrive in several syncs (the viewer syncs what one poll
	   brings, which depends on timing) */
	for (int ms = 0; ms < 60000 && !l.done; ms += 5) {
		long r = live_poll(&l, 8, note, ml);
		cr_assert_geq(r, 0);
		if (r) {
			cr_assert_eq(gt_store_finish(s), 0);
			cr_assert_eq(gt_mem_lane_sync(ml, s), 0);
		} else {
			msleep(5);
		}
	}
	cr_assert(l.done, "the capture did not end: %s", live_state(&l));
	live_poll(&l, 1 << 20, note, ml);
	cr_assert_eq(gt_store_finish(s), 0);
	cr_assert_eq(gt_mem_lane_sync(ml, s), 0);
	live_close(&l);
	cr_assert_eq(wait_exit(pid), 0, "the trainer failed (emu_memlane_live.log)");
	struct gt_mem_lane_stats st;
	gt_mem_lane_stats(ml, &st);
	struct truth t;
	cr_assert_eq(truth_read("emu_memlane_live.tsv", &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.n_a, 2 * (150 + 148));
	cr_assert_eq(st.records, t.n_a, "%llu records folded, truth %zu",
		     (unsigned long long)st.records, t.n_a);
	cr_assert_gt(st.late, 0, "no record came late: the buffers were not shuffled");
	cr_assert_gt(st.rewritten, 0);
	check_lanes(s, &t, "live");
	cr_log_info("live: %llu records in %llu syncs, %llu late, %llu samples rewritten",
		    (unsigned long long)st.records, (unsigned long long)st.syncs,
		    (unsigned long long)st.late, (unsigned long long)st.rewritten);
	truth_free(&t);
	gt_mem_lane_free(ml);
	gt_store_free(s);
}

Test(cudaemu_memlane, recorded_file_builds_the_lane)
{
	char gtrace[1100], trainer[1100];
	snprintf(gtrace, sizeof(gtrace), "%s/tui/gtrace", build);
	snprintf(trainer, sizeof(trainer), "%s/tests/cudaemu/cudaemu_trainer", build);
	char *argv[] = { gtrace, "record", "--force", "-o", "emu_memlane.gtrace", "-q", "--", trainer,
			 "--out", "emu_memlane.tsv", "--threads", "2", "--work", "400", "--allocs", "5", "--rate", "4000",
			 NULL };
	cr_assert_eq(wait_exit(spawn("emu_memlane.log", argv, 0)), 0, "gtrace record failed (emu_memlane.log)");
	struct truth t;
	char err[512];
	cr_assert_eq(truth_read("emu_memlane.tsv", &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.n_a, 2 * (80 + 78));
	struct gt_store *s = gt_store_new();
	struct gt_file_info info;
	cr_assert_eq(gt_file_read("emu_memlane.gtrace", s, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(gt_store_meta_get(s, GT_MEM_LANE_META), "records");
	check_lanes(s, &t, "recorded");
	truth_free(&t);
	gt_store_free(s);
}
