/*
 * test_tables_reports.c - the memory, api, nvtx, nccl and summary reports on
 * a hand-built store whose numbers are worked out in the comments.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/load.h"
#include "gtrace/report.h"
#include "gtrace/steps.h"
#include "gtrace/store.h"
#include "../testdata.h"

#define RESNET "kineto/resnet50_num_workers_0.pt.trace.json.gz"

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

static struct gt_store *planted(void)
{
	struct gt_store *s = gt_store_new();
	uint32_t g = lane(s, GT_LANE_GPU, 0, 7), h = lane(s, GT_LANE_HOST, -1, 11);
	/* H2D copies of 1, 2, 3 MB in 100, 200, 300 ns; one 500-byte memset in 50 ns */
	add(s, g, GT_EV_MEMCPY, GT_COPY_H2D, "Memcpy HtoD", 100, 100, 1000000, 0);
	add(s, g, GT_EV_MEMCPY, GT_COPY_H2D, "Memcpy HtoD", 300, 200, 2000000, 0);
	add(s, g, GT_EV_MEMCPY, GT_COPY_H2D, "Memcpy HtoD", 600, 300, 3000000, 0);
	add(s, g, GT_EV_MEMSET, 0, "Memset", 1000, 50, 500, 0);
	/* NCCL: allreduce of 250,000 floats (1e6 bytes) in a group of 4, twice */
	struct gt_nccl ar = { .collective = gt_store_intern_cstr(s, "allreduce"),
			      .dtype = gt_store_intern_cstr(s, "Float"), .in_nelems = 250000,
			      .out_nelems = 250000, .group_size = 4, .dtype_bytes = 4 };
	uint64_t ar_id = gt_store_nccl(s, &ar);
	add(s, g, GT_EV_KERNEL, 0, "ncclKernel_AllReduce", 2000, 1000, ar_id << 32, GT_EVF_NCCL);
	add(s, g, GT_EV_KERNEL, 0, "ncclKernel_AllReduce", 4000, 3000, ar_id << 32, GT_EVF_NCCL);
	/* allgather: in 1000, out 4000 half floats -> 8,000 bytes, group 4, 100 ns */
	struct gt_nccl ag = { .collective = gt_store_intern_cstr(s, "_allgather_base"),
			      .dtype = gt_store_intern_cstr(s, "Half"), .in_nelems = 1000,
			      .out_nelems = 4000, .group_size = 4, .dtype_bytes = 2 };
	uint64_t ag_id = gt_store_nccl(s, &ag);
	add(s, g, GT_EV_KERNEL, 0, "ncclKernel_AllGather", 8000, 100, ag_id << 32, GT_EVF_NCCL);
	/* an NCCL kernel without arguments, and an ordinary kernel */
	add(s, g, GT_EV_KERNEL, 0, "ncclKernel_SendRecv", 9000, 70, 0, GT_EVF_NCCL);
	add(s, g, GT_EV_KERNEL, 0, "gemm", 9500, 10, 0, 0);
	/* host: two runtime launches, one driver launch, NVTX on host and GPU */
	add(s, h, GT_EV_RUNTIME, 0, "cudaLaunchKernel", 10, 5, 0, GT_EVF_LAUNCH);
	add(s, h, GT_EV_RUNTIME, 0, "cudaLaunchKernel", 20, 7, 0, GT_EVF_LAUNCH);
	add(s, h, GT_EV_DRIVER, 0, "cuLaunchKernel", 30, 9, 0, GT_EVF_LAUNCH);
	add(s, h, GT_EV_NVTX, 0, "forward", 0, 900, 0, 0);
	add(s, g, GT_EV_GPU_ANNOT, 0, "forward", 100, 800, 0, 0);
	struct gt_device d = { .rank = 0, .id = 0, .name = gt_store_intern_cstr(s, "Test GPU") };
	gt_store_device(s, &d);
	gt_store_drops(s)->cupti_dropped = 5;
	gt_store_drops(s)->import_skipped = 2;
	gt_store_drops(s)->client_buffers = 4;
	gt_store_meta_set(s, "format", "planted");
	cr_assert_eq(gt_store_finish(s), 0);
	return s;
}

static struct gt_report_out run(struct gt_store *s, const char *name)
{
	const struct gt_report *r = gt_report_find(name);
	cr_assert(r, "no report %s", name);
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_report_out o = { 0 };
	char err[128];
	cr_assert_eq(r->run(s, &sc, &o, err, sizeof(err)), 0, "%s", err);
	return o;
}

static long col(const struct gt_table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (!strcmp(t->cols[i].name, name))
			return (long)i;
	cr_assert_fail("no column %s in %s", name, t->name);
	return -1;
}

static long row_of(const struct gt_table *t, const char *colname, const char *val)
{
	long c = col(t, colname);
	for (size_t r = 0; r < t->nrows; r++)
		if (!gt_table_is_null(t, r, (size_t)c) && !strcmp(gt_table_cell(t, r, (size_t)c)->s, val))
			return (long)r;
	cr_assert_fail("no row %s = %s", colname, val);
	return -1;
}

#define F(t, r, name) (gt_table_cell((t), (size_t)(r), (size_t)col((t), (name)))->f)
#define I(t, r, name) (gt_table_cell((t), (size_t)(r), (size_t)col((t), (name)))->i)
#define NUL(t, r, name) gt_table_is_null((t), (size_t)(r), (size_t)col((t), (name)))

Test(reports, memory)
{
	struct gt_store *s = planted();
	struct gt_report_out o = run(s, "memory");
	cr_assert_eq(o.n, 2);
	const struct gt_table *tt = o.tables[0], *st = o.tables[1];
	long h = row_of(tt, "Operation", "[CUDA memcpy Host-to-Device]");
	cr_assert_eq(I(tt, h, "Count"), 3);
	cr_assert_eq(I(tt, h, "Total Time (ns)"), 600);
	cr_assert_float_eq(F(tt, h, "Med (ns)"), 200, 1e-9);
	cr_assert_float_eq(F(tt, h, "Time (%)"), 100.0 * 600 / 650, 1e-9);
	h = row_of(st, "Operation", "[CUDA memcpy Host-to-Device]");
	cr_assert_float_eq(F(st, h, "Total (MB)"), 6.0, 1e-9);
	cr_assert_float_eq(F(st, h, "Med (MB)"), 2.0, 1e-9);
	cr_assert_float_eq(F(st, h, "StdDev (MB)"), 1.0, 1e-9);   /* sd of 1,2,3 */
	cr_assert_float_eq(F(st, h, "Bandwidth (GB/s)"), 10000.0, 1e-6);   /* 6e6 B / 600 ns */
	long m = row_of(st, "Operation", "[CUDA memset]");
	cr_assert_float_eq(F(st, m, "Bandwidth (GB/s)"), 10.0, 1e-9);      /* 500 B / 50 ns */
	cr_assert_eq(h, 0, "size table sorted by total size");
	gt_report_out_done(&o);
	gt_store_free(s);
}

Test(reports, nccl_busbw)
{
	struct gt_store *s = planted();
	struct gt_report_out o = run(s, "nccl");
	const struct gt_table *t = o.tables[0];
	cr_assert_eq(t->nrows, 3);
	long ar = row_of(t, "Collective", "allreduce");
	cr_assert_eq(I(t, ar, "Count"), 2);
	cr_assert_eq(I(t, ar, "Size (bytes)"), 1000000);
	cr_assert_float_eq(F(t, ar, "Avg (ns)"), 2000, 1e-9);
	/* algbw 1e6 B / 2000 ns = 500 GB/s; busbw x 2(n-1)/n = 1.5 -> 750 */
	cr_assert_float_eq(F(t, ar, "Algo BW (GB/s)"), 500, 1e-9);
	cr_assert_float_eq(F(t, ar, "Bus BW (GB/s)"), 750, 1e-9);
	long ag = row_of(t, "Collective", "_allgather_base");
	/* 8000 B / 100 ns = 80 GB/s; x (n-1)/n = 0.75 -> 60 */
	cr_assert_eq(I(t, ag, "Size (bytes)"), 8000);
	cr_assert_float_eq(F(t, ag, "Bus BW (GB/s)"), 60, 1e-9);
	long sr = row_of(t, "Collective", "ncclKernel_SendRecv");
	cr_assert(NUL(t, sr, "Size (bytes)"));
	cr_assert(NUL(t, sr, "Bus BW (GB/s)"));
	cr_assert(NUL(t, sr, "Group Size"));
	gt_report_out_done(&o);
	gt_store_free(s);
}

Test(reports, api_and_nvtx)
{
	struct gt_store *s = planted();
	struct gt_report_out o = run(s, "api");
	const struct gt_table *t = o.tables[0];
	cr_assert_eq(t->nrows, 2);
	long r = row_of(t, "Name", "cudaLaunchKernel");
	cr_assert_eq(I(t, r, "Num Calls"), 2);
	cr_assert_float_eq(F(t, r, "Med (ns)"), 6.0, 1e-9);
	cr_assert_eq(I(t, row_of(t, "Name", "cuLaunchKernel"), "Total Time (ns)"), 9);
	gt_report_out_done(&o);
	o = run(s, "nvtx");
	t = o.tables[0];
	cr_assert_eq(t->nrows, 2);
	cr_assert_str_eq(gt_table_cell(t, 0, (size_t)col(t, "Style"))->s, "Host");
	cr_assert_eq(I(t, 0, "Total Time (ns)"), 900);
	cr_assert_str_eq(gt_table_cell(t, 1, (size_t)col(t, "Style"))->s, "GPU");
	cr_assert_str_eq(gt_table_cell(t, 1, (size_t)col(t, "Range"))->s, "forward");
	gt_report_out_done(&o);
	gt_store_free(s);
}

Test(reports, summary)
{
	struct gt_store *s = planted();
	struct gt_report_out o = run(s, "summary");
	const struct gt_table *k = NULL, *d = NULL, *dev = NULL, *m = NULL;
	for (size_t i = 0; i < o.n; i++) {
		if (!strcmp(o.tables[i]->name, "summary_kinds"))
			k = o.tables[i];
		if (!strcmp(o.tables[i]->name, "summary_drops"))
			d = o.tables[i];
		if (!strcmp(o.tables[i]->name, "summary_devices"))
			dev = o.tables[i];
		if (!strcmp(o.tables[i]->name, "summary_metadata"))
			m = o.tables[i];
	}
	cr_assert(k && d && dev && m);
	cr_assert_eq(I(k, row_of(k, "Kind", "kernel"), "Events"), 5);
	cr_assert_eq(I(k, row_of(k, "Kind", "memcpy"), "Events"), 3);
	cr_assert_eq(d->nrows, 7, "every gt_drops counter");
	cr_assert_eq(I(d, row_of(d, "Counter", "client_buffers"), "Count"), 4);
	cr_assert_eq(I(d, row_of(d, "Counter", "read_errors"), "Count"), 0);
	cr_assert_eq(I(d, row_of(d, "Counter", "cupti_dropped"), "Count"), 5);
	cr_assert_eq(I(d, row_of(d, "Counter", "import_skipped"), "Count"), 2);
	cr_assert_eq(I(d, row_of(d, "Counter", "ring_overflow"), "Count"), 0);
	cr_assert(NUL(dev, 0, "SMs"), "unknown SM count is n/a");
	cr_assert_str_eq(gt_table_cell(dev, 0, (size_t)col(dev, "Name"))->s, "Test GPU");
	cr_assert_str_eq(gt_table_cell(m, (size_t)row_of(m, "Key", "format"), 1)->s, "planted");
	gt_report_out_done(&o);
	gt_store_free(s);
}

Test(reports, registry)
{
	const char *mine[] = { "kernels", "memory", "api", "nvtx", "nccl", "summary" };
	for (size_t i = 0; i < 6; i++) {
		const struct gt_report *r = gt_report_find(mine[i]);
		cr_assert(r && r->help && r->run, "%s", mine[i]);
	}
	cr_assert_null(gt_report_find("nosuch"));
	cr_assert_geq(gt_report_count(), 6);
	for (size_t i = 0; i < gt_report_count(); i++)
		cr_assert(gt_report_at(i));
	cr_assert_null(gt_report_at(gt_report_count()));
}

/* every report on an empty store: no crash, no rows */
Test(reports, empty_store)
{
	struct gt_store *s = gt_store_new();
	cr_assert_eq(gt_store_finish(s), 0);
	const char *mine[] = { "kernels", "memory", "api", "nvtx", "nccl", "summary" };
	for (size_t i = 0; i < 6; i++) {
		struct gt_report_out o = run(s, mine[i]);
		cr_assert_geq(o.n, 1);
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		for (int fmt = 0; fmt < 3; fmt++)
			cr_assert_eq(gt_report_out_write(f, mine[i], &o, (enum gt_format_out)fmt), 0);
		fclose(f);
		free(buf);
		gt_report_out_done(&o);
	}
	gt_store_free(s);
}

/* a scope naming only a step (as the viewer passes it) gives the same table
 * as the step's window given as a range */
Test(reports, step_scope_resolves)
{
	char err[256];
	td_need(RESNET);
	const char *paths[] = { td_path(RESNET) };
	struct gt_load_opts lo = { .flags = GT_LOAD_QUIET };
	struct gt_store *s = NULL;
	int rc = gt_load(paths, 1, &lo, &s, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	const struct gt_report *k = gt_report_find("kernels");
	struct gt_scope a, b;
	gt_scope_all(&a);
	a.step = 6;
	gt_scope_all(&b);
	cr_assert_eq(gt_steps_range(s, 6, &b.t0_ns, &b.t1_ns), 0);
	struct gt_report_out oa = { 0 }, ob = { 0 };
	cr_assert_eq(k->run(s, &a, &oa, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(k->run(s, &b, &ob, err, sizeof(err)), 0, "%s", err);
	const struct gt_table *ta = oa.tables[0], *tb = ob.tables[0];
	cr_assert_eq(ta->nrows, tb->nrows);
	int64_t ia = 0, ib = 0;
	for (size_t i = 0; i < ta->nrows; i++) {
		ia += gt_table_cell(ta, i, 2)->i;
		ib += gt_table_cell(tb, i, 2)->i;
	}
	cr_assert_eq(ia, ib);
	cr_assert(ia > 0 && ia < 8772);
	/* a step that does not exist is an error, not an empty table */
	a.step = 99;
	gt_report_out_done(&oa);
	cr_assert_neq(k->run(s, &a, &oa, err, sizeof(err)), 0);
	cr_assert(strstr(err, "99"), "%s", err);
	gt_report_out_done(&oa);
	gt_report_out_done(&ob);
	gt_store_free(s);
}

/*
 * Step Share on resnet50_num_workers_0: kernels run on one stream without
 * overlap, so the shares add up to the kernel time of the steps over the
 * step time: the TensorBoard plugin's published Kernel 98,589 us of an
 * average step of 177,592 us (MANIFEST) = 55.51 %.
 */
Test(reports, step_share_matches_plugin)
{
	char err[256];
	td_need(RESNET);
	const char *paths[] = { td_path(RESNET) };
	struct gt_load_opts lo = { .flags = GT_LOAD_QUIET };
	struct gt_store *s = NULL;
	int rc = gt_load(paths, 1, &lo, &s, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	struct gt_report_out o = run(s, "kernels");
	const struct gt_table *t = o.tables[0];
	long c = col(t, "Step Share (%)");
	long tt = col(t, "Total Time (ns)");
	double share = 0;
	int64_t total = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		cr_assert(!gt_table_is_null(t, i, (size_t)c));
		share += gt_table_cell(t, i, (size_t)c)->f;
		total += gt_table_cell(t, i, (size_t)tt)->i;
	}
	/* the table stores unrounded values: the sum is exact up to clipping */
	cr_assert_float_eq(share, 100.0 * 98589 / 177592, 0.05, "sum of shares %.3f", share);
	cr_assert_eq(total, 591532000LL);
	gt_report_out_done(&o);
	gt_store_free(s);
}
