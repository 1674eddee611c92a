/*
 * test_report_inst.c - typed report rows and the drill-down hook
 * (struct gt_report.instances): on a planted store, every row of the
 * kernels, memory, nccl and ops tables lists exactly the planted events of
 * that row (counts and kinds worked out in the comments), the column flags
 * say which column is the name, the key and a duration, and tables without
 * instances say so.  The ops hook lists a grouped row's calls (name +
 * input shapes, name + call stack) and, with the kernels hook, the rows of
 * gtrace diff's per-name tables per run (the Operators page's compare
 * mode); each count also equals the table's own Calls / Count cell.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/diff.h"
#include "gtrace/ops.h"
#include "gtrace/report.h"
#include "gtrace/store.h"

static uint32_t lane(struct gt_store *s, int type, int dev, int64_t id)
{
	struct gt_lane_key k = { .type = (uint8_t)type, .device = dev, .pid = 1, .id = id };
	return gt_store_lane(s, &k);
}

static void add(struct gt_store *s, uint32_t l, int kind, int sub, const char *name,
		int64_t start, int64_t dur, uint64_t arg, unsigned flags)
{
	struct gt_event e = { .start_ns = start, .dur_ns = dur, .arg = arg, .lane = l,
			      .kind = (uint8_t)kind, .sub = (uint8_t)sub, .flags = (uint16_t)flags };
	e.name = gt_store_intern_cstr(s, name);
	cr_assert_eq(gt_store_add(s, &e), 0);
}

/*
 * GPU 0 stream 7: gemm x3, H2D copies x3, a memset, D2H copies x2,
 *   allreduce (250000 Float, group 4: 1e6 bytes) x2, allreduce (250 Float:
 *   1000 bytes) x1, a SendRecv NCCL kernel without arguments x1.
 * GPU 1 stream 7: gemm x1.
 * host thread 11: aten::mm [0,100) holding a nested aten::mm [10,20) (left
 *   out: the table merges it), aten::mm [200,300), aten::add [400,450).
 */
static struct gt_store *planted(void)
{
	struct gt_store *s = gt_store_new();
	uint32_t g0 = lane(s, GT_LANE_GPU, 0, 7), g1 = lane(s, GT_LANE_GPU, 1, 7);
	uint32_t h = lane(s, GT_LANE_HOST, -1, 11);
	for (int i = 0; i < 3; i++)
		add(s, g0, GT_EV_KERNEL, 0, "gemm", 1000 + i * 100, 50 + i, 0, 0);
	add(s, g1, GT_EV_KERNEL, 0, "gemm", 1000, 70, 0, 0);
	for (int i = 0; i < 3; i++)
		add(s, g0, GT_EV_MEMCPY, GT_COPY_H2D, "Memcpy HtoD", 2000 + i * 100, 10, 1000, 0);
	add(s, g0, GT_EV_MEMSET, 0, "Memset", 2500, 5, 64, 0);
	for (int i = 0; i < 2; i++)
		add(s, g0, GT_EV_MEMCPY, GT_COPY_D2H, "Memcpy DtoH", 2600 + i * 100, 10, 1000, 0);
	struct gt_nccl big = { .collective = gt_store_intern_cstr(s, "allreduce"),
			       .dtype = gt_store_intern_cstr(s, "Float"), .in_nelems = 250000,
			       .out_nelems = 250000, .group_size = 4, .dtype_bytes = 4 };
	struct gt_nccl small = big;
	small.in_nelems = small.out_nelems = 250;
	uint64_t bid = gt_store_nccl(s, &big), sid = gt_store_nccl(s, &small);
	add(s, g0, GT_EV_KERNEL, 0, "ncclKernel_AllReduce", 3000, 100, bid << 32, GT_EVF_NCCL);
	add(s, g0, GT_EV_KERNEL, 0, "ncclKernel_AllReduce", 3200, 100, bid << 32, GT_EVF_NCCL);
	add(s, g0, GT_EV_KERNEL, 0, "ncclKernel_AllReduce", 3400, 10, sid << 32, GT_EVF_NCCL);
	add(s, g0, GT_EV_KERNEL, 0, "ncclKernel_SendRecv", 3600, 7, 0, GT_EVF_NCCL);
	add(s, h, GT_EV_CPU_OP, 0, "aten::mm", 0, 100, 0, 0);
	add(s, h, GT_EV_CPU_OP, 0, "aten::mm", 10, 10, 0, 0);
	add(s, h, GT_EV_CPU_OP, 0, "aten::mm", 200, 100, 0, 0);
	add(s, h, GT_EV_CPU_OP, 0, "aten::add", 400, 50, 0, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	return s;
}

/* run report `name` over sc (NULL: everything) */
static struct gt_report_out run(const struct gt_store *s, const char *name,
				const struct gt_scope *sc)
{
	const struct gt_report *r = gt_report_find(name);
	cr_assert(r && r->instances, "no report %s with instances", name);
	struct gt_scope all;
	gt_scope_all(&all);
	struct gt_report_out o = { 0 };
	char err[128];
	cr_assert_eq(r->run(s, sc ? sc : &all, &o, err, sizeof(err)), 0, "%s", err);
	return o;
}

/* the row of t whose name cell is `name` (and whose first INT key cell is
 * `key` when key >= 0) */
static size_t row_named(const struct gt_table *t, const char *name, long long key)
{
	int nc = gt_table_col_with(t, GT_COLF_NAME);
	cr_assert_geq(nc, 0, "%s has no name column", t->name);
	for (size_t r = 0; r < t->nrows; r++) {
		if (gt_table_is_null(t, r, (size_t)nc) || strcmp(gt_table_cell(t, r, (size_t)nc)->s, name))
			continue;
		int match = key < 0;
		for (size_t c = 0; !match && c < t->ncols; c++)
			if ((t->cols[c].flags & GT_COLF_KEY) && t->cols[c].type == GT_COL_INT &&
			    !gt_table_is_null(t, r, c))
				match = gt_table_cell(t, r, c)->i == key;
		if (match)
			return r;
	}
	cr_assert_fail("no row %s (%lld) in %s", name, key, t->name);
	return 0;
}

/* the instances of row r of report `name`'s table t: n, each of `kind` */
static size_t inst(const struct gt_store *s, const char *name, const struct gt_scope *sc,
		   const struct gt_table *t, size_t r, int kind)
{
	struct gt_scope all;
	gt_scope_all(&all);
	struct gt_ref *v = NULL;
	size_t n = 99;
	cr_assert_eq(gt_report_find(name)->instances(s, sc ? sc : &all, t, r, &v, &n), 0);
	for (size_t i = 0; i < n; i++)
		cr_expect_eq(gt_store_ev(s, v[i])->kind, kind);
	free(v);
	return n;
}

Test(report_inst, kernels_by_name_and_gpu_scope)
{
	struct gt_store *s = planted();
	struct gt_report_out o = run(s, "kernels", NULL);
	const struct gt_table *t = o.tables[0];
	int nc = gt_table_col_with(t, GT_COLF_NAME);
	cr_assert_geq(nc, 0);
	cr_expect_str_eq(t->cols[nc].name, "Name");
	cr_expect(t->cols[nc].flags & GT_COLF_KEY);
	cr_assert_geq(t->sort_col, 0);
	cr_expect_str_eq(t->cols[t->sort_col].name, "Total Time (ns)");
	cr_expect(t->cols[t->sort_col].flags & GT_COLF_DUR);
	cr_expect_eq(inst(s, "kernels", NULL, t, row_named(t, "gemm", -1), GT_EV_KERNEL), 4);
	cr_expect_eq(inst(s, "kernels", NULL, t, row_named(t, "ncclKernel_AllReduce", -1),
			  GT_EV_KERNEL), 3);
	gt_report_out_done(&o);
	/* GPU 1 only: one gemm */
	struct gt_scope g1;
	gt_scope_all(&g1);
	g1.gpu = 1;
	o = run(s, "kernels", &g1);
	t = o.tables[0];
	cr_expect_eq(inst(s, "kernels", &g1, t, row_named(t, "gemm", -1), GT_EV_KERNEL), 1);
	gt_report_out_done(&o);
	gt_store_free(s);
}

Test(report_inst, memory_by_operation_kind)
{
	struct gt_store *s = planted();
	struct gt_report_out o = run(s, "memory", NULL);
	for (size_t k = 0; k < o.n; k++) {   /* the time and the size table */
		const struct gt_table *t = o.tables[k];
		cr_expect_eq(inst(s, "memory", NULL, t, row_named(t, "[CUDA memcpy Host-to-Device]", -1),
				  GT_EV_MEMCPY), 3);
		cr_expect_eq(inst(s, "memory", NULL, t, row_named(t, "[CUDA memcpy Device-to-Host]", -1),
				  GT_EV_MEMCPY), 2);
		cr_expect_eq(inst(s, "memory", NULL, t, row_named(t, "[CUDA memset]", -1),
				  GT_EV_MEMSET), 1);
	}
	gt_report_out_done(&o);
	gt_store_free(s);
}

Test(report_inst, nccl_by_collective_size_type_group)
{
	struct gt_store *s = planted();
	struct gt_report_out o = run(s, "nccl", NULL);
	const struct gt_table *t = o.tables[0];
	cr_expect_eq(inst(s, "nccl", NULL, t, row_named(t, "allreduce", 1000000), GT_EV_KERNEL), 2);
	cr_expect_eq(inst(s, "nccl", NULL, t, row_named(t, "allreduce", 1000), GT_EV_KERNEL), 1);
	/* no arguments: the kernel's name is the collective, the key cells are null */
	cr_expect_eq(inst(s, "nccl", NULL, t, row_named(t, "ncclKernel_SendRecv", -1), GT_EV_KERNEL),
		     1);
	gt_report_out_done(&o);
	gt_store_free(s);
}

Test(report_inst, ops_calls_without_nested_same_name)
{
	struct gt_store *s = planted();
	struct gt_report_out o = run(s, "ops", NULL);
	const struct gt_table *t = o.tables[0];
	cr_assert_geq(t->sort_col, 0);
	cr_expect(strstr(t->cols[t->sort_col].name, "Device Self") != NULL);
	cr_expect_eq(inst(s, "ops", NULL, t, row_named(t, "aten::mm", -1), GT_EV_CPU_OP), 2);
	cr_expect_eq(inst(s, "ops", NULL, t, row_named(t, "aten::add", -1), GT_EV_CPU_OP), 1);
	gt_report_out_done(&o);
	gt_store_free(s);
}

Test(report_inst, tables_without_instances_say_so)
{
	struct gt_store *s = planted();
	struct gt_report_out k = run(s, "kernels", NULL), m = run(s, "memory", NULL);
	struct gt_scope all;
	gt_scope_all(&all);
	struct gt_ref *v = NULL;
	size_t n = 0;
	/* the kernels hook on the memory table's row: not its table */
	cr_expect_eq(gt_report_find("kernels")->instances(s, &all, m.tables[0], 0, &v, &n), -ENOENT);
	cr_expect_null(v);
	cr_expect_eq(gt_report_find("kernels")->instances(s, &all, k.tables[0], k.tables[0]->nrows,
							  &v, &n), -ENOENT);
	/* a report without a drill-down */
	cr_expect_null(gt_report_find("summary")->instances);
	gt_report_out_done(&k);
	gt_report_out_done(&m);
	gt_store_free(s);
}

/* a framework operator on lane l with input shapes `shape` and call stack
 * `stack` (NULL: none) */
static void op(struct gt_store *s, uint32_t l, const char *name, int64_t start, int64_t dur,
	       const char *shape, const char *stack)
{
	struct gt_event e = { .start_ns = start, .dur_ns = dur, .lane = l, .kind = GT_EV_CPU_OP };
	e.name = gt_store_intern_cstr(s, name);
	e.arg = shape ? gt_store_intern_cstr(s, shape) : 0;
	e.aux = stack ? gt_store_intern_cstr(s, stack) : 0;
	cr_assert_eq(gt_store_add(s, &e), 0);
}

static uint32_t rank_lane(struct gt_store *s, int type, int32_t rank)
{
	struct gt_lane_key k = { .type = (uint8_t)type, .rank = rank, .pid = 1, .id = 11 };
	return gt_store_lane(s, &k);
}

/*
 * rank 0, host thread 11 (A = "[[2, 3]]", B = "[[8, 8]]", stacks S1, S2):
 *   aten::mm [0,100) A S1 holding aten::mm [10,20) B S2 (merged into it: not
 *   a call of its own, whatever its key), aten::mm [200,300) B S1,
 *   aten::mm [400,450) no shapes S2, aten::mm [600,700) A S2.
 *   By shapes: (mm, A) 2 calls, (mm, B) 1, (mm, None) 1; by stack:
 *   (mm, S1) 2, (mm, S2) 2; by name: 4.  GPU stream 7: gemm x2.
 * rank 1, host thread 11: aten::mm [0,100) x3 back to back, no shapes;
 *   GPU stream 7: gemm x5.
 */
static struct gt_store *planted_runs(void)
{
	struct gt_store *s = gt_store_new();
	uint32_t h0 = rank_lane(s, GT_LANE_HOST, 0), h1 = rank_lane(s, GT_LANE_HOST, 1);
	uint32_t g0 = rank_lane(s, GT_LANE_GPU, 0), g1 = rank_lane(s, GT_LANE_GPU, 1);
	op(s, h0, "aten::mm", 0, 100, "[[2, 3]]", "S1");
	op(s, h0, "aten::mm", 10, 10, "[[8, 8]]", "S2");
	op(s, h0, "aten::mm", 200, 100, "[[8, 8]]", "S1");
	op(s, h0, "aten::mm", 400, 50, NULL, "S2");
	op(s, h0, "aten::mm", 600, 100, "[[2, 3]]", "S2");
	for (int i = 0; i < 3; i++)
		op(s, h1, "aten::mm", i * 100, 100, NULL, NULL);
	for (int i = 0; i < 2; i++)
		add(s, g0, GT_EV_KERNEL, 0, "gemm", 1000 + i * 100, 50, 0, 0);
	for (int i = 0; i < 5; i++)
		add(s, g1, GT_EV_KERNEL, 0, "gemm", 1000 + i * 100, 60, 0, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	return s;
}

/* the row of grouped table t for (name, key text) */
static size_t row_keyed(const struct gt_table *t, const char *name, const char *key)
{
	for (size_t r = 0; r < t->nrows; r++)
		if (!strcmp(gt_table_cell(t, r, 0)->s, name) && !strcmp(gt_table_cell(t, r, 1)->s, key))
			return r;
	cr_assert_fail("no row (%s, %s) in %s", name, key, t->name);
	return 0;
}

/* the int cell of row r in the column called col */
static long long cell_int(const struct gt_table *t, size_t r, const char *col)
{
	for (size_t c = 0; c < t->ncols; c++)
		if (!strcmp(t->cols[c].name, col))
			return gt_table_cell(t, r, c)->i;
	cr_assert_fail("no column %s in %s", col, t->name);
	return -1;
}

Test(report_inst, ops_grouped_rows_list_their_group)
{
	struct gt_store *s = planted_runs();
	static const struct { int group; const char *key; size_t n; } want[] = {
		{ GT_OPS_BY_SHAPE, "[[2, 3]]", 2 }, { GT_OPS_BY_SHAPE, "[[8, 8]]", 1 },
		{ GT_OPS_BY_SHAPE, "None", 1 }, { GT_OPS_BY_STACK, "S1", 2 },
		{ GT_OPS_BY_STACK, "S2", 2 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct gt_scope sc;
		gt_scope_all(&sc);
		sc.rank = 0;
		sc.flags |= (unsigned)want[i].group << GT_OPS_SCOPE_GROUP_SHIFT;
		struct gt_report_out o = run(s, "ops", &sc);
		const struct gt_table *t = o.tables[0];
		cr_expect(t->cols[1].flags & GT_COLF_KEY, "%s: the key column is not flagged", t->name);
		size_t r = row_keyed(t, "aten::mm", want[i].key);
		cr_expect_eq(inst(s, "ops", &sc, t, r, GT_EV_CPU_OP), want[i].n, "%s row %s", t->name,
			     want[i].key);
		cr_expect_eq(cell_int(t, r, "Calls"), (long long)want[i].n, "%s: the table's own count",
			     t->name);
		gt_report_out_done(&o);
	}
	gt_store_free(s);
}

Test(report_inst, diff_rows_list_each_runs_instances)
{
	struct gt_store *s = planted_runs();
	struct gt_diff_opts d = { .rank = 0, .rank_b = 1, .flags = GT_DIFF_F_RANK_B };
	struct gt_scope r0, r1;
	gt_scope_all(&r0);
	gt_scope_all(&r1);
	r0.rank = 0;
	r1.rank = 1;
	char err[160];
	struct gt_report_out o = { 0 };
	cr_assert_eq(gt_diff_run(s, s, "ops", &d, &o, err, sizeof(err)), 0, "%s", err);
	const struct gt_table *t = o.tables[0];
	cr_assert_str_eq(t->name, "diff_ops");
	size_t r = row_named(t, "aten::mm", -1);
	cr_expect_eq(inst(s, "ops", &r0, t, r, GT_EV_CPU_OP), 4);
	cr_expect_eq(inst(s, "ops", &r1, t, r, GT_EV_CPU_OP), 3);
	cr_expect_eq(cell_int(t, r, "Baseline Count"), 4);
	cr_expect_eq(cell_int(t, r, "Experiment Count"), 3);
	gt_report_out_done(&o);
	memset(&o, 0, sizeof(o));
	cr_assert_eq(gt_diff_run(s, s, "kernels", &d, &o, err, sizeof(err)), 0, "%s", err);
	t = o.tables[0];
	cr_assert_str_eq(t->name, "diff_kernels");
	r = row_named(t, "gemm", -1);
	cr_expect_eq(inst(s, "kernels", &r0, t, r, GT_EV_KERNEL), 2);
	cr_expect_eq(inst(s, "kernels", &r1, t, r, GT_EV_KERNEL), 5);
	/* the ops hook does not take the kernel table's rows */
	struct gt_ref *v = NULL;
	size_t n = 0;
	cr_expect_eq(gt_report_find("ops")->instances(s, &r0, t, r, &v, &n), -ENOENT);
	gt_report_out_done(&o);
	gt_store_free(s);
}
