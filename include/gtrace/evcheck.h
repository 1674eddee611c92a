/*
 * gtrace/evcheck.h - the one check every event passes before it enters a
 * store, whatever brought it (live ring, .gtrace reader, importers): a
 * known kind and sub-kind, a duration >= 0, and start and end strictly
 * inside +-GT_EVCHECK_TIME_LIMIT_NS so that any end, and any difference of
 * two times, fits an int64 without overflow.
 */
#ifndef GTRACE_EVCHECK_H
#define GTRACE_EVCHECK_H

#include "gtrace/event.h"

/* 2^62 ns, about 146 years either side of the axis origin (epoch
 * nanoseconds today are about 1.8e18, 2^62 is 4.6e18) */
#define GT_EVCHECK_TIME_LIMIT_NS (INT64_C(1) << 62)

/* NULL when e may enter a store, else a static phrase naming the first
 * problem ("unknown kind", "negative duration", ...) */
const char *gt_evcheck_event(const struct gt_event *e);

#endif
