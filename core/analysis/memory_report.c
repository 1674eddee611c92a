/*
 * memory_report.c - the "memory" report: GPU copies and memsets per
 * operation kind, as nsys stats `cuda_gpu_mem_time_sum` (time table) and
 * `cuda_gpu_mem_size_sum` (size table, MB = 10^6 bytes), plus the achieved
 * bandwidth (total bytes / total time, GB/s = 10^9 bytes/s).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reports.h"
#include "gtrace/steps.h"
#include "tables.h"

/* nsys's operation names */
static const char *op_name(uint32_t cls)
{
	switch (cls) {
	case GT_COPY_H2D: return "[CUDA memcpy Host-to-Device]";
	case GT_COPY_D2H: return "[CUDA memcpy Device-to-Host]";
	case GT_COPY_D2D: return "[CUDA memcpy Device-to-Device]";
	case GT_COPY_P2P: return "[CUDA memcpy Peer-to-Peer]";
	case GT_COPY_H2H: return "[CUDA memcpy Host-to-Host]";
	case GT_KERNEL_STATS_CLS_MEMSET: return "[CUDA memset]";
	default: return "[CUDA memcpy Unknown]";
	}
}

static int memory_time(const struct gt_store *s, const struct gt_scope *sc,
		       const struct gt_kernel_stats_result *r, struct gt_report_out *out)
{
	struct gt_table *t = gt_table_new("memory_time",
		"CUDA GPU MemOps Summary (by Time) (cuda_gpu_mem_time_sum)");
	if (!t || tables_stat_cols(t, "Count") < 0 || gt_table_col(t, "Operation", GT_COL_STR, 0) < 0)
		goto nomem;
	gt_table_col_flags(t, 8, GT_COLF_NAME | GT_COLF_KEY);
	for (size_t i = 0; i < r->nrows; i++) {
		long row = gt_table_row(t);
		if (row < 0)
			goto nomem;
		tables_stat_row(t, (size_t)row, 0, &r->rows[i]);
		if (gt_table_set_str(t, (size_t)row, 8, op_name(r->rows[i].cls)))
			goto nomem;
	}
	if (tables_scope_note(t, s, sc))
		goto nomem;
	return gt_report_out_add(out, t);
nomem:
	gt_table_free(t);
	return -1;
}

static int memory_size(const struct gt_store *s, const struct gt_scope *sc,
		       const struct gt_kernel_stats_result *r, struct gt_report_out *out)
{
	static const char *const cols[] = {
		"Total (MB):f:3", "Count:i", "Avg (MB):f:3", "Med (MB):f:3", "Min (MB):f:3",
		"Max (MB):f:3", "StdDev (MB):f:3", "Operation", "Bandwidth (GB/s):f:3", NULL
	};
	struct gt_table *t = tables_new("memory_size",
		"CUDA GPU MemOps Summary (by Size) (cuda_gpu_mem_size_sum)", cols);
	if (!t)
		return -1;
	gt_table_col_flags(t, 7, GT_COLF_NAME | GT_COLF_KEY);
	t->sort_col = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct gt_kernel_stats_row *k = &r->rows[i];
		long row = gt_table_row(t);
		if (row < 0)
			goto nomem;
		size_t w = (size_t)row;
		if (!k->bytes_total_sat)     /* a saturated sum is no figure: n/a */
			gt_table_set_float(t, w, 0, (double)k->bytes_total / 1e6);
		gt_table_set_int(t, w, 1, (int64_t)k->count);
		gt_table_set_float(t, w, 2, k->bytes_avg / 1e6);
		gt_table_set_float(t, w, 3, k->bytes_med / 1e6);
		gt_table_set_float(t, w, 4, (double)k->bytes_min / 1e6);
		gt_table_set_float(t, w, 5, (double)k->bytes_max / 1e6);
		gt_table_set_float(t, w, 6, k->bytes_stddev / 1e6);
		if (gt_table_set_str(t, w, 7, op_name(k->cls)))
			goto nomem;
		/* bytes per ns = GB/s; unknown when no time or no bytes were recorded */
		if (k->total_ns > 0 && k->bytes_total > 0 && !k->bytes_total_sat)
			gt_table_set_float(t, w, 8, (double)k->bytes_total / (double)k->total_ns);
	}
	gt_table_sort(t, 0, 1);
	if (gt_table_note(t, "Bandwidth: total bytes / total time of the operation kind "
			     "(1 GB/s = 10^9 bytes/s); MB = 10^6 bytes") ||
	    tables_scope_note(t, s, sc))
		goto nomem;
	return gt_report_out_add(out, t);
nomem:
	gt_table_free(t);
	return -1;
}

static int memory_run(const struct gt_store *s, const struct gt_scope *sc_in,
		      struct gt_report_out *out, char *err, size_t errlen)
{
	struct gt_scope scope;
	if (gt_steps_scope(s, sc_in, &scope, err, errlen))
		return -ENOENT;
	const struct gt_scope *sc = &scope;
	struct gt_kernel_stats_opts o = { .kinds_mask = (1u << GT_EV_MEMCPY) | (1u << GT_EV_MEMSET),
				 .group = GT_KERNEL_STATS_BY_COPY_KIND, .flags = GT_KERNEL_STATS_WANT_BYTES };
	struct gt_kernel_stats_result r;
	int rc = gt_kernel_stats_compute(s, sc, &o, &r, err, errlen);
	if (rc)
		return rc;
	if (memory_time(s, sc, &r, out) || memory_size(s, sc, &r, out)) {
		snprintf(err, errlen, "memory: out of memory");
		rc = -ENOMEM;
	}
	gt_kernel_stats_result_done(&r);
	return rc;
}

/* drill-down: the copies (or memsets) of the row's operation kind in scope,
 * classed as kernel_stats' GT_KERNEL_STATS_BY_COPY_KIND classes them */
static int memory_instances(const struct gt_store *s, const struct gt_scope *sc_in,
			    const struct gt_table *t, size_t row, struct gt_ref **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	const char *nm = strncmp(t->name, "memory_", 7) ? NULL : tables_row_name(t, row);
	struct gt_scope sc;
	char err[64];
	if (!nm || gt_steps_scope(s, sc_in, &sc, err, sizeof(err)))
		return -ENOENT;
	uint32_t cls = UINT32_MAX;
	for (uint32_t c = 0; c < GT_COPY_KIND_COUNT && cls == UINT32_MAX; c++)
		if (!strcmp(op_name(c), nm))
			cls = c;
	if (!strcmp(op_name(GT_KERNEL_STATS_CLS_MEMSET), nm))
		cls = GT_KERNEL_STATS_CLS_MEMSET;
	if (cls == UINT32_MAX)
		return -ENOENT;
	size_t cap = 0;
	for (uint32_t li = 0; li < gt_store_lane_count(s); li++) {
		const struct gt_lane *l = gt_store_lane_at(s, li);
		if (!(l->kinds_mask & ((1u << GT_EV_MEMCPY) | (1u << GT_EV_MEMSET))) ||
		    !gt_kernel_stats_lane_in_scope(l, &sc))
			continue;
		size_t first, last;
		gt_kernel_stats_lane_starts(l, sc.t0_ns, sc.t1_ns, &first, &last);
		gt_store_read_tick(s, l, first, last);
		for (size_t i = first; i < last; i++) {
			const struct gt_event *e = &l->ev[i];
			uint32_t ec = e->kind == GT_EV_MEMSET ? GT_KERNEL_STATS_CLS_MEMSET :
				      e->sub < GT_COPY_KIND_COUNT ? e->sub : GT_COPY_UNKNOWN;
			if ((e->kind != GT_EV_MEMCPY && e->kind != GT_EV_MEMSET) || ec != cls)
				continue;
			if (tables_ref_push(out, n, &cap, (struct gt_ref){ li, (uint32_t)i })) {
				free(*out);
				*out = NULL;
				*n = 0;
				return -ENOMEM;
			}
		}
	}
	return 0;
}

const struct gt_report gt_report_memory = {
	.name = "memory",
	.help = "GPU copies and memsets per kind: nsys stats cuda_gpu_mem_time_sum and "
		"cuda_gpu_mem_size_sum, plus achieved bandwidth (GB/s)",
	.run = memory_run,
	.instances = memory_instances,
};
