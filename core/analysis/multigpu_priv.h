/*
 * multigpu_priv.h - internals of the multi-GPU analysis (multigpu*.c).
 */
#ifndef GTRACE_ANALYSIS_MULTIGPU_PRIV_H
#define GTRACE_ANALYSIS_MULTIGPU_PRIV_H

#include "gtrace/analysis.h"
#include "analysis.h"

/* append the copies of participant gi that recur at the same place in
 * >= 80 % (and >= 2) of its step windows to r->copies */
int multigpu_copies(const struct gt_store *s, size_t gi, const struct analysis_win *win, long nw,
		    struct gt_multigpu_result *r);

#endif
