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
#include "import_api.h"

#if GTRACE_HAVE_SQLITE
#include <sqlite3.h>
#include "import_nsys_mem.h"

struct total {
	int64_t pid;
	uint32_t dev;
	int64_t sum;
	uint32_t name, lane;        /* its counter's name and lane, made once */
};

/* correlationId + process -> the API call's globalTid (open addressing) */
struct corr_ent {
	int64_t key;                /* corr << 24 | pid, -1 = empty */
	int64_t gtid;
};

struct memrun {
	struct gt_store *s;
	struct total *t;
	size_t n, cap;
	struct corr_ent *c;
	size_t c_cap;               /* power of two, 0 = no API table */
	uint32_t rec_name;          /* "[memory]" */
};

/* the slot of key in m->c: its entry, or the empty slot it would take */
static size_t corr_slot(const struct memrun *m, int64_t key)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 20) & (m->c_cap - 1);
	while (m->c[i].key != -1 && m->c[i].key != key)
		i = (i + 1) & (m->c_cap - 1);
	return i;
}

/* the API calls' threads by (correlationId, process), the first call of
 * each; 0 (also when the table or its columns are missing) or -ENOMEM */
static int corr_load(struct memrun *m, sqlite3 *db)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;
	int64_t rows = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	if (rows <= 0 || rows > (1ll << 30) ||
	    sqlite3_prepare_v2(db, "SELECT correlationId, globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	size_t cap = 16;
	while (cap < (size_t)rows * 2)
		cap *= 2;
	m->c = malloc(cap * sizeof(*m->c));
	if (!m->c) {
		sqlite3_finalize(st);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cap; i++)
		m->c[i].key = -1;
	m->c_cap = cap;
	for (int64_t n = 0; n < rows && sqlite3_step(st) == SQLITE_ROW; n++) {
		int64_t corr = sqlite3_column_int64(st, 0), gtid = sqlite3_column_int64(st, 1);
		if (corr < 0 || corr > 0xffffffffll || gtid < 0)
			continue;
		int64_t key = corr << 24 | ((gtid >> 24) & 0xffffff);
		size_t i = corr_slot(m, key);
		if (m->c[i].key == -1)
			m->c[i] = (struct corr_ent){ key, gtid };
	}
	sqlite3_finalize(st);
	return 0;
}

/* the running sum of (pid, dev) with its counter's name and lane, created
 * at 0; NULL when out of memory */
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
	char nm[64];
	if (dev == GT_MEM_HOST)
		snprintf(nm, sizeof(nm), "Total Allocated (CPU)");
	else
		snprintf(nm, sizeof(nm), "Total Allocated (GPU %u)", dev);
	struct total *t = &m->t[m->n];
	*t = (struct total){ .pid = pid, .dev = dev, .name = gt_store_intern_cstr(m->s, nm) };
	struct gt_lane_key k = { .type = GT_LANE_COUNTER, .rank = 0, .device = -1, .pid = pid,
				 .id = t->name };
	t->lane = gt_store_lane(m->s, &k);
	struct gt_lane *l = gt_store_lane_at(m->s, t->lane);
	if (!t->name || !l)
		return NULL;
	if (!l->name)
		gt_store_lane_set_name(m->s, t->lane, nm);
	m->n++;
	return t;
}

/* one row: start, globalPid, deviceId, bytes, memKind, memoryOperationType,
 * correlationId (NULL in an older export) */
static int mem_row(struct memrun *m, sqlite3_stmt *st, int64_t t0, uint64_t *skipped)
{
#define I(c) sqlite3_column_int64(st, c)
	int64_t t = I(0), gpid = I(1), dev = I(2), bytes = I(3), kind = I(4), op = I(5);
	if (t < 0 || t > 4000000000000000000LL || bytes < 0 || (op != 0 && op != 1) ||
	    ((kind != 0 && kind != 1) && (dev < 0 || dev >= (int64_t)GT_MEM_HOST))) {
		(*skipped)++;
		return 0;
	}
	int64_t pid = (gpid >> 24) & 0xffffff, gtid = gpid + pid;
	if (m->c_cap && sqlite3_column_type(st, 6) != SQLITE_NULL && I(6) >= 0 &&
	    I(6) <= 0xffffffffll) {
		size_t i = corr_slot(m, I(6) << 24 | pid);
		if (m->c[i].key != -1)
			gtid = m->c[i].gtid;
	}
	struct gt_event e;
	memset(&e, 0, sizeof(e));
	e.kind = GT_EV_INSTANT;
	e.flags = GT_EVF_MEMORY;
	e.start_ns = t + t0;
	e.aux = kind == 0 || kind == 1 ? GT_MEM_HOST : (uint32_t)dev;
	int64_t signed_bytes = op == 0 ? bytes : -bytes;
	memcpy(&e.arg, &signed_bytes, sizeof(signed_bytes));
	e.name = m->rec_name;
	e.lane = import_nsys_host_lane(m->s, gtid);
	if (e.lane == UINT32_MAX)
		return -ENOMEM;
	if (gt_evcheck_event(&e)) {
		(*skipped)++;
		return 0;
	}
	struct total *tot = total_of(m, pid, e.aux);
	if (!tot || gt_store_add(m->s, &e))
		return -ENOMEM;
	/* the counter sample "Total Allocated (...)" after this record */
	tot->sum += signed_bytes;
	struct gt_event c;
	memset(&c, 0, sizeof(c));
	c.kind = GT_EV_COUNTER;
	c.flags = GT_EVF_MEMORY;
	c.start_ns = e.start_ns;
	c.aux = e.aux;
	c.name = tot->name;
	c.lane = tot->lane;
	double d = (double)tot->sum;
	memcpy(&c.arg, &d, sizeof(d));
	return gt_store_add(m->s, &c);
#undef I
}

static const char q_new[] =
	"SELECT start, globalPid, deviceId, bytes, memKind, memoryOperationType, correlationId"
	" FROM CUDA_GPU_MEMORY_USAGE_EVENTS ORDER BY start, rowid";
static const char q_old[] =
	"SELECT start, globalPid, deviceId, bytes, memKind, memoryOperationType, NULL"
	" FROM CUDA_GPU_MEMORY_USAGE_EVENTS ORDER BY start, rowid";

int import_nsys_mem(sqlite3 *db, struct gt_store *s, int64_t t0, uint64_t *skipped,
		    char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, q_new, -1, &st, NULL) != SQLITE_OK &&
	    sqlite3_prepare_v2(db, q_old, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "CUDA_GPU_MEMORY_USAGE_EVENTS skipped (%s)", sqlite3_errmsg(db));
		return -EINVAL;
	}
	struct memrun m = { .s = s, .rec_name = gt_store_intern_cstr(s, "[memory]") };
	int rc = m.rec_name ? corr_load(&m, db) : -ENOMEM, sr = SQLITE_DONE;
	while (!rc && (sr = sqlite3_step(st)) == SQLITE_ROW)
		rc = mem_row(&m, st, t0, skipped);
	if (rc)
		snprintf(err, errlen, "out of memory");
	else if (sr != SQLITE_DONE) {
		snprintf(err, errlen, "CUDA_GPU_MEMORY_USAGE_EVENTS: %s", sqlite3_errmsg(db));
		rc = -EIO;
	}
	sqlite3_finalize(st);
	free(m.t);
	free(m.c);
	return rc;
}

#endif
