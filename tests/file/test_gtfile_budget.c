/*
 * A .gtrace capture opened into a budgeted store (64 KiB: every event array
 * in the cache file, trimmed every millisecond) through the file path
 * (mapped, dropped behind as it is decoded): cut at every chunk boundary and
 * in the middle of every chunk, it opens exactly as the same bytes open into
 * an unbounded store, each lane a prefix of the full capture's.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "core/file/gtfile_priv.h"
#include "test_gtfile_util.h"

static int open_cut(const unsigned char *b, size_t cut, size_t budget, struct gt_file_info *info,
		    char *err, struct gt_store **out)
{
	const char *path = tgf_tmp(budget ? "cutb" : "cutu");
	FILE *f = fopen(path, "wb");
	cr_assert(f);
	cr_assert_eq(fwrite(b, 1, cut, f), cut);
	fclose(f);
	struct gt_store *s = gt_store_new();
	if (budget)
		cr_assert_eq(gt_store_set_budget(s, budget), 0);
	int rc = gt_file_read(path, s, info, err, 256);
	unlink(path);
	if (rc) {
		gt_store_free(s);
		s = NULL;
	}
	*out = s;
	return rc;
}

Test(gtfile_budget, cut_at_every_chunk)
{
	setenv("GTRACE_STORE_TRIM_MS", "1", 1);
	struct gt_store *s = tgf_build(1000, 1);
	cr_assert_gt(gt_store_event_count(s), 5000);
	char err[256];
	const char *path = tgf_tmp("full");
	struct gt_file_writer_opts o = { .chunk_events = 512 };
	cr_assert_eq(gt_file_write_store_opts(s, path, &o, err, sizeof(err)), 0, "%s", err);
	size_t len;
	unsigned char *b = tgf_slurp(path, &len);
	unlink(path);
	size_t cuts[4096], nc = 0;
	for (size_t pos = GTFILE_HDR_BYTES; pos < len && nc + 2 < 4096;) {
		size_t stored = gtfile_get32(b + pos + 12);
		cuts[nc++] = pos + (GTFILE_CHUNK_HDR + stored) / 2;   /* inside the chunk */
		pos += GTFILE_CHUNK_HDR + stored;
		cuts[nc++] = pos;                                      /* after it */
	}
	cr_assert_gt(nc, 20, "only %zu cut points", nc);
	size_t last = 0;
	for (size_t k = 0; k < nc; k++) {
		struct gt_file_info iu, ib;
		struct gt_store *u = NULL, *r = NULL;
		char eu[256], eb[256];
		int ru = open_cut(b, cuts[k], 0, &iu, eu, &u);
		int rb = open_cut(b, cuts[k], 64 << 10, &ib, eb, &r);
		cr_assert_eq(ru, rb, "cut at %zu: %s / %s", cuts[k], eu, eb);
		if (ru)
			continue;
		cr_assert_eq(iu.events, ib.events, "cut at %zu", cuts[k]);
		cr_assert_eq(ib.truncated, cuts[k] < len);
		cr_assert_geq(ib.events, last);
		last = ib.events;
		tgf_assert_same(u, r);
		tgf_assert_prefix(s, r);
		gt_store_free(u);
		gt_store_free(r);
	}
	cr_assert_eq(last, gt_store_event_count(s));
	free(b);
	gt_store_free(s);
}

/* the budget's cache file refused disk space (here the process's file size
 * limit: EFBIG, as ENOSPC on a full $TMPDIR): the open fails naming the
 * cache file and the system's reason, not "out of memory" */
Test(gtfile_budget, cache_file_without_disk_is_named)
{
	struct gt_store *s = tgf_build(1000, 1);
	char err[256];
	const char *path = tgf_tmp("nodisk");
	cr_assert_eq(gt_file_write_store(s, path, err, sizeof(err)), 0, "%s", err);
	struct rlimit old;
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	struct rlimit lim = { 1 << 20, old.rlim_max };
	void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
	struct gt_store *r = gt_store_new();
	int rc = gt_store_set_budget(r, 64 << 10);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	struct gt_file_info info;
	if (!rc)
		rc = gt_file_read(path, r, &info, err, sizeof(err));
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, was);
	cr_assert_eq(rc, -EFBIG, "%d: %s", rc, err);
	cr_assert(strstr(err, path) == err && strstr(err, ": the memory budget's cache file in ") &&
		  strstr(err, strerror(EFBIG)), "%s", err);
	gt_store_free(r);
	gt_store_free(s);
	unlink(path);
}
