/*
 * tables.h - helpers shared by the table reports (tables_*.c): the nsys
 * statistics columns and a kernel_stats row written into them.
 */
#ifndef GTRACE_ANALYSIS_TABLES_H
#define GTRACE_ANALYSIS_TABLES_H

#include "gtrace/kernel_stats.h"
#include "gtrace/report.h"

/* add Time (%), Total Time (ns), <count_col>, Avg, Med, Min, Max, StdDev (ns);
 * returns the first column's index or negative errno */
int tables_stat_cols(struct gt_table *t, const char *count_col);
/* fill the eight columns from col0 on from a kernel_stats row */
void tables_stat_row(struct gt_table *t, size_t row, size_t col0, const struct gt_kernel_stats_row *k);
/* a table with its columns, or NULL; cols is a "name:type:decimals" list
 * ending with NULL, type one of s i f p, or k: an int identifier (PID, step)
 * printed without thousands separators */
struct gt_table *tables_new(const char *name, const char *title, const char *const *cols);
/* note lines describing the scope (range, gpu, rank) when it is not the whole trace */
int tables_scope_note(struct gt_table *t, const struct gt_store *s, const struct gt_scope *sc);
/* a report's main table and a second one: when rc is 0, a then b go into
 * out (which owns them from then on); the ones not handed over are freed;
 * returns rc, or the first error of gt_report_out_add */
int tables_out_pair(struct gt_report_out *out, int rc, struct gt_table *a, struct gt_table *b);
/* append r to *v (capacity *cap, doubled as needed); 0 or -ENOMEM */
int tables_ref_push(struct gt_ref **v, size_t *n, size_t *cap, struct gt_ref r);
/* the string of row's GT_COLF_NAME cell in t, NULL when none or null */
const char *tables_row_name(const struct gt_table *t, size_t row);

#endif
