/*
 * gtrace/import.h - trace importers beyond gt_load(): an in-memory entry
 * point for Kineto / Chrome trace JSON (fuzzing, tests, embedding).
 * Ranks come from distributedInfo.rank, else the file name ("rank-3",
 * "rank3", "rank_3"), else the order of the inputs.
 */
#ifndef GTRACE_IMPORT_H
#define GTRACE_IMPORT_H

#include <stddef.h>
#include "gtrace/load.h"
#include "gtrace/store.h"

/* import one trace JSON text (plain or gzip) from memory into s and finish
 * the store; name is used in messages and for the rank.  0 or negative
 * errno with "NAME: problem" in err. */
int gt_import_json_mem(const char *name, const void *buf, size_t len,
		    const struct gt_load_opts *o, struct gt_store *s, char *err, size_t errlen);

/* rank encoded in a file name ("rank-3", "rank3", "rank_3"), or -1 */
int gt_import_rank_from_name(const char *path);
/* import one XPlane profile (a serialized XSpace, plain or gzip) from
 * memory into s as rank 0 and finish the store; 0 or negative errno with
 * "NAME: problem" in err */
int gt_xplane_import_mem(const char *name, const void *buf, size_t len,
		      const struct gt_load_opts *o, struct gt_store *s, char *err, size_t errlen);

#endif
