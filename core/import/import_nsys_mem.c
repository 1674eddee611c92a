/*
 * import_nsys_mem.c - Nsight Systems' CUDA_GPU_MEMORY_USAGE_EVENTS (CUDA
 * memory allocation tracking: `nsys profile --cuda-memory-usage=true`) as
 * allocator records, the events the memory-usage report reads
 * (docs/import.md "nsys"):
 *
 * - each row becomes a GT_EVF_MEMORY instant at `start`: arg = bytes for
 *   memoryOperationType 0 (allocation), -bytes for 1 (deallocation); aux =
 *   deviceId, or GT_MEM_HOST for memKind 0 / 1 (pageable / pinned host
 *   memory, ENUM_CUDA_MEM_KIND); other operation types are skipped.
 * - it lies on the host lane of the CUDA API call with the same
 *   correlationId in the same process (cudaMalloc's thread), else on the
 *   process's main thread (tid = pid).
 * - per (process, device) the running sum of the records is also kept as
 *   samples of the counter "Total Allocated (GPU n)" / "... (CPU)", the
 *   counter lanes Kineto's Total Allocated args give.
 * Built only with libsqlite3 (GTRACE_HAVE_SQLITE).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace_config.h"
#include "gtrace/evcheck.h"
#include "../file/import_api.h"

#if GTRACE_HAVE_SQLITE
#include <sqlite3.h>
#include "import_nsys_mem.h"

struct total {
	int64_t pid;
	uint32_t dev;
	int64_t sum;
};

struct memrun {
	struct gt_store *s;
	struct total *t;
	size_t n, cap;
};

/* the running sum of (pid, dev), created at 0; NULL when out of memory */
static struct total *total_of(struct memrun *m, int64_t pid, uint32_t dev)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->t[i].pid == pid && m->t[i].dev == dev)
			return &m->t[i];
	if (m->n == m->cap) {
		size_t nc = m->cap ? 2 * m->cap : 8;
		struct total *nt = realloc(m->t, nc * sizeof(*nt));
		if (!nt)
			return NULL;
		m->t = nt;
		m->cap = nc;
	}
	m->t[m->n] = (struct total){ .pid = pid, .dev = dev };
	return &m->t[m->n++];
}

/* the counter sample "Total Allocated (...)" = v at t on pid's lane of it */
static int counter(struct memrun *m, int64_t pid, uint32_t dev, int64_t t, int64_t v)
{
	char nm[64];
	if (dev == GT_MEM_HOST)
		snprintf(nm, sizeof(nm), "Total Allocated (CPU)");
	else
		snprintf(nm, sizeof(nm), "Total Allocated (GPU %u)", dev);
	struct gt_event e;
	memset(&e, 0, sizeof(e));
	e.kind = GT_EV_COUNTER;
	e.flags = GT_EVF_MEMORY;
	e.start_ns = t;
	e.aux = dev;
	e.name = store_intern_cstr(m->s, nm);
	double d = (double)v;
	memcpy(&e.arg, &d, sizeof(d));
	struct gt_lane_key k = { .type = GT_LANE_COUNTER, .rank = 0, .device = -1, .pid = pid,
				 .id = e.name };
	e.lane = store_lane(m->s, &k);
	struct gt_lane *l = store_lane_at(m->s, e.lane);
	if (!e.name || !l)
		return -ENOMEM;
	if (!l->name)
		store_lane_set_name(m->s, e.lane, nm);
	return store_add(m->s, &e);
}

/* one row: start, globalPid, deviceId, bytes, memKind, memoryOperationType,
 * globalTid of the matching API call (NULL = none) */
static int mem_row(struct memrun *m, sqlite3_stmt *st, int64_t t0, uint64_t *skipped)
{
#define I(c) sqlite3_column_int64(st, c)
	int64_t t = I(0), gpid = I(1), dev = I(2), bytes = I(3), kind = I(4), op = I(5);
	if (t < 0 || t > 4000000000000000000LL || bytes < 0 || (op != 0 && op != 1) ||
	    ((kind != 0 && kind != 1) && (dev < 0 || dev >= (int64_t)GT_MEM_HOST))) {
		(*skipped)++;
		return 0;
	}
	int64_t pid = (gpid >> 24) & 0xffffff;
	int64_t gtid = sqlite3_column_type(st, 6) == SQLITE_NULL ? gpid + pid : I(6);
	struct gt_event e;
	memset(&e, 0, sizeof(e));
	e.kind = GT_EV_INSTANT;
	e.flags = GT_EVF_MEMORY;
	e.start_ns = t + t0;
	e.aux = kind == 0 || kind == 1 ? GT_MEM_HOST : (uint32_t)dev;
	int64_t signed_bytes = op == 0 ? bytes : -bytes;
	memcpy(&e.arg, &signed_bytes, sizeof(signed_bytes));
	e.name = store_intern_cstr(m->s, "[memory]");
	e.lane = import_nsys_host_lane(m->s, gtid);
	if (e.lane == UINT32_MAX || !e.name)
		return -ENOMEM;
	if (evcheck_event(&e)) {
		(*skipped)++;
		return 0;
	}
	int rc = store_add(m->s, &e);
	struct total *tot = rc ? NULL : total_of(m, pid, e.aux);
	if (rc || !tot)
		return -ENOMEM;
	tot->sum += signed_bytes;
	return counter(m, pid, e.aux, e.start_ns, tot->sum);
#undef I
}

/* the API call's thread: one per (correlationId, process), so no row doubles */
static const char q_join[] =
	"SELECT m.start, m.globalPid, m.deviceId, m.bytes, m.memKind, m.memoryOperationType, r.g"
	" FROM CUDA_GPU_MEMORY_USAGE_EVENTS m LEFT JOIN (SELECT correlationId AS c,"
	" globalTid >> 24 AS p, MIN(globalTid) AS g FROM CUPTI_ACTIVITY_KIND_RUNTIME"
	" GROUP BY c, p) r ON r.c = m.correlationId AND r.p = m.globalPid >> 24"
	" ORDER BY m.start, m.rowid";
static const char q_plain[] =
	"SELECT start, globalPid, deviceId, bytes, memKind, memoryOperationType, NULL"
	" FROM CUDA_GPU_MEMORY_USAGE_EVENTS ORDER BY start, rowid";

int import_nsys_mem(sqlite3 *db, struct gt_store *s, int64_t t0, uint64_t *skipped,
		    char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, q_join, -1, &st, NULL) != SQLITE_OK &&
	    sqlite3_prepare_v2(db, q_plain, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "CUDA_GPU_MEMORY_USAGE_EVENTS skipped (%s)", sqlite3_errmsg(db));
		return -EINVAL;
	}
	struct memrun m = { .s = s };
	int rc = 0, sr;
	while ((sr = sqlite3_step(st)) == SQLITE_ROW)
		if ((rc = mem_row(&m, st, t0, skipped)))
			break;
	if (rc)
		snprintf(err, errlen, "out of memory");
	else if (sr != SQLITE_DONE) {
		snprintf(err, errlen, "CUDA_GPU_MEMORY_USAGE_EVENTS: %s", sqlite3_errmsg(db));
		rc = -EIO;
	}
	sqlite3_finalize(st);
	free(m.t);
	return rc;
}

#endif
