/*
 * drill.h - the one drill-down path of the table pages (Kernels, Operators):
 * the events behind one row of a report table come from the report's
 * instances hook (gtrace/report.h), never from reading the table's columns
 * back by name.  A row is found again after a live recompute by its key
 * (its GT_COLF_KEY cells); an event in a rebuilt list by lane and start.
 */
#ifndef GTRACE_TUI_DRILL_H
#define GTRACE_TUI_DRILL_H

#include <stddef.h>
#include "gtrace/report.h"

/* the instances of t's row `row` from rep->instances over sc, sorted longest
 * first (by_time: earliest first); *out malloc'ed.  0, or -ENOENT when the
 * report has no drill-down for that table, -ENOMEM */
int drill_load(const struct gt_store *s, const struct gt_report *rep, const struct gt_scope *sc,
	       const struct gt_table *t, size_t row, int by_time, struct gt_ref **out, size_t *n);
/* sort refs longest first, or earliest first; ties by lane and index */
void drill_sort(const struct gt_store *s, struct gt_ref *v, size_t n, int by_time);
/* append r to *v (capacity *cap); 0 or -1 on no memory */
int drill_push(struct gt_ref **v, size_t *n, size_t *cap, struct gt_ref r);
/* the row's identity: its GT_COLF_KEY cells as one string ("" when none) */
void drill_key(const struct gt_table *t, size_t row, char *buf, size_t len);
/* the row of t whose identity is key, -1 when none */
long drill_row(const struct gt_table *t, const char *key);
/* a title for the row: its name (demangled), then its other key cells
 * ("allreduce, 8196000 bytes, float, group size 8") */
void drill_title(const struct gt_table *t, size_t row, char *buf, size_t len);
/* the index in v[0..n) of the event on a lane with key k starting at t_ns,
 * else keep (clamped to the list) */
size_t drill_same(const struct gt_store *s, const struct gt_ref *v, size_t n,
		  const struct gt_lane_key *k, int64_t t_ns, size_t keep);

#endif
