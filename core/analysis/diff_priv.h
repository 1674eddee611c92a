/*
 * diff_priv.h - the parts of `gtrace diff` shared between diff.c and
 * diff_breakdown.c.
 */
#ifndef GTRACE_ANALYSIS_DIFF_PRIV_H
#define GTRACE_ANALYSIS_DIFF_PRIV_H

#include "gtrace/diff.h"

/* the rank compared in run s: o->rank, else the lowest rank of s (0 when none) */
int32_t diff_rank(const struct gt_store *s, const struct gt_diff_opts *o);
/* the options of one side (b: the experiment): with GT_DIFF_F_RANK_B the
 * experiment's rank is o->rank_b */
struct gt_diff_opts diff_side(const struct gt_diff_opts *o, int b);
/* run(a) on this thread and run(b) on a second one, both done on return
 * (b on this thread too when no thread can be started) */
void diff_run_both(void *(*run)(void *), void *a, void *b);
/* the breakdown tables (diff_breakdown.c); 0 or negative errno */
int diff_breakdown(const struct gt_store *a, const struct gt_store *b, const struct gt_diff_opts *o,
		   struct gt_report_out *out, char *err, size_t errlen);

#endif
