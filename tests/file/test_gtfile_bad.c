/*
 * .gtrace bad-input tests: empty, wrong magic, future version, absurd and
 * mismatching lengths, dangling ids, trailing data, paths that are no file.
 * Crafted files are built chunk by chunk with correct checksums so that the
 * check under test, not the CRC, is what rejects them.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "core/file/gtfile_priv.h"
#include "gtrace/load.h"
#include "gtrace_config.h"
#include "test_gtfile_util.h"

static char err[256];

static int rd(const unsigned char *b, size_t n)
{
	struct gt_store *s = gt_store_new();
	int rc = gt_file_read_mem(b, n, "bad.gtrace", s, NULL, err, sizeof(err));
	gt_store_free(s);
	if (rc)
		cr_assert(!strncmp(err, "bad.gtrace: ", 12) && !strchr(err, '\n'), "%s", err);
	return rc;
}

Test(gtfile_bad, empty_and_magic)
{
	cr_assert_lt(rd((const unsigned char *)"", 0), 0);
	cr_assert_str_eq(err, "bad.gtrace: empty file");
	cr_assert_lt(rd((const unsigned char *)"{\"traceEvents\": []}", 19), 0);
	cr_assert_str_eq(err, "bad.gtrace: not a gtrace capture");
	cr_assert_lt(rd((const unsigned char *)"GTRA", 4), 0);
	cr_assert(strstr(err, "cut off inside the file header"), "%s", err);
	cr_assert(gt_file_sniff("GTRACE\r\nxx", 10));
	cr_assert(!gt_file_sniff("GTRACE\n", 7));
	struct gt_store *s = gt_store_new();
	cr_assert_lt(gt_file_read("/nonexistent/x.gtrace", s, NULL, err, sizeof(err)), 0);
	cr_assert(strstr(err, "/nonexistent/x.gtrace: ") == err, "%s", err);
	cr_assert_lt(gt_file_read("/tmp", s, NULL, err, sizeof(err)), 0);
	cr_assert_str_eq(err, "/tmp: not a regular file");
	gt_store_free(s);
}

Test(gtfile_bad, future_version)
{
	unsigned char b[64];
	tgf_header(b, 2, 3, "9.1.0");
	cr_assert_lt(rd(b, sizeof(b)), 0);
	char want[256];
	snprintf(want, sizeof(want), "bad.gtrace: written by gtrace 9.1.0 (format 2.3), this is "
		 "gtrace %s (format %d.%d): upgrade gtrace", GTRACE_VERSION,
		 GT_FILE_VERSION_MAJOR, GT_FILE_VERSION_MINOR);
	cr_assert_str_eq(err, want);
	/* the magic, then random bytes: a "version" of 27649 and a writer name
	 * that is not text, the checksum wrong: damaged, not newer */
	memcpy(b, GT_FILE_MAGIC, 8);
	for (int i = 8; i < 64; i++)
		b[i] = (unsigned char)(i * 151 + 7);
	b[8] = 0x01, b[9] = 0x6c;
	cr_assert_lt(rd(b, sizeof(b)), 0);
	cr_assert_str_eq(err, "bad.gtrace: damaged file header (checksum mismatch)");
	/* a newer minor version of our major opens (unknown chunks are skipped) */
	unsigned char f[256];
	size_t n = tgf_header(f, 1, 9, "1.7.0");
	n = tgf_chunk(f, n, 200, "future", 6);
	n = tgf_chunk(f, n, GTFILE_CH_STRINGS, "\1\0\0\0\1\0\0\0\2\0\0\0hi", 14);
	cr_assert_eq(rd(f, n), 0, "%s", err);
	cr_assert(strstr(err, "cut off after 0 events"), "%s", err);
}

/* a valid small file to patch */
static unsigned char *good(size_t *len)
{
	struct gt_store *s = tgf_build(30, 1);
	const char *path = tgf_tmp("bad");
	cr_assert_eq(gt_file_write_store(s, path, err, sizeof(err)), 0);
	unsigned char *b = tgf_slurp(path, len);
	unlink(path);
	gt_store_free(s);
	return b;
}

/* offset of the first chunk of a type */
static size_t find_chunk(const unsigned char *b, size_t len, uint32_t type)
{
	for (size_t at = GTFILE_HDR_BYTES; at + GTFILE_CHUNK_HDR <= len;
	     at += GTFILE_CHUNK_HDR + gtfile_get32(b + at + 12))
		if (gtfile_get32(b + at) == type)
			return at;
	cr_assert_fail("no chunk of type %u", type);
	return 0;
}

Test(gtfile_bad, absurd_lengths)
{
	size_t len;
	unsigned char *b = good(&len);
	cr_assert_eq(rd(b, len), 0, "%s", err);
	size_t at = find_chunk(b, len, GTFILE_CH_EVENTS);
	unsigned char save[GTFILE_CHUNK_HDR];
	memcpy(save, b + at, sizeof(save));
	/* a length beyond any sane cap, with correct header checksums */
	gtfile_put32(b + at + 12, 0xfffffff0u);
	gtfile_put32(b + at + 20, (uint32_t)crc32(0, b + at, 20));
	cr_assert_lt(rd(b, len), 0);
	cr_assert(strstr(err, "events chunk at byte") && strstr(err, "claims 4294967280 bytes"),
		  "%s", err);
	/* decompressed size mismatch */
	memcpy(b + at, save, sizeof(save));
	cr_assert_eq(gtfile_get32(b + at + 4), GTFILE_CHUNK_ZSTD);
	gtfile_put32(b + at + 8, gtfile_get32(b + at + 8) + 1);
	tgf_fix_chunk(b, at);
	cr_assert_lt(rd(b, len), 0);
	cr_assert(strstr(err, "decompressed size mismatch"), "%s", err);
	/* raw chunk whose lengths disagree */
	memcpy(b + at, save, sizeof(save));
	gtfile_put32(b + at + 4, 0);
	tgf_fix_chunk(b, at);
	cr_assert_lt(rd(b, len), 0);
	cr_assert(strstr(err, "bad flags or lengths"), "%s", err);
	/* checksum mismatch names the chunk and offset */
	memcpy(b + at, save, sizeof(save));
	b[at + 30] ^= 0x40;
	cr_assert_lt(rd(b, len), 0);
	char want[96];
	snprintf(want, sizeof(want), "checksum mismatch in events chunk at byte %zu", at);
	cr_assert(strstr(err, want), "%s", err);
	b[at + 30] ^= 0x40;
	/* data after the end marker */
	unsigned char *t = malloc(len + 5);
	memcpy(t, b, len);
	memcpy(t + len, "trail", 5);
	cr_assert_lt(rd(t, len + 5), 0);
	free(t);
	free(b);
}

static size_t base_file(unsigned char *f)
{
	size_t n = tgf_header(f, 1, 0, "test");
	/* strings 1 ("k") and 2 ("m") */
	n = tgf_chunk(f, n, GTFILE_CH_STRINGS, "\1\0\0\0\2\0\0\0\1\0\0\0k\1\0\0\0m", 18);
	unsigned char lane[8 + GTFILE_LANE_BYTES] = { 1, 0, 0, 0, GTFILE_LANE_BYTES };
	lane[8 + 4] = GT_LANE_GPU;
	return tgf_chunk(f, n, GTFILE_CH_LANES, lane, sizeof(lane));
}

/* a file with one event chunk holding e */
static int one_event(struct gt_event e)
{
	unsigned char f[4096];
	size_t n = base_file(f);
	struct gtfile_group g = { e.lane, 1, &e };
	struct gtfile_buf pay = { 0 };
	cr_assert_eq(gtfile_events_encode(&g, 1, 1, &pay), 0);
	n = tgf_chunk(f, n, GTFILE_CH_EVENTS, pay.p, pay.n);
	gtfile_buf_free(&pay);
	return rd(f, n);
}

Test(gtfile_bad, dangling_ids)
{
	struct gt_event e = { .start_ns = 5, .dur_ns = 1, .name = 2, .lane = 0, .kind = GT_EV_KERNEL };
	cr_assert_eq(one_event(e), 0, "%s", err);
	e.name = 3;
	cr_assert_lt(one_event(e), 0);
	cr_assert(strstr(err, "string 3"), "%s", err);
	e.name = 1;
	e.lane = 1;
	cr_assert_lt(one_event(e), 0);
	cr_assert(strstr(err, "lane 1"), "%s", err);
	e.lane = 0;
	e.arg = 1;
	cr_assert_lt(one_event(e), 0);
	cr_assert(strstr(err, "launch configuration 1"), "%s", err);
	e.arg = 1ull << 32;
	cr_assert_lt(one_event(e), 0);
	cr_assert(strstr(err, "NCCL record 1"), "%s", err);
	e.kind = GT_EV_MEMCPY;   /* arg is bytes for copies */
	cr_assert_eq(one_event(e), 0, "%s", err);

	unsigned char f[4096];
	size_t n = tgf_header(f, 1, 0, "test");
	/* duplicate string */
	n = tgf_chunk(f, n, GTFILE_CH_STRINGS, "\1\0\0\0\2\0\0\0\1\0\0\0k\1\0\0\0k", 18);
	cr_assert_lt(rd(f, n), 0);
	cr_assert(strstr(err, "duplicate"), "%s", err);
	/* lane naming a missing string; lane defined out of order */
	n = base_file(f);
	unsigned char lane[8 + GTFILE_LANE_BYTES] = { 1, 0, 0, 0, GTFILE_LANE_BYTES, 0, 0, 0, 5 };
	size_t m = tgf_chunk(f, n, GTFILE_CH_LANES, lane, sizeof(lane));
	cr_assert_lt(rd(f, m), 0);
	cr_assert(strstr(err, "lane 5 defined before lane 1"), "%s", err);
	lane[8] = 1;
	lane[8 + 32] = 77;
	m = tgf_chunk(f, n, GTFILE_CH_LANES, lane, sizeof(lane));
	cr_assert_lt(rd(f, m), 0);
	cr_assert(strstr(err, "string 77"), "%s", err);
	/* a table claiming more entries than it holds */
	unsigned char dev[8] = { 0xff, 0xff, 0xff, 0x0f, GTFILE_DEVICE_BYTES };
	m = tgf_chunk(f, n, GTFILE_CH_DEVICES, dev, sizeof(dev));
	cr_assert_lt(rd(f, m), 0);
	cr_assert(strstr(err, "device table has a bad size"), "%s", err);
}

Test(gtfile_bad, event_chunk_claims)
{
	unsigned char f[4096];
	size_t n = base_file(f);
	/* 200000 events out of a few bytes: more than the file can hold */
	unsigned char ev[16] = { 0x40, 0x0d, 0x03, 0, 1, 0, 0, 0, 9 };
	size_t m = tgf_chunk(f, n, GTFILE_CH_EVENTS, ev, sizeof(ev));
	cr_assert_lt(rd(f, m), 0);
	cr_assert(strstr(err, "more than the file can hold"), "%s", err);
	/* a group count that does not fit */
	unsigned char ev2[16] = { 1, 0, 0, 0, 0xff, 0xff, 0, 0, 9 };
	m = tgf_chunk(f, n, GTFILE_CH_EVENTS, ev2, sizeof(ev2));
	cr_assert_lt(rd(f, m), 0);
}

/* through the loader: a cut-off capture opens with a warning, a bad one fails */
Test(gtfile_bad, via_gt_load)
{
	struct gt_store *s = tgf_build(20, 1);
	char path[256];
	snprintf(path, sizeof(path), "%s", tgf_tmp("load"));
	cr_assert_eq(gt_file_write_store(s, path, err, sizeof(err)), 0);
	size_t len;
	unsigned char *b = tgf_slurp(path, &len);
	const char *paths[1] = { path };
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	struct gt_store *r = NULL;
	cr_assert_eq(gt_load(paths, 1, &o, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(gt_store_event_count(r), gt_store_event_count(s));
	gt_store_free(r);
	FILE *f = fopen(path, "wb");
	fwrite(b, 1, find_chunk(b, len, GTFILE_CH_EVENTS) + 30, f);
	fclose(f);
	cr_assert_eq(gt_load(paths, 1, &o, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_lt(gt_store_event_count(r), gt_store_event_count(s));
	gt_store_free(r);
	f = fopen(path, "wb");
	fwrite(b, 1, 60, f);
	fclose(f);
	cr_assert_lt(gt_load(paths, 1, &o, &r, err, sizeof(err)), 0);
	cr_assert(strstr(err, path) == err && strstr(err, "cut off inside the file header"), "%s", err);
	free(b);
	gt_store_free(s);
	unlink(path);
}

/* a full disk: the writer reports it, naming the file */
Test(gtfile_bad, write_to_full_disk)
{
	struct gt_store *s = tgf_build(50, 1);
	cr_assert_lt(gt_file_write_store(s, "/dev/full", err, sizeof(err)), 0);
	cr_assert(strstr(err, "/dev/full: ") == err && strstr(err, "No space left"), "%s", err);
	gt_store_free(s);
}
