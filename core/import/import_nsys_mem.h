/*
 * import_nsys_mem.h - the nsys importer's CUDA memory table reader
 * (import_nsys_mem.c) and the host lane helper it shares with import_nsys.c.
 */
#ifndef GTRACE_IMPORT_NSYS_MEM_H
#define GTRACE_IMPORT_NSYS_MEM_H

#include <sqlite3.h>
#include <stdint.h>
#include "gtrace/store.h"

/* the host lane of an nsys globalTid (pid = bits 24-47, tid = bits 0-23),
 * named "thread N" when new; UINT32_MAX when out of memory */
uint32_t import_nsys_host_lane(struct gt_store *s, int64_t gtid);

/* CUDA_GPU_MEMORY_USAGE_EVENTS of db into s as allocator records and
 * Total Allocated counter samples (file comment of import_nsys_mem.c);
 * times + t0; bad rows counted in *skipped.  0, -EINVAL when the table
 * cannot be read with the expected columns (err says so: the caller may
 * warn and go on), -EIO on a read error, -ENOMEM */
int import_nsys_mem(sqlite3 *db, struct gt_store *s, int64_t t0, uint64_t *skipped,
		    char *err, size_t errlen);

#endif
