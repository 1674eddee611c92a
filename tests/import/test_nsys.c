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
#include <string.h>
#include <unistd.h>
#include "gtrace/load.h"
#include "gtrace_config.h"
#include "impcheck.h"

#if GTRACE_HAVE_SQLITE
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
	for (size_t i = 0; i < store_lane_count(s); i++) {
		const struct gt_lane *l = store_lane_at(s, (uint32_t)i);
		cr_expect(store_str(s, l->name)[0]);
		for (size_t j = 0; j < l->n; j++) {
			const struct gt_event *e = &l->ev[j];
			if (e->kind == GT_EV_MEMCPY)
				bytes += e->arg;
			if (e->kind == GT_EV_KERNEL) {
				struct gt_ref me = { (uint32_t)i, (uint32_t)j }, p;
				linked += store_corr_peer(s, me, &p) == 0;
				cr_expect(store_str(s, e->name)[0]);
			}
		}
	}
	cr_expect_eq(bytes, 225116952ULL);
	cr_expect_gt(linked, 0);
	cr_expect_eq(store_device_count(s), 4);
	cr_expect_str_eq(store_meta_get(s, "format"), "nsys-sqlite");
	store_free(s);
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
	unlink(path);
}
#endif
