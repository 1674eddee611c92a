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
#include "emutest.h"
#include "truth.h"

static struct truth T;

static char build[1024];

static void setup(void)
{
	emutest_env(build, sizeof(build), 1);
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
	return emutest_spawn(log, argv, 0);
}

#define wait_exit emutest_wait

static void read_truth_drops(const char *path, int dormant_drops);

/* the truth at path (nothing dropped by CUPTI) */
static void read_truth(const char *path)
{
	read_truth_drops(path, 0);
}

/* the truth at path; correlation ids are the driver's process-wide
 * counter: calls that submit no work take ids too, so the work's ids have
 * gaps, but none is on two W lines */
static void read_truth_drops(const char *path, int dormant_drops)
{
	char err[300];
	cr_assert_eq(truth_read(path, &T, err, sizeof(err)), 0, "%s", err);
	if (T.have_stats && dormant_drops) {
		/* kernels traced while the library was dormant: CUPTI dropped
		 * them (every buffer request declined), nothing else */
		cr_assert_gt(T.dropped, 0);
		cr_assert_eq(T.dropped, T.refused);
	} else if (T.have_stats) {
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
	struct gt_store *s = gt_store_new();
	struct gt_file_info info;
	char err[512];
	cr_assert_eq(gt_file_read(path, s, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(info.truncated, 0);
	const struct gt_drops *d = gt_store_drops(s);
	cr_assert_eq(d->cupti_dropped + d->buffers_declined + d->zero_timestamps + d->ring_overflow, 0);
	for (int k = 0; k < 4; k++) {
		lo[k] = UINT32_MAX;
		hi[k] = 0;
	}
	size_t n = 0;
	for (uint32_t l = 0; l < gt_store_lane_count(s); l++) {
		const struct gt_lane *ln = gt_store_lane_at(s, l);
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
				cr_assert_str_eq(gt_store_str(s, e->name), api_names[w->kind]);
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
				cr_assert_str_eq(gt_store_str(s, e->name), w->name);
				const struct gt_kconf *kc = gt_store_kconf_at(s, (uint32_t)e->arg);
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
	gt_store_free(s);
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
	 * each device and its context, plus the chatty calls' records written
	 * between the API kinds coming on and their calls going off (left
	 * out by the converter; none of them reached a recording above) */
	cr_assert_eq(T.records, total + 3 * 2 * (unsigned long long)T.devices + T.call_records,
		     "emulator wrote %llu records (%llu of chatty calls), recordings hold %zu",
		     T.records, T.call_records, total);
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

/* what a recording holds of the trainer's graph replays */
struct graph_rec {
	size_t launches;         /* cudaGraphLaunch calls recorded */
	size_t complete;         /* of those, with all their node kernels */
	size_t nodes;            /* graph node kernels recorded */
	char log[4096];          /* gtrace record's output */
};

/* a trainer replaying its graph every 10 pieces of work (graphs
 * instantiated when its threads start), started with the library
 * (`inject`, dormant: no autostart; GTRACE_PREPARE_GRAPHS=`prepare`) or
 * without; recorded by pid for 1.5 s; every node kernel in the recording
 * checked exact against the truth and linked to its launch */
static void graph_round(const char *tag, int inject, const char *prepare, struct graph_rec *g)
{
	char gtrace[1100], trainer[1100], lib[1100], tsv[64], out[64], log[64], tlog[64];
	snprintf(gtrace, sizeof(gtrace), "%s/tui/gtrace", build);
	snprintf(trainer, sizeof(trainer), "%s/tests/cudaemu/cudaemu_trainer", build);
	snprintf(lib, sizeof(lib), "%s/capture/libgtrace-inject.so", build);
	snprintf(tsv, sizeof(tsv), "emu_%s.tsv", tag);
	snprintf(out, sizeof(out), "emu_%s.gtrace", tag);
	snprintf(log, sizeof(log), "emu_%s.log", tag);
	snprintf(tlog, sizeof(tlog), "emu_%s_trainer.log", tag);
	if (inject)
		setenv("CUDA_INJECTION64_PATH", lib, 1);
	setenv("GTRACE_PREPARE_GRAPHS", prepare, 1);
	char *targv[] = { trainer, "--out", tsv, "--threads", "2", "--work", "10000", "--gap-us",
			  "300", "--graph-every", "10", NULL };
	pid_t tp = spawn(tlog, targv);
	unsetenv("CUDA_INJECTION64_PATH");
	unsetenv("GTRACE_PREPARE_GRAPHS");
	struct timespec ts = { 1, 200000000 };
	nanosleep(&ts, NULL);
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)tp);
	char *args[] = { gtrace, "record", "-q", "--force", "-o", out, "--duration", "1.5", "--pid",
			 pid, NULL };
	cr_assert_eq(wait_exit(spawn(log, args)), 0, "see %s", log);
	cr_assert_eq(kill(tp, 0), 0, "the trainer ended before the recording did");
	cr_assert_eq(wait_exit(tp), 0);
	FILE *f = fopen(log, "r");
	cr_assert_not_null(f);
	size_t n = fread(g->log, 1, sizeof(g->log) - 1, f);
	g->log[n] = 0;
	fclose(f);
	read_truth_drops(tsv, inject && strcmp(prepare, "0"));
	cr_assert_gt(T.n_g, 0);
	struct gt_store *s = gt_store_new();
	struct gt_file_info info;
	char err[512];
	cr_assert_eq(gt_file_read(out, s, &info, err, sizeof(err)), 0, "%s", err);
	const struct gt_drops *d = gt_store_drops(s);
	cr_assert_eq(d->cupti_dropped + d->buffers_declined, 0,
		     "records CUPTI dropped while the library was dormant counted as lost");
	/* the first and last graph launches recorded: a node kernel of an
	 * earlier or later launch is at an edge of the window (its launch call
	 * made before the start enabled API records, or after the stop
	 * disabled them) */
	uint32_t first_launch = UINT32_MAX, last_launch = 0;
	for (uint32_t l = 0; l < gt_store_lane_count(s); l++) {
		const struct gt_lane *ln = gt_store_lane_at(s, l);
		for (size_t i = 0; i < ln->n; i++) {
			const struct gt_event *e = &ln->ev[i];
			if (e->kind != GT_EV_RUNTIME || strcmp(gt_store_str(s, e->name), "cudaGraphLaunch"))
				continue;
			first_launch = e->corr < first_launch ? e->corr : first_launch;
			last_launch = e->corr > last_launch ? e->corr : last_launch;
		}
	}
	for (uint32_t l = 0; l < gt_store_lane_count(s); l++) {
		const struct gt_lane *ln = gt_store_lane_at(s, l);
		for (size_t i = 0; i < ln->n; i++) {
			const struct gt_event *e = &ln->ev[i];
			if (e->kind == GT_EV_RUNTIME && !strcmp(gt_store_str(s, e->name), "cudaGraphLaunch")) {
				g->launches++;
				size_t nodes = 0, seen = 0;
				for (size_t k = 0; k < T.n_g; k++) {
					nodes += T.g[k].corr == e->corr;
					seen += T.g[k].corr == e->corr && T.g[k].seen;
				}
				cr_assert_eq(nodes, 5, "launch %u: %zu nodes in the truth", e->corr, nodes);
				(void)seen;
				continue;
			}
			if (e->kind != GT_EV_KERNEL || !e->aux)
				continue;
			struct truth_g *tg = NULL;
			for (size_t k = 0; k < T.n_g && !tg; k++)
				if (T.g[k].corr == e->corr && (int64_t)T.g[k].start == e->start_ns)
					tg = &T.g[k];
			cr_assert_not_null(tg, "graph kernel %u at %lld not in the truth", e->corr,
					   (long long)e->start_ns);
			cr_assert_eq(tg->seen, 0);
			tg->seen = 1;
			cr_assert_eq(e->dur_ns, (int64_t)(tg->end - tg->start));
			cr_assert_eq(e->aux, tg->graph);
			cr_assert_eq(ln->key.device, tg->device);
			cr_assert_eq(ln->key.id, (int64_t)tg->stream);
			struct gt_ref me = { l, (uint32_t)i }, peer;
			if ((e->corr < first_launch || e->corr > last_launch) &&
			    gt_store_corr_peer(s, me, &peer) != 0) {
				tg->seen = 0;      /* an edge: not counted */
				continue;
			}
			g->nodes++;
			cr_assert_eq(gt_store_corr_peer(s, me, &peer), 0, "graph kernel %u not linked", e->corr);
			cr_assert_str_eq(gt_store_str(s, gt_store_ev(s, peer)->name), "cudaGraphLaunch");
		}
	}
	/* a launch is complete when all 5 of its nodes were recorded */
	for (size_t k = 0; k < T.n_g; k += 5) {
		size_t seen = 0;
		for (size_t j = k; j < k + 5 && j < T.n_g; j++)
			seen += T.g[j].seen && T.g[j].corr == T.g[k].corr;
		g->complete += seen == 5;
	}
	gt_store_free(s);
	truth_free(&T);
	unlink(out);
}

/* a process started with the library (dormant, no viewer yet): CUPTI is
 * prepared at injection, so the graphs its threads instantiated before
 * any capture are traced once one starts (before: the prepared state did
 * not exist and no node kernel was recorded, as in the next test) */
Test(cudaemu_attach, prepared_process_traces_graphs_instantiated_while_dormant)
{
	struct graph_rec g = { 0 };
	graph_round("gprep", 1, "1", &g);
	cr_assert_gt(g.launches, 10, "%zu graph launches recorded", g.launches);
	cr_assert_eq(g.nodes, 5 * g.launches, "%zu node kernels for %zu launches", g.nodes, g.launches);
	cr_assert_eq(g.complete, g.launches);
	cr_assert_null(strstr(g.log, "have no kernels"), "%s", g.log);
}

/* a late attach (library loaded with ptrace after the graphs were
 * instantiated), and the same process with the preparation turned off:
 * the graphs' kernels cannot be traced; the launches are recorded and
 * gtrace record says how many have no kernels, and why */
Test(cudaemu_attach, late_attach_counts_graph_launches_it_cannot_trace)
{
	const char *tags[] = { "glate", "gnoprep" };
	for (int r = 0; r < 2; r++) {
		struct graph_rec g = { 0 };
		graph_round(tags[r], r == 1, "0", &g);
		cr_assert_gt(g.launches, 10, "%s: %zu graph launches recorded", tags[r], g.launches);
		cr_assert_eq(g.nodes, 0, "%s", tags[r]);
		char want[160];
		snprintf(want, sizeof(want), "gtrace record: %zu CUDA graph launches have no kernels in "
			 "the recording: their graphs were instantiated before the capture could trace "
			 "kernels", g.launches);
		cr_assert(strstr(g.log, want), "%s: want '%s' in:\n%s", tags[r], want, g.log);
	}
}

/* the live viewer (here without a terminal: status lines until the
 * trainer exits) says the same when it ends */
Test(cudaemu_attach, attach_viewer_counts_graph_launches_it_cannot_trace)
{
	char gtrace[1100], trainer[1100], buf[8192];
	snprintf(gtrace, sizeof(gtrace), "%s/tui/gtrace", build);
	snprintf(trainer, sizeof(trainer), "%s/tests/cudaemu/cudaemu_trainer", build);
	char *targv[] = { trainer, "--out", "emu_gview.tsv", "--threads", "2", "--work", "6000",
			  "--gap-us", "300", "--graph-every", "10", NULL };
	pid_t tp = spawn("emu_gview_trainer.log", targv);
	struct timespec ts = { 1, 0 };
	nanosleep(&ts, NULL);
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)tp);
	int in = open("/dev/null", O_RDONLY);
	pid_t v = fork();
	if (v == 0) {
		dup2(in, 0);
		int fd = open("emu_gview.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(gtrace, gtrace, "attach", pid, (char *)NULL);
		_exit(127);
	}
	close(in);
	cr_assert_eq(wait_exit(tp), 0);
	cr_assert_eq(wait_exit(v), 0, "gtrace attach failed");
	FILE *f = fopen("emu_gview.log", "r");
	cr_assert_not_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	cr_assert(strstr(buf, "CUDA graph launches have no kernels in the capture: their graphs were "
			      "instantiated before the capture could trace kernels"), "%s", buf);
}
