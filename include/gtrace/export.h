/*
 * gtrace/export.h - write a store as Chrome trace JSON (the format of
 * chrome://tracing, Perfetto and the PyTorch profiler): M metadata naming
 * processes and threads, X events with a Kineto category per event kind
 * and their args, i instants, C counters, and ac2g flow events from launch
 * calls to the GPU work they launched.  Times are exact decimal
 * microseconds with three decimals (nanosecond precision, no doubles).
 * Importing the output again gives back every event's lane, name, kind,
 * start and duration: each lane also gets a "gtrace_lane" M event with its
 * exact key.
 */
#ifndef GTRACE_EXPORT_H
#define GTRACE_EXPORT_H

#include <stddef.h>
#include "gtrace/store.h"

#define GT_EXPORT_NO_FLOWS 0x1u   /* leave out the ac2g flow events */
#define GT_EXPORT_KEEP     0x2u   /* never replace an existing file (-EEXIST) */

struct gt_export_opts {
	unsigned flags;
	int gzip_level;               /* for .gz output: 1-9, 0 = default (6) */
};

/* write the (finished) store to path; ".gz" at the end compresses with
 * gzip.  The text goes to a temporary file beside path, renamed into place
 * when complete: a symlink at path is replaced, never followed, and a
 * failed export (a full disk) leaves no file.  0 or negative errno with
 * "PATH: problem" in err. */
int gt_export_chrome(const struct gt_store *s, const char *path, const struct gt_export_opts *o,
		  char *err, size_t errlen);

/* the same JSON text into a malloc'd buffer (*out, *len; caller frees) */
int gt_export_chrome_mem(const struct gt_store *s, const struct gt_export_opts *o, char **out,
		      size_t *len);

#endif
