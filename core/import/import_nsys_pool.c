/*
 * import_nsys_pool.c - Nsight Systems' CUDA memory pools (stream-ordered
 * allocator, cudaMallocAsync / cudaMemPool*) as the reserved bytes of a
 * device (docs/import.md "nsys"):
 *
 * - CUDA_GPU_MEMORY_POOL_EVENTS (CUPTI_ACTIVITY_KIND_MEMORY_POOL): a row per
 *   pool created (operationType 1), destroyed (2) or trimmed (3), with the
 *   pool's base `address`, `poolType` (1 local, 2 imported from another
 *   process) and `localMemoryPoolSize`, the pool's size after it;
 * - CUDA_GPU_MEMORY_USAGE_EVENTS rows of an allocation or free made from a
 *   pool (`localMemoryPoolAddress`, `localMemoryPoolSize`: the pool's size
 *   then; the pool grows as it serves allocations).
 *
 * A local pool's size is its latest size from either table (0 once
 * destroyed); imported pools are another process's memory and are not
 * counted.  Per (process, device) the sum of its pools' sizes is kept as
 * samples of the counter "Total Reserved (GPU n)" (GT_EVF_MEMORY, sub 1,
 * what Kineto's Total Reserved gives: the memory-usage report's Total
 * Reserved columns and a counter lane), one after every such row in time
 * order (at equal times the pool table's row first).  Rows with another
 * operation, a negative time or size or a bad device are counted skipped.
 * Built only with libsqlite3 (GTRACE_HAVE_SQLITE).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace_config.h"
#include "import_api.h"

#if GTRACE_HAVE_SQLITE
#include <sqlite3.h>
#include "import_nsys_pool.h"

struct pool {
	int64_t pid, addr, size;
	uint32_t dev;
};

struct resv {
	int64_t pid, sum;
	uint32_t dev, name, lane;
};

struct poolrun {
	struct gt_store *s;
	struct pool *p;
	size_t np, pcap;
	struct resv *r;
	size_t nr, rcap;
};

/* the reserved sum of (pid, dev) with its counter lane, made at 0; NULL
 * when out of memory */
static struct resv *resv_of(struct poolrun *m, int64_t pid, uint32_t dev)
{
	for (size_t i = 0; i < m->nr; i++)
		if (m->r[i].pid == pid && m->r[i].dev == dev)
			return &m->r[i];
	if (m->nr == m->rcap) {
		size_t nc = m->rcap ? 2 * m->rcap : 8;
		struct resv *n = realloc(m->r, nc * sizeof(*n));
		if (!n)
			return NULL;
		m->r = n;
		m->rcap = nc;
	}
	char nm[64];
	snprintf(nm, sizeof(nm), "Total Reserved (GPU %u)", dev);
	uint32_t name = gt_store_intern_cstr(m->s, nm);
	struct gt_lane_key k = { .type = GT_LANE_COUNTER, .rank = 0, .device = -1, .pid = pid,
				 .id = name };
	uint32_t lane = gt_store_lane(m->s, &k);
	struct gt_lane *l = gt_store_lane_at(m->s, lane);
	if (!name || !l)
		return NULL;
	if (!l->name)
		gt_store_lane_set_name(m->s, lane, nm);
	struct resv *r = &m->r[m->nr++];
	*r = (struct resv){ pid, 0, dev, name, lane };
	return r;
}

/* the pool at addr of (pid, dev), made with size 0; NULL when out of memory */
static struct pool *pool_of(struct poolrun *m, int64_t pid, uint32_t dev, int64_t addr)
{
	for (size_t i = 0; i < m->np; i++)
		if (m->p[i].pid == pid && m->p[i].dev == dev && m->p[i].addr == addr)
			return &m->p[i];
	if (m->np == m->pcap) {
		size_t nc = m->pcap ? 2 * m->pcap : 16;
		struct pool *n = realloc(m->p, nc * sizeof(*n));
		if (!n)
			return NULL;
		m->p = n;
		m->pcap = nc;
	}
	struct pool *p = &m->p[m->np++];
	*p = (struct pool){ pid, addr, 0, dev };
	return p;
}

/* one row: start, globalPid, deviceId, address, operationType, poolType,
 * size, source (0 pool table, 1 allocation from a pool) */
static int pool_row(struct poolrun *m, sqlite3_stmt *st, int64_t t0, uint64_t *skipped)
{
#define I(c) sqlite3_column_int64(st, c)
	int64_t t = I(0), gpid = I(1), dev = I(2), addr = I(3), op = I(4), type = I(5), src = I(7);
	int null_size = sqlite3_column_type(st, 6) == SQLITE_NULL;
	int64_t size = null_size ? 0 : I(6);
	if (src == 0 && type == 2)
		return 0;               /* imported: the exporting process's memory */
	if (t < 0 || t > 4000000000000000000LL || dev < 0 || dev >= (int64_t)GT_MEM_HOST ||
	    size < 0 || (src == 0 && (type != 1 || op < 1 || op > 3 || (op != 2 && null_size)))) {
		(*skipped)++;
		return 0;
	}
	if (src == 0 && op == 2)
		size = 0;               /* destroyed */
	int64_t pid = (gpid >> 24) & 0xffffff;
	struct pool *p = pool_of(m, pid, (uint32_t)dev, addr);
	struct resv *r = p ? resv_of(m, pid, (uint32_t)dev) : NULL;
	if (!r)
		return -ENOMEM;
	r->sum += size - p->size;
	p->size = size;
	struct gt_event c;
	memset(&c, 0, sizeof(c));
	c.kind = GT_EV_COUNTER;
	c.flags = GT_EVF_MEMORY;
	c.sub = 1;
	c.start_ns = t + t0;
	c.aux = (uint32_t)dev;
	c.name = r->name;
	c.lane = r->lane;
	double d = (double)r->sum;
	memcpy(&c.arg, &d, sizeof(d));
	return gt_store_add(m->s, &c);
#undef I
}

static const char q_pool[] =
	"SELECT start, globalPid, deviceId, address, operationType, poolType, localMemoryPoolSize, 0"
	" FROM CUDA_GPU_MEMORY_POOL_EVENTS";
static const char q_use[] =
	"SELECT start, globalPid, deviceId, localMemoryPoolAddress, 0, 1, localMemoryPoolSize, 1"
	" FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE localMemoryPoolAddress IS NOT NULL AND"
	" localMemoryPoolAddress != 0 AND localMemoryPoolSize IS NOT NULL";

/* 1 when q prepares (its table and columns exist) */
static int can(sqlite3 *db, const char *q)
{
	sqlite3_stmt *st;
	int ok = sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK;
	sqlite3_finalize(st);
	return ok;
}

int import_nsys_pool(sqlite3 *db, struct gt_store *s, int64_t t0, uint64_t *skipped, char *err,
		     size_t errlen)
{
	int hp = can(db, q_pool), hu = can(db, q_use);
	if (!hp && !hu)
		return 0;
	char q[1024];
	snprintf(q, sizeof(q), "%s%s%s ORDER BY 1, 8", hp ? q_pool : "", hp && hu ? " UNION ALL " : "",
		 hu ? q_use : "");
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "memory pools skipped (%s)", sqlite3_errmsg(db));
		return -EINVAL;
	}
	struct poolrun m = { .s = s };
	int rc = 0, sr = SQLITE_DONE;
	while (!rc && (sr = sqlite3_step(st)) == SQLITE_ROW)
		rc = pool_row(&m, st, t0, skipped);
	if (rc)
		snprintf(err, errlen, "out of memory");
	else if (sr != SQLITE_DONE) {
		snprintf(err, errlen, "memory pools: %s", sqlite3_errmsg(db));
		rc = -EIO;
	}
	sqlite3_finalize(st);
	free(m.p);
	free(m.r);
	return rc;
}

#endif
