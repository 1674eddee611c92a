/*
 * test_gtfile_limits.c - writer and reader agree on every limit: round
 * trips of extreme but valid data (100,000 constant events, as a recorder
 * streams them and as a whole store; times at the edges evcheck allows),
 * and chunks of unknown type are skipped without being decompressed
 * (200 zstd frames claiming 64 MiB each in a file of a few KB).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>
#include "core/file/gtfile_priv.h"
#include "gtrace/evcheck.h"
#include "gtrace/store.h"
#include "test_gtfile_util.h"

static struct gt_store *one_lane(uint32_t *lane, uint32_t *name)
{
	struct gt_store *s = gt_store_new();
	struct gt_lane_key k = { .type = GT_LANE_GPU, .rank = 0, .device = 0, .id = 7 };
	*lane = gt_store_lane(s, &k);
	*name = gt_store_intern_cstr(s, "constant_kernel");
	return s;
}

static size_t read_back(const char *path, struct gt_store **out)
{
	char err[256];
	struct gt_store *r = gt_store_new();
	int rc = gt_file_read(path, r, NULL, err, sizeof(err));
	cr_assert_eq(rc, 0, "our reader rejects what our writer wrote: %s", err);
	*out = r;
	return gt_store_event_count(r);
}

/* 100,000 identical events compress to almost nothing: the file must
 * still open (the recorder wrote such a file its reader refused) */
Test(gtfile_limits, constant_events_streamed_and_whole)
{
	enum { N = 100000 };
	uint32_t lane, name;
	struct gt_store *s = one_lane(&lane, &name);
	struct gt_event *e = calloc(N, sizeof(*e));
	for (size_t i = 0; i < N; i++) {
		e[i].kind = GT_EV_KERNEL;
		e[i].start_ns = 1000;
		e[i].lane = lane;
		e[i].name = name;
		gt_store_add(s, &e[i]);
	}
	gt_store_finish(s);
	/* as `gtrace record` writes: streamed in small batches */
	const char *path = tgf_tmp("const_stream");
	char err[256];
	struct gt_file_writer *w = gt_file_writer_open(path, NULL, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	for (size_t i = 0; i < N; i += 1000)
		cr_assert_eq(gt_file_writer_add(w, s, e + i, 1000), 0);
	cr_assert_eq(gt_file_writer_close(w, s, err, sizeof(err)), 0, "%s", err);
	struct gt_store *r;
	cr_assert_eq(read_back(path, &r), N);
	cr_assert_eq(gt_store_t_min(r), 1000);
	cr_assert_eq(gt_store_t_max(r), 1000);
	gt_store_free(r);
	unlink(path);
	/* as `W` and export write: the whole store */
	path = tgf_tmp("const_whole");
	cr_assert_eq(gt_file_write_store(s, path, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(read_back(path, &r), N);
	gt_store_free(r);
	unlink(path);
	free(e);
	gt_store_free(s);
}

/* every field at the edge of what evcheck lets into a store */
Test(gtfile_limits, extreme_valid_events_round_trip)
{
	const int64_t L = GT_EVCHECK_TIME_LIMIT_NS;
	uint32_t lane, name;
	struct gt_store *s = one_lane(&lane, &name);
	struct gt_event e[4];
	memset(e, 0, sizeof(e));
	e[0] = (struct gt_event){ .start_ns = -L + 1, .dur_ns = 0, .kind = GT_EV_KERNEL };
	e[1] = (struct gt_event){ .start_ns = -L + 1, .dur_ns = 2 * (L - 1) - 1,
				  .kind = GT_EV_MEMCPY, .sub = GT_COPY_KIND_COUNT - 1,
				  .arg = (UINT64_C(1) << 62) - 1, .corr = UINT32_MAX, .ext = UINT32_MAX,
				  .flags = 0xffff, .aux = UINT32_MAX };
	e[2] = (struct gt_event){ .start_ns = L - 2, .dur_ns = 1, .kind = GT_EV_OVERHEAD };
	e[3] = (struct gt_event){ .start_ns = 0, .dur_ns = L - 1, .kind = GT_EV_SYNC,
				  .sub = GT_SYNC_KIND_COUNT - 1 };
	for (int i = 0; i < 4; i++) {
		e[i].lane = lane;
		e[i].name = name;
		cr_assert_null(gt_evcheck_event(&e[i]), "planted event %d is valid", i);
		gt_store_add(s, &e[i]);
	}
	gt_store_finish(s);
	const char *path = tgf_tmp("extreme");
	char err[256];
	cr_assert_eq(gt_file_write_store(s, path, err, sizeof(err)), 0, "%s", err);
	struct gt_store *r;
	cr_assert_eq(read_back(path, &r), 4);
	tgf_assert_same(s, r);
	gt_store_free(r);
	gt_store_free(s);
	unlink(path);
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* a zstd chunk of an unknown type: header with CRCs, flags = zstd */
static size_t zstd_chunk(unsigned char *buf, size_t at, uint32_t type, const void *frame,
			 size_t stored, uint32_t raw)
{
	size_t n = tgf_chunk(buf, at, type, frame, stored);
	gtfile_put32(buf + at + 4, GTFILE_CHUNK_ZSTD);
	gtfile_put32(buf + at + 8, raw);
	tgf_fix_chunk(buf, at);
	return n;
}

Test(gtfile_limits, unknown_chunks_not_decompressed, .timeout = 30)
{
	const uint32_t raw = GTFILE_MAX_CHUNK_BYTES;
	unsigned char *zeros = calloc(raw, 1);
	size_t bound = ZSTD_compressBound(raw);
	unsigned char *frame = malloc(bound);
	size_t fl = ZSTD_compress(frame, bound, zeros, raw, 19);
	cr_assert(!ZSTD_isError(fl));
	free(zeros);
	size_t cap = 64 + 200 * (GTFILE_CHUNK_HDR + fl) + 256;
	unsigned char *f = malloc(cap);
	size_t n = tgf_header(f, 1, 9, "1.7.0");
	for (int i = 0; i < 200; i++)
		n = zstd_chunk(f, n, 200, frame, fl, raw);
	n = tgf_chunk(f, n, GTFILE_CH_STRINGS, "\1\0\0\0\1\0\0\0\2\0\0\0hi", 14);
	free(frame);
	struct gt_store *s = gt_store_new();
	char err[256];
	int64_t t0 = mono_ms();
	int rc = gt_file_read_mem(f, n, "pad.gtrace", s, NULL, err, sizeof(err));
	int64_t ms = mono_ms() - t0;
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_lt(ms, 500, "%zu bytes of unknown chunks took %lld ms", n, (long long)ms);
	gt_store_free(s);
	free(f);
}
