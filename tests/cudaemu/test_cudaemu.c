/*
 * test_cudaemu.c - `gtrace record -- CMD` of the stand-in trainer on the
 * emulated driver and CUPTI (tests/cudaemu/), compared with the trainer's
 * ground truth exactly: every kernel, copy and memset once, with its
 * start, end, name, device, stream, launch configuration and bytes; every
 * launch call on its system thread with the kernel's correlation id and
 * its name without CUPTI's version suffix; the chatty calls left out
 * (cudaStreamIsCapturing, cu{Pointer,Kernel}GetAttribute(s)); nothing
 * counted lost; CUDA graph replays: every node kernel exact, with its
 * graph id, linked to its own cudaGraphLaunch; children
 * forked mid-capture exit at once and add nothing.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gtrace/gtfile.h"
#include "gtrace/analysis.h"
#include "gtrace/mem_usage.h"
#include "gtrace/store.h"
#include "emutest.h"
#include "truth.h"

static char build[1024];

static void setup(void)
{
	emutest_env(build, sizeof(build), 1);
}

TestSuite(cudaemu, .init = setup, .timeout = 60);

/* run argv with stdout+stderr to log (killed if the test dies); exit status */
static int run(const char *log, char *const argv[])
{
	return emutest_wait(emutest_spawn(log, argv, 1));
}

/* wait (at most 30 s) until process pid's capture library listens on its
 * control socket ("@gtrace-PID" or "@gtrace-PID-RANDOM" in /proc/net/unix):
 * recording by pid before that would find a process without the library
 * and inject one (a slow start under ASan on a loaded machine) */
static void wait_listening(pid_t pid)
{
	char want[40];
	int n = snprintf(want, sizeof(want), "@gtrace-%d", (int)pid);
	for (int i = 0; i < 3000; i++) {
		FILE *f = fopen("/proc/net/unix", "r");
		char line[512];
		int found = 0;
		while (f && !found && fgets(line, sizeof(line), f)) {
			const char *p = strstr(line, want);
			if (p && (p[n] == '\n' || p[n] == '-' || p[n] == ' ' || p[n] == 0))
				found = 1;
		}
		if (f)
			fclose(f);
		if (found)
			return;
		usleep(10000);
	}
	cr_assert_fail("process %d never listened on @gtrace-%d", (int)pid, (int)pid);
}

/* the truth at path, every forked child checked quick and clean */
static void read_truth(const char *path, struct truth *t)
{
	char err[300];
	int rc = truth_read(path, t, err, sizeof(err));
	if (rc != 0)
		truth_free(t);
	cr_assert_eq(rc, 0, "%s", err);
	int bad = t->fork_bad_status;
	unsigned long long ms = t->fork_max_ms;
	if (bad || ms >= 500)
		truth_free(t);
	cr_assert_eq(bad, 0, "a forked child exited with status %d", bad);
	cr_assert_lt(ms, 500, "a forked child took %llu ms to exit", ms);
}

static struct gt_store *load(const char *path)
{
	struct gt_store *s = gt_store_new();
	struct gt_file_info info;
	char err[512];
	cr_assert_eq(gt_file_read(path, s, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(info.truncated, 0);
	return s;
}

/* `gtrace record --force -o NAME.gtrace -q -- cudaemu_trainer --out NAME.tsv
 * ARGS...` (the arguments end with NULL; output in NAME.log) must exit 0;
 * *t gets the trainer's ground truth (forked children checked), and the
 * recording comes back loaded, its file removed */
static struct gt_store *record_trainer(const char *name, struct truth *t, ...)
{
	char gtrace[1100], trainer[1100], out[64], tsv[64], log[64];
	snprintf(gtrace, sizeof(gtrace), "%s/tui/gtrace", build);
	snprintf(trainer, sizeof(trainer), "%s/tests/cudaemu/cudaemu_trainer", build);
	snprintf(out, sizeof(out), "%s.gtrace", name);
	snprintf(tsv, sizeof(tsv), "%s.tsv", name);
	snprintf(log, sizeof(log), "%s.log", name);
	char *argv[48] = { gtrace, "record", "--force", "-o", out, "-q", "--", trainer, "--out", tsv };
	size_t n = 10;
	va_list ap;
	va_start(ap, t);
	for (char *a; (a = va_arg(ap, char *)) != NULL && n < 47;)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	cr_assert_eq(run(log, argv), 0, "gtrace record of the trainer failed: see %s", log);
	read_truth(tsv, t);
	struct gt_store *s = load(out);
	unlink(out);
	return s;
}

static const char *const api_names[] = { "", "cudaLaunchKernel", "cudaMemcpyAsync",
					 "cudaMemsetAsync" };

/* a cudaGraphLaunch call or a graph node's kernel (event i of lane l)
 * against the truth's graph replays; 1 when it was one (checked), else 0.
 * Every node must be linked to its own launch call. */
static int graph_event(struct gt_store *s, struct truth *t, const struct gt_lane *ln, uint32_t l,
		       size_t i)
{
	const struct gt_event *e = &ln->ev[i];
	for (size_t k = 0; k < t->n_g; k++) {
		struct truth_g *g = &t->g[k];
		if (g->corr != e->corr)
			continue;
		if (e->kind == GT_EV_RUNTIME) {
			cr_assert_eq(g->seen_api, 0, "graph launch %u twice", e->corr);
			for (size_t j = k; j < t->n_g; j++)
				if (t->g[j].corr == e->corr)
					t->g[j].seen_api = 1;
			cr_assert_str_eq(gt_store_str(s, e->name), "cudaGraphLaunch");
			cr_assert_eq(ln->key.id, (int64_t)g->tid);
			cr_assert_eq(e->start_ns, (int64_t)g->api_start);
			cr_assert_eq(e->dur_ns, (int64_t)(g->api_end - g->api_start));
			return 1;
		}
		if (e->kind != GT_EV_KERNEL || e->start_ns != (int64_t)g->start)
			continue;
		cr_assert_eq(g->seen, 0, "graph node %u of launch %u twice", g->node, e->corr);
		g->seen = 1;
		cr_assert_eq(e->dur_ns, (int64_t)(g->end - g->start));
		cr_assert_str_eq(gt_store_str(s, e->name), g->name);
		cr_assert_eq(ln->key.device, g->device);
		cr_assert_eq(ln->key.id, (int64_t)g->stream);
		cr_assert_eq(e->aux, g->graph, "graph node: graph id %u, kept %u", g->graph, e->aux);
		struct gt_ref peer, me = { l, (uint32_t)i };
		cr_assert_eq(gt_store_corr_peer(s, me, &peer), 0, "graph node %u of launch %u not linked",
			     g->node, e->corr);
		const struct gt_event *pe = gt_store_ev(s, peer);
		cr_assert_eq(pe->kind, GT_EV_RUNTIME);
		cr_assert_eq(pe->corr, e->corr);
		cr_assert_str_eq(gt_store_str(s, pe->name), "cudaGraphLaunch");
		return 1;
	}
	return 0;
}

/* a synchronization call or its record (event i of lane ln) against the
 * truth's Y lines; 1 when it was one (checked), else 0.  The record is on
 * the device's synchronization lane (pid -1; id -1 for the whole device),
 * never on a stream lane. */
static int sync_event(struct gt_store *s, struct truth *t, const struct gt_lane *ln, size_t i)
{
	const struct gt_event *e = &ln->ev[i];
	for (size_t k = 0; k < t->n_y; k++) {
		struct truth_y *y = &t->y[k];
		if (y->corr != e->corr)
			continue;
		if (e->kind == GT_EV_RUNTIME) {
			cr_assert_eq(y->seen_api, 0, "sync call %u twice", e->corr);
			y->seen_api = 1;
			cr_assert_str_eq(gt_store_str(s, e->name), y->stream ? "cudaStreamSynchronize" :
					 "cudaDeviceSynchronize");
			cr_assert_eq(ln->key.id, (int64_t)y->tid);
			cr_assert_eq(e->start_ns, (int64_t)y->api_start);
			cr_assert_eq(e->dur_ns, (int64_t)(y->api_end - y->api_start));
			return 1;
		}
		cr_assert_eq(e->kind, GT_EV_SYNC, "corr %u: kind %d", e->corr, e->kind);
		cr_assert_eq(y->seen, 0, "sync record %u twice", e->corr);
		y->seen = 1;
		cr_assert_eq(e->sub, y->stream ? GT_SYNC_STREAM : GT_SYNC_CONTEXT);
		cr_assert_eq(ln->key.type, GT_LANE_GPU);
		cr_assert_eq(ln->key.pid, -1, "sync %u on a stream lane (pid %lld)", e->corr,
			     (long long)ln->key.pid);
		cr_assert_eq(ln->key.device, y->device);
		cr_assert_eq(ln->key.id, y->stream ? (int64_t)y->stream : -1);
		cr_assert_eq(e->start_ns, (int64_t)y->start);
		cr_assert_eq(e->dur_ns, (int64_t)(y->end - y->start));
		return 1;
	}
	return 0;
}

/* a batched copy call or one of its records against the truth's C lines
 * (one per copy); 1 when it was one (checked), else 0.  A record covers
 * `aux` copies (0: one) back to back from the copy that starts with it:
 * their bytes summed, to the last one's end; each copy covered once. */
static int batch_event(struct gt_store *s, struct truth *t, const struct gt_lane *ln, size_t i)
{
	const struct gt_event *e = &ln->ev[i];
	for (size_t k = 0; k < t->n_c; k++) {
		struct truth_c *c = &t->c[k];
		if (c->corr != e->corr)
			continue;
		if (e->kind == GT_EV_RUNTIME) {
			cr_assert_str_eq(gt_store_str(s, e->name), "cudaMemcpyBatchAsync");
			cr_assert_eq(ln->key.id, (int64_t)c->tid);
			cr_assert_eq(e->start_ns, (int64_t)c->api_start);
			cr_assert_eq(e->dur_ns, (int64_t)(c->api_end - c->api_start));
			cr_assert_eq(c->seen & 2, 0, "batch call %u twice", e->corr);
			for (size_t j = k; j < t->n_c && t->c[j].corr == e->corr; j++)
				t->c[j].seen |= 2;
			return 1;
		}
		if (e->start_ns != (int64_t)c->start)
			continue;
		cr_assert_eq(e->kind, GT_EV_MEMCPY);
		cr_assert_eq(ln->key.pid, t->pid);
		cr_assert_eq(ln->key.device, c->device);
		cr_assert_eq(ln->key.id, (int64_t)c->stream);
		uint32_t n = e->aux ? e->aux : 1;
		unsigned long long bytes = 0;
		for (uint32_t j = 0; j < n; j++) {
			cr_assert_lt(k + j, t->n_c);
			struct truth_c *cj = &t->c[k + j];
			cr_assert_eq(cj->corr, e->corr, "record %u covers copies of another call", e->corr);
			cr_assert_eq(cj->copy_kind, c->copy_kind, "record %u folds copies of two kinds",
				     e->corr);
			cr_assert_eq(cj->seen & 1, 0, "copy %u of batch %u twice", cj->index, e->corr);
			cj->seen |= 1;
			bytes += cj->bytes;
		}
		cr_assert_eq(e->arg, bytes, "batch %u: %llu bytes, the copies %llu", e->corr,
			     (unsigned long long)e->arg, bytes);
		cr_assert_eq(gt_event_end(e), (int64_t)t->c[k + n - 1].end);
		return 1;
	}
	return 0;
}

/* every GPU event and launch call against the truth, exactly; each piece
 * of work and its launch found once (all of them unless `partial`); the
 * numbers of GPU events and launch calls found into n_gpu, n_api */
static void compare_n(struct gt_store *s, struct truth *t, int partial, size_t *gpu_out,
		      size_t *api_out)
{
	size_t n_gpu = 0, n_api = 0;
	for (uint32_t l = 0; l < gt_store_lane_count(s); l++) {
		const struct gt_lane *ln = gt_store_lane_at(s, l);
		if (ln->key.pid != t->pid && ln->key.pid != -1)
			continue;           /* another process's (-1: sync lanes) */
		for (size_t i = 0; i < ln->n; i++) {
			const struct gt_event *e = &ln->ev[i];
			struct truth_w *w = truth_by_corr(t, e->corr);
			if (!w && (graph_event(s, t, ln, l, i) || sync_event(s, t, ln, i) ||
				   batch_event(s, t, ln, i)))
				continue;
			cr_assert_neq(e->kind, GT_EV_DRIVER, "driver call %s captured (the trainer makes "
				      "only chatty ones)", gt_store_str(s, e->name));
			if (e->kind == GT_EV_RUNTIME) {
				cr_assert_not_null(w, "launch call with unknown correlation %u", e->corr);
				cr_assert_eq(w->seen_api, 0, "launch %u twice", e->corr);
				w->seen_api = 1;
				n_api++;
				cr_assert_str_eq(gt_store_str(s, e->name), api_names[w->kind]);
				cr_assert_eq(ln->key.id, (int64_t)w->tid,
					     "launch %u on thread %lld, made on system thread %u",
					     e->corr, (long long)ln->key.id, w->tid);
				cr_assert_eq(ln->key.pid, t->pid);
				cr_assert_eq(e->start_ns, (int64_t)w->api_start);
				cr_assert_eq(e->dur_ns, (int64_t)(w->api_end - w->api_start));
				continue;
			}
			if (e->kind != GT_EV_KERNEL && e->kind != GT_EV_MEMCPY && e->kind != GT_EV_MEMSET)
				continue;
			cr_assert_not_null(w, "GPU event with unknown correlation %u", e->corr);
			cr_assert_eq(w->seen, 0, "work %u twice", e->corr);
			w->seen = 1;
			n_gpu++;
			cr_assert_eq(e->kind, w->kind, "corr %u", e->corr);
			cr_assert_eq(e->start_ns, (int64_t)w->start, "corr %u", e->corr);
			cr_assert_eq(e->dur_ns, (int64_t)(w->end - w->start), "corr %u", e->corr);
			cr_assert_eq(ln->key.device, w->device, "corr %u", e->corr);
			cr_assert_eq(ln->key.id, (int64_t)w->stream, "corr %u", e->corr);
			if (w->kind == GT_EV_KERNEL) {
				cr_assert_str_eq(gt_store_str(s, e->name), w->name);
				const struct gt_kconf *k = gt_store_kconf_at(s, (uint32_t)e->arg);
				cr_assert_not_null(k);
				for (int d = 0; d < 3; d++) {
					cr_assert_eq(k->grid[d], w->grid[d]);
					cr_assert_eq(k->block[d], w->block[d]);
				}
			} else {
				cr_assert_eq(e->arg, w->bytes, "corr %u", e->corr);
			}
		}
	}
	*gpu_out = n_gpu;
	*api_out = n_api;
	if (partial)
		return;
	for (size_t k = 0; k < t->n_g; k++)
		cr_assert(t->g[k].seen && t->g[k].seen_api, "graph launch %u node %u missing",
			  t->g[k].corr, t->g[k].node);
	for (size_t k = 0; k < t->n_y; k++)
		cr_assert(t->y[k].seen && t->y[k].seen_api, "sync %u missing", t->y[k].corr);
	for (size_t k = 0; k < t->n_c; k++)
		cr_assert_eq(t->c[k].seen, 3, "batch %u copy %u missing", t->c[k].corr, t->c[k].index);
	cr_assert_eq(n_gpu, t->n, "%zu GPU events, %zu in the truth", n_gpu, t->n);
	cr_assert_eq(n_api, t->n, "%zu launch calls, %zu in the truth", n_api, t->n);
}

static void compare(struct gt_store *s, struct truth *t)
{
	size_t g, a;
	compare_n(s, t, 0, &g, &a);
}

Test(cudaemu, record_equals_ground_truth)
{
	struct truth t;
	struct gt_store *s = record_trainer("emu_exact", &t, "--threads", "6", "--work", "3000",
					    "--configs", "500", "--gap-us", "2", "--fork", "3",
					    "--graphs", "20", NULL);
	cr_assert_eq(t.n, 18000);
	cr_assert_eq(t.forks, 3);
	cr_assert_eq(t.n_g, 6 * 20 * 5);
	cr_assert(t.have_stats);
	cr_assert_eq(t.dropped, 0);
	compare(s, &t);
	const struct gt_drops *d = gt_store_drops(s);
	cr_assert_eq(d->cupti_dropped, 0);
	cr_assert_eq(d->buffers_declined, 0);
	cr_assert_eq(d->zero_timestamps, 0);
	cr_assert_eq(d->ring_overflow, 0);
	gt_store_free(s);
	truth_free(&t);
}

/* a CUDA 12 framework (its own libcupti.so.12 mapped before cuInit, as a
 * CUDA 12 PyTorch wheel does): gtrace uses that copy, accepts its API
 * version (24, CUDA 12.6) and decodes its CUDA 12 records (Kernel9,
 * Memcpy5, Device4, Context2, Synchronization): the same exact match with
 * the truth (syncs and batched copies included), and
 * every record written by that libcupti.so.12 (its own counter) */
Test(cudaemu, cupti12_record_equals_ground_truth)
{
	char lib[1100];
	snprintf(lib, sizeof(lib), "%s/tests/cudaemu/cupti12/libcupti.so.12", build);
	struct truth t;
	struct gt_store *s = record_trainer("emu_c12", &t, "--cupti", lib, "--threads", "4",
					    "--work", "2000", "--configs", "300", "--graphs", "10",
					    "--syncs", "100", "--batches", "80", NULL);
	cr_assert_eq(t.n, 4 * 2000);
	cr_assert_eq(t.n_g, 4 * 10 * 5);
	/* CUDA 12 Synchronization records, one Memcpy5 record per batched copy */
	cr_assert_eq(t.n_y, 4 * 20);
	cr_assert_eq(t.n_c, 4 * 25 * 6);
	cr_assert(t.have_stats, "the trainer's libcupti.so.12 gave no counters");
	/* every launch and every piece of work went through the .so.12 */
	cr_assert_geq(t.records, 2 * t.n + t.n_g / 5 + t.n_g);
	cr_assert_eq(t.dropped, 0);
	compare(s, &t);
	cr_assert_eq(gt_store_drops_lost(gt_store_drops(s)), 0);
	cr_assert_eq(gt_store_drops(s)->zero_timestamps, 0);
	gt_store_free(s);
	truth_free(&t);
	unlink("emu_c12.gtrace");
}

static int by_start(const void *a, const void *b)
{
	const struct truth_n *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* NVTX through NVTX_INJECTION64_PATH as the NVTX v3 code in a program
 * does it (InitializeInjectionNvtx2 of the injection library, handed on
 * to CUPTI's): 3 threads each open 5,000 nested ranges (deeper than the
 * 4,096 a fixed table held) and close them; every range arrives once, on
 * its system thread, with its exact start, end and name */
Test(cudaemu, nvtx_nested_ranges_equal_ground_truth)
{
	enum { THREADS = 3, DEPTH = 5000 };
	char threads[8], depth[8];
	snprintf(threads, sizeof(threads), "%d", THREADS);
	snprintf(depth, sizeof(depth), "%d", DEPTH);
	struct truth t;
	struct gt_store *s = record_trainer("emu_nvtx", &t, "--threads", threads,
					    "--work", "200", "--nvtx", depth, NULL);
	cr_assert_eq(t.n_nv, THREADS * DEPTH);
	for (size_t i = 0; i < t.n_nv; i++)
		cr_assert(t.nv[i].start && t.nv[i].end > t.nv[i].start, "NVTX was not taken by CUPTI");
	qsort(t.nv, t.n_nv, sizeof(*t.nv), by_start);
	compare(s, &t);
	size_t found = 0;
	for (uint32_t l = 0; l < gt_store_lane_count(s); l++) {
		const struct gt_lane *ln = gt_store_lane_at(s, l);
		for (size_t i = 0; i < ln->n; i++) {
			const struct gt_event *e = &ln->ev[i];
			if (e->kind != GT_EV_NVTX)
				continue;
			struct truth_n key = { .tid = (unsigned)ln->key.id,
					       .start = (unsigned long long)e->start_ns };
			struct truth_n *n = bsearch(&key, t.nv, t.n_nv, sizeof(*t.nv), by_start);
			cr_assert_not_null(n, "NVTX range at %lld on thread %lld not in the truth",
					   (long long)e->start_ns, (long long)ln->key.id);
			cr_assert_eq(n->seen, 0, "range twice");
			n->seen = 1;
			found++;
			cr_assert_eq(ln->key.pid, t.pid);
			cr_assert_eq(e->dur_ns, (long long)(n->end - n->start), "depth %u", n->depth);
			char name[32];
			snprintf(name, sizeof(name), "nvtx_range_%u", n->depth);
			cr_assert_str_eq(gt_store_str(s, e->name), name);
		}
	}
	cr_assert_eq(found, t.n_nv, "%zu NVTX ranges, %zu in the truth", found, t.n_nv);
	cr_assert_eq(gt_store_drops_lost(gt_store_drops(s)), 0);
	gt_store_free(s);
	truth_free(&t);
	unlink("emu_nvtx.gtrace");
}

/* `gtrace run --record` (no terminal: the recording only) gets the same */
Test(cudaemu, run_record_equals_ground_truth)
{
	char gtrace[1100], trainer[1100];
	snprintf(gtrace, sizeof(gtrace), "%s/tui/gtrace", build);
	snprintf(trainer, sizeof(trainer), "%s/tests/cudaemu/cudaemu_trainer", build);
	char *argv[] = { gtrace, "run", "--record", "emu_run.gtrace", "--force", "--", trainer,
			 "--out", "emu_run.tsv", "--threads", "3", "--work", "2000",
			 "--configs", "10000", NULL };
	cr_assert_eq(run("emu_run.log", argv), 0);
	struct truth t;
	read_truth("emu_run.tsv", &t);
	cr_assert_eq(t.n, 6000);
	struct gt_store *s = load("emu_run.gtrace");
	compare(s, &t);
	cr_assert_eq(gt_store_drops_lost(gt_store_drops(s)), 0);
	gt_store_free(s);
	truth_free(&t);
	unlink("emu_run.gtrace");
}

/* exit with work still running (each thread's last kernel runs 300 ms and
 * the trainer does not wait for it): the library's exit flush waits for
 * its buffers CUPTI still holds before forcing, so those kernels arrive
 * complete and every record after them in the buffer too */
Test(cudaemu, exit_with_kernels_running)
{
	struct truth t;
	struct gt_store *s = record_trainer("emu_tail", &t, "--threads", "4", "--work",
					    "1000", "--tail-ms", "300", NULL);
	cr_assert_eq(t.n, 4000);
	compare(s, &t);
	cr_assert_eq(gt_store_drops_lost(gt_store_drops(s)), 0);
	gt_store_free(s);
	truth_free(&t);
	unlink("emu_tail.gtrace");
}

/* a profiler in the process (Kineto) installs its own CUPTI clock mid-run:
 * the records made before it arrive exact, none made after it is
 * published with shifted or scaled times, and the recorder says why the
 * capture stopped */
Test(cudaemu, foreign_clock_stops_capture_never_shifts_times)
{
	char gtrace[1100], trainer[1100];
	snprintf(gtrace, sizeof(gtrace), "%s/tui/gtrace", build);
	snprintf(trainer, sizeof(trainer), "%s/tests/cudaemu/cudaemu_trainer", build);
	char *argv[] = { gtrace, "record", "-o", "emu_tsc.gtrace", "--", trainer,
			 "--out", "emu_tsc.tsv", "--threads", "2", "--work", "3000",
			 "--tsc-at", "1500", "--gap-us", "20", NULL };
	cr_assert_eq(run("emu_tsc.log", argv), 0);
	struct truth t;
	read_truth("emu_tsc.tsv", &t);
	struct gt_store *s = load("emu_tsc.gtrace");
	size_t n_gpu, n_api;
	compare_n(s, &t, 1, &n_gpu, &n_api);
	size_t before = 0, after = 0;
	for (size_t i = 0; i < t.n; i++) {
		const struct truth_w *w = &t.w[i];
		cr_assert_eq(w->seen, !(w->foreign & 1), "work %u (clock %d) seen %d", w->corr,
			     w->foreign, w->seen);
		cr_assert_eq(w->seen_api, !(w->foreign & 2), "launch %u (clock %d) seen %d", w->corr,
			     w->foreign, w->seen_api);
		before += w->foreign == 0;
		after += w->foreign != 0;
	}
	cr_assert_gt(before, 1000);
	cr_assert_gt(after, 1000);
	FILE *f = fopen("emu_tsc.log", "r");
	char buf[4096] = "";
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	cr_assert(strstr(buf, "ended its capture: another CUPTI client (torch.profiler?) installed "
			 "its own clock"), "recorder said: %s", buf);
	gt_store_free(s);
	truth_free(&t);
	unlink("emu_tsc.gtrace");
}

/* the same end seen from outside: a trainer started with the library
 * (autostart, no viewer) is recorded for a second by pid, installs its
 * clock in that second and runs on; the recorder's line names the reason,
 * and `gtrace attach --list` then shows the process ended, with the
 * reason on a line under its row */
Test(cudaemu, attach_list_says_why_a_capture_ended)
{
	char gtrace[1100], trainer[1100], lib[1100], pid[16];
	snprintf(gtrace, sizeof(gtrace), "%s/tui/gtrace", build);
	snprintf(trainer, sizeof(trainer), "%s/tests/cudaemu/cudaemu_trainer", build);
	snprintf(lib, sizeof(lib), "%s/capture/libgtrace-inject.so", build);
	pid_t tp = fork();
	if (tp == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int fd = open("emu_list_tr.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("CUDA_INJECTION64_PATH", lib, 1);
		setenv("GTRACE_AUTOSTART", "1", 1);
		setenv("RANK", "5", 1);          /* --list shows RANK/LOCAL_RANK */
		setenv("LOCAL_RANK", "1", 1);
		execl(trainer, trainer, "--out", "-", "--threads", "1", "--work", "30000",
		      "--rate", "3000", "--tsc-at", "1500", (char *)NULL);
		_exit(127);
	}
	snprintf(pid, sizeof(pid), "%d", (int)tp);
	wait_listening(tp);
	/* the recorder ends as soon as the capture it records ends; the long
	 * duration only leaves room for a slow start (ASan, a loaded machine) */
	char *rec[] = { gtrace, "record", "-o", "emu_list.gtrace", "-q", "--duration", "30",
			"--pid", pid, NULL };
	cr_assert_eq(run("emu_list_rec.log", rec), 0);
	char *argv[] = { gtrace, "attach", "--list", NULL };
	cr_assert_eq(run("emu_list.log", argv), 0);
	kill(tp, SIGKILL);
	waitpid(tp, NULL, 0);
	char buf[8192] = "", want[64];
	FILE *f = fopen("emu_list_rec.log", "r");
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	cr_assert(strstr(buf, "ended its capture: another CUPTI client (torch.profiler?) installed "
			 "its own clock"), "recorder said: %s", buf);
	f = fopen("emu_list.log", "r");
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	snprintf(want, sizeof(want), "%-8d %-5s %-10s %-5s ", (int)tp, "2", "ended", "5/1");
	const char *row = strstr(buf, want);
	cr_assert_not_null(row, "no ended row for %d: %s", (int)tp, buf);
	const char *nl = strchr(row, '\n');
	cr_assert_not_null(nl);
	static const char line[] = "         ended: another CUPTI client (torch.profiler?) "
				   "installed its own clock";
	cr_assert(!strncmp(nl + 1, line, sizeof(line) - 1), "list: %s", buf);
	unlink("emu_list.gtrace");
}

/* records without usable timestamps (zero, as CUPTI writes when its
 * timestamp memory runs out; end before start): none becomes an event (no
 * zero-length kernels), every one is counted, the rest is exact */
Test(cudaemu, bad_timestamps_counted_never_zero_length)
{
	struct truth t;
	struct gt_store *s = record_trainer("emu_badts", &t, "--threads", "3", "--work",
					    "2000", "--bad-ts", "50", NULL);
	size_t n_gpu, n_api;
	compare_n(s, &t, 1, &n_gpu, &n_api);
	uint64_t bad = 0;
	for (size_t i = 0; i < t.n; i++) {
		cr_assert_eq(t.w[i].seen, t.w[i].bad_ts == 0, "work %u (timestamps %d) seen %d",
			     t.w[i].corr, t.w[i].bad_ts, t.w[i].seen);
		cr_assert(t.w[i].seen_api);
		bad += t.w[i].bad_ts != 0;
	}
	cr_assert_eq(bad, 3 * 2 * 40);
	cr_assert_eq(n_gpu, t.n - bad);
	cr_assert_eq(gt_store_drops(s)->zero_timestamps, bad);
	cr_assert_eq(gt_store_drops_lost(gt_store_drops(s)), bad);
	gt_store_free(s);
	truth_free(&t);
	unlink("emu_badts.gtrace");
}

/* a burst larger than the buffer pool: 2 buffers, handed back by CUPTI's
 * worker once a second; the records CUPTI could not place are counted by
 * CUPTI (dropped) and the requests we refused by us (declined), exactly
 * as the emulator counted them, and everything else arrives intact */
Test(cudaemu, pool_exhausted_losses_counted_exactly)
{
	setenv("GTRACE_CUPTI_BUFFERS", "2", 1);
	setenv("CUDAEMU_WORKER_MS", "1000", 1);
	struct truth t;
	struct gt_store *s = record_trainer("emu_burst", &t, "--threads", "4", "--work",
					    "50000", "--dur-ns", "100", NULL);
	unsetenv("GTRACE_CUPTI_BUFFERS");
	unsetenv("CUDAEMU_WORKER_MS");
	cr_assert(t.have_stats);
	cr_assert_gt(t.refused, 0, "the burst did not exhaust the pool");
	cr_assert_gt(t.dropped, 0);
	size_t n_gpu, n_api;
	compare_n(s, &t, 1, &n_gpu, &n_api);
	const struct gt_drops *d = gt_store_drops(s);
	cr_assert_eq(d->cupti_dropped, t.dropped);
	cr_assert_eq(d->buffers_declined, t.refused);
	cr_assert_eq(d->zero_timestamps, 0);
	cr_assert_eq(d->ring_overflow, 0);
	cr_assert_eq(n_gpu + n_api + t.dropped, 2 * t.n, "%zu + %zu + %llu lost != %zu records",
		     n_gpu, n_api, t.dropped, 2 * t.n);
	gt_store_free(s);
	truth_free(&t);
	unlink("emu_burst.gtrace");
}

/* torchrun-like: 8 trainers started by a shell under one recording, RANK,
 * LOCAL_RANK and WORLD_SIZE set, two of them with RANK 3 (an autotune
 * child inherits its parent's); each becomes its own rank and process,
 * with the world size and host, and each one's capture equals its truth
 * (so no launch is linked to another process's kernel) */
Test(cudaemu, torchrun_like_eight_processes)
{
	char gtrace[1100], trainer[1100], cmd[4096];
	snprintf(gtrace, sizeof(gtrace), "%s/tui/gtrace", build);
	snprintf(trainer, sizeof(trainer), "%s/tests/cudaemu/cudaemu_trainer", build);
	int n = 0;
	n += snprintf(cmd + n, sizeof(cmd) - (size_t)n, "export WORLD_SIZE=7 CUDAEMU_DEVICES=1; ");
	for (int p = 0; p < 8; p++)
		n += snprintf(cmd + n, sizeof(cmd) - (size_t)n,
			      "RANK=%d LOCAL_RANK=%d %s --out emu_tr%d.tsv --threads 2 --work 400 "
			      "--gap-us 5 >/dev/null & ", p == 7 ? 3 : p, p == 7 ? 3 : p, trainer, p);
	snprintf(cmd + n, sizeof(cmd) - (size_t)n, "wait");
	char *argv[] = { gtrace, "record", "--force", "-o", "emu_tr.gtrace", "-q", "--", "/bin/sh", "-c", cmd,
			 NULL };
	cr_assert_eq(run("emu_tr.log", argv), 0);
	struct gt_store *s = load("emu_tr.gtrace");
	cr_assert_eq(gt_store_rank_count(s), 8);
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	int seen_rank[8] = { 0 };
	for (int p = 0; p < 8; p++) {
		char f[32];
		snprintf(f, sizeof(f), "emu_tr%d.tsv", p);
		struct truth t;
		read_truth(f, &t);
		cr_assert_eq(t.n, 800);
		const struct gt_rank *r = NULL;
		for (size_t i = 0; i < gt_store_rank_count(s); i++)
			if (gt_store_rank_at(s, i)->pid == t.pid)
				r = gt_store_rank_at(s, i);
		cr_assert_not_null(r, "process %ld has no rank", t.pid);
		cr_assert(r->rank >= 0 && r->rank < 8, "rank %d", r->rank);
		cr_assert_eq(seen_rank[r->rank], 0, "rank %d twice", r->rank);
		seen_rank[r->rank] = 1;
		if (p != 3 && p != 7)
			cr_assert_eq(r->rank, p, "RANK=%d became rank %d", p, r->rank);
		else         /* one keeps 3, the other goes past the world size */
			cr_assert(r->rank == 3 || r->rank == 7, "RANK=3 became rank %d", r->rank);
		cr_assert_eq(r->world_size, 7);
		cr_assert_eq(r->local_rank1, (p == 7 ? 3 : p) + 1, "LOCAL_RANK=%d kept as %d - 1",
			     p == 7 ? 3 : p, r->local_rank1);
		cr_assert_str_eq(gt_store_str(s, r->host), host);
		compare(s, &t);
		truth_free(&t);
		unlink(f);
	}
	gt_store_free(s);
	unlink("emu_tr.gtrace");
}

/* the trainer without the capture library: a plain process on the fake
 * driver (what an attach-later test starts) */
Test(cudaemu, trainer_runs_without_injection)
{
	char trainer[1100];
	snprintf(trainer, sizeof(trainer), "%s/tests/cudaemu/cudaemu_trainer", build);
	unsetenv("CUDA_INJECTION64_PATH");
	char *argv[] = { trainer, "--out", "emu_plain.tsv", "--threads", "2", "--work", "100", NULL };
	cr_assert_eq(run("emu_plain.log", argv), 0);
	struct truth t;
	read_truth("emu_plain.tsv", &t);
	cr_assert_eq(t.n, 200);
	cr_assert_eq(t.have_stats, 0);       /* no CUPTI in the process */
	for (size_t i = 0; i < t.n; i++)
		cr_assert(t.w[i].end > t.w[i].start && t.w[i].start > t.w[i].api_end);
	truth_free(&t);
}

/* torch.profiler started while gtrace captures: a Kineto-like client in
 * the trainer re-registers the buffer callbacks (the one pair CUPTI has),
 * enables its kinds, later disables them, flushes (forced) and finalizes
 * CUPTI.  gtrace notices (launches go on, its buffer callbacks fall
 * silent), ends its capture with one line, and counts the pool buffers
 * CUPTI handed to the other client (equal to the emulator's count and to
 * the buffers the client saw as unknown).  What it recorded is exact, and
 * is exactly the work whose records CUPTI delivered to gtrace's pair
 * (the emulator's own account, per correlation id). */
Test(cudaemu, kineto_takes_over_counted_and_said)
{
	char gtrace[1100], trainer[1100];
	snprintf(gtrace, sizeof(gtrace), "%s/tui/gtrace", build);
	snprintf(trainer, sizeof(trainer), "%s/tests/cudaemu/cudaemu_trainer", build);
	setenv("GTRACE_CLIENT_WATCH_MS", "800", 1);
	char *argv[] = { gtrace, "record", "--force", "-o", "emu_kineto.gtrace", "--", trainer,
			 "--out", "emu_kineto.tsv", "--threads", "2", "--work", "6000",
			 "--rate", "4000", "--kineto-at", "1000,4000", "--kineto-finalize", NULL };
	int rc = run("emu_kineto.log", argv);
	unsetenv("GTRACE_CLIENT_WATCH_MS");
	cr_assert_eq(rc, 0);
	struct truth t;
	read_truth("emu_kineto.tsv", &t);
	cr_assert_eq(t.n, 12000);
	struct gt_store *s = load("emu_kineto.gtrace");
	size_t n_gpu, n_api;
	compare_n(s, &t, 1, &n_gpu, &n_api);
	/* the truth's O lines (which callback pair got each id's records),
	 * K line (buffers the client saw as unknown) and S line's handed_over */
	cr_assert(t.have_kineto, "no K line");
	unsigned long long unknown = t.kineto_unknown, handed = t.handed_over;
	size_t to_us = 0, to_kineto = 0;
	for (size_t i = 0; i < t.n; i++) {
		const struct truth_w *w = &t.w[i];
		uint8_t own = w->corr < t.n_owner ? t.owner[w->corr] : 0;
		int ow = own & 15, oa = own >> 4;
		cr_assert_eq(w->seen, ow == 1, "work %u delivered to pair %d, in the capture: %d",
			     w->corr, ow, w->seen);
		cr_assert_eq(w->seen_api, oa == 1, "launch %u delivered to pair %d, in the capture: %d",
			     w->corr, oa, w->seen_api);
		to_us += ow == 1;
		to_kineto += ow == 2;
	}
	/* the scenario happened: both clients got records */
	cr_assert_gt(to_us, 500);
	cr_assert_gt(to_kineto, 500);
	cr_assert_neq(handed, ~0ull, "no S line");
	cr_assert_eq(unknown, handed, "the client saw %llu foreign buffers, the emulator handed over "
		     "%llu", unknown, handed);
	cr_assert_eq(gt_store_drops(s)->client_buffers, handed, "counted %llu pool buffers lost, "
		     "%llu handed to the other client", (unsigned long long)gt_store_drops(s)->client_buffers,
		     handed);
	char buf[8192] = "";
	FILE *f = fopen("emu_kineto.log", "r");
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	cr_assert(strstr(buf, "ended its capture: another CUPTI client (torch.profiler?) took the "
			 "activity buffers/kinds: capture stopped"), "recorder said: %s", buf);
	if (handed) {
		char want[96];
		snprintf(want, sizeof(want), "lost (+%llu activity buffer%s taken by another CUPTI client)",
			 handed, handed == 1 ? "" : "s");
		cr_assert(strstr(buf, want), "recorder said: %s", buf);
	}
	gt_store_free(s);
	truth_free(&t);
	unlink("emu_kineto.gtrace");
}

/* NVTX extensions: the trainer calls nvtxMemHeapRegister (NVTX's memory
 * extension module) 50 times; NVTX loads NVTX_INJECTION64_PATH (gtrace's
 * library) and calls its InitializeInjectionNvtxExtension, which hands the
 * module to CUPTI's; the emulated CUPTI takes that function, so all 50
 * calls reach it, and the capture is whole.  Before: gtrace's library had
 * no such entry, NVTX disabled the extension (0 reached CUPTI). */
Test(cudaemu, nvtx_extension_reaches_cupti)
{
	struct truth t;
	struct gt_store *s = record_trainer("emu_ext", &t, "--threads", "2", "--work",
					    "500", "--nvtx", "3", "--nvtx-ext", "50", NULL);
	compare(s, &t);
	cr_assert_eq(t.ext_calls, 50);        /* the truth's X line */
	cr_assert_eq(t.ext_handled, 50, "%llu of 50 NVTX extension calls reached CUPTI",
		     t.ext_handled);
	gt_store_free(s);
	truth_free(&t);
	unlink("emu_ext.gtrace");
}

/* forked DataLoader-like children that make an NVTX range (their first
 * NVTX call: NVTX initializes in the child, through gtrace's library, into
 * the child's CUPTI) and call cuInit (refused: CUDA is not fork-safe):
 * each exits 0 at once (no lock of the parent's taken in the child), the
 * parent's capture is exact and whole, nothing of a child's is in it, and
 * each buffer the child's CUPTI asked for is declined and counted in the
 * ring the child shares (2 per child: its range's START and END records,
 * each asking anew).  Before: the child took gtrace's buffer lock (held by
 * a thread that does not exist in it, at worst) and was handed a pool
 * buffer nobody would drain: nothing counted. */
Test(cudaemu, forked_children_nvtx_and_cuinit)
{
	struct truth t;
	/* each forked child: status 0, under 500 ms (read_truth) */
	struct gt_store *s = record_trainer("emu_fork", &t, "--threads", "4", "--work", "2000",
					    "--gap-us", "2", "--fork", "5", "--fork-calls", NULL);
	cr_assert_eq(t.forks, 5);
	compare(s, &t);
	for (uint32_t l = 0; l < gt_store_lane_count(s); l++) {
		const struct gt_lane *ln = gt_store_lane_at(s, l);
		cr_assert_eq(ln->key.pid, t.pid, "a lane of process %lld", (long long)ln->key.pid);
		for (size_t i = 0; i < ln->n; i++)
			cr_assert_str_neq(gt_store_str(s, ln->ev[i].name), "child_range");
	}
	const struct gt_drops *d = gt_store_drops(s);
	cr_assert_eq(d->buffers_declined, 10, "%llu buffer requests of the children declined",
		     (unsigned long long)d->buffers_declined);
	cr_assert_eq(gt_store_drops_lost(d), 0);
	gt_store_free(s);
	truth_free(&t);
	unlink("emu_fork.gtrace");
}

/* the trainer exits while kernels run longer than the exit flush waits
 * (1.5 s; gtrace waits 1 s for completed buffers, then forces): CUPTI
 * hands back records still incomplete, where the record walk stops.  Each
 * such walk is a read error, counted in the ring and the recording
 * (read_errors, part of "lost"), and what did arrive is exact.  Before:
 * the walk's error went only to the `status` line, the recording said 0
 * lost with the running kernels (and whatever followed them) missing. */
Test(cudaemu, read_errors_counted_in_the_recording)
{
	char gtrace[1100], trainer[1100];
	snprintf(gtrace, sizeof(gtrace), "%s/tui/gtrace", build);
	snprintf(trainer, sizeof(trainer), "%s/tests/cudaemu/cudaemu_trainer", build);
	char *argv[] = { gtrace, "record", "--force", "-o", "emu_rderr.gtrace", "-q", "--", trainer,
			 "--out", "emu_rderr.tsv", "--threads", "2", "--work", "500",
			 "--tail-ms", "1500", NULL };
	cr_assert_eq(run("emu_rderr.log", argv), 0);
	struct truth t;
	read_truth("emu_rderr.tsv", &t);
	struct gt_store *s = load("emu_rderr.gtrace");
	size_t n_gpu, n_api;
	compare_n(s, &t, 1, &n_gpu, &n_api);
	cr_assert_lt(n_gpu, t.n, "the running kernels cannot have arrived");
	const struct gt_drops *d = gt_store_drops(s);
	cr_assert_geq(d->read_errors, 1, "a record walk stopped at an incomplete record, not counted");
	cr_assert_geq(gt_store_drops_lost(d), d->read_errors);
	gt_store_free(s);
	truth_free(&t);
	unlink("emu_rderr.gtrace");
}

/* the same seen from outside: a trainer started with the library
 * (autostart, no viewer) is recorded by pid while its Kineto-like client
 * takes CUPTI's callbacks; `gtrace attach --list` then shows it ended,
 * with the reason and the buffers lost under its row */
Test(cudaemu, attach_list_says_a_client_took_cupti)
{
	char gtrace[1100], trainer[1100], lib[1100], pid[16];
	snprintf(gtrace, sizeof(gtrace), "%s/tui/gtrace", build);
	snprintf(trainer, sizeof(trainer), "%s/tests/cudaemu/cudaemu_trainer", build);
	snprintf(lib, sizeof(lib), "%s/capture/libgtrace-inject.so", build);
	pid_t tp = fork();
	if (tp == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int fd = open("emu_klist_tr.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("CUDA_INJECTION64_PATH", lib, 1);
		setenv("GTRACE_AUTOSTART", "1", 1);
		setenv("GTRACE_CLIENT_WATCH_MS", "500", 1);
		execl(trainer, trainer, "--out", "-", "--threads", "1", "--work", "30000",
		      "--rate", "3000", "--kineto-at", "1500,29000", (char *)NULL);
		_exit(127);
	}
	snprintf(pid, sizeof(pid), "%d", (int)tp);
	wait_listening(tp);
	char *rec[] = { gtrace, "record", "-o", "emu_klist.gtrace", "-q", "--duration", "30",
			"--pid", pid, NULL };
	cr_assert_eq(run("emu_klist_rec.log", rec), 0);
	char *argv[] = { gtrace, "attach", "--list", NULL };
	cr_assert_eq(run("emu_klist.log", argv), 0);
	kill(tp, SIGKILL);
	waitpid(tp, NULL, 0);
	char buf[8192] = "", want[64];
	FILE *f = fopen("emu_klist.log", "r");
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	snprintf(want, sizeof(want), "%-8d %-5s %-10s ", (int)tp, "2", "ended");
	const char *row = strstr(buf, want);
	cr_assert_not_null(row, "no ended row for %d: %s", (int)tp, buf);
	const char *nl = strchr(row, '\n');
	cr_assert_not_null(nl);
	static const char line[] = "         ended: another CUPTI client (torch.profiler?) took the "
				   "activity buffers/kinds: capture stopped (";
	cr_assert(!strncmp(nl + 1, line, sizeof(line) - 1), "list: %s", buf);
	unsigned nb = 0;
	cr_assert_eq(sscanf(nl + sizeof(line), "%u activity buffer", &nb), 1, "list: %s", buf);
	cr_assert(strstr(nl, nb == 1 ? "buffer lost to it)" : "buffers lost to it)"), "list: %s", buf);
	cr_assert_geq(nb, 1);
	unlink("emu_klist.gtrace");
}

/* device-wide and stream synchronizations, and batched copies
 * (cudaMemcpyBatchAsync, CUDA 13 records folding a run of copies with
 * copyCount): each sync once on its device's synchronization lane with its
 * exact times, none on a stream lane, so the stream count stays the
 * trainer's; every copy of every batch covered once with its bytes */
Test(cudaemu, syncs_and_batched_copies_equal_ground_truth)
{
	struct truth t;
	struct gt_store *s = record_trainer("emu_sync", &t, "--threads", "4", "--work",
					    "1000", "--syncs", "50", "--batches", "40", NULL);
	cr_assert_eq(t.n_y, 4 * 20);
	cr_assert_eq(t.n_c, 4 * 25 * 6);
	size_t device_wide = 0;
	for (size_t k = 0; k < t.n_y; k++)
		device_wide += t.y[k].stream == 0;
	cr_assert_eq(device_wide, t.n_y / 2);
	compare(s, &t);
	/* streams: the trainer's (device, stream) pairs, and no stream 0 */
	size_t streams = 0;
	for (size_t i = 0; i < t.n; i++) {
		int dup = 0;
		for (size_t j = 0; j < i && !dup; j++)
			dup = t.w[j].device == t.w[i].device && t.w[j].stream == t.w[i].stream;
		streams += !dup;
	}
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_overview_result o;
	char err[256];
	cr_assert_eq(gt_overview_compute(s, &sc, &o, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(o.streams, streams, "overview: %zu streams, the trainer used %zu", o.streams,
		     streams);
	gt_overview_result_done(&o);
	gt_store_free(s);
	truth_free(&t);
}

static int a_by_ts(const void *x, const void *y)
{
	const struct truth_a *a = x, *b = y;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* CUPTI memory activity (MEMORY2) of cuMemAlloc / cuMemFree through the
 * capture into the memory-usage figures: per device the records, counts,
 * bytes, the peak and its time, the end, against the trainer's A lines
 * summed here in time order (an independent count of the truth) */
Test(cudaemu, allocations_reach_memory_usage)
{
	struct truth t;
	struct gt_store *s = record_trainer("emu_mem", &t, "--threads", "2", "--work",
					    "400", "--allocs", "20", NULL);
	cr_assert_eq(t.n_a, 2 * (20 + 18));
	qsort(t.a, t.n_a, sizeof(*t.a), a_by_ts);
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_mem_usage_result m;
	char err[256];
	cr_assert_eq(gt_mem_usage_compute(s, &sc, &m, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(m.n, 2, "%zu devices with records", m.n);
	for (int dev = 0; dev < 2; dev++) {
		unsigned long long recs = 0, allocs = 0, frees = 0, ab = 0, fb = 0, peak_ts = 0;
		long long sum = 0, peak = 0;
		for (size_t k = 0; k < t.n_a; k++) {
			if (t.a[k].device != dev)
				continue;
			recs++;
			if (t.a[k].op == 1) {
				allocs++;
				ab += t.a[k].bytes;
				sum += (long long)t.a[k].bytes;
			} else {
				frees++;
				fb += t.a[k].bytes;
				sum -= (long long)t.a[k].bytes;
			}
			if (sum > peak) {
				peak = sum;
				peak_ts = t.a[k].ts;
			}
		}
		const struct gt_mem_usage_dev *d = NULL;
		for (size_t i = 0; i < m.n; i++)
			if (m.dev[i].device == (uint32_t)dev)
				d = &m.dev[i];
		cr_assert_not_null(d, "GPU %d has no records", dev);
		cr_expect_eq(d->records, recs, "GPU %d: %llu records, truth %llu", dev,
			     (unsigned long long)d->records, recs);
		cr_expect_eq(d->allocs, allocs);
		cr_expect_eq(d->frees, frees);
		cr_expect_eq((unsigned long long)d->alloc_bytes, ab);
		cr_expect_eq((unsigned long long)d->free_bytes, fb);
		cr_expect_eq(d->peak_bytes, peak, "GPU %d: peak %lld, truth %lld", dev,
			     (long long)d->peak_bytes, peak);
		cr_expect_eq((unsigned long long)d->peak_ns, peak_ts);
		cr_expect_eq(d->end_bytes, sum);
	}
	gt_mem_usage_result_done(&m);
	gt_store_free(s);
	truth_free(&t);
}
