/*
 * tables.c - helpers shared by the table reports: the eight nsys statistics
 * columns, compact table construction and the scope note.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/steps.h"
#include "tables.h"

int tables_stat_cols(struct gt_table *t, const char *count_col)
{
	int c0 = gt_table_col(t, "Time (%)", GT_COL_PCT, 1);
	if (c0 < 0)
		return c0;
	if (gt_table_col(t, "Total Time (ns)", GT_COL_INT, 0) < 0 ||
	    gt_table_col(t, count_col, GT_COL_INT, 0) < 0 ||
	    gt_table_col(t, "Avg (ns)", GT_COL_FLOAT, 1) < 0 ||
	    gt_table_col(t, "Med (ns)", GT_COL_FLOAT, 1) < 0 ||
	    gt_table_col(t, "Min (ns)", GT_COL_INT, 0) < 0 ||
	    gt_table_col(t, "Max (ns)", GT_COL_INT, 0) < 0 ||
	    gt_table_col(t, "StdDev (ns)", GT_COL_FLOAT, 1) < 0)
		return -ENOMEM;
	t->sort_col = c0 + 1;   /* Total Time, largest first */
	return c0;
}

int tables_ref_push(struct gt_ref **v, size_t *n, size_t *cap, struct gt_ref r)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct gt_ref *nv = realloc(*v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = r;
	return 0;
}

const char *tables_row_name(const struct gt_table *t, size_t row)
{
	int c = gt_table_col_with(t, GT_COLF_NAME);
	if (c < 0 || row >= t->nrows || gt_table_is_null(t, row, (size_t)c))
		return NULL;
	return gt_table_cell(t, row, (size_t)c)->s;
}

void tables_stat_row(struct gt_table *t, size_t row, size_t c, const struct gt_kernel_stats_row *k)
{
	gt_table_set_float(t, row, c + 0, k->pct);
	gt_table_set_int(t, row, c + 1, k->total_ns);
	gt_table_set_int(t, row, c + 2, (int64_t)k->count);
	gt_table_set_float(t, row, c + 3, k->avg_ns);
	gt_table_set_float(t, row, c + 4, k->med_ns);
	gt_table_set_int(t, row, c + 5, k->min_ns);
	gt_table_set_int(t, row, c + 6, k->max_ns);
	gt_table_set_float(t, row, c + 7, k->stddev_ns);
}

struct gt_table *tables_new(const char *name, const char *title, const char *const *cols)
{
	struct gt_table *t = gt_table_new(name, title);
	if (!t)
		return NULL;
	for (size_t i = 0; cols[i]; i++) {
		char nm[128];
		const char *p = strchr(cols[i], ':');
		size_t n = p ? (size_t)(p - cols[i]) : strlen(cols[i]);
		if (n >= sizeof(nm))
			n = sizeof(nm) - 1;
		memcpy(nm, cols[i], n);
		nm[n] = 0;
		enum gt_col_type ty = GT_COL_STR;
		int dec = 0;
		if (p) {
			ty = p[1] == 'i' || p[1] == 'k' ? GT_COL_INT : p[1] == 'f' ? GT_COL_FLOAT :
			     p[1] == 'p' ? GT_COL_PCT : GT_COL_STR;
			if (p[1] && p[2] == ':')
				dec = atoi(p + 3);
		}
		if (gt_table_col(t, nm, ty, dec) < 0) {
			gt_table_free(t);
			return NULL;
		}
		if (p && p[1] == 'k')
			gt_table_col_flags(t, t->ncols - 1, GT_COLF_ID);
	}
	return t;
}

int tables_scope_note(struct gt_table *t, const struct gt_store *s, const struct gt_scope *sc)
{
	int rc = 0;
	if (sc->t0_ns != INT64_MIN || sc->t1_ns != INT64_MAX) {
		int64_t base = gt_store_t_min(s);
		double a = sc->t0_ns == INT64_MIN ? 0 : (double)(sc->t0_ns - base) / 1e6;
		double b = sc->t1_ns == INT64_MAX ? (double)(gt_store_t_max(s) - base) / 1e6 :
			   (double)(sc->t1_ns - base) / 1e6;
		rc = gt_table_note(t, "Scope: events starting in [%.3f ms, %.3f ms) after trace start",
				   a, b);
	}
	if (!rc && sc->step >= 0)
		rc = gt_table_note(t, "Scope: step %lld", (long long)sc->step);
	if (!rc && sc->gpu >= 0)
		rc = gt_table_note(t, "Scope: GPU %d", (int)sc->gpu);
	if (!rc && sc->rank >= 0)
		rc = gt_table_note(t, "Scope: rank %d", (int)sc->rank);
	return rc;
}

int tables_out_pair(struct gt_report_out *out, int rc, struct gt_table *a, struct gt_table *b)
{
	if (!rc) {
		rc = gt_report_out_add(out, a);
		a = NULL;
	}
	if (!rc) {
		rc = gt_report_out_add(out, b);
		b = NULL;
	}
	gt_table_free(a);
	gt_table_free(b);
	return rc;
}
