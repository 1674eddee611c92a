/*
 * test_cudaemu_netlane.c - the allocated-bytes lanes (gtrace/mem_lane.h) of
 * remote live nodes: the session behind `open --live CMD...`, `open -` and
 * `attach --hosts` (tui/netsess.c, compiled in here) receiving two
 * `gtrace record -q -o -` streams of the stand-in trainer with `--allocs`
 * (cuMemAlloc / cuMemFree, CUPTI MEMORY2 records; the emulated CUPTI
 * handing its buffers back newest first, CUDAEMU_SHUFFLE), as a viewer
 * would: poll, draw, poll.
 *
 * - lanes appear while the nodes still send (not only at the end);
 * - at the end each trainer's process (its pid in the truth file) has one
 *   lane per device, one sample per A line of its truth at its time
 *   holding the running sum of the truth's bytes in time order (summed
 *   here), on the rank the job gave the node (two ranks, not one);
 * - the tracker folded exactly the truths' records, in several syncs (a
 *   recorder sends each flush's events in time order per lane, so records
 *   rarely come late here: late merging is checked by cudaemu-memlane and
 *   analysis_mem_lane);
 * - the store says it has the lanes (GT_MEM_LANE_META), so a recording
 *   of the session builds them when read back.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gtrace/gtfile.h"
#include "gtrace/mem_lane.h"
#include "gtrace/store.h"
#include "../../tui/netsess.h"
#include "emutest.h"
#include "truth.h"

/* what netsess.c takes from the rest of the program */
int64_t live_mono_ns(void);
struct ui_source;
int ui_run(struct ui_source *src);

int64_t live_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int ui_run(struct ui_source *src)
{
	(void)src;
	return 1;
}

void live_fmt_bytes(uint64_t v, char *buf, size_t len);

void live_fmt_bytes(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%llu", (unsigned long long)v);
}

void live_fmt_count(double v, char *buf, size_t len);

void live_fmt_count(double v, char *buf, size_t len)
{
	snprintf(buf, len, "%.0f", v);
}

static char build[1024];

static void setup(void)
{
	emutest_env(build, sizeof(build), 0);
	unsetenv("CUDA_INJECTION64_PATH");
}

TestSuite(cudaemu_netlane, .init = setup, .timeout = 120);

static int a_by_ts(const void *x, const void *y)
{
	const struct truth_a *a = x, *b = y;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* the lane "Driver allocated (GPU dev)" of process pid; NULL when none */
static const struct gt_lane *lane_of(const struct gt_store *s, long pid, int dev)
{
	char nm[64];
	snprintf(nm, sizeof(nm), "Driver allocated (GPU %d)", dev);
	const struct gt_lane *found = NULL;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type == GT_LANE_COUNTER && l->key.pid == pid && l->name &&
		    !strcmp(gt_store_str(s, l->name), nm)) {
			cr_assert_null(found, "two lanes %s for pid %ld", nm, pid);
			found = l;
		}
	}
	return found;
}

static size_t count_lanes(const struct gt_store *s)
{
	size_t n = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type == GT_LANE_COUNTER && l->n && l->ev[0].kind == GT_EV_COUNTER &&
		    l->ev[0].sub == GT_MEM_LANE_SUB)
			n++;
	}
	return n;
}

/* node k's lanes against its truth; the lanes' rank */
static int check_node(const struct gt_store *s, struct truth *t, int k)
{
	qsort(t->a, t->n_a, sizeof(*t->a), a_by_ts);
	int rank = -1;
	for (int dev = 0; dev < 2; dev++) {
		const struct gt_lane *l = lane_of(s, t->pid, dev);
		cr_assert_not_null(l, "node %d (pid %ld): no lane Driver allocated (GPU %d)", k, t->pid, dev);
		cr_assert(rank < 0 || rank == l->key.rank, "node %d: lanes on two ranks", k);
		rank = l->key.rank;
		size_t j = 0;
		long long sum = 0;
		for (size_t i = 0; i < t->n_a; i++) {
			if (t->a[i].device != dev)
				continue;
			sum += t->a[i].op == 1 ? (long long)t->a[i].bytes : -(long long)t->a[i].bytes;
			cr_assert_lt(j, l->n, "node %d GPU %d: %zu samples, the truth has more", k, dev, l->n);
			double v;
			memcpy(&v, &l->ev[j].arg, sizeof(v));
			cr_assert_eq((unsigned long long)l->ev[j].start_ns, t->a[i].ts,
				     "node %d GPU %d sample %zu at %lld, truth %llu", k, dev, j,
				     (long long)l->ev[j].start_ns, t->a[i].ts);
			cr_assert_eq((long long)v, sum, "node %d GPU %d sample %zu: %lld, truth %lld", k,
				     dev, j, (long long)v, sum);
			j++;
		}
		cr_assert_gt(j, 0, "node %d: the truth has no allocation on GPU %d", k, dev);
		cr_assert_eq(j, l->n, "node %d GPU %d: %zu samples, truth %zu records", k, dev, l->n, j);
	}
	return rank;
}

Test(cudaemu_netlane, two_streamed_nodes_get_exact_lanes)
{
	struct gt_store *s = gt_store_new();
	struct netsess ns;
	cr_assert_eq(netsess_init(&ns, s, 0, 0), 0);
	char err[512];
	for (int k = 0; k < 2; k++) {
		char cmd[4096];
		snprintf(cmd, sizeof(cmd),
			 "exec env LD_LIBRARY_PATH=%s/tests/cudaemu CUDAEMU_SHUFFLE=64 "
			 "GTRACE_HOSTNAME=node%d %s/tui/gtrace record -q -o - -- "
			 "%s/tests/cudaemu/cudaemu_trainer --out emu_netlane%d.tsv --threads 2 "
			 "--work 6000 --allocs 20 --rate 4000 2>emu_netlane%d.log",
			 build, k, build, build, k, k);
		cr_assert_eq(netsess_add_cmd(&ns, cmd, err, sizeof(err)), 0, "%s", err);
	}
	int seen_receiving = 0, polls = 0;
	int64_t t0 = live_mono_ns();
	while (!netsess_done(&ns) && live_mono_ns() - t0 < 90000000000LL) {
		int r = netsess_poll(&ns);
		cr_assert_geq(r, 0, "poll: %s", ns.msg);
		polls++;
		if (!netsess_done(&ns) && count_lanes(s))
			seen_receiving = 1;
		if (!r) {
			struct timespec ts = { 0, 5000000 };
			nanosleep(&ts, NULL);
		}
	}
	cr_assert(netsess_done(&ns), "the nodes did not end");
	netsess_stop(&ns, 5.0);
	struct gt_mem_lane_stats st;
	gt_mem_lane_stats(ns.ml, &st);
	struct truth t[2];
	size_t total = 0;
	int ranks[2];
	for (int k = 0; k < 2; k++) {
		char path[64];
		snprintf(path, sizeof(path), "emu_netlane%d.tsv", k);
		cr_assert_eq(truth_read(path, &t[k], err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(t[k].n_a, 2 * (300 + 298));   /* 6000 / 20 a thread */
		total += t[k].n_a;
		ranks[k] = check_node(s, &t[k], k);
	}
	cr_assert_neq(ranks[0], ranks[1], "both nodes' lanes on rank %d", ranks[0]);
	cr_assert_eq(count_lanes(s), 4);
	cr_assert_eq(st.records, total, "%llu records folded, truth %zu",
		     (unsigned long long)st.records, total);
	cr_assert_gt(st.syncs, 1);
	cr_assert(seen_receiving, "the lanes appeared only after the streams ended (%d polls)", polls);
	cr_assert_str_eq(gt_store_meta_get(s, GT_MEM_LANE_META), "records");
	cr_log_info("netlane: %llu records in %llu syncs over %d polls, %llu late, %llu rewritten",
		    (unsigned long long)st.records, (unsigned long long)st.syncs, polls,
		    (unsigned long long)st.late, (unsigned long long)st.rewritten);
	for (int k = 0; k < 2; k++)
		truth_free(&t[k]);
	netsess_free(&ns);
	gt_store_free(s);
}

/* `gtrace record -o OUT --from CMD --from CMD` (the same session, its
 * merged store streamed to a file): the file says it has the lanes and
 * reading it back builds them, each node's exact against its truth */
Test(cudaemu_netlane, recorded_from_streams_builds_the_lanes)
{
	char cmd[10240], node[2][4096];
	for (int k = 0; k < 2; k++)
		snprintf(node[k], sizeof(node[k]),
			 "exec env LD_LIBRARY_PATH=%s/tests/cudaemu CUDAEMU_SHUFFLE=64 "
			 "GTRACE_HOSTNAME=node%d %s/tui/gtrace record -q -o - -- "
			 "%s/tests/cudaemu/cudaemu_trainer --out emu_netrec%d.tsv --threads 2 "
			 "--work 300 --allocs 5 --rate 4000 2>emu_netrec%d.log",
			 build, k, build, build, k, k);
	snprintf(cmd, sizeof(cmd), "%s/tui/gtrace record --force -q -o emu_netrec.gtrace --from '%s' "
		 "--from '%s' >emu_netrec.log 2>&1", build, node[0], node[1]);
	cr_assert_eq(system(cmd), 0, "gtrace record --from failed (emu_netrec.log)");
	struct gt_store *s = gt_store_new();
	struct gt_file_info info;
	char err[512];
	cr_assert_eq(gt_file_read("emu_netrec.gtrace", s, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(gt_store_meta_get(s, GT_MEM_LANE_META), "records");
	int ranks[2];
	for (int k = 0; k < 2; k++) {
		struct truth t;
		char path[64];
		snprintf(path, sizeof(path), "emu_netrec%d.tsv", k);
		cr_assert_eq(truth_read(path, &t, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(t.n_a, 2 * (60 + 58));
		ranks[k] = check_node(s, &t, k);
		truth_free(&t);
	}
	cr_assert_neq(ranks[0], ranks[1]);
	cr_assert_eq(count_lanes(s), 4);
	gt_store_free(s);
}

/* a stream whose allocator records are not a live capture's (the
 * simulator's planted Kineto-like records, no "memory.allocated_lane"):
 * no lane made of them */
Test(cudaemu_netlane, imported_records_make_no_lane)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "%s/tui/gtrace sim --force -o emu_netsim.gtrace --steps 6 "
		 "--memory leak >emu_netsim.log 2>&1", build);
	cr_assert_eq(system(cmd), 0, "gtrace sim failed (emu_netsim.log)");
	struct gt_store *s = gt_store_new();
	struct netsess ns;
	cr_assert_eq(netsess_init(&ns, s, 0, 0), 0);
	char err[256];
	cr_assert_eq(netsess_add_cmd(&ns, "exec cat emu_netsim.gtrace", err, sizeof(err)), 0, "%s", err);
	int64_t t0 = live_mono_ns();
	while (!netsess_done(&ns) && live_mono_ns() - t0 < 30000000000LL) {
		cr_assert_geq(netsess_poll(&ns), 0, "poll: %s", ns.msg);
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
	netsess_stop(&ns, 5.0);
	size_t records = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		for (size_t j = 0; j < l->n; j++)
			records += l->ev[j].kind == GT_EV_INSTANT && (l->ev[j].flags & GT_EVF_MEMORY);
	}
	cr_assert_gt(records, 0, "the simulated stream has no allocator records");
	cr_assert_eq(count_lanes(s), 0);
	cr_assert_null(gt_store_meta_get(s, GT_MEM_LANE_META));
	netsess_free(&ns);
	gt_store_free(s);
}
