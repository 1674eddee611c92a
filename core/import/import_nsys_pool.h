/*
 * import_nsys_pool.h - the nsys importer's CUDA memory pool reader
 * (import_nsys_pool.c).
 */
#ifndef GTRACE_IMPORT_NSYS_POOL_H
#define GTRACE_IMPORT_NSYS_POOL_H

#include <sqlite3.h>
#include <stdint.h>
#include "gtrace/store.h"

/* CUDA_GPU_MEMORY_POOL_EVENTS and the pool columns of
 * CUDA_GPU_MEMORY_USAGE_EVENTS of db into s as "Total Reserved (GPU n)"
 * counter samples (file comment of import_nsys_pool.c); times + t0; bad
 * rows counted in *skipped.  0 (also when neither is there), -EINVAL when
 * they cannot be read together (err says so: the caller may warn and go
 * on), -EIO on a read error, -ENOMEM */
int import_nsys_pool(sqlite3 *db, struct gt_store *s, int64_t t0, uint64_t *skipped, char *err,
		     size_t errlen);

#endif
