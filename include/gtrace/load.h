/*
 * gtrace/load.h - open any input into a store: a .gtrace capture, a Kineto /
 * Chrome trace JSON (optionally .gz), an Nsight Systems SQLite export, or a
 * directory of per-rank trace files (merged on one time axis).
 */
#ifndef GTRACE_LOAD_H
#define GTRACE_LOAD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "gtrace/store.h"

enum gt_format {
	GT_FMT_UNKNOWN = 0,
	GT_FMT_GTRACE,
	GT_FMT_KINETO_JSON,
	GT_FMT_NSYS_SQLITE,
	GT_FMT_DIRECTORY,
	GT_FMT_XPLANE            /* TensorFlow / JAX profile: .xplane.pb[.gz] */
};

#define GT_LOAD_PROGRESS 0x1u   /* progress bar on stderr when it is a terminal */
#define GT_LOAD_QUIET    0x2u   /* no warnings on stderr */
#define GT_LOAD_MEMORY_SOFT 0x4u /* memory_bytes is a default: no cache file, no budget (no error) */

struct gt_load_opts {
	unsigned flags;
	int threads;             /* 0 = automatic */
	/* optional: bytes of a .gtrace input read so far, updated while it
	   loads (another thread may draw a percentage from it) */
	_Atomic uint64_t *progress_bytes;
	/* optional: the run of a TensorBoard log directory to open (NULL: the newest) */
	const char *run;
	/* bytes of decoded events and indexes to keep resident
	   (gt_store_set_budget); 0 = unbounded */
	size_t memory_bytes;
};

/* guess the format from the path (directory, extension) and first bytes */
enum gt_format gt_load_detect(const char *path, char *err, size_t errlen);

/* load paths into a new, finished store.  Returns 0 and *out, or a negative
 * errno with one line in err ("FILE: problem").  Warnings (skipped events,
 * truncated file) go to stderr unless GT_LOAD_QUIET; with it, a .gtrace's
 * warning is left in err on success (empty when there is none). */
int gt_load(const char *const *paths, size_t n, const struct gt_load_opts *o,
	    struct gt_store **out, char *err, size_t errlen);

#endif
