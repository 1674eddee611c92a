/*
 * api_report.c - the "api" report (CUDA runtime and driver calls per name,
 * nsys stats `cuda_api_sum` columns) and the "nvtx" report (annotation
 * ranges per name, nsys stats `nvtx_sum` columns).
 */
#include <errno.h>
#include <stdio.h>
#include "reports.h"
#include "gtrace/steps.h"
#include "tables.h"

static int api_run(const struct gt_store *s, const struct gt_scope *sc_in,
		   struct gt_report_out *out, char *err, size_t errlen)
{
	struct gt_scope scope;
	if (gt_steps_scope(s, sc_in, &scope, err, errlen))
		return -ENOENT;
	const struct gt_scope *sc = &scope;
	struct gt_kernel_stats_opts o = { .kinds_mask = (1u << GT_EV_RUNTIME) | (1u << GT_EV_DRIVER),
				 .group = GT_KERNEL_STATS_BY_NAME };
	struct gt_kernel_stats_result r;
	int rc = gt_kernel_stats_compute(s, sc, &o, &r, err, errlen);
	if (rc)
		return rc;
	struct gt_table *t = gt_table_new("api", "CUDA API Summary (cuda_api_sum)");
	if (!t || tables_stat_cols(t, "Num Calls") < 0 || gt_table_col(t, "Name", GT_COL_STR, 0) < 0)
		goto nomem;
	for (size_t i = 0; i < r.nrows; i++) {
		long row = gt_table_row(t);
		if (row < 0)
			goto nomem;
		tables_stat_row(t, (size_t)row, 0, &r.rows[i]);
		if (gt_table_set_str(t, (size_t)row, 8, gt_store_str(s, r.rows[i].name)))
			goto nomem;
	}
	if (tables_scope_note(t, s, sc) ||
	    (sc->gpu >= 0 && gt_table_note(t, "Host calls belong to no GPU: --gpu does not "
						    "filter this table")))
		goto nomem;
	gt_kernel_stats_result_done(&r);
	return gt_report_out_add(out, t);
nomem:
	gt_kernel_stats_result_done(&r);
	gt_table_free(t);
	snprintf(err, errlen, "api: out of memory");
	return -ENOMEM;
}

const struct gt_report gt_report_api = {
	.name = "api",
	.help = "CUDA runtime and driver calls per name: nsys stats cuda_api_sum columns",
	.run = api_run,
};

static int nvtx_run(const struct gt_store *s, const struct gt_scope *sc_in,
		    struct gt_report_out *out, char *err, size_t errlen)
{
	struct gt_scope scope;
	if (gt_steps_scope(s, sc_in, &scope, err, errlen))
		return -ENOENT;
	const struct gt_scope *sc = &scope;
	struct gt_kernel_stats_opts o = { .kinds_mask = (1u << GT_EV_NVTX) | (1u << GT_EV_GPU_ANNOT),
				 .group = GT_KERNEL_STATS_BY_NAME_KIND };
	struct gt_kernel_stats_result r;
	int rc = gt_kernel_stats_compute(s, sc, &o, &r, err, errlen);
	if (rc)
		return rc;
	struct gt_table *t = gt_table_new("nvtx", "NVTX Range Summary (nvtx_sum)");
	if (!t || tables_stat_cols(t, "Instances") < 0 ||
	    gt_table_col(t, "Style", GT_COL_STR, 0) < 0 || gt_table_col(t, "Range", GT_COL_STR, 0) < 0)
		goto nomem;
	for (size_t i = 0; i < r.nrows; i++) {
		long row = gt_table_row(t);
		if (row < 0)
			goto nomem;
		tables_stat_row(t, (size_t)row, 0, &r.rows[i]);
		const char *style = r.rows[i].cls == GT_EV_GPU_ANNOT ? "GPU" : "Host";
		if (gt_table_set_str(t, (size_t)row, 8, style) ||
		    gt_table_set_str(t, (size_t)row, 9, gt_store_str(s, r.rows[i].name)))
			goto nomem;
	}
	if (gt_table_note(t, "Style: Host = range on a host thread (NVTX or user annotation), "
			     "GPU = the annotation projected on a GPU stream") ||
	    tables_scope_note(t, s, sc))
		goto nomem;
	gt_kernel_stats_result_done(&r);
	return gt_report_out_add(out, t);
nomem:
	gt_kernel_stats_result_done(&r);
	gt_table_free(t);
	snprintf(err, errlen, "nvtx: out of memory");
	return -ENOMEM;
}

const struct gt_report gt_report_nvtx = {
	.name = "nvtx",
	.help = "NVTX / user annotation ranges per name: nsys stats nvtx_sum columns",
	.run = nvtx_run,
};
