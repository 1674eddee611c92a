/*
 * import_nsys.c - Nsight Systems `nsys export --type sqlite` importer:
 * CUPTI kernels, memcpys, memsets, CUDA runtime calls and NVTX ranges,
 * with StringIds resolved; CUDA memory allocation events in
 * import_nsys_mem.c, memory pools in import_nsys_pool.c.  Times are nanoseconds from the session start
 * and are moved onto the epoch axis with TARGET_INFO_SESSION_START_TIME.
 * Host lanes come from globalTid (pid = bits 24-47, tid = bits 0-23).
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
#include "import_nsys_pool.h"

struct nsys {
	sqlite3 *db;
	struct gt_store *s;
	uint32_t *str;              /* StringIds id -> store string id */
	size_t n_str;
	int64_t t0;                 /* epoch ns of the session start */
	uint64_t skipped;
};

static int has_table(struct nsys *n, const char *t)
{
	sqlite3_stmt *st;
	int found = 0;
	if (sqlite3_prepare_v2(n->db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

static uint32_t sid(const struct nsys *n, sqlite3_int64 id)
{
	return id >= 0 && (size_t)id < n->n_str ? n->str[id] : 0;
}

/* StringIds into the store; names ending in "_v1234" lose the suffix */
static int load_strings(struct nsys *n)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(n->db, "SELECT id, value FROM StringIds", -1, &st, NULL) != SQLITE_OK)
		return -EINVAL;
	size_t cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);
		if (id < 0 || id > 100000000 || !v)
			continue;
		if ((size_t)id >= cap) {
			size_t nc = cap ? cap : 1024;
			while (nc <= (size_t)id)
				nc *= 2;
			uint32_t *ns = realloc(n->str, nc * sizeof(*ns));
			if (!ns) {
				sqlite3_finalize(st);
				return -ENOMEM;
			}
			memset(ns + cap, 0, (nc - cap) * sizeof(*ns));
			n->str = ns;
			cap = nc;
		}
		size_t len = strlen(v), k = len;
		while (k && v[k - 1] >= '0' && v[k - 1] <= '9')
			k--;
		if (k >= 2 && k < len && v[k - 1] == 'v' && v[k - 2] == '_' && !strncmp(v, "cu", 2))
			len = k - 2;
		n->str[id] = gt_store_intern(n->s, v, len);
		if ((size_t)id + 1 > n->n_str)
			n->n_str = (size_t)id + 1;
	}
	sqlite3_finalize(st);
	return 0;
}

static uint32_t gpu_lane(struct nsys *n, int64_t dev, int64_t stream)
{
	struct gt_lane_key k = { .type = GT_LANE_GPU, .rank = 0, .device = (int32_t)dev, .id = stream };
	uint32_t l = gt_store_lane(n->s, &k);
	struct gt_lane *sl = gt_store_lane_at(n->s, l);
	if (sl && !sl->name) {
		char nm[64];
		snprintf(nm, sizeof(nm), "GPU %lld stream %lld", (long long)dev, (long long)stream);
		gt_store_lane_set_name(n->s, l, nm);
	}
	return l;
}

uint32_t import_nsys_host_lane(struct gt_store *s, int64_t gtid)
{
	struct gt_lane_key k = { .type = GT_LANE_HOST, .rank = 0, .device = -1,
				 .pid = (gtid >> 24) & 0xffffff, .id = gtid & 0xffffff };
	uint32_t l = gt_store_lane(s, &k);
	struct gt_lane *sl = gt_store_lane_at(s, l);
	if (sl && !sl->name) {
		char nm[64];
		snprintf(nm, sizeof(nm), "thread %lld", (long long)k.id);
		gt_store_lane_set_name(s, l, nm);
	}
	return l;
}

static uint32_t host_lane(struct nsys *n, int64_t gtid)
{
	return import_nsys_host_lane(n->s, gtid);
}

enum { Q_KERNEL, Q_MEMCPY, Q_MEMSET, Q_RUNTIME, Q_NVTX };

static const struct {
	const char *table;
	const char *sql;
	const char *older;      /* for exports without a newer column, or NULL */
} queries[] = {
	[Q_KERNEL] = { "CUPTI_ACTIVITY_KIND_KERNEL",
		       "SELECT start, end, deviceId, streamId, correlationId, demangledName, gridX, gridY,"
		       " gridZ, blockX, blockY, blockZ, registersPerThread, staticSharedMemory,"
		       " dynamicSharedMemory, shortName FROM CUPTI_ACTIVITY_KIND_KERNEL",
		       "SELECT start, end, deviceId, streamId, correlationId, demangledName, gridX, gridY,"
		       " gridZ, blockX, blockY, blockZ, registersPerThread, staticSharedMemory,"
		       " dynamicSharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL" },
	[Q_MEMCPY] = { "CUPTI_ACTIVITY_KIND_MEMCPY",
		       "SELECT start, end, deviceId, streamId, correlationId, bytes, copyKind, srcKind,"
		       " dstKind, srcDeviceId, dstDeviceId FROM CUPTI_ACTIVITY_KIND_MEMCPY", NULL },
	[Q_MEMSET] = { "CUPTI_ACTIVITY_KIND_MEMSET",
		       "SELECT start, end, deviceId, streamId, correlationId, bytes"
		       " FROM CUPTI_ACTIVITY_KIND_MEMSET", NULL },
	[Q_RUNTIME] = { "CUPTI_ACTIVITY_KIND_RUNTIME",
			"SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME", NULL },
	[Q_NVTX] = { "NVTX_EVENTS",
		     "SELECT start, end, globalTid, text, textId FROM NVTX_EVENTS"
		     " WHERE eventType IN (59, 60) AND end IS NOT NULL", NULL },
};

static const uint8_t copy_kind[14] = {
	GT_COPY_UNKNOWN, GT_COPY_H2D, GT_COPY_D2H, GT_COPY_H2D, GT_COPY_D2H, GT_COPY_D2D, GT_COPY_D2D,
	GT_COPY_D2D, GT_COPY_D2D, GT_COPY_H2H, GT_COPY_P2P, GT_COPY_H2D, GT_COPY_D2H, GT_COPY_D2D,
};

static int row(struct nsys *n, int q, sqlite3_stmt *st)
{
#define I(c) sqlite3_column_int64(st, c)
	struct gt_event e;
	memset(&e, 0, sizeof(e));
	int64_t t0 = I(0), t1 = I(1);
	if (t1 < t0 || t0 < 0 || t1 > 4000000000000000000LL) {
		n->skipped++;
		return 0;
	}
	e.start_ns = t0 + n->t0;
	e.dur_ns = t1 - t0;
	switch (q) {
	case Q_KERNEL: {
		e.kind = GT_EV_KERNEL;
		e.lane = gpu_lane(n, I(2), I(3));
		e.corr = (uint32_t)I(4);
		e.name = sid(n, I(5));
		struct gt_kconf k = { { (uint32_t)I(6), (uint32_t)I(7), (uint32_t)I(8) },
				      { (uint32_t)I(9), (uint32_t)I(10), (uint32_t)I(11) },
				      (uint32_t)I(12), (uint32_t)I(13), (uint32_t)I(14), -1.0f };
		e.arg = gt_store_kconf(n->s, &k);
		/* nsys's own short name ("par_reduce_kernel"), for labels */
		uint32_t sh = sqlite3_column_count(st) < 16 || sqlite3_column_type(st, 15) == SQLITE_NULL
			      ? 0 : sid(n, I(15));
		if (sh && sh != e.name && !gt_store_str_short(n->s, e.name) &&
		    gt_store_str_set_short(n->s, e.name, sh))
			return -ENOMEM;
		const char *nm = gt_store_str(n->s, e.name);
		if (!strncmp(nm, "nccl", 4) || strstr(nm, "ncclKernel") || strstr(nm, "ncclDevKernel"))
			e.flags |= GT_EVF_NCCL;
		break;
	}
	case Q_MEMCPY: {
		e.kind = GT_EV_MEMCPY;
		e.lane = gpu_lane(n, I(2), I(3));
		e.corr = (uint32_t)I(4);
		e.arg = (uint64_t)(I(5) < 0 ? 0 : I(5));
		int64_t ck = I(6);
		e.sub = ck >= 0 && ck < 14 ? copy_kind[ck] : GT_COPY_UNKNOWN;
		int64_t sk = I(7), dk = I(8);
		if (sk == 1 || dk == 1)
			e.flags |= GT_EVF_PINNED;
		if (sk == 0 || dk == 0)
			e.flags |= GT_EVF_PAGEABLE;
		if (e.sub == GT_COPY_P2P)
			e.aux = ((uint32_t)I(9) & 0xffff) | ((uint32_t)I(10) << 16);
		char nm[64];
		snprintf(nm, sizeof(nm), "[CUDA memcpy %s]", gt_copy_kind_name(e.sub));
		e.name = gt_store_intern_cstr(n->s, nm);
		break;
	}
	case Q_MEMSET:
		e.kind = GT_EV_MEMSET;
		e.lane = gpu_lane(n, I(2), I(3));
		e.corr = (uint32_t)I(4);
		e.arg = (uint64_t)(I(5) < 0 ? 0 : I(5));
		e.name = gt_store_intern_cstr(n->s, "[CUDA memset]");
		break;
	case Q_RUNTIME: {
		e.kind = GT_EV_RUNTIME;
		e.lane = host_lane(n, I(2));
		e.corr = (uint32_t)I(3);
		e.name = sid(n, I(4));
		const char *nm = gt_store_str(n->s, e.name);
		if (!strncmp(nm, "cudaLaunch", 10) || !strncmp(nm, "cudaMemcpy", 10) ||
		    !strncmp(nm, "cudaMemset", 10) || !strncmp(nm, "cudaGraphLaunch", 15) ||
		    !strncmp(nm, "cuLaunch", 8))
			e.flags |= GT_EVF_LAUNCH;
		break;
	}
	case Q_NVTX: {
		e.kind = GT_EV_NVTX;
		e.lane = host_lane(n, I(2));
		const char *t = (const char *)sqlite3_column_text(st, 3);
		e.name = t ? gt_store_intern_cstr(n->s, t) : sid(n, I(4));
		break;
	}
	}
	if (e.lane == UINT32_MAX)
		return -ENOMEM;
	if (gt_evcheck_event(&e)) {
		n->skipped++;          /* counted with the bad times */
		return 0;
	}
	return gt_store_add(n->s, &e);
#undef I
}

static int session_start(struct nsys *n)
{
	sqlite3_stmt *st;
	if (!has_table(n, "TARGET_INFO_SESSION_START_TIME") ||
	    sqlite3_prepare_v2(n->db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW) {
		int64_t v = sqlite3_column_int64(st, 0);
		if (v > 0 && v < 4000000000000000000LL)
			n->t0 = v;
	}
	sqlite3_finalize(st);
	return 0;
}

static void devices(struct nsys *n)
{
	sqlite3_stmt *st;
	if (!has_table(n, "TARGET_INFO_GPU") ||
	    sqlite3_prepare_v2(n->db, "SELECT id, name, totalMemory, smCount, computeMajor, computeMinor"
			       " FROM TARGET_INFO_GPU", -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *nm = (const char *)sqlite3_column_text(st, 1);
		struct gt_device d = { .rank = 0, .id = (int32_t)sqlite3_column_int64(st, 0),
				       .name = nm ? gt_store_intern_cstr(n->s, nm) : 0,
				       .mem_bytes = (uint64_t)sqlite3_column_int64(st, 2),
				       .sm_count = (uint32_t)sqlite3_column_int64(st, 3),
				       .cc_major = (uint32_t)sqlite3_column_int64(st, 4),
				       .cc_minor = (uint32_t)sqlite3_column_int64(st, 5) };
		gt_store_device(n->s, &d);
	}
	sqlite3_finalize(st);
}

int import_nsys(const char *path, const struct gt_load_opts *o, struct gt_store *s,
		char *err, size_t errlen)
{
	struct nsys n = { .s = s };
	int rc = 0;
	if (sqlite3_open_v2(path, &n.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot open as SQLite: %s", path,
			 n.db ? sqlite3_errmsg(n.db) : "out of memory");
		sqlite3_close(n.db);
		return -EINVAL;
	}
	/* a damaged or cut database fails already on its schema: say so, not "no table" */
	sqlite3_stmt *chk = NULL;
	int crc = sqlite3_prepare_v2(n.db, "SELECT count(*) FROM sqlite_master", -1, &chk, NULL);
	if (crc == SQLITE_OK)
		crc = sqlite3_step(chk) == SQLITE_ROW ? SQLITE_OK : sqlite3_errcode(n.db);
	sqlite3_finalize(chk);
	if (crc != SQLITE_OK) {
		snprintf(err, errlen, "%s: damaged SQLite file (%s)", path, sqlite3_errmsg(n.db));
		rc = -EINVAL;
		goto out;
	}
	if (!has_table(&n, "StringIds")) {
		snprintf(err, errlen, "%s: not an Nsight Systems export (no StringIds table)", path);
		rc = -EINVAL;
		goto out;
	}
	if ((rc = load_strings(&n)) || (rc = session_start(&n))) {
		snprintf(err, errlen, "%s: cannot read the string table", path);
		goto out;
	}
	devices(&n);
	for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
		sqlite3_stmt *st;
		if (!has_table(&n, queries[q].table))
			continue;
		if (sqlite3_prepare_v2(n.db, queries[q].sql, -1, &st, NULL) != SQLITE_OK &&
		    (!queries[q].older ||
		     sqlite3_prepare_v2(n.db, queries[q].older, -1, &st, NULL) != SQLITE_OK)) {
			if (!(o && (o->flags & GT_LOAD_QUIET)))
				fprintf(stderr, "gtrace: warning: %s: %s skipped (%s)\n", path,
					queries[q].table, sqlite3_errmsg(n.db));
			continue;
		}
		int sr;
		while ((sr = sqlite3_step(st)) == SQLITE_ROW)
			if ((rc = row(&n, (int)q, st)))
				break;
		sqlite3_finalize(st);
		if (rc) {
			snprintf(err, errlen, "%s: out of memory", path);
			goto out;
		}
		if (sr != SQLITE_DONE && sr != SQLITE_ROW) {
			snprintf(err, errlen, "%s: %s: %s", path, queries[q].table, sqlite3_errmsg(n.db));
			rc = -EIO;
			goto out;
		}
	}
	if (has_table(&n, "CUDA_GPU_MEMORY_USAGE_EVENTS")) {
		char merr[256];
		rc = import_nsys_mem(n.db, s, n.t0, &n.skipped, merr, sizeof(merr));
		if (rc == -EINVAL && !(o && (o->flags & GT_LOAD_QUIET)))
			fprintf(stderr, "gtrace: warning: %s: %s\n", path, merr);
		if (rc == -EINVAL)
			rc = 0;
		if (rc) {
			snprintf(err, errlen, "%s: %s", path, merr);
			goto out;
		}
	}
	{
		char perr[256];
		rc = import_nsys_pool(n.db, s, n.t0, &n.skipped, perr, sizeof(perr));
		if (rc == -EINVAL && !(o && (o->flags & GT_LOAD_QUIET)))
			fprintf(stderr, "gtrace: warning: %s: %s\n", path, perr);
		if (rc == -EINVAL)
			rc = 0;
		if (rc) {
			snprintf(err, errlen, "%s: %s", path, perr);
			goto out;
		}
	}
	gt_store_drops(s)->import_skipped += n.skipped;
	if (n.skipped && !(o && (o->flags & GT_LOAD_QUIET)))
		fprintf(stderr, "gtrace: warning: %s: skipped %llu records with bad times\n", path,
			(unsigned long long)n.skipped);
	struct gt_rank r = { .rank = 0, .pid = -1, .source = gt_store_intern_cstr(s, path), .world_size = -1 };
	if (gt_store_rank(s, &r) || gt_store_meta_set(s, "format", "nsys-sqlite") ||
	    gt_store_meta_set(s, "source", path) || gt_store_finish(s)) {
		snprintf(err, errlen, "%s: out of memory", path);
		rc = -ENOMEM;
	}
out:
	free(n.str);
	sqlite3_close(n.db);
	return rc;
}

#else

int import_nsys(const char *path, const struct gt_load_opts *o, struct gt_store *s,
		char *err, size_t errlen)
{
	(void)o;
	(void)s;
	snprintf(err, errlen, "%s: this gtrace was built without SQLite (nsys import)", path);
	return -ENOTSUP;
}

#endif
