/*
 * kernels_report.c - the "kernels" report: nsys stats `cuda_gpu_kern_sum`
 * columns (Time (%), Total Time (ns), Instances, Avg, Med, Min, Max, StdDev,
 * Name) then gtrace's extra columns: GPU(s), Grid, Block, Regs/Thread,
 * Shared Mem (bytes), TC (Tensor Core by kernel name), Step Share (%) and
 * Configs (distinct launch configurations; Grid..Shared Mem show the most
 * common).
 *
 * Step Share (%): the time of the kernel's instances that start inside a
 * step window of their rank (the steps analysis' device-widened windows),
 * over the windows' total length (clipped to the scope) times the number of
 * GPUs of that rank in the table: the kernel's average share of one GPU's
 * step.  n/a when the trace has no steps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/steps.h"
#include "kernel_stats_priv.h"
#include "reports.h"
#include "tables.h"

/* step windows per rank in scope, for kernel_stats_opts.win */
struct step_win {
	struct gt_kernel_stats_windows *w;
	size_t n;
	int64_t *len_ns;          /* per entry of w: clipped total window length */
};

static void step_win_done(struct step_win *sw)
{
	for (size_t i = 0; i < sw->n; i++)
		free((void *)sw->w[i].t);
	free(sw->w);
	free(sw->len_ns);
}

/* collect the step windows of every rank in scope; 0 or -ENOMEM (a rank
 * whose steps cannot be found simply has none) */
static int step_windows(const struct gt_store *s, const struct gt_scope *sc, struct step_win *sw)
{
	int32_t *ranks = NULL;
	long nr = gt_steps_ranks(s, &ranks);
	memset(sw, 0, sizeof(*sw));
	if (nr <= 0)
		return nr < 0 ? -ENOMEM : 0;
	sw->w = calloc((size_t)nr, sizeof(*sw->w));
	sw->len_ns = calloc((size_t)nr, sizeof(*sw->len_ns));
	if (!sw->w || !sw->len_ns) {
		free(ranks);
		return -ENOMEM;
	}
	for (long i = 0; i < nr; i++) {
		if (sc->rank >= 0 && ranks[i] != sc->rank)
			continue;
		struct gt_steps_list l;
		char err[128];
		if (gt_steps_find(s, ranks[i], NULL, &l, err, sizeof(err)))
			continue;
		if (l.n == 0) {
			gt_steps_list_done(&l);
			continue;
		}
		int64_t *t = malloc(2 * l.n * sizeof(*t));
		if (!t) {
			gt_steps_list_done(&l);
			free(ranks);
			return -ENOMEM;
		}
		size_t k = 0;
		int64_t len = 0;
		for (size_t j = 0; j < l.n; j++) {
			int64_t a = l.v[j].t0_ns, b = l.v[j].t1_ns;
			if (k && a < t[2 * k - 1])
				a = t[2 * k - 1];   /* keep windows disjoint and sorted */
			if (b <= a)
				continue;
			t[2 * k] = a;
			t[2 * k + 1] = b;
			k++;
			int64_t ca = a > sc->t0_ns ? a : sc->t0_ns, cb = b < sc->t1_ns ? b : sc->t1_ns;
			if (cb > ca)
				len += cb - ca;
		}
		gt_steps_list_done(&l);
		sw->w[sw->n] = (struct gt_kernel_stats_windows){ .rank = ranks[i], .t = t, .n = k };
		sw->len_ns[sw->n++] = len;
	}
	free(ranks);
	return 0;
}

/* step time the shares divide by: window length x GPUs of the rank */
static int64_t step_gpu_time(const struct step_win *sw, const struct gt_kernel_stats_result *r)
{
	int64_t total = 0;
	for (size_t g = 0; g < r->ngpus; g++)
		for (size_t i = 0; i < sw->n; i++)
			if (sw->w[i].rank == r->gpus[g].rank)
				total += sw->len_ns[i];
	return total;
}

/* build the kernels table from a kernel_stats result */
static int kernels_table(const struct gt_store *s, const struct gt_scope *sc,
			 const struct gt_kernel_stats_result *r, int64_t step_ns, struct gt_table **out)
{
	struct gt_table *t = gt_table_new("kernels", "CUDA GPU Kernel Summary (cuda_gpu_kern_sum)");
	if (!t || tables_stat_cols(t, "Instances") < 0 ||
	    gt_table_col(t, "Name", GT_COL_STR, 0) < 0 ||
	    gt_table_col(t, "GPU(s)", GT_COL_STR, 0) < 0 ||
	    gt_table_col(t, "Grid", GT_COL_STR, 0) < 0 ||
	    gt_table_col(t, "Block", GT_COL_STR, 0) < 0 ||
	    gt_table_col(t, "Regs/Thread", GT_COL_INT, 0) < 0 ||
	    gt_table_col(t, "Shared Mem (bytes)", GT_COL_INT, 0) < 0 ||
	    gt_table_col(t, "TC", GT_COL_STR, 0) < 0 ||
	    gt_table_col(t, "Step Share (%)", GT_COL_PCT, 1) < 0 ||
	    gt_table_col(t, "Configs", GT_COL_INT, 0) < 0)
		goto nomem;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct gt_kernel_stats_row *k = &r->rows[i];
		long row = gt_table_row(t);
		if (row < 0)
			goto nomem;
		tables_stat_row(t, (size_t)row, 0, k);
		char buf[256];
		if (gt_table_set_str(t, (size_t)row, 8, gt_store_str(s, k->name)))
			goto nomem;
		gt_kernel_stats_gpus_str(r, k->gpu_mask, buf, sizeof(buf));
		if (buf[0] && gt_table_set_str(t, (size_t)row, 9, buf))
			goto nomem;
		const struct gt_kconf *kc = k->kconf ? gt_store_kconf_at(s, k->kconf) : NULL;
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
		if (step_ns > 0)
			gt_table_set_float(t, (size_t)row, 15,
					   100.0 * (double)k->in_windows_ns / (double)step_ns);
		/* Grid..Shared Mem show the most common one of these; beyond
		 * NCAND the count is not tracked: n/a */
		if (k->nkconf && k->nkconf <= NCAND)
			gt_table_set_int(t, (size_t)row, 16, k->nkconf);
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
	if (gt_steps_scope(s, sc_in, &scope, err, errlen))
		return -ENOENT;
	const struct gt_scope *sc = &scope;
	struct step_win sw;
	if (step_windows(s, sc, &sw)) {
		step_win_done(&sw);
		snprintf(err, errlen, "kernels: out of memory");
		return -ENOMEM;
	}
	struct gt_kernel_stats_opts o = { .kinds_mask = 1u << GT_EV_KERNEL, .group = GT_KERNEL_STATS_BY_NAME,
				 .win = sw.n ? sw.w : NULL, .nwin = sw.n };
	struct gt_kernel_stats_result r;
	int rc = gt_kernel_stats_compute(s, sc, &o, &r, err, errlen);
	if (rc) {
		step_win_done(&sw);
		return rc;
	}
	struct gt_table *t = NULL;
	rc = kernels_table(s, sc, &r, sw.n ? step_gpu_time(&sw, &r) : 0, &t);
	gt_kernel_stats_result_done(&r);
	step_win_done(&sw);
	if (!rc)
		rc = gt_report_out_add(out, t);
	if (rc)
		snprintf(err, errlen, "kernels: out of memory");
	return rc;
}

/* drill-down: the kernels of the row's name in scope; also of a row of
 * gtrace diff's per-kernel table (diff_kernels), whose scope's rank picks
 * the run */
static int kernels_instances(const struct gt_store *s, const struct gt_scope *sc_in,
			     const struct gt_table *t, size_t row, struct gt_ref **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	const char *nm = strcmp(t->name, "kernels") && strcmp(t->name, "diff_kernels") ? NULL :
			 tables_row_name(t, row);
	struct gt_scope sc;
	char err[64];
	if (!nm || gt_steps_scope(s, sc_in, &sc, err, sizeof(err)))
		return -ENOENT;
	uint32_t id = gt_store_str_find(s, nm, strlen(nm));
	if (id == UINT32_MAX)
		return 0;
	return gt_kernel_stats_instances(s, &sc, id, 0, GT_KERNEL_STATS_ORDER_DUR_DESC, out, n);
}

const struct gt_report gt_report_kernels = {
	.name = "kernels",
	.help = "GPU kernels per name: nsys stats cuda_gpu_kern_sum columns, plus GPU(s), "
		"grid/block, registers, shared memory, Tensor Core (TC), step share, launch configs",
	.run = kernels_run,
	.instances = kernels_instances,
};
