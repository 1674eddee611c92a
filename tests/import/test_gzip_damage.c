/*
 * test_gzip_damage.c - one rule for damaged gzip input in every importer
 * that reads gzip (Kineto JSON, XPlane; issue 11, docs/import.md): what
 * inflates before the damage is used, the damage is named in the same
 * words ("gzip check failed ...", "gzip data ends early ...", "gzip data
 * damaged near byte ..."), a warning when events were kept, an error when
 * none could be.  The attacks of the issue: a bad CRC trailer on a large
 * and on a small file (all events are there: all kept; it said "file is
 * truncated; kept the 144399 events before it" on one and failed on the
 * other), a flipped byte mid-stream (it rejected the whole file), a cut.
 * The kept counts are checked against an independent inflate of the same
 * bytes by zlib in the test (every event object ends with the only '}').
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include "gtrace/import.h"
#include "gtrace/load.h"
#include "gtrace/store.h"
#include "impcheck.h"
#include "xpwrite.h"

static unsigned char *gz(const void *data, size_t len, size_t *out)
{
	uLong cap = compressBound((uLong)len) + 64;
	unsigned char *b = malloc(cap);
	z_stream z = { 0 };
	cr_assert_eq(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (unsigned char *)data;
	z.avail_in = (uInt)len;
	z.next_out = b;
	z.avail_out = (uInt)cap;
	cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	*out = z.total_out;
	deflateEnd(&z);
	return b;
}

/* '}' in what zlib inflates from the first n bytes (the complete events) */
static size_t events_in_prefix(const unsigned char *g, size_t n)
{
	z_stream z = { 0 };
	cr_assert_eq(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
	static unsigned char o[1 << 16];
	size_t k = 0;
	z.next_in = (unsigned char *)g;
	z.avail_in = (uInt)n;
	int rc;
	do {
		z.next_out = o;
		z.avail_out = sizeof(o);
		rc = inflate(&z, Z_NO_FLUSH);
		for (size_t i = 0; i < sizeof(o) - z.avail_out; i++)
			k += o[i] == '}';
	} while (rc == Z_OK && z.avail_out == 0);
	inflateEnd(&z);
	return k;
}

/* a trace of n X events; each event object holds the text's only '}' but
 * the closing one */
static char *json(int n, size_t *len)
{
	size_t cap = (size_t)n * 80 + 64, w = 0;
	char *j = malloc(cap);
	w += (size_t)snprintf(j, cap, "{\"traceEvents\":[");
	for (int i = 0; i < n; i++)
		w += (size_t)snprintf(j + w, cap - w, "%s{\"ph\":\"X\",\"name\":\"op%d\",\"pid\":1,"
				      "\"tid\":1,\"ts\":%d,\"dur\":1}", i ? "," : "", i % 97, i * 3);
	w += (size_t)snprintf(j + w, cap - w, "]}");
	*len = w;
	return j;
}

static char path[64];

static const char *put(const void *b, size_t n, const char *ext)
{
	snprintf(path, sizeof(path), "/tmp/gtrace_gzd_XXXXXX%s", ext);
	int fd = mkstemps(path, (int)strlen(ext));
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, b, n), (ssize_t)n);
	close(fd);
	return path;
}

/* gt_load of path with threads (1: inline inflate, 2: a second thread);
 * the events, or -1 with err set */
static long load_events(const char *p, int threads, char *err, size_t errlen)
{
	const char *paths[] = { p };
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET, .threads = threads };
	struct gt_store *s = NULL;
	if (gt_load(paths, 1, &o, &s, err, errlen))
		return -1;
	long n = (long)gt_store_event_count(s);
	gt_store_free(s);
	return n;
}

static char out[8192];

/* gtrace stats PATH --report kernels: its stderr alone into out; the exit status */
static int cli_err(const char *p)
{
	const char *b = getenv("GTRACE_BUILD");
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s/tui/gtrace stats '%s' --report kernels 2>&1 >/dev/null",
		 b ? b : "build", p);
	FILE *f = popen(cmd, "r");
	cr_assert(f);
	size_t n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	int st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void one_line(const char *want)
{
	cr_expect(strstr(out, path), "not named: %s", out);
	cr_expect(strstr(out, want), "no '%s': %s", want, out);
	cr_expect_eq(strchr(out, '\n'), strrchr(out, '\n'), "one line: %s", out);
}

/* a JSON of n events, gzip, damaged by f; the kept count and the message */
static void json_case(int n, const char *what, long expect_kept, const char *want,
		      const unsigned char *g, size_t glen)
{
	put(g, glen, ".json.gz");
	char err[512];
	for (int t = 1; t <= 2; t++) {
		long k = load_events(path, t, err, sizeof(err));
		if (expect_kept < 0)
			cr_expect_eq(k, -1, "%s (threads %d): loaded %ld", what, t, k);
		else
			cr_expect_eq(k, expect_kept, "%s (threads %d): %ld events kept, want %ld: %s", what,
				     t, k, expect_kept, err);
	}
	int rc = cli_err(path);
	cr_expect_eq(rc, expect_kept < 0 ? 1 : 0, "%s: exit %d: %s", what, rc, out);
	one_line(want);
	(void)n;
	unlink(path);
}

Test(gzip_damage, json_every_kind)
{
	enum { N = 60000 };
	size_t jl, gl;
	char *j = json(N, &jl);
	unsigned char *g = gz(j, jl, &gl);
	/* a bad CRC trailer: every event is there, all kept */
	g[gl - 8] ^= 0xff;
	json_case(N, "crc", N, "gzip check failed", g, gl);
	g[gl - 8] ^= 0xff;
	/* a bad length trailer: the same words */
	g[gl - 1] ^= 0x01;
	json_case(N, "length", N, "gzip check failed", g, gl);
	g[gl - 1] ^= 0x01;
	/* cut at 2/3: the complete events before the cut, as zlib inflates them */
	size_t cut = gl * 2 / 3;
	json_case(N, "cut", (long)events_in_prefix(g, cut), "gzip data ends early (truncated at byte", g,
		  cut);
	/* a flipped byte mid-stream: kept what came before, whatever the
	 * damage made of the rest, named as gzip damage */
	g[gl / 2] ^= 0x55;
	put(g, gl, ".json.gz");
	int rc = cli_err(path);
	cr_expect_eq(rc, 0, "flip: exit %d: %s", rc, out);
	one_line("gzip");
	cr_expect(strstr(out, "kept the"), "%s", out);
	char err[512];
	long k = load_events(path, 1, err, sizeof(err));
	cr_expect(k > 0 && k <= N, "flip: %ld kept", k);
	unlink(path);
	g[gl / 2] ^= 0x55;
	/* cut before any event: an error in the same words */
	json_case(N, "cut early", -1, "gzip data ends early", g, 12);
	free(g);
	free(j);
}

/* the small file: a bad CRC was a hard error there */
Test(gzip_damage, json_small_file_crc)
{
	size_t jl, gl;
	char *j = json(100, &jl);
	unsigned char *g = gz(j, jl, &gl);
	g[gl - 6] ^= 0x10;
	json_case(100, "small crc", 100, "gzip check failed", g, gl);
	free(g);
	free(j);
}

Test(gzip_damage, xplane_same_words)
{
	XSpace *sp = xpw_space("h");
	XPlane *h = xpw_plane(sp, "/host:CPU");
	int64_t op = xpw_evmeta(h, "op", NULL);
	XLine *t = xpw_line(h, 1, "python3", 1000000);
	for (int i = 0; i < 5000; i++)
		xpw_event(t, op, (int64_t)i * 10000, 5000);
	size_t pl, gl;
	uint8_t *p = xpw_pack(sp, &pl);
	unsigned char *g = gz(p, pl, &gl);
	/* CRC: the profile is complete, all kept with the JSON importer's words */
	g[gl - 8] ^= 0xff;
	put(g, gl, ".xplane.pb.gz");
	char err[512];
	cr_expect_eq(load_events(path, 1, err, sizeof(err)), 5000, "%s", err);
	int rc = cli_err(path);
	cr_expect_eq(rc, 0, "%s", out);
	one_line("gzip check failed");
	cr_expect(strstr(out, "kept the 5000 events"), "%s", out);
	unlink(path);
	g[gl - 8] ^= 0xff;
	/* a cut: one protobuf message cannot be read in part: an error, same words */
	put(g, gl / 2, ".xplane.pb.gz");
	rc = cli_err(path);
	cr_expect_eq(rc, 1, "%s", out);
	one_line("gzip data ends early (truncated at byte");
	cr_expect(strstr(out, "no events kept"), "%s", out);
	unlink(path);
	free(g);
	xpw_reset();
}
