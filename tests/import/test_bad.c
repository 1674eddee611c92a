/*
 * test_bad.c - bad and odd input: not JSON, truncated JSON and gzip, wrong
 * shapes, missing fields, huge strings, deep nesting, corrupt gzip; and
 * planted quirks whose truth is known: flows without correlation args,
 * unmatched flow ends, out-of-order events, zero durations, overlapping
 * kernels, instants without cat or dur, B/E pairs, counters, baseTimeNanoseconds.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "gtrace/export.h"
#include "gtrace/import.h"
#include "gtrace/load.h"
#include "impcheck.h"

static int imp(const char *txt, size_t len, struct gt_store **out, char *err, size_t errlen)
{
	struct gt_store *s = gt_store_new();
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	int rc = gt_import_json_mem("mem.json", txt, len, &o, s, err, errlen);
	if (rc) {
		gt_store_free(s);
		*out = NULL;
	} else {
		*out = s;
	}
	return rc;
}

static int imps(const char *txt, struct gt_store **out, char *err)
{
	return imp(txt, strlen(txt), out, err, 256);
}

Test(bad, not_json)
{
	struct gt_store *s;
	char err[256];
	cr_expect_neq(imps("hello world", &s, err), 0);
	cr_expect(strstr(err, "mem.json: not JSON"), "%s", err);
	cr_expect_neq(imps("", &s, err), 0);
	cr_expect(strstr(err, "mem.json:"), "%s", err);
	cr_expect_neq(imps("123", &s, err), 0);
	cr_expect_neq(imps("{\"traceEvents\": 5}", &s, err), 0);
	cr_expect(strstr(err, "traceEvents is not an array"), "%s", err);
	cr_expect_neq(imps("{\"traceEvents\": [{\"ph\": \"X\" \"ts\": 1}]}", &s, err), 0);
	cr_expect(strchr(err, '\n') == NULL);
}

Test(bad, wrong_shapes)
{
	struct gt_store *s;
	char err[256];
	cr_expect_neq(imps("{\"foo\": 1, \"bar\": [1, 2]}", &s, err), 0);
	cr_expect(strstr(err, "no traceEvents"), "%s", err);
	cr_expect_neq(imps("{\"traceEvents\": {\"a\": 1}}", &s, err), 0);
	cr_expect(strstr(err, "mem.json: traceEvents is not an array"), "%s", err);
	cr_expect_neq(imps("{\"x\": 1, \"traceEvents\": \"abc\"}", &s, err), 0);
	cr_expect(strstr(err, "traceEvents is not an array"), "%s", err);
	/* array of non-objects: every element skipped and counted */
	cr_assert_eq(imps("[1, \"x\", [2], null]", &s, err), 0, "%s", err);
	cr_expect_eq(gt_store_event_count(s), 0);
	cr_expect_eq(gt_store_drops(s)->import_skipped, 4);
	gt_store_free(s);
	/* the Chrome array form may omit the closing bracket */
	cr_assert_eq(imps("[{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"dur\": 2},\n", &s, err), 0,
		     "%s", err);
	cr_expect_eq(gt_store_event_count(s), 1);
	gt_store_free(s);
}

Test(bad, missing_fields_counted)
{
	struct gt_store *s;
	char err[256];
	const char *t = "{\"traceEvents\": ["
			"{\"ph\": \"X\", \"name\": \"nodur\", \"pid\": 1, \"tid\": 1, \"ts\": 1},"
			"{\"ph\": \"X\", \"name\": \"nots\", \"pid\": 1, \"tid\": 1, \"dur\": 1},"
			"{\"ph\": \"X\", \"name\": \"badts\", \"pid\": 1, \"tid\": 1, \"ts\": \"soon\", \"dur\": 1},"
			"{\"ph\": \"X\", \"name\": \"huge\", \"pid\": 1, \"tid\": 1, \"ts\": 1e300, \"dur\": 1},"
			"{\"name\": \"noph\", \"pid\": 1, \"tid\": 1, \"ts\": 1},"
			"{\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 3, \"dur\": 1},"
			"{\"ph\": \"X\", \"name\": \"ok\", \"ts\": 2, \"dur\": -4}"
			"]}";
	cr_assert_eq(imps(t, &s, err), 0, "%s", err);
	cr_expect_eq(gt_store_event_count(s), 2);
	cr_expect_eq(gt_store_drops(s)->import_skipped, 5);
	gt_store_free(s);
}

Test(bad, huge_string_and_deep_nesting)
{
	size_t big = 9u << 20, depth = 200000;
	char *t = malloc(big + 2 * depth + 512);
	cr_assert(t);
	size_t n = (size_t)sprintf(t, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"pid\": 0, \"tid\": 7, "
				   "\"ts\": 10, \"dur\": 5, \"name\": \"");
	memset(t + n, 'k', big);
	n += big;
	n += (size_t)sprintf(t + n, "\", \"args\": {\"deep\": ");
	memset(t + n, '[', depth);
	n += depth;
	memset(t + n, ']', depth);
	n += depth;
	n += (size_t)sprintf(t + n, ", \"stream\": 7}}]}");
	struct gt_store *s;
	char err[256];
	cr_assert_eq(imp(t, n, &s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(gt_store_event_count(s), 1);
	struct kfacts f;
	kfacts_of(s, &f);
	cr_expect_eq(f.kernels, 1);
	cr_expect_eq(strlen(gt_store_str(s, gt_store_lane_at(s, 0)->ev[0].name)), big);
	gt_store_free(s);
	free(t);
}

/* a real trace cut anywhere keeps the events before the cut */
Test(bad, truncated_json_and_gzip)
{
	struct gt_store *a = tload("hta/trace_filter/sampled_rank-0.json.gz");
	char *txt;
	size_t len;
	cr_assert_eq(gt_export_chrome_mem(a, NULL, &txt, &len), 0);
	size_t total = gt_store_event_count(a);
	char err[256];
	struct gt_store *s;
	size_t prev = 0;
	for (int k = 1; k <= 9; k++) {
		size_t cut = len * (size_t)k / 10;
		cr_assert_eq(imp(txt, cut, &s, err, sizeof(err)), 0, "cut %zu: %s", cut, err);
		size_t n = gt_store_event_count(s);
		cr_expect(n >= prev && n < total, "cut at %d/10 kept %zu of %zu", k, n, total);
		prev = n;
		gt_store_free(s);
	}
	/* gzip of the text, cut in half, and with a damaged middle */
	uLongf zl = compressBound((uLong)len) + 64;
	unsigned char *z = malloc(zl);
	z_stream zs = { 0 };
	deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
	zs.next_in = (unsigned char *)txt;
	zs.avail_in = (uInt)len;
	zs.next_out = z;
	zs.avail_out = (uInt)zl;
	cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
	size_t gzlen = zs.total_out;
	deflateEnd(&zs);
	cr_assert_eq(imp((char *)z, gzlen, &s, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(gt_store_event_count(s), total);
	gt_store_free(s);
	cr_assert_eq(imp((char *)z, gzlen / 2, &s, err, sizeof(err)), 0, "%s", err);
	cr_expect(gt_store_event_count(s) > 0 && gt_store_event_count(s) < total);
	gt_store_free(s);
	for (size_t i = gzlen / 3; i < gzlen / 3 + 64; i++)
		z[i] ^= 0x5a;
	int rc = imp((char *)z, gzlen, &s, err, sizeof(err));
	if (rc == 0) {
		cr_expect(gt_store_event_count(s) <= total);
		gt_store_free(s);
	} else {
		cr_expect(strstr(err, "mem.json:"), "%s", err);
	}
	cr_assert_neq(imp((char *)z, 10, &s, err, sizeof(err)), 0);
	free(z);
	free(txt);
	gt_store_free(a);
}

static const struct gt_event *only(const struct gt_store *s, const char *name)
{
	const struct gt_event *r = NULL;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		for (size_t j = 0; j < l->n; j++)
			if (!strcmp(gt_store_str(s, l->ev[j].name), name)) {
				cr_assert(!r, "two events named %s", name);
				r = &l->ev[j];
			}
	}
	cr_assert(r, "no event named %s", name);
	return r;
}

/* planted: flows link a launch to its kernel where args carry no correlation */
Test(quirks, flows_without_correlation_args)
{
	const char *t = "{\"traceEvents\": ["
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k1\", \"pid\": 0, \"tid\": 7, \"ts\": 120, \"dur\": 10},"
		"{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 42, \"pid\": 0, \"tid\": 7, \"ts\": 120, \"bp\": \"e\"},"
		"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 9, \"tid\": 9, \"ts\": 100, \"dur\": 5},"
		"{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 42, \"pid\": 9, \"tid\": 9, \"ts\": 100},"
		"{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 43, \"pid\": 9, \"tid\": 9, \"ts\": 200},"
		"{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 44, \"pid\": 0, \"tid\": 7, \"ts\": 300, \"bp\": \"e\"}"
		"]}";
	struct gt_store *s;
	char err[256];
	cr_assert_eq(imps(t, &s, err), 0, "%s", err);
	const struct gt_event *k = only(s, "k1"), *l = only(s, "cudaLaunchKernel");
	cr_expect_eq(k->corr, 42);
	cr_expect_eq(l->corr, 42);
	cr_expect(l->flags & GT_EVF_LAUNCH);
	struct gt_ref r;
	cr_expect_eq(gt_store_corr_find(s, 0, 42, 1, &r), 0);
	cr_expect_str_eq(gt_store_meta_get(s, "import.flow_ends_unmatched"), "2");
	gt_store_free(s);
}

/* planted: out-of-order events, zero durations, overlapping kernels on one
 * stream, an i event without cat or dur, an event outside the Trace span,
 * relative times with baseTimeNanoseconds given after the events */
Test(quirks, all_kept)
{
	const char *t = "{\"traceEvents\": ["
		"{\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"PyTorch Profiler (0)\", \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\", \"ts\": 100, \"dur\": 50},"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"late\", \"pid\": 0, \"tid\": 7, \"ts\": 140.5, \"dur\": 30.25},"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"early\", \"pid\": 0, \"tid\": 7, \"ts\": 130.001, \"dur\": 20},"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"zero\", \"pid\": 0, \"tid\": 7, \"ts\": 135, \"dur\": 0},"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"outside\", \"pid\": 5, \"tid\": 5, \"ts\": 900, \"dur\": 1},"
		"{\"ph\": \"i\", \"name\": \"mark\", \"pid\": 5, \"tid\": 5, \"ts\": 131, \"s\": \"t\"},"
		"{\"ph\": \"C\", \"name\": \"mem\", \"pid\": 5, \"ts\": 132, \"args\": {\"bytes_in_use\": 1.5e3}},"
		"{\"ph\": \"B\", \"name\": \"begin\", \"pid\": 5, \"tid\": 5, \"ts\": 133}"
		"], \"baseTimeNanoseconds\": 1700000000000000000}";
	struct gt_store *s;
	char err[256];
	cr_assert_eq(imps(t, &s, err), 0, "%s", err);
	int64_t base = 1700000000000000000LL;
	cr_expect_eq(only(s, "late")->start_ns, base + 140500);
	cr_expect_eq(only(s, "late")->dur_ns, 30250);
	cr_expect_eq(only(s, "early")->start_ns, base + 130001);
	cr_expect_eq(only(s, "zero")->dur_ns, 0);
	cr_expect_eq(only(s, "outside")->start_ns, base + 900000);
	cr_expect_eq(only(s, "mark")->kind, GT_EV_INSTANT);
	const struct gt_event *c = only(s, "mem");
	double v;
	memcpy(&v, &c->arg, sizeof(v));
	cr_expect_eq(c->kind, GT_EV_COUNTER);
	cr_expect(v == 1500.0);
	struct kfacts f;
	kfacts_of(s, &f);
	cr_expect_eq(f.kernels, 3);
	cr_expect_eq(f.gpu_lanes, 1);
	cr_expect_eq(gt_store_event_count(s), 7);
	cr_expect_eq(gt_store_drops(s)->import_skipped, 0);
	cr_expect(only(s, "begin")->flags & GT_EVF_TRUNCATED);   /* a B whose E never came */
	cr_expect(gt_store_meta_get(s, "trace_span.rank0"));
	gt_store_free(s);
}

Test(bad, files_on_disk)
{
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	struct gt_store *s;
	char err[512];
	const char *p = "/nonexistent/trace.json";
	cr_expect_neq(gt_load(&p, 1, &o, &s, err, sizeof(err)), 0);
	cr_expect(strstr(err, "/nonexistent/trace.json:"), "%s", err);
	char dir[] = "/tmp/gtrace_imp_XXXXXX";
	cr_assert(mkdtemp(dir));
	p = dir;
	cr_expect_neq(gt_load(&p, 1, &o, &s, err, sizeof(err)), 0);
	cr_expect(strstr(err, "no trace files"), "%s", err);
	/* every kind a directory takes is named (it used to say only the JSON ones) */
	cr_expect(strstr(err, "*.json, *.json.gz, *.xplane.pb, *.xplane.pb.gz, or a TensorBoard "
			       "profile LOGDIR") && strstr(err, ".gtrace"), "%s", err);
	char f[600];
	snprintf(f, sizeof(f), "%s/rank-3.json", dir);
	FILE *fp = fopen(f, "w");
	fputs("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"dur\": 2}]}", fp);
	fclose(fp);
	cr_assert_eq(gt_load(&p, 1, &o, &s, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(gt_store_rank_at(s, 0)->rank, 3);   /* from the file name */
	gt_store_free(s);
	remove(f);
	rmdir(dir);
}

/* a FIFO must give an error, never block the open (no writer ever comes); a
 * directory scan leaves bad files out with a warning and loads the rest */
Test(bad, fifo_and_bad_files_in_directory, .timeout = 20)
{
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	struct gt_store *s;
	char err[512];
	char dir[] = "/tmp/gtrace_imp_XXXXXX";
	cr_assert(mkdtemp(dir));
	char fifo[600], good[600], bad[600];
	snprintf(fifo, sizeof(fifo), "%s/fifo.json", dir);
	snprintf(good, sizeof(good), "%s/rank-1.json", dir);
	snprintf(bad, sizeof(bad), "%s/rank-2.json", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	const char *p = fifo;
	cr_expect_neq(gt_load(&p, 1, &o, &s, err, sizeof(err)), 0);
	cr_expect(strstr(err, "not a regular file"), "%s", err);
	const char *two[2] = { fifo, fifo };   /* the importer's own open path */
	cr_expect_neq(gt_load(two, 2, &o, &s, err, sizeof(err)), 0);
	cr_expect(strstr(err, "not a regular file"), "%s", err);
	p = "/dev/zero";
	cr_expect_neq(gt_load(&p, 1, &o, &s, err, sizeof(err)), 0);
	cr_expect(strstr(err, "/dev/zero: not a regular file"), "%s", err);
	FILE *fp = fopen(good, "w");
	fputs("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"dur\": 2}]}", fp);
	fclose(fp);
	fp = fopen(bad, "w");
	fputs("this is not JSON", fp);
	fclose(fp);
	p = dir;
	cr_assert_eq(gt_load(&p, 1, &o, &s, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(gt_store_rank_count(s), 1);
	cr_expect_eq(gt_store_rank_at(s, 0)->rank, 1);
	cr_expect_eq(gt_store_event_count(s), 1);
	cr_expect_str_eq(gt_store_meta_get(s, "import.files_skipped"), "2");
	gt_store_free(s);
	/* named on the command line, a bad file is an error */
	const char *named[2] = { good, bad };
	cr_expect_neq(gt_load(named, 2, &o, &s, err, sizeof(err)), 0);
	cr_expect(strstr(err, "rank-2.json: not a"), "%s", err);
	/* only JSON files merge: a directory among several paths is named as such */
	const char *mixed[2] = { good, dir };
	cr_expect_neq(gt_load(mixed, 2, &o, &s, err, sizeof(err)), 0);
	cr_expect(strstr(err, "is a directory; only trace JSON files can be merged"), "%s", err);
	/* a missing path is named before any complaint about another (trial 2) */
	const char *gone[2] = { dir, "/nonexistent/missing.gtrace" };
	cr_expect_neq(gt_load(gone, 2, &o, &s, err, sizeof(err)), 0);
	cr_expect(strstr(err, "missing.gtrace: No such file or directory"), "%s", err);
	/* nothing readable in the directory: the first file's error */
	remove(good);
	cr_expect_neq(gt_load(&p, 1, &o, &s, err, sizeof(err)), 0);
	cr_expect(strstr(err, "fifo.json: not a regular file"), "%s", err);
	remove(bad);
	remove(fifo);
	rmdir(dir);
}

/* planted: nested B/E pairs on one thread, interleaved with another thread,
 * and an E without its B */
Test(quirks, begin_end_pairs)
{
	const char *t = "[{\"ph\": \"B\", \"name\": \"outer\", \"cat\": \"user_annotation\", \"pid\": 1, \"tid\": 1, \"ts\": 10},"
		"{\"ph\": \"B\", \"name\": \"other\", \"pid\": 1, \"tid\": 2, \"ts\": 11},"
		"{\"ph\": \"B\", \"name\": \"inner\", \"pid\": 1, \"tid\": 1, \"ts\": 12.5},"
		"{\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 14},"
		"{\"ph\": \"E\", \"pid\": 1, \"tid\": 2, \"ts\": 15},"
		"{\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 20},"
		"{\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 30}]";
	struct gt_store *s;
	char err[256];
	cr_assert_eq(imps(t, &s, err), 0, "%s", err);
	cr_expect_eq(gt_store_event_count(s), 3);
	cr_expect_eq(only(s, "outer")->dur_ns, 10000);
	cr_expect_eq(only(s, "outer")->kind, GT_EV_NVTX);
	cr_expect_eq(only(s, "inner")->dur_ns, 1500);
	cr_expect_eq(only(s, "other")->dur_ns, 4000);
	cr_expect_eq(only(s, "inner")->flags & GT_EVF_TRUNCATED, 0);
	cr_expect_eq(gt_store_drops(s)->import_skipped, 1);
	gt_store_free(s);
}

/* the export is strict JSON in UTF-8 even when a name is not: a raw 0xff
 * byte and a lone surrogate escape (decoded to CESU bytes) become U+FFFD */
static int valid_utf8(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = p[i];
		size_t k = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 && c >= 0xc2 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
			   c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		if (!k || i + k > n)
			return 0;
		for (size_t j = 1; j < k; j++)
			if ((p[i + j] & 0xc0) != 0x80)
				return 0;
		if (k == 3 && c == 0xed && p[i + 1] >= 0xa0)
			return 0;   /* surrogate */
		i += k;
	}
	return 1;
}

Test(bad, export_is_valid_utf8)
{
	struct gt_store *s;
	char err[256];
	cr_assert_eq(imps("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\xff\\ud800z \xc3\xa9\","
			  " \"pid\": 0, \"tid\": 7, \"ts\": 5, \"dur\": 2}]}", &s, err), 0, "%s", err);
	char *txt;
	size_t len;
	cr_assert_eq(gt_export_chrome_mem(s, NULL, &txt, &len), 0);
	cr_assert(valid_utf8((const unsigned char *)txt, len), "%.*s", (int)len, txt);
	cr_assert(strstr(txt, "\"k\\ufffd\\ufffd\\ufffd\\ufffdz \xc3\xa9\""), "%s", txt);
	free(txt);
	gt_store_free(s);
}

/* a UTF-8 byte order mark before the JSON (Windows editors) is skipped, in
 * memory and through format detection on disk */
Test(bad, byte_order_mark)
{
	const char *txt = "\xef\xbb\xbf{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, "
			  "\"ts\": 5, \"dur\": 2}]}";
	struct gt_store *s;
	char err[512];
	cr_assert_eq(imps(txt, &s, err), 0, "%s", err);
	cr_expect_eq(gt_store_event_count(s), 1);
	gt_store_free(s);
	char path[] = "/tmp/gtrace_bom_XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, txt, strlen(txt)), (ssize_t)strlen(txt));
	close(fd);
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	const char *p = path;
	cr_assert_eq(gt_load(&p, 1, &o, &s, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(gt_store_event_count(s), 1);
	gt_store_free(s);
	unlink(path);
}
