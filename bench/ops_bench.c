/*
 * ops_bench.c - speed of the operator, memory-usage and diff reports
 * (issue 15) over simulated captures of EVENTS events (1 rank x 4 GPUs,
 * seed 1, allocator records planted with --memory leak): the "ops" and
 * "memory-usage" reports over the whole capture, then `gtrace diff` of
 * that capture (baseline) against a straggler capture of the same size
 * (experiment), each diff report; last the ops report grouped by input
 * shapes and by call stack, with shapes and stacks planted on the ops; and
 * the Operators page's drill-down (the report's instances hook, Enter on
 * the row with the most calls of each table: by name, by shapes, by stack,
 * a diff_ops row for one run); then the viewer's compare pages (`gtrace
 * open A B`: one store, two ranks, GT_DIFF_F_RANK_B): the step breakdown
 * with every aligned step and the overview verdicts over a 2-rank capture
 * of EVENTS events.  Prints "name value unit" lines
 * (median wall time of RUNS runs; cpu = median CPU time, less sensitive
 * to a loaded machine).
 * usage: ops_bench [EVENTS] [RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gtrace/diff.h"
#include "gtrace/ops.h"
#include "gtrace/report.h"
#include "gtrace/sim.h"
#include "gtrace/store.h"
#include "bench.h"

static struct gt_store *capture_ranks(uint64_t n, enum gt_sim_scenario sc, int ranks)
{
	struct gt_store *s = gt_store_new();
	char err[256];
	struct gt_sim_opts o = { .gpus = 4 / ranks, .ranks = ranks, .scenario = sc, .events = n,
			      .seed = 1, .flags = GT_SIM_F_MEMORY | GT_SIM_F_MEMLEAK };
	if (!s || gt_sim_generate(&o, s, err, sizeof(err))) {
		fprintf(stderr, "sim: %s\n", err);
		exit(1);
	}
	return s;
}

static struct gt_store *capture(uint64_t n, enum gt_sim_scenario sc)
{
	return capture_ranks(n, sc, 1);
}

/* plant input shapes and call stacks on the capture's CPU ops (the
 * simulator writes none): 16 shapes and 4 stacks, taken in turn, so each
 * operator name has up to 16 (name, shapes) and 4 (name, stack) rows */
static void plant_args(struct gt_store *s)
{
	uint32_t sh[16], st[4];
	char b[96];
	for (int i = 0; i < 16; i++) {
		snprintf(b, sizeof(b), "[[%d, 256, 56, 56], [256, 256, 3, 3], [], []]", 8 * (i + 1));
		sh[i] = gt_store_intern_cstr(s, b);
	}
	for (int i = 0; i < 4; i++) {
		snprintf(b, sizeof(b), "train.py(%d): step;model.py(%d): forward", 40 + i, 100 + i);
		st[i] = gt_store_intern_cstr(s, b);
	}
	uint64_t k = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		for (size_t j = 0; j < l->n; j++, k++)
			if (l->ev[j].kind == GT_EV_CPU_OP) {
				l->ev[j].arg = (l->ev[j].arg & ~(uint64_t)0xffffffffu) | sh[k % 16];
				l->ev[j].aux = st[(k / 16) % 4];
			}
	}
}

/* one run of report `name` (diff when b != NULL, of ranks 0 and 1 of one
 * store when b == a; group: the ops report's --group-by); exits on failure */
static void run_once(const struct gt_store *a, const struct gt_store *b, const char *name,
		     int group)
{
	struct gt_report_out o = {0};
	char err[256] = "";
	int rc;
	if (b) {
		struct gt_diff_opts d = { .rank = -1 };
		if (a == b)
			d = (struct gt_diff_opts){ .rank = 0, .rank_b = 1, .flags = GT_DIFF_F_RANK_B };
		rc = gt_diff_run(a, b, name, &d, &o, err, sizeof(err));
	} else {
		struct gt_scope sc;
		gt_scope_all(&sc);
		sc.flags |= (unsigned)group << GT_OPS_SCOPE_GROUP_SHIFT;
		rc = gt_report_find(name)->run(a, &sc, &o, err, sizeof(err));
	}
	if (rc) {
		fprintf(stderr, "%s: %s\n", name, err);
		exit(1);
	}
	gt_report_out_done(&o);
}

static void timed(const char *label, const struct gt_store *a, const struct gt_store *b,
		  const char *name, int group, int runs)
{
	double *t = calloc((size_t)runs, sizeof(*t)), *c = calloc((size_t)runs, sizeof(*c));
	for (int i = 0; i < runs; i++) {
		double w0 = bench_ms(CLOCK_MONOTONIC), c0 = bench_ms(CLOCK_PROCESS_CPUTIME_ID);
		run_once(a, b, name, group);
		t[i] = bench_ms(CLOCK_MONOTONIC) - w0;
		c[i] = bench_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
	}
	bench_sort(t, runs);
	bench_sort(c, runs);
	printf("%s %.1f ms (cpu %.1f ms)\n", label, t[runs / 2], c[runs / 2]);
	free(t);
	free(c);
}

/* the row of t with the largest int in column col */
static size_t busiest_row(const struct gt_table *t, const char *col)
{
	size_t c = 0, best = 0;
	while (c < t->ncols && strcmp(t->cols[c].name, col))
		c++;
	for (size_t r = 0; c < t->ncols && r < t->nrows; r++)
		if (gt_table_cell(t, r, c)->i > gt_table_cell(t, best, c)->i)
			best = r;
	return best;
}

/* the ops hook on the busiest row of report output o (made over sc) */
static void timed_drill(const char *label, const struct gt_store *s, const struct gt_scope *sc,
			struct gt_report_out *o, const char *count_col, int runs)
{
	const struct gt_report *rep = gt_report_find("ops");
	const struct gt_table *t = o->tables[0];
	size_t row = busiest_row(t, count_col), n = 0;
	double *w = calloc((size_t)runs, sizeof(*w)), *c = calloc((size_t)runs, sizeof(*c));
	for (int i = 0; i < runs; i++) {
		struct gt_ref *v = NULL;
		double w0 = bench_ms(CLOCK_MONOTONIC), c0 = bench_ms(CLOCK_PROCESS_CPUTIME_ID);
		if (rep->instances(s, sc, t, row, &v, &n)) {
			fprintf(stderr, "%s: no instances\n", label);
			exit(1);
		}
		w[i] = bench_ms(CLOCK_MONOTONIC) - w0;
		c[i] = bench_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
		free(v);
	}
	bench_sort(w, runs);
	bench_sort(c, runs);
	printf("%s %.1f ms (cpu %.1f ms) %zu calls\n", label, w[runs / 2], c[runs / 2], n);
	free(w);
	free(c);
	gt_report_out_done(o);
}

/* report `name` over the whole capture (group: --group-by) into *o */
static void run_into(const struct gt_store *s, int group, struct gt_scope *sc, struct gt_report_out *o)
{
	char err[256] = "";
	gt_scope_all(sc);
	sc->flags |= (unsigned)group << GT_OPS_SCOPE_GROUP_SHIFT;
	memset(o, 0, sizeof(*o));
	if (gt_report_find("ops")->run(s, sc, o, err, sizeof(err)) || !o->n) {
		fprintf(stderr, "ops: %s\n", err);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	if (runs < 1)
		runs = 1;
	struct gt_store *a = capture(n, GT_SIM_BALANCED);
	printf("events %zu\n", gt_store_event_count(a));
	timed("ops_report", a, NULL, "ops", GT_OPS_BY_NAME, runs);
	timed("memory_usage_report", a, NULL, "memory-usage", 0, runs);
	struct gt_store *b = capture(n, GT_SIM_STRAGGLER);
	printf("experiment_events %zu\n", gt_store_event_count(b));
	timed("diff_breakdown", a, b, "breakdown", 0, runs);
	timed("diff_kernels", a, b, "kernels", 0, runs);
	timed("diff_ops", a, b, "ops", 0, runs);
	timed("diff_overview", a, b, "overview", 0, runs);
	gt_store_free(b);
	b = NULL;
	plant_args(a);
	timed("ops_report_by_shape", a, NULL, "ops", GT_OPS_BY_SHAPE, runs);
	timed("ops_report_by_stack", a, NULL, "ops", GT_OPS_BY_STACK, runs);
	struct gt_scope sc;
	struct gt_report_out o;
	run_into(a, GT_OPS_BY_NAME, &sc, &o);
	timed_drill("ops_drill_by_name", a, &sc, &o, "Calls", runs);
	run_into(a, GT_OPS_BY_SHAPE, &sc, &o);
	timed_drill("ops_drill_by_shape", a, &sc, &o, "Calls", runs);
	run_into(a, GT_OPS_BY_STACK, &sc, &o);
	timed_drill("ops_drill_by_stack", a, &sc, &o, "Calls", runs);
	/* compare mode: a diff_ops row, one run's calls (rank 0 against itself) */
	struct gt_diff_opts d = { .rank = 0, .rank_b = 0, .flags = GT_DIFF_F_RANK_B };
	char err[256] = "";
	memset(&o, 0, sizeof(o));
	if (gt_diff_run(a, a, "ops", &d, &o, err, sizeof(err)) || !o.n) {
		fprintf(stderr, "diff ops: %s\n", err);
		return 1;
	}
	gt_scope_all(&sc);
	sc.rank = 0;
	timed_drill("ops_drill_diff_row", a, &sc, &o, "Baseline Count", runs);
	gt_store_free(a);
	/* the viewer's compare pages 3-5 on two runs held as ranks of one store */
	a = capture_ranks(n, GT_SIM_BALANCED, 2);
	printf("two_rank_events %zu\n", gt_store_event_count(a));
	timed("compare_steps_rank_b", a, a, "breakdown", 0, runs);
	timed("compare_overview_rank_b", a, a, "overview", 0, runs);
	gt_store_free(a);
	gt_store_free(b);
	return 0;
}
