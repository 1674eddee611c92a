/*
 * test_nsys_pool.c - nsys CUDA memory pools as each device's reserved bytes
 * (import_nsys_pool.c).  No export in ../shared/testdata has the tables,
 * so the test writes an nsys-schema SQLite file (the columns of nsys's
 * CUDA_GPU_MEMORY_POOL_EVENTS and CUDA_GPU_MEMORY_USAGE_EVENTS) with planted
 * pools; the truth is worked out by hand (operationType 1 created, 2
 * destroyed, 3 trimmed; poolType 1 local, 2 imported; sizes after the row):
 *
 *   t(ns) table dev pool op    size       GPU 0 reserved  GPU 1 reserved
 *   1000  pool  0   A    crt   2097152    2097152
 *   1500  use   0   A    alloc 4194304    4194304
 *   2000  pool  0   B    crt   1048576    5242880 peak
 *   2500  pool  1   C    crt   3000000                    3000000 peak
 *   2600  use   1   -    alloc (no pool)                  (no sample)
 *   3000  pool  0   A    trim  1048576    2097152
 *   3000  use   0   A    alloc 3145728    4194304 (pool row first at equal times)
 *   3500  pool  0   D    imported         (not counted)
 *   4000  pool  0   B    destr (NULL)     3145728 end
 *   4500  pool  0   A    op 7             (skipped)
 *   5000  pool  1   C    destr            0 end
 *   5500  pool  0   A    trim  NULL       (skipped: no size)
 *
 * GPU 0: 6 samples, peak 5242880 at 2000, end 3145728; GPU 1: 2 samples,
 * peak 3000000 at 2500, end 0; 2 rows skipped.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gtrace/load.h"
#include "gtrace/mem_usage.h"
#include "gtrace_config.h"

#if GTRACE_HAVE_SQLITE
#include <sqlite3.h>

#define T0 1700000000000000000LL
#define GPID "4294967296"      /* pid 256 << 24 */

static const char schema[] =
	"CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);"
	"INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '', '');"
	"CREATE TABLE CUDA_GPU_MEMORY_POOL_EVENTS (start INTEGER NOT NULL, globalPid INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, address INTEGER NOT NULL, operationType INTEGER NOT NULL,"
	" poolType INTEGER NOT NULL, correlationId INTEGER, minBytesToKeep INTEGER,"
	" localMemoryPoolReleaseThreshold INTEGER, localMemoryPoolSize INTEGER,"
	" localMemoryPoolUtilizedSize INTEGER);"
	"INSERT INTO CUDA_GPU_MEMORY_POOL_EVENTS (start, globalPid, deviceId, address, operationType,"
	" poolType, localMemoryPoolSize) VALUES"
	" (1000, " GPID ", 0, 40960, 1, 1, 2097152), (2000, " GPID ", 0, 45056, 1, 1, 1048576),"
	" (2500, " GPID ", 1, 61440, 1, 1, 3000000), (3000, " GPID ", 0, 40960, 3, 1, 1048576),"
	" (3500, " GPID ", 0, 65536, 1, 2, 9999999), (4000, " GPID ", 0, 45056, 2, 1, NULL),"
	" (4500, " GPID ", 0, 40960, 7, 1, 5), (5000, " GPID ", 1, 61440, 2, 1, 3000000),"
	" (5500, " GPID ", 0, 40960, 3, 1, NULL);";

static const char usage[] =
	"CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, address INTEGER NOT NULL, pc INTEGER,"
	" bytes INTEGER NOT NULL, memKind INTEGER NOT NULL, memoryOperationType INTEGER NOT NULL,"
	" name TEXT, correlationId INTEGER, localMemoryPoolAddress INTEGER,"
	" localMemoryPoolReleaseThreshold INTEGER, localMemoryPoolSize INTEGER,"
	" localMemoryPoolUtilizedSize INTEGER, importedMemoryPoolAddress INTEGER,"
	" importedMemoryPoolProcessId INTEGER);"
	"INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address,"
	" bytes, memKind, memoryOperationType, correlationId, localMemoryPoolAddress,"
	" localMemoryPoolSize) VALUES"
	" (1500, " GPID ", 0, 1, 40960, 2097152, 2, 0, 1, 40960, 4194304),"
	" (2600, " GPID ", 1, 2, 8192, 1000, 2, 0, 2, NULL, NULL),"
	" (3000, " GPID ", 0, 1, 49152, 2097152, 2, 0, 3, 40960, 3145728);";

static void write_db(char *path, int with_usage)
{
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	char *msg = NULL;
	cr_assert_eq(sqlite3_exec(db, schema, NULL, NULL, &msg), SQLITE_OK, "%s", msg ? msg : "");
	if (with_usage)
		cr_assert_eq(sqlite3_exec(db, usage, NULL, NULL, &msg), SQLITE_OK, "%s", msg ? msg : "");
	sqlite3_close(db);
}

static struct gt_store *load(const char *path)
{
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	struct gt_store *s;
	char err[512];
	cr_assert_eq(gt_load(&path, 1, &o, &s, err, sizeof(err)), 0, "%s", err);
	return s;
}

/* the samples of "Total Reserved (GPU dev)": count, values in v */
static size_t samples(const struct gt_store *s, int dev, double *v, size_t max)
{
	char nm[64];
	snprintf(nm, sizeof(nm), "Total Reserved (GPU %d)", dev);
	size_t n = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type != GT_LANE_COUNTER || strcmp(gt_store_str(s, l->name), nm))
			continue;
		cr_expect_eq(l->key.pid, 256);
		for (size_t j = 0; j < l->n && n < max; j++) {
			cr_expect_eq(l->ev[j].sub, 1);
			cr_expect(l->ev[j].flags & GT_EVF_MEMORY);
			memcpy(&v[n++], &l->ev[j].arg, sizeof(double));
		}
	}
	return n;
}

Test(nsys_pool, planted_pools_are_reserved_bytes)
{
	char path[] = "/tmp/gtrace_nsys_pool_XXXXXX";
	write_db(path, 1);
	struct gt_store *s = load(path);
	unlink(path);
	double v[16];
	const double g0[] = { 2097152, 4194304, 5242880, 2097152, 4194304, 3145728 };
	const double g1[] = { 3000000, 0 };
	cr_assert_eq(samples(s, 0, v, 16), 6);
	for (int i = 0; i < 6; i++)
		cr_expect_eq(v[i], g0[i], "GPU 0 sample %d: %.0f, truth %.0f", i, v[i], g0[i]);
	cr_assert_eq(samples(s, 1, v, 16), 2);
	for (int i = 0; i < 2; i++)
		cr_expect_eq(v[i], g1[i], "GPU 1 sample %d: %.0f, truth %.0f", i, v[i], g1[i]);
	cr_expect_eq(gt_store_drops(s)->import_skipped, 2);
	/* the memory-usage report's Total Reserved columns */
	struct gt_mem_usage_result m;
	char err[256];
	cr_assert_eq(gt_mem_usage_compute(s, NULL, &m, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(m.n, 2);
	for (size_t i = 0; i < m.n; i++) {
		const struct gt_mem_usage_dev *d = &m.dev[i];
		if (d->device == 0) {
			cr_expect_eq(d->total_samples[1], 6);
			cr_expect_eq(d->total_peak[1], 5242880);
			cr_expect_eq(d->total_peak_ns[1], T0 + 2000);
			cr_expect_eq(d->total_end[1], 3145728);
			cr_expect_eq(d->records, 2);
		} else {
			cr_expect_eq(d->device, 1);
			cr_expect_eq(d->total_samples[1], 2);
			cr_expect_eq(d->total_peak[1], 3000000);
			cr_expect_eq(d->total_peak_ns[1], T0 + 2500);
			cr_expect_eq(d->total_end[1], 0);
		}
	}
	gt_mem_usage_result_done(&m);
	gt_store_free(s);
}

/* the pool table alone: the same pool rows, without the allocations */
Test(nsys_pool, pool_table_without_usage_events)
{
	char path[] = "/tmp/gtrace_nsys_pool_XXXXXX";
	write_db(path, 0);
	struct gt_store *s = load(path);
	unlink(path);
	double v[16];
	const double g0[] = { 2097152, 3145728, 2097152, 1048576 };
	cr_assert_eq(samples(s, 0, v, 16), 4);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(v[i], g0[i], "GPU 0 sample %d: %.0f, truth %.0f", i, v[i], g0[i]);
	cr_assert_eq(samples(s, 1, v, 16), 2);
	cr_expect_eq(gt_store_drops(s)->import_skipped, 2);
	gt_store_free(s);
}

#else
Test(nsys_pool, skipped_without_sqlite)
{
	cr_skip_test("built without libsqlite3");
}
#endif
