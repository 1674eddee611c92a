/*
 * overview_priv.h - internals of the overview (overview*.c).
 */
#ifndef GTRACE_ANALYSIS_OVERVIEW_PRIV_H
#define GTRACE_ANALYSIS_OVERVIEW_PRIV_H

#include "gtrace/analysis.h"

/* derive the recommendations from the computed parts; 0 or -ENOMEM */
int overview_recs(struct gt_overview_result *r);

#endif
