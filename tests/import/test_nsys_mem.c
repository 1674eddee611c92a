/*
 * test_nsys_mem.c - nsys CUDA_GPU_MEMORY_USAGE_EVENTS as allocator records
 * and Total Allocated counter lanes (import_nsys_mem.c).  No export in
 * ../shared/testdata has the table, so the test writes an nsys-schema
 * SQLite file with planted allocations; the truth below is worked out by
 * hand from the rows (memoryOperationType 0 = allocation, 1 =
 * deallocation; memKind 1 = pinned host, 2 = device):
 *
 *   t(ns) dev kind op bytes corr  GPU 0 sum  GPU 1 sum  CPU sum
 *   1000  0   2    0  1000  1     1000
 *   2000  0   2    0  3000  2     4000
 *   3000  1   2    0   500  3                500
 *   4000  0   2    1  1000  4     3000
 *   5000  0   2    0  2500  5     5500 peak
 *   6000  0   2    1  3000  6     2500
 *   7000  0   1    0  4096  7                           4096
 *   8000  1   2    1   500  8                0
 *   8500  0   2    2   123  9     (operation 2: not a record, skipped)
 *   9000  0   2    0   700  99    3200 (no API call: main thread)
 *
 * GPU 0: 6 records, 4 allocations 7200 B, 2 frees 4000 B, peak 5500 at
 * 5000 ns, end 3200; GPU 1: 2 records, 500 / 500, peak 500 at 3000, end 0;
 * CPU: 1 record 4096.  1 row skipped.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gtrace/load.h"
#include "gtrace/mem_usage.h"
#include "gtrace_config.h"
#include "impcheck.h"

#if GTRACE_HAVE_SQLITE
#include <sqlite3.h>

#define T0 1700000000000000000LL
#define GPID "4294967296"      /* pid 256 << 24 */
#define GTID "4294967338"      /* pid 256, tid 42 */

static const char schema[] =
	"CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
	"INSERT INTO StringIds VALUES (1, 'cudaMalloc_v3020'), (2, 'cudaFree_v3020');"
	"CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);"
	"INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '', '');"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,"
	" correlationId INTEGER, nameId INTEGER);"
	"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (900, 1100, " GTID ", 1, 1),"
	" (1900, 2100, " GTID ", 2, 1), (2900, 3100, " GTID ", 3, 1), (3900, 4100, " GTID ", 4, 2),"
	" (4900, 5100, " GTID ", 5, 1), (5900, 6100, " GTID ", 6, 2), (6900, 7100, " GTID ", 7, 1),"
	" (7900, 8100, " GTID ", 8, 2), (8400, 8600, " GTID ", 9, 1);"
	"CREATE TABLE ENUM_CUDA_DEV_MEM_EVENT_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
	"INSERT INTO ENUM_CUDA_DEV_MEM_EVENT_OPER VALUES (0, 'CUDA_DEV_MEM_EVENT_OPR_ALLOCATION',"
	" 'Allocation'), (1, 'CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION', 'Deallocation');";

static const char table_new[] =
	"CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER,"
	" deviceId INTEGER NOT NULL, contextId INTEGER, address INTEGER NOT NULL, pc INTEGER,"
	" bytes INTEGER NOT NULL, memKind INTEGER NOT NULL, memoryOperationType INTEGER NOT NULL,"
	" name TEXT, correlationId INTEGER, streamId INTEGER, localMemoryPoolAddress INTEGER,"
	" localMemoryPoolReleaseThreshold INTEGER, localMemoryPoolSize INTEGER,"
	" localMemoryPoolUtilizedSize INTEGER, importedMemoryPoolAddress INTEGER,"
	" importedMemoryPoolProcessId INTEGER);"
	"INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address,"
	" bytes, memKind, memoryOperationType, correlationId) VALUES"
	" (1000, " GPID ", 0, 1, 4096, 1000, 2, 0, 1), (2000, " GPID ", 0, 1, 8192, 3000, 2, 0, 2),"
	" (3000, " GPID ", 1, 2, 4096, 500, 2, 0, 3), (4000, " GPID ", 0, 1, 4096, 1000, 2, 1, 4),"
	" (5000, " GPID ", 0, 1, 65536, 2500, 2, 0, 5), (6000, " GPID ", 0, 1, 8192, 3000, 2, 1, 6),"
	" (7000, " GPID ", 0, 1, 12288, 4096, 1, 0, 7), (8000, " GPID ", 1, 2, 4096, 500, 2, 1, 8),"
	" (8500, " GPID ", 0, 1, 99, 123, 2, 2, 9), (9000, " GPID ", 0, 1, 131072, 700, 2, 0, 99);";

/* an nsys export with the planted rows; sql_extra replaces the memory
 * table (NULL = the newer schema above); path out */
static void write_db(char *path, const char *table)
{
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	char *msg = NULL;
	cr_assert_eq(sqlite3_exec(db, schema, NULL, NULL, &msg), SQLITE_OK, "%s", msg ? msg : "");
	if (table)
		cr_assert_eq(sqlite3_exec(db, table, NULL, NULL, &msg), SQLITE_OK, "%s",
			     msg ? msg : "");
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

static const struct gt_mem_usage_dev *dev_of(const struct gt_mem_usage_result *m, uint32_t dev)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->dev[i].device == dev)
			return &m->dev[i];
	cr_assert_fail("device %u missing", dev);
	return NULL;
}

static void check_planted(struct gt_store *s, int with_threads)
{
	struct gt_mem_usage_result m;
	char err[256];
	cr_assert_eq(gt_mem_usage_compute(s, NULL, &m, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(m.n, 3);
	const struct gt_mem_usage_dev *g0 = dev_of(&m, 0), *g1 = dev_of(&m, 1), *c = dev_of(&m, GT_MEM_HOST);
	cr_expect_eq(g0->records, 6);
	cr_expect_eq(g0->allocs, 4);
	cr_expect_eq(g0->alloc_bytes, 7200);
	cr_expect_eq(g0->frees, 2);
	cr_expect_eq(g0->free_bytes, 4000);
	cr_expect_eq(g0->peak_bytes, 5500);
	cr_expect_eq(g0->peak_ns, T0 + 5000);
	cr_expect_eq(g0->end_bytes, 3200);
	/* the counter lane: one sample per record, its peak the running sum's */
	cr_expect_eq(g0->total_samples[0], 6);
	cr_expect_eq(g0->total_peak[0], 5500);
	cr_expect_eq(g0->total_peak_ns[0], T0 + 5000);
	cr_expect_eq(g0->total_end[0], 3200);
	cr_expect_eq(g0->total_samples[1], 0);      /* nsys has no reserved figure */
	cr_expect_eq(g1->records, 2);
	cr_expect_eq(g1->allocs, 1);
	cr_expect_eq(g1->alloc_bytes, 500);
	cr_expect_eq(g1->free_bytes, 500);
	cr_expect_eq(g1->peak_bytes, 500);
	cr_expect_eq(g1->peak_ns, T0 + 3000);
	cr_expect_eq(g1->end_bytes, 0);
	cr_expect_eq(g1->total_samples[0], 2);
	cr_expect_eq(c->records, 1);
	cr_expect_eq(c->peak_bytes, 4096);
	cr_expect_eq(c->total_peak[0], 4096);
	gt_mem_usage_result_done(&m);
	cr_expect_eq(gt_store_drops(s)->import_skipped, 1);
	/* the lanes: the records on cudaMalloc's thread (tid 42), the one with
	 * no API call on the main thread (tid 256); three counter lanes */
	size_t on42 = 0, on256 = 0, counters = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		for (size_t j = 0; j < l->n; j++) {
			if (l->ev[j].kind != GT_EV_INSTANT || !(l->ev[j].flags & GT_EVF_MEMORY))
				continue;
			cr_expect_eq(l->key.pid, 256);
			on42 += l->key.id == 42;
			on256 += l->key.id == 256;
		}
		if (l->key.type == GT_LANE_COUNTER) {
			counters++;
			const char *nm = gt_store_str(s, l->name);
			cr_expect(!strcmp(nm, "Total Allocated (GPU 0)") ||
				  !strcmp(nm, "Total Allocated (GPU 1)") ||
				  !strcmp(nm, "Total Allocated (CPU)"), "%s", nm);
		}
	}
	cr_expect_eq(counters, 3);
	cr_expect_eq(on42, with_threads ? 8 : 0);
	cr_expect_eq(on256, with_threads ? 1 : 9);
}

Test(nsys_mem, planted_allocations)
{
	char path[] = "/tmp/gtrace_nsys_mem_XXXXXX";
	write_db(path, table_new);
	struct gt_store *s = load(path);
	unlink(path);
	check_planted(s, 1);
	gt_store_free(s);
}

/* an older export: the table without correlationId and the pool columns,
 * no API table to join: every record on the main thread, same figures */
Test(nsys_mem, older_schema_without_correlation)
{
	char path[] = "/tmp/gtrace_nsys_mem_XXXXXX";
	char sql[4096];
	snprintf(sql, sizeof(sql), "%s",
		 "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER,"
		 " deviceId INTEGER NOT NULL, contextId INTEGER, address INTEGER NOT NULL, pc INTEGER,"
		 " bytes INTEGER NOT NULL, memKind INTEGER NOT NULL, memoryOperationType INTEGER NOT NULL,"
		 " name TEXT);"
		 "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, address, bytes,"
		 " memKind, memoryOperationType) VALUES"
		 " (1000, " GPID ", 0, 1, 1000, 2, 0), (2000, " GPID ", 0, 2, 3000, 2, 0),"
		 " (3000, " GPID ", 1, 1, 500, 2, 0), (4000, " GPID ", 0, 1, 1000, 2, 1),"
		 " (5000, " GPID ", 0, 3, 2500, 2, 0), (6000, " GPID ", 0, 2, 3000, 2, 1),"
		 " (7000, " GPID ", 0, 4, 4096, 1, 0), (8000, " GPID ", 1, 1, 500, 2, 1),"
		 " (8500, " GPID ", 0, 9, 123, 2, 2), (9000, " GPID ", 0, 5, 700, 2, 0);");
	write_db(path, sql);
	struct gt_store *s = load(path);
	unlink(path);
	check_planted(s, 0);
	gt_store_free(s);
}

/* no memory table: nothing of it in the store (unchanged behaviour) */
Test(nsys_mem, no_table_no_records)
{
	char path[] = "/tmp/gtrace_nsys_mem_XXXXXX";
	write_db(path, NULL);
	struct gt_store *s = load(path);
	unlink(path);
	cr_expect_eq(gt_store_event_count(s), 9);       /* the 9 API calls */
	cr_expect_eq(count_kind(s, GT_EV_INSTANT), 0);
	cr_expect_eq(count_kind(s, GT_EV_COUNTER), 0);
	gt_store_free(s);
}

/* a table without the columns read: a warning, the rest still loads */
Test(nsys_mem, unreadable_table_is_skipped)
{
	char path[] = "/tmp/gtrace_nsys_mem_XXXXXX";
	write_db(path, "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER, bytes INTEGER);"
		       "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (1, 2);");
	struct gt_store *s = load(path);
	cr_expect_eq(gt_store_event_count(s), 9);
	gt_store_free(s);
	char out[4096];
	int rc = impcheck_cli(out, sizeof(out), "stats '%s' --report kernels", path);
	unlink(path);
	cr_expect_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "CUDA_GPU_MEMORY_USAGE_EVENTS skipped"), "%s", out);
}

/* the CLI report: the planted peak and counts per device */
Test(nsys_mem, memory_usage_report)
{
	char path[] = "/tmp/gtrace_nsys_mem_XXXXXX";
	write_db(path, table_new);
	char out[16384];
	int rc = impcheck_cli(out, sizeof(out), "stats '%s' --report memory-usage --format csv", path);
	unlink(path);
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, ",GPU 0,6,4,7200,2,4000,5500,"), "%s", out);
	cr_expect(strstr(out, ",GPU 1,2,1,500,1,500,500,"), "%s", out);
	cr_expect(strstr(out, ",CPU,1,1,4096,0,0,4096,"), "%s", out);
}

#else
Test(nsys_mem, skipped_without_sqlite)
{
	cr_skip("built without SQLite");
}
#endif
