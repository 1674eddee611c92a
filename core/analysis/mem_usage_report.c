/*
 * mem_usage_report.c - the "memory-usage" report: allocated bytes per device
 * over the capture (peak with its operator and step, growth per step),
 * per step, and per operator (the PyTorch TensorBoard plugin's memory
 * statistics table).  Rules: gtrace/mem_usage.h, gtrace/ops.h.
 */
#include <errno.h>
#include <stdio.h>
#include "gtrace/mem_usage.h"
#include "gtrace/ops.h"
#include "gtrace/steps.h"
#include "reports.h"
#include "tables.h"

static const char *const dev_cols[] = {
	"Rank:i", "Device", "Records:i", "Allocations:i", "Allocated (bytes):i", "Frees:i",
	"Freed (bytes):i", "Peak Allocated (bytes):i", "Peak Time (ms):f:3", "Peak Operator",
	"Peak Step:i", "End Allocated (bytes):i", "Growth per Step (bytes):f:0",
	"Peak Total Allocated (bytes):i", "Total Allocated Peak Time (ms):f:3",
	"Total Allocated Peak Operator", "Total Allocated Peak Step:i",
	"Peak Total Reserved (bytes):i", "End Total Allocated (bytes):i",
	"End Total Reserved (bytes):i", NULL
};
static const char *const step_cols[] = {
	"Rank:i", "Device", "Step:i", "Start (bytes):i", "End (bytes):i", "Peak (bytes):i",
	"Growth (bytes):i", NULL
};
static const char *const op_cols[] = {
	"Rank:i", "Device", "Name", "Calls:i", "Size Increase (bytes):i",
	"Self Size Increase (bytes):i", "Allocation Count:i", "Self Allocation Count:i",
	"Allocation Size (bytes):i", "Self Allocation Size (bytes):i", NULL
};

static void dev_name(uint32_t dev, char *buf, size_t len)
{
	if (dev == GT_MEM_HOST)
		snprintf(buf, len, "CPU");
	else
		snprintf(buf, len, "GPU %u", dev);
}

static int dev_row(struct gt_table *t, const struct gt_store *s, const struct gt_mem_usage_dev *d)
{
	char dn[32];
	dev_name(d->device, dn, sizeof(dn));
	long r = gt_table_row(t);
	if (r < 0 || gt_table_set_str(t, (size_t)r, 1, dn))
		return -ENOMEM;
	size_t row = (size_t)r;
	gt_table_set_int(t, row, 0, d->rank);
	gt_table_set_int(t, row, 2, (int64_t)d->records);
	gt_table_set_int(t, row, 3, (int64_t)d->allocs);
	gt_table_set_int(t, row, 4, d->alloc_bytes);
	gt_table_set_int(t, row, 5, (int64_t)d->frees);
	gt_table_set_int(t, row, 6, d->free_bytes);
	if (d->records) {
		gt_table_set_int(t, row, 7, d->peak_bytes);
		gt_table_set_float(t, row, 8, (double)(d->peak_ns - gt_store_t_min(s)) / 1e6);
		if (d->peak_op && gt_table_set_str(t, row, 9, gt_store_str(s, d->peak_op)))
			return -ENOMEM;
		gt_table_set_int(t, row, 11, d->end_bytes);
	}
	if (d->peak_step >= 0)
		gt_table_set_int(t, row, 10, d->peak_step);
	if (d->nsteps) {
		double g = 0;
		for (size_t k = 0; k < d->nsteps; k++)
			g += (double)(d->steps[k].end_bytes - d->steps[k].start_bytes);
		gt_table_set_float(t, row, 12, g / (double)d->nsteps);
	}
	if (d->total_samples[0]) {
		gt_table_set_int(t, row, 13, d->total_peak[0]);
		gt_table_set_float(t, row, 14, (double)(d->total_peak_ns[0] - gt_store_t_min(s)) / 1e6);
		if (d->total_peak_op && gt_table_set_str(t, row, 15, gt_store_str(s, d->total_peak_op)))
			return -ENOMEM;
		if (d->total_peak_step >= 0)
			gt_table_set_int(t, row, 16, d->total_peak_step);
		gt_table_set_int(t, row, 18, d->total_end[0]);
	}
	if (d->total_samples[1]) {
		gt_table_set_int(t, row, 17, d->total_peak[1]);
		gt_table_set_int(t, row, 19, d->total_end[1]);
	}
	return 0;
}

static int step_rows(struct gt_table *t, const struct gt_mem_usage_dev *d)
{
	char dn[32];
	dev_name(d->device, dn, sizeof(dn));
	for (size_t k = 0; k < d->nsteps; k++) {
		const struct gt_mem_usage_step *st = &d->steps[k];
		long r = gt_table_row(t);
		if (r < 0 || gt_table_set_str(t, (size_t)r, 1, dn))
			return -ENOMEM;
		gt_table_set_int(t, (size_t)r, 0, d->rank);
		gt_table_set_int(t, (size_t)r, 2, st->number);
		gt_table_set_int(t, (size_t)r, 3, st->start_bytes);
		gt_table_set_int(t, (size_t)r, 4, st->end_bytes);
		gt_table_set_int(t, (size_t)r, 5, st->peak_bytes);
		gt_table_set_int(t, (size_t)r, 6, st->end_bytes - st->start_bytes);
	}
	return 0;
}

static int op_rows(struct gt_table *t, const struct gt_store *s, const struct gt_scope *sc,
		   const struct gt_mem_usage_dev *d, char *err, size_t errlen)
{
	struct gt_scope one = *sc;
	one.rank = d->rank;
	struct gt_ops_result r;
	int rc = gt_ops_compute_mem(s, &one, d->device, &r, err, errlen);
	if (rc)
		return rc;
	char dn[32];
	dev_name(d->device, dn, sizeof(dn));
	for (size_t i = 0; i < r.n && !rc; i++) {
		const struct gt_ops_row *o = &r.rows[i];
		if (!o->mem_inc && !o->mem_alloc_n && !o->mem_self_inc && !o->mem_self_alloc_n)
			continue;
		long k = gt_table_row(t);
		if (k < 0 || gt_table_set_str(t, (size_t)k, 1, dn) ||
		    gt_table_set_str(t, (size_t)k, 2, gt_store_str(s, o->name))) {
			rc = -ENOMEM;
			break;
		}
		int64_t v[] = { d->rank, 0, 0, (int64_t)o->calls, o->mem_inc, o->mem_self_inc,
				o->mem_alloc_n, o->mem_self_alloc_n, o->mem_alloc_bytes,
				o->mem_self_alloc_bytes };
		for (size_t c = 0; c < sizeof(v) / sizeof(v[0]); c++)
			if (c != 1 && c != 2)
				gt_table_set_int(t, (size_t)k, c, v[c]);
	}
	gt_ops_result_done(&r);
	return rc;
}

static int mem_usage_run(const struct gt_store *s, const struct gt_scope *sc_in,
		    struct gt_report_out *out, char *err, size_t errlen)
{
	struct gt_scope sc;
	if (gt_steps_scope(s, sc_in, &sc, err, errlen))
		return -ENOENT;
	struct gt_mem_usage_result m;
	int rc = gt_mem_usage_compute(s, &sc, &m, err, errlen);
	if (rc)
		return rc;
	struct gt_table *td = tables_new("memory_usage", "Memory usage per device (allocator "
					 "records)", dev_cols);
	struct gt_table *ts = tables_new("memory_steps", "Allocated memory per step", step_cols);
	struct gt_table *to = tables_new("memory_ops", "Memory by operator (PyTorch TensorBoard "
					 "plugin memory statistics)", op_cols);
	rc = td && ts && to ? 0 : -ENOMEM;
	for (size_t i = 0; i < m.n && !rc; i++) {
		rc = dev_row(td, s, &m.dev[i]);
		if (!rc)
			rc = step_rows(ts, &m.dev[i]);
		if (!rc)
			rc = op_rows(to, s, &sc, &m.dev[i], err, errlen);
	}
	if (!rc && to->nrows)
		gt_table_sort(to, 8, 1);
	if (!rc && !m.n)
		rc = gt_table_note(td, "No allocator records in the scope (Kineto [memory] events: "
				   "record with profile_memory=True)");
	if (!rc && m.n)
		rc = gt_table_note(td, "Allocated = running sum of the records' bytes from the trace "
				   "start; memory allocated before the profiler started is not in it");
	if (!rc)
		rc = tables_scope_note(td, s, &sc);
	gt_mem_usage_result_done(&m);
	struct gt_table *v[] = { td, ts, to };
	for (size_t i = 0; i < 3; i++) {
		if (!rc)
			rc = gt_report_out_add(out, v[i]);
		else
			gt_table_free(v[i]);
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "memory-usage: out of memory");
	return rc;
}

const struct gt_report gt_report_memory_usage = {
	.name = "memory-usage",
	.help = "allocated bytes per device from allocator records: peak (operator, step), "
		"per step, per operator (PyTorch TensorBoard plugin memory view)",
	.run = mem_usage_run,
};
