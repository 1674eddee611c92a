/*
 * tables_kernels.c - the "kernels" report: nsys stats `cuda_gpu_kern_sum`
 * columns (Time (%), Total Time (ns), Instances, Avg, Med, Min, Max, StdDev,
 * Name) then gtrace's extra columns: GPU(s), Grid, Block, Regs/Thread,
 * Shared Mem (bytes) and TC (Tensor Core by kernel name).
 */
#include <errno.h>
#include <stdio.h>
#include "reports.h"
#include "tables.h"

/* build the kernels table from a kstats result */
static int kernels_table(const struct gt_store *s, const struct gt_scope *sc,
			 const struct kstats_result *r, struct gt_table **out)
{
	struct gt_table *t = gt_table_new("kernels", "CUDA GPU Kernel Summary (cuda_gpu_kern_sum)");
	if (!t || tables_stat_cols(t, "Instances") < 0 ||
	    gt_table_col(t, "Name", GT_COL_STR, 0) < 0 ||
	    gt_table_col(t, "GPU(s)", GT_COL_STR, 0) < 0 ||
	    gt_table_col(t, "Grid", GT_COL_STR, 0) < 0 ||
	    gt_table_col(t, "Block", GT_COL_STR, 0) < 0 ||
	    gt_table_col(t, "Regs/Thread", GT_COL_INT, 0) < 0 ||
	    gt_table_col(t, "Shared Mem (bytes)", GT_COL_INT, 0) < 0 ||
	    gt_table_col(t, "TC", GT_COL_STR, 0) < 0)
		goto nomem;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct kstats_row *k = &r->rows[i];
		long row = gt_table_row(t);
		if (row < 0)
			goto nomem;
		tables_stat_row(t, (size_t)row, 0, k);
		char buf[256];
		if (gt_table_set_str(t, (size_t)row, 8, store_str(s, k->name)))
			goto nomem;
		kstats_gpus_str(r, k->gpu_mask, buf, sizeof(buf));
		if (buf[0] && gt_table_set_str(t, (size_t)row, 9, buf))
			goto nomem;
		const struct gt_kconf *kc = k->kconf ? store_kconf_at(s, k->kconf) : NULL;
		if (kc) {
			snprintf(buf, sizeof(buf), "%ux%ux%u", kc->grid[0], kc->grid[1], kc->grid[2]);
			gt_table_set_str(t, (size_t)row, 10, buf);
			snprintf(buf, sizeof(buf), "%ux%ux%u", kc->block[0], kc->block[1], kc->block[2]);
			gt_table_set_str(t, (size_t)row, 11, buf);
			if (kc->regs_per_thread)
				gt_table_set_int(t, (size_t)row, 12, kc->regs_per_thread);
			gt_table_set_int(t, (size_t)row, 13,
					 (int64_t)kc->smem_static_bytes + kc->smem_dynamic_bytes);
		}
		if (gt_table_set_str(t, (size_t)row, 14, k->tc ? "yes" : "no"))
			goto nomem;
	}
	if (tables_scope_note(t, s, sc))
		goto nomem;
	*out = t;
	return 0;
nomem:
	gt_table_free(t);
	return -ENOMEM;
}

static int kernels_run(const struct gt_store *s, const struct gt_scope *sc_in,
		       struct gt_report_out *out, char *err, size_t errlen)
{
	struct gt_scope scope;
	if (tables_scope(s, sc_in, &scope, err, errlen))
		return -ENOENT;
	const struct gt_scope *sc = &scope;
	struct kstats_result r;
	int rc = kstats_compute(s, sc, NULL, &r, err, errlen);
	if (rc)
		return rc;
	struct gt_table *t = NULL;
	rc = kernels_table(s, sc, &r, &t);
	kstats_result_done(&r);
	if (!rc)
		rc = gt_report_out_add(out, t);
	if (rc)
		snprintf(err, errlen, "kernels: out of memory");
	return rc;
}

const struct gt_report gt_report_kernels = {
	.name = "kernels",
	.help = "GPU kernels per name: nsys stats cuda_gpu_kern_sum columns, plus GPU(s), "
		"grid/block, registers, shared memory, Tensor Core (TC)",
	.run = kernels_run,
};
