/*
 * .gtrace writer/reader tests: round trips of a planted store, the
 * incremental writer, every cut-off point, every single-bit flip, and
 * crafted bad files (empty, wrong magic, future version, absurd lengths,
 * dangling ids).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/file/gtfile_priv.h"
#include "gtrace_config.h"
#include "test_gtfile_util.h"

/* one line, naming the file */
static void assert_msg(const char *err, const char *name)
{
	cr_assert(strncmp(err, name, strlen(name)) == 0 && err[strlen(name)] == ':',
		  "message does not name the file: %s", err);
	cr_assert_null(strchr(err, '\n'), "multi-line message: %s", err);
	cr_assert_gt(strlen(err), strlen(name) + 3);
}

static int read_buf(const unsigned char *b, size_t n, struct gt_file_info *info, char *err,
		    struct gt_store **out)
{
	struct gt_store *s = gt_store_new();
	int rc = gt_file_read_mem(b, n, "x.gtrace", s, info, err, 256);
	if (out && rc == 0)
		*out = s;
	else
		gt_store_free(s);
	return rc;
}

Test(gtfile, roundtrip_every_field)
{
	struct gt_store *s = tgf_build(3, 1);
	char err[256];
	const char *path = tgf_tmp("rt");
	cr_assert_eq(gt_file_write_store(s, path, err, sizeof(err)), 0, "%s", err);
	struct gt_store *r = gt_store_new();
	struct gt_file_info info;
	cr_assert_eq(gt_file_read(path, r, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_empty(err);
	cr_assert_eq(info.version_major, GT_FILE_VERSION_MAJOR);
	cr_assert_eq(info.version_minor, GT_FILE_VERSION_MINOR);
	cr_assert_str_eq(info.writer_version, GTRACE_VERSION);
	cr_assert_eq(info.truncated, 0);
	/* 3 rounds of 14 kinds plus one nested range each (planted in tgf_build) */
	cr_assert_eq(info.events, 3 * 15);
	tgf_assert_same(s, r);
	/* spot checks against the planted values */
	cr_assert_float_eq(gt_store_kconf_at(r, 1)->occupancy_pct, 37.5f, 0);
	cr_assert_eq(gt_store_kconf_at(r, 2)->regs_per_thread, 255);
	cr_assert_str_eq(gt_store_str(r, gt_store_nccl_at(r, 1)->pg_name), "default_pg");
	cr_assert_str_eq(gt_store_str(r, gt_store_device_at(r, 1)->name), "NVIDIA H100 80GB HBM3");
	cr_assert_eq(gt_store_device_at(r, 0)->mem_bytes, 85520809984ull);
	cr_assert_eq(gt_store_rank_at(r, 0)->clock_offset_ns, -1234);
	cr_assert_eq(gt_store_drops(r)->ring_overflow, 1ull << 40);
	cr_assert_eq(gt_store_drops(r)->read_errors, 11);
	cr_assert_eq(gt_store_drops(r)->client_buffers, 4);
	cr_assert_eq(gt_store_rank_at(r, 0)->local_rank1, 3, "LOCAL_RANK 2, stored + 1");
	cr_assert_eq(gt_store_rank_at(r, 1)->local_rank1, 0, "LOCAL_RANK unknown");
	cr_assert_str_eq(gt_store_meta_get(r, "format"), "kineto");
	cr_assert_str_eq(gt_store_meta_get(r, "empty"), "");
	cr_assert_str_eq(gt_store_str(r, gt_store_lane_at(r, 0)->name), "stream 7");
	cr_assert_eq(gt_store_lane_at(r, 1)->sort_index, 5);
	const struct gt_lane *g2 = gt_store_lane_at(r, 1);
	cr_assert_eq(g2->ev[0].aux, 1u | 3u << 16);
	cr_assert_eq(g2->ev[0].sub, GT_COPY_P2P);
	cr_assert_eq(g2->ev[0].arg, 1ull << 33);
	struct gt_ref ref;
	cr_assert_eq(gt_store_corr_find(r, 0, 100 + GT_EV_KERNEL, 0, &ref), 0);
	cr_assert_eq(gt_store_ev(r, ref)->kind, GT_EV_RUNTIME);
	gt_store_free(r);
	gt_store_free(s);
	unlink(path);
}

Test(gtfile, roundtrip_many_chunks)
{
	struct gt_store *s = tgf_build(700, 1);
	char err[256];
	const char *path = tgf_tmp("many");
	for (size_t ce = 1; ce <= 1000; ce *= 10) {
		struct gt_file_writer_opts o = { .chunk_events = ce * 3, .zstd_level = (int)ce % 5 + 1 };
		cr_assert_eq(gt_file_write_store_opts(s, path, &o, err, sizeof(err)), 0, "%s", err);
		struct gt_store *r = gt_store_new();
		struct gt_file_info info;
		cr_assert_eq(gt_file_read(path, r, &info, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(info.events, 700 * 15);
		tgf_assert_same(s, r);
		gt_store_free(r);
	}
	gt_store_free(s);
	unlink(path);
}

Test(gtfile, incremental_equals_write_store)
{
	/* a live store: events arrive in pieces, tables grow between flushes */
	struct gt_store *full = tgf_build(40, 0);
	size_t n;
	const struct gt_event *ev = tgf_events(&n);
	struct gt_store *s = gt_store_new();
	/* replay the tables: same ids in the same order */
	for (uint32_t i = 1; i < gt_store_str_count(full); i++)
		gt_store_intern_cstr(s, gt_store_str(full, i));
	for (uint32_t i = 0; i < gt_store_lane_count(full); i++) {
		uint32_t l = gt_store_lane(s, &gt_store_lane_at(full, i)->key);
		gt_store_lane_at(s, l)->sort_index = gt_store_lane_at(full, i)->sort_index;
	}
	for (uint32_t i = 1; i <= gt_store_kconf_count(full); i++)
		gt_store_kconf(s, gt_store_kconf_at(full, i));
	for (uint32_t i = 1; i <= gt_store_nccl_count(full); i++)
		gt_store_nccl(s, gt_store_nccl_at(full, i));
	char err[256];
	const char *path = tgf_tmp("inc");
	struct gt_file_writer_opts o = { .chunk_events = 7 };
	struct gt_file_writer *w = gt_file_writer_open(path, &o, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	size_t half = n / 2;
	for (size_t i = 0; i < half; i++) {
		cr_assert_eq(gt_store_add(s, &ev[i]), 0);
		cr_assert_eq(gt_file_writer_add(w, s, &ev[i], 1), 0);
	}
	cr_assert_eq(gt_file_writer_flush(w, s), 0);
	/* after a flush the file opens with everything so far */
	size_t len;
	unsigned char *b = tgf_slurp(path, &len);
	struct gt_file_info info;
	struct gt_store *mid = NULL;
	cr_assert_eq(read_buf(b, len, &info, err, &mid), 0, "%s", err);
	cr_assert_eq(info.truncated, 1);
	cr_assert_eq(info.events, half);
	cr_assert(strstr(err, "cut off after") != NULL, "%s", err);
	/* ... and the store says it beside the data, the warning's words */
	const char *cut = gt_store_meta_get(mid, GT_META_CUT_OFF);
	cr_assert(cut && strstr(err, cut) && !strncmp(cut, "cut off after ", 14), "%s", cut ? cut : "none");
	gt_store_free(mid);
	free(b);
	/* tables change: lane names, devices, ranks, drops, metadata */
	for (uint32_t i = 0; i < gt_store_lane_count(full); i++)
		gt_store_lane_at(s, i)->name = gt_store_lane_at(full, i)->name;
	for (size_t i = 0; i < gt_store_device_count(full); i++)
		gt_store_device(s, gt_store_device_at(full, i));
	for (size_t i = 0; i < gt_store_rank_count(full); i++)
		gt_store_rank(s, gt_store_rank_at(full, i));
	*gt_store_drops(s) = *gt_store_drops(full);
	for (size_t i = 0; i < gt_store_meta_count(full); i++) {
		const char *k, *v;
		gt_store_meta_at(full, i, &k, &v);
		gt_store_meta_set(s, k, v);
	}
	for (size_t i = half; i < n; i++)
		cr_assert_eq(gt_store_add(s, &ev[i]), 0);
	cr_assert_eq(gt_file_writer_add(w, s, ev + half, n - half), 0);
	cr_assert_eq(gt_file_writer_flush(w, s), 0);
	cr_assert_eq(gt_file_writer_flush(w, s), 0);
	cr_assert_eq(gt_file_writer_close(w, s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(gt_store_finish(s), 0);
	cr_assert_eq(gt_store_finish(full), 0);
	tgf_assert_same(full, s);

	struct gt_store *r1 = gt_store_new();
	cr_assert_eq(gt_file_read(path, r1, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(info.truncated, 0);
	tgf_assert_same(s, r1);
	const char *path2 = tgf_tmp("inc2");
	cr_assert_eq(gt_file_write_store(s, path2, err, sizeof(err)), 0, "%s", err);
	struct gt_store *r2 = gt_store_new();
	cr_assert_eq(gt_file_read(path2, r2, &info, err, sizeof(err)), 0, "%s", err);
	tgf_assert_same(r1, r2);
	gt_store_free(r1);
	gt_store_free(r2);
	gt_store_free(s);
	gt_store_free(full);
	unlink(path);
	unlink(path2);
}

Test(gtfile, writer_abort_opens_truncated)
{
	struct gt_store *s = tgf_build(5, 1);
	size_t n;
	const struct gt_event *ev = tgf_events(&n);
	char err[256];
	const char *path = tgf_tmp("abort");
	struct gt_file_writer *w = gt_file_writer_open(path, NULL, err, sizeof(err));
	cr_assert_not_null(w);
	cr_assert_eq(gt_file_writer_add(w, s, ev, n), 0);
	cr_assert_eq(gt_file_writer_flush(w, s), 0);
	gt_file_writer_abort(w);
	struct gt_store *r = gt_store_new();
	struct gt_file_info info;
	cr_assert_eq(gt_file_read(path, r, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(info.truncated, 1);
	cr_assert_eq(info.events, n);
	assert_msg(err, path);
	gt_store_free(r);
	gt_store_free(s);
	unlink(path);
}

/* a small file with many chunks: cut at every byte */
Test(gtfile, cut_at_every_byte)
{
	struct gt_store *s = tgf_build(4, 1);
	char err[256];
	const char *path = tgf_tmp("cut");
	struct gt_file_writer_opts o = { .chunk_events = 8 };
	cr_assert_eq(gt_file_write_store_opts(s, path, &o, err, sizeof(err)), 0, "%s", err);
	size_t len;
	unsigned char *b = tgf_slurp(path, &len);
	cr_assert(len > 1000 && len < 16384, "file is %zu bytes", len);
	/* the first chunk (strings) must be complete to open */
	size_t first_end = GTFILE_HDR_BYTES + GTFILE_CHUNK_HDR + gtfile_get32(b + 64 + 12);
	size_t opened = 0, last_events = 0;
	for (size_t cut = 0; cut <= len; cut++) {
		unsigned char *c = malloc(cut ? cut : 1);
		memcpy(c, b, cut);
		struct gt_file_info info;
		struct gt_store *r = NULL;
		int rc = read_buf(c, cut, &info, err, &r);
		if (rc) {
			cr_assert_lt(rc, 0);
			assert_msg(err, "x.gtrace");
			cr_assert_lt(cut, first_end, "cut at %zu: %s", cut, err);
		} else {
			opened++;
			cr_assert_eq(info.truncated, cut < len, "cut at %zu", cut);
			cr_assert_leq(info.events, gt_store_event_count(s));
			cr_assert_geq(info.events, last_events, "more data, fewer events at %zu", cut);
			last_events = info.events;
			if (cut < len) {
				cr_assert(strstr(err, "cut off after") != NULL, "%s", err);
				assert_msg(err, "x.gtrace");
			}
			tgf_assert_prefix(s, r);
			gt_store_free(r);
		}
		free(c);
	}
	cr_assert_eq(last_events, gt_store_event_count(s));
	cr_assert_eq(opened, len + 1 - first_end);
	free(b);
	gt_store_free(s);
	unlink(path);
}

Test(gtfile, every_bit_flip_is_an_error)
{
	struct gt_store *s = tgf_build(2, 1);
	char err[256];
	const char *path = tgf_tmp("flip");
	struct gt_file_writer_opts o = { .chunk_events = 8 };
	cr_assert_eq(gt_file_write_store_opts(s, path, &o, err, sizeof(err)), 0, "%s", err);
	size_t len;
	unsigned char *b = tgf_slurp(path, &len);
	cr_assert_lt(len, 8192);
	for (size_t i = 0; i < len; i++)
		for (int bit = 0; bit < 8; bit++) {
			b[i] ^= (unsigned char)(1u << bit);
			int rc = read_buf(b, len, NULL, err, NULL);
			cr_assert_lt(rc, 0, "flip of bit %d at byte %zu opened", bit, i);
			assert_msg(err, "x.gtrace");
			b[i] ^= (unsigned char)(1u << bit);
		}
	cr_assert_eq(read_buf(b, len, NULL, err, NULL), 0);
	free(b);
	gt_store_free(s);
	unlink(path);
}

/* tables larger than one chunk are split and come back whole */
Test(gtfile, big_tables_split)
{
	struct gt_store *s = gt_store_new();
	char buf[64];
	for (int i = 0; i < 300000; i++) {
		snprintf(buf, sizeof(buf), "void kernel_number_%d<float, 128, 4>(Args)", i);
		gt_store_intern_cstr(s, buf);
	}
	for (int i = 0; i < 250000; i++) {
		struct gt_lane_key k = { .type = GT_LANE_HOST, .device = -1, .pid = 9, .id = i };
		uint32_t l = gt_store_lane(s, &k);
		gt_store_lane_at(s, l)->name = (uint32_t)i + 1;
		if (i % 5000 == 0) {
			struct gt_event e = { .start_ns = i, .dur_ns = 3, .lane = l, .name = 7,
					      .kind = GT_EV_CPU_OP };
			gt_store_add(s, &e);
		}
	}
	char *big = malloc(3u << 20);
	memset(big, 'v', (3u << 20) - 1);
	big[(3u << 20) - 1] = '\0';
	for (int i = 0; i < 4; i++) {
		snprintf(buf, sizeof(buf), "env%d", i);
		big[i] = (char)('a' + i);
		gt_store_meta_set(s, buf, big);
	}
	free(big);
	cr_assert_eq(gt_store_finish(s), 0);
	char err[256];
	const char *path = tgf_tmp("bigtab");
	cr_assert_eq(gt_file_write_store(s, path, err, sizeof(err)), 0, "%s", err);
	struct gt_store *r = gt_store_new();
	struct gt_file_info info;
	cr_assert_eq(gt_file_read(path, r, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(info.events, 50);
	tgf_assert_same(s, r);
	/* strings > 8 MiB, lanes > 8 MiB, metadata 12 MiB: more than one chunk each */
	cr_assert_gt(info.chunks, 3 + 2 + 2 + 2);
	gt_store_free(r);
	gt_store_free(s);
	unlink(path);
}

/* the entries of directory d other than . and ..: their count, the first
 * name in first */
static int dir_entries(const char *d, char *first, size_t len)
{
	DIR *dd = opendir(d);
	cr_assert_not_null(dd);
	struct dirent *e;
	int n = 0;
	first[0] = 0;
	while ((e = readdir(dd)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && !n++)
			snprintf(first, len, "%s", e->d_name);
	closedir(dd);
	return n;
}

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* a recording killed at any moment opens: its name shows nothing until
 * the file holds its header and complete chunks (the first flush); before
 * that only a hidden temporary file beside it exists */
Test(gtfile, writer_appears_once_it_opens)
{
	struct gt_store *s = tgf_build(5, 1);
	size_t n;
	const struct gt_event *ev = tgf_events(&n);
	char d[64], path[128], first[256], err[256];
	snprintf(d, sizeof(d), "/tmp/gtfile-appear-XXXXXX");
	cr_assert_not_null(mkdtemp(d));
	snprintf(path, sizeof(path), "%s/rec.gtrace", d);
	struct gt_file_writer_opts o = { .chunk_events = 7, .open_flags = GT_FILE_W_KEEP };
	struct gt_file_writer *w = gt_file_writer_open(path, &o, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	/* header written, whole chunks written as they fill: not yet there */
	cr_assert_eq(gt_file_writer_add(w, s, ev, n), 0);
	cr_assert(!exists(path));
	cr_assert_eq(dir_entries(d, first, sizeof(first)), 1);
	cr_assert_eq(strncmp(first, ".rec.gtrace.", 12), 0, "%s", first);
	cr_assert_eq(gt_file_writer_flush(w, s), 0);
	/* placed: it opens with every event so far, no temporary file left */
	cr_assert_eq(dir_entries(d, first, sizeof(first)), 1);
	cr_assert_str_eq(first, "rec.gtrace");
	struct gt_store *r = gt_store_new();
	struct gt_file_info info;
	cr_assert_eq(gt_file_read(path, r, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(info.truncated, 1);
	cr_assert_eq(info.events, n);
	gt_store_free(r);
	/* written at its name from then on: the end goes into the same file */
	cr_assert_eq(gt_file_writer_close(w, s, err, sizeof(err)), 0, "%s", err);
	r = gt_store_new();
	cr_assert_eq(gt_file_read(path, r, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(info.truncated, 0);
	cr_assert_eq(info.events, n);
	gt_store_free(r);
	cr_assert_eq(dir_entries(d, first, sizeof(first)), 1);

	/* aborted before its first flush: nothing left */
	unlink(path);
	w = gt_file_writer_open(path, &o, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	gt_file_writer_abort(w);
	cr_assert_eq(dir_entries(d, first, sizeof(first)), 0, "%s left", first);

	/* a file that appears at the name meanwhile is kept (no --force) */
	w = gt_file_writer_open(path, &o, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("theirs\n", f);
	fclose(f);
	int rc = gt_file_writer_flush(w, s);
	cr_assert_eq(rc, -EEXIST);
	cr_assert_str_eq(gt_file_writer_strerror(rc), "the file appeared while being written; "
			 "not replaced without --force");
	gt_file_writer_abort(w);
	cr_assert_eq(dir_entries(d, first, sizeof(first)), 1);
	char buf[16] = { 0 };
	f = fopen(path, "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	cr_assert_str_eq(buf, "theirs\n");

	/* with --force the old file stays until the new one opens */
	o.open_flags = 0;
	w = gt_file_writer_open(path, &o, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	cr_assert_eq(dir_entries(d, first, sizeof(first)), 2);
	cr_assert_eq(gt_file_writer_flush(w, s), 0);
	cr_assert_eq(dir_entries(d, first, sizeof(first)), 1);
	gt_file_writer_abort(w);
	r = gt_store_new();
	cr_assert_eq(gt_file_read(path, r, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(info.events, 0);
	gt_store_free(r);
	unlink(path);
	cr_assert_eq(rmdir(d), 0);
	gt_store_free(s);
}

Test(gtfile, writer_rejects_unknown_ids)
{
	struct gt_store *s = tgf_build(1, 1);
	char err[256];
	const char *path = tgf_tmp("rej");
	struct gt_file_writer *w = gt_file_writer_open(path, NULL, err, sizeof(err));
	struct gt_event e = { .lane = 99 };
	cr_assert_eq(gt_file_writer_add(w, s, &e, 1), -EINVAL);
	e.lane = 0;
	e.name = 1u << 30;
	cr_assert_eq(gt_file_writer_add(w, s, &e, 1), -EINVAL);
	cr_assert_eq(gt_file_writer_close(w, s, err, sizeof(err)), 0, "%s", err);
	struct gt_store *r = gt_store_new();
	struct gt_file_info info;
	cr_assert_eq(gt_file_read(path, r, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(info.events, 0);
	cr_assert_eq(gt_store_lane_count(r), gt_store_lane_count(s));
	gt_store_free(r);
	gt_store_free(s);
	unlink(path);
	cr_assert_null(gt_file_writer_open("/nonexistent/dir/x.gtrace", NULL, err, sizeof(err)));
	cr_assert(strstr(err, "/nonexistent/dir/x.gtrace: "), "%s", err);
}
