/*
 * test_nsys.c - Nsight Systems SQLite import.  Expected counts from the
 * database itself with the sqlite3 command-line tool:
 *   sqlite3 nsys/a100_cloverleaf.nsys.sqlite "select count(*), sum(end-start) from
 *     CUPTI_ACTIVITY_KIND_KERNEL" -> 1312|294404540   (MANIFEST.md: 1,312 kernels)
 *   "select count(*), sum(bytes) from CUPTI_ACTIVITY_KIND_MEMCPY" -> 279|225116952 (MANIFEST: 279)
 *   "select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME" -> 3048
 *   "select count(distinct streamId) from CUPTI_ACTIVITY_KIND_KERNEL" -> 1
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gtrace/load.h"
#include "gtrace_config.h"
#include "impcheck.h"

#if GTRACE_HAVE_SQLITE
#include <sqlite3.h>

/* planted: a minimal export with the tables the real file lacks (MEMSET,
 * NVTX_EVENTS) and a session start; the truth is what was inserted */
Test(nsys, planted_memset_nvtx)
{
	char path[] = "/tmp/gtrace_nsys_planted_XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	const char *sql =
		"CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
		"INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'my_kernel'), (3, 'phase');"
		"CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);"
		"INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '', '');"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
		" streamId INTEGER, correlationId INTEGER, demangledName INTEGER, gridX INTEGER, gridY INTEGER,"
		" gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER, registersPerThread INTEGER,"
		" staticSharedMemory INTEGER, dynamicSharedMemory INTEGER);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 3000, 1, 13, 77, 2, 4, 1, 1, 128, 1, 1, 32, 16, 48);"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId INTEGER,"
		" streamId INTEGER, correlationId INTEGER, bytes INTEGER);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (4000, 4500, 1, 13, 78, 4096);"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,"
		" correlationId INTEGER, nameId INTEGER);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (500, 900, 4294967338, 77, 1);"  /* pid 256, tid 42 */
		"CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, globalTid INTEGER,"
		" text TEXT, textId INTEGER);"
		"INSERT INTO NVTX_EVENTS VALUES (100, 5000, 59, 4294967338, 'step 1', NULL),"
		" (200, 300, 60, 4294967338, NULL, 3), (250, NULL, 34, 4294967338, 'mark', NULL);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (9000, 8000, 1, 13, 79, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0);";
	char *msg = NULL;
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s", msg ? msg : "");
	sqlite3_close(db);
	const char *p = path;
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	struct gt_store *s;
	char err[512];
	cr_assert_eq(gt_load(&p, 1, &o, &s, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	cr_expect_eq(gt_store_event_count(s), 5);              /* the end < start kernel is skipped */
	cr_expect_eq(gt_store_drops(s)->import_skipped, 1);
	int64_t t0 = 1700000000000000000LL;
	size_t seen = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		for (size_t j = 0; j < l->n; j++) {
			const struct gt_event *e = &l->ev[j];
			const char *n = gt_store_str(s, e->name);
			seen++;
			if (e->kind == GT_EV_KERNEL) {
				cr_expect_str_eq(n, "my_kernel");
				cr_expect_eq(e->start_ns, t0 + 1000);
				cr_expect_eq(e->dur_ns, 2000);
				cr_expect_eq(l->key.device, 1);
				cr_expect_eq(l->key.id, 13);
				const struct gt_kconf *k = gt_store_kconf_at(s, gt_event_kconf(e));
				cr_assert(k);
				cr_expect_eq(k->grid[0], 4);
				cr_expect_eq(k->block[0], 128);
				cr_expect_eq(k->smem_dynamic_bytes, 48);
				struct gt_ref me = { (uint32_t)i, (uint32_t)j }, peer;
				cr_expect_eq(gt_store_corr_peer(s, me, &peer), 0);
				cr_expect_str_eq(gt_store_str(s, gt_store_ev(s, peer)->name), "cudaLaunchKernel");
			} else if (e->kind == GT_EV_MEMSET) {
				cr_expect_eq(e->arg, 4096);
				cr_expect_eq(e->dur_ns, 500);
			} else if (e->kind == GT_EV_RUNTIME) {
				cr_expect(e->flags & GT_EVF_LAUNCH);
				cr_expect_eq(l->key.pid, 256);
				cr_expect_eq(l->key.id, 42);
			} else if (e->kind == GT_EV_NVTX) {
				cr_expect(!strcmp(n, "step 1") || !strcmp(n, "phase"), "%s", n);
			} else {
				cr_expect(0, "unexpected kind %d", e->kind);
			}
		}
	}
	cr_expect_eq(seen, 5);
	gt_store_free(s);
}

Test(nsys, cloverleaf_counts)
{
	struct gt_store *s = tload("nsys/a100_cloverleaf.nsys.sqlite");
	struct kfacts f;
	kfacts_of(s, &f);
	cr_expect_eq(f.kernels, 1312);
	cr_expect_eq(f.dur_ns, 294404540LL);
	cr_expect_eq(f.gpu_lanes, 1);
	cr_expect_eq(count_kind(s, GT_EV_MEMCPY), 279);
	cr_expect_eq(count_kind(s, GT_EV_RUNTIME), 3048);
	uint64_t bytes = 0;
	size_t linked = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		cr_expect(gt_store_str(s, l->name)[0]);
		for (size_t j = 0; j < l->n; j++) {
			const struct gt_event *e = &l->ev[j];
			if (e->kind == GT_EV_MEMCPY)
				bytes += e->arg;
			if (e->kind == GT_EV_KERNEL) {
				struct gt_ref me = { (uint32_t)i, (uint32_t)j }, p;
				linked += gt_store_corr_peer(s, me, &p) == 0;
				cr_expect(gt_store_str(s, e->name)[0]);
			}
		}
	}
	cr_expect_eq(bytes, 225116952ULL);
	cr_expect_gt(linked, 0);
	cr_expect_eq(gt_store_device_count(s), 4);
	cr_expect_str_eq(gt_store_meta_get(s, "format"), "nsys-sqlite");
	gt_store_free(s);
}

/* the short name is nsys's own shortName column: every kernel name of the
 * store maps to the shortName the database pairs with its demangledName
 * (read here straight from SQLite), e.g. "par_reduce_kernel" */
Test(nsys, short_name_is_nsys_short_name)
{
	struct gt_store *s = tload("nsys/a100_cloverleaf.nsys.sqlite");
	char path[1024];
	snprintf(path, sizeof(path), "%s/nsys/a100_cloverleaf.nsys.sqlite",
		 getenv("GTRACE_TESTDATA") ? getenv("GTRACE_TESTDATA") : "../shared/testdata");
	sqlite3 *db;
	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT DISTINCT d.value, sh.value FROM "
					"CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds d ON d.id = k.demangledName "
					"JOIN StringIds sh ON sh.id = k.shortName", -1, &st, NULL), SQLITE_OK);
	size_t n = 0, reduce = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *d = (const char *)sqlite3_column_text(st, 0);
		const char *want = (const char *)sqlite3_column_text(st, 1);
		uint32_t id = gt_store_str_find(s, d, strlen(d));
		cr_assert_neq(id, UINT32_MAX, "kernel name not in the store: %s", d);
		cr_expect_str_eq(gt_store_str(s, gt_store_str_short(s, id)), want, "%s", d);
		reduce += !strcmp(want, "par_reduce_kernel");
		n++;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	cr_expect_gt(n, 10);
	cr_expect_gt(reduce, 0);
	gt_store_free(s);
}

Test(nsys, not_an_nsys_database)
{
	char path[] = "/tmp/gtrace_nsys_XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	/* an SQLite header followed by garbage */
	char b[4096];
	memset(b, 0x7f, sizeof(b));
	memcpy(b, "SQLite format 3", 16);
	cr_assert_eq(write(fd, b, sizeof(b)), (ssize_t)sizeof(b));
	close(fd);
	const char *p = path;
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	struct gt_store *s;
	char err[512];
	cr_expect_neq(gt_load(&p, 1, &o, &s, err, sizeof(err)), 0);
	cr_expect(strstr(err, path), "%s", err);
	cr_expect(strstr(err, "damaged SQLite file"), "%s", err);
	unlink(path);
}

/* an export cut in half is a damaged file, not "no StringIds table" */
Test(nsys, cut_in_half)
{
	char path[] = "/tmp/gtrace_nsys_XXXXXX";
	FILE *in = fopen(tpath("nsys/a100_cloverleaf.nsys.sqlite"), "rb");
	cr_assert(in);
	fseek(in, 0, SEEK_END);
	long sz = ftell(in);
	rewind(in);
	char *buf = malloc((size_t)sz);
	cr_assert_eq(fread(buf, 1, (size_t)sz, in), (size_t)sz);
	fclose(in);
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, buf, (size_t)sz / 2), (ssize_t)(sz / 2));
	close(fd);
	free(buf);
	const char *p = path;
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	struct gt_store *s;
	char err[512];
	cr_expect_neq(gt_load(&p, 1, &o, &s, err, sizeof(err)), 0);
	cr_expect(strstr(err, "damaged SQLite file"), "%s", err);
	unlink(path);
}
#endif
