/*
 * test_evcheck.c - the one validation point for events entering a store
 * (core/store/evcheck.c) and its callers: planted events on each side of
 * every limit, a Kineto file whose base time plus ts plus dur overflows,
 * and a .gtrace holding events no reader may accept.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "gtrace/evcheck.h"
#include "gtrace/gtfile.h"
#include "gtrace/load.h"
#include "gtrace/store.h"

static struct gt_event ev(int kind, int64_t start, int64_t dur)
{
	struct gt_event e;
	memset(&e, 0, sizeof(e));
	e.kind = (uint8_t)kind;
	e.start_ns = start;
	e.dur_ns = dur;
	return e;
}

Test(evcheck, limits)
{
	const int64_t L = GT_EVCHECK_TIME_LIMIT_NS;
	struct gt_event ok[] = {
		ev(GT_EV_KERNEL, 0, 0),
		ev(GT_EV_OVERHEAD, 1700000000000000000LL, 5),
		ev(GT_EV_KERNEL, -L + 1, 0),
		ev(GT_EV_KERNEL, L - 2, 1),
		ev(GT_EV_KERNEL, 0, L - 1),
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		cr_assert_null(gt_evcheck_event(&ok[i]), "event %zu: %s", i, gt_evcheck_event(&ok[i]));
	struct gt_event bad[] = {
		ev(GT_EV_NONE, 0, 0),
		ev(GT_EV_KIND_COUNT, 0, 0),
		ev(255, 0, 0),
		ev(GT_EV_KERNEL, 0, -1),
		ev(GT_EV_KERNEL, INT64_MIN, 0),
		ev(GT_EV_KERNEL, -L, 0),
		ev(GT_EV_KERNEL, L, 0),
		ev(GT_EV_KERNEL, L - 1, 1),
		ev(GT_EV_KERNEL, INT64_MAX - 10, 100),
		ev(GT_EV_KERNEL, 0, INT64_MAX),
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_not_null(gt_evcheck_event(&bad[i]), "event %zu passed", i);
	struct gt_event c = ev(GT_EV_MEMCPY, 0, 1);
	c.sub = GT_COPY_KIND_COUNT - 1;
	cr_assert_null(gt_evcheck_event(&c));
	c.sub = GT_COPY_KIND_COUNT;
	cr_assert_str_eq(gt_evcheck_event(&c), "unknown copy kind");
	c.kind = GT_EV_SYNC;
	c.sub = GT_SYNC_KIND_COUNT;
	cr_assert_str_eq(gt_evcheck_event(&c), "unknown synchronization kind");
	/* any two accepted times differ by less than 2^63: no overflow */
	cr_assert_lt((L - 1) - (-L + 1), INT64_MAX);
}

/* baseTimeNanoseconds 1.9e18 + ts 1.9e18 + dur 1.9e18 ns: each within
 * the importer's own limit, the end beyond int64's comfort */
Test(evcheck, kineto_end_overflow_skipped)
{
	char path[] = "/tmp/gtrace-evcheck-XXXXXX.json";
	int fd = mkstemps(path, 5);
	cr_assert_geq(fd, 0);
	const char *json =
		"{\"baseTimeNanoseconds\": 1900000000000000000, \"traceEvents\":[\n"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":1000,"
		"\"dur\":10,\"args\":{\"device\":0,\"stream\":7}},\n"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":7,"
		"\"ts\":1900000000000000,\"dur\":1900000000000000,\"args\":{\"device\":0,\"stream\":7}}\n"
		"]}\n";
	cr_assert_eq(write(fd, json, strlen(json)), (ssize_t)strlen(json));
	close(fd);
	const char *paths[] = { path };
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	struct gt_store *s = NULL;
	char err[256];
	cr_assert_eq(gt_load(paths, 1, &o, &s, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	cr_assert_eq(gt_store_event_count(s), 1, "only k1 enters the store");
	cr_assert_eq(gt_store_drops(s)->import_skipped, 1);
	cr_assert_eq(gt_store_t_max(s), 1900000000000000000LL + 1010000);
	gt_store_free(s);
}

/* a .gtrace carrying an event with a negative duration (or kind 255) is
 * refused with a line that names the problem */
static void gtrace_refuses(struct gt_event bad, const char *why)
{
	struct gt_store *s = gt_store_new();
	struct gt_lane_key k = { .type = GT_LANE_GPU, .rank = 0, .device = 0, .id = 7 };
	uint32_t lane = gt_store_lane(s, &k);
	struct gt_event good = ev(GT_EV_KERNEL, 100, 10);
	good.lane = bad.lane = lane;
	good.name = bad.name = gt_store_intern_cstr(s, "k");
	gt_store_add(s, &good);
	gt_store_add(s, &bad);       /* gt_store_add itself checks nothing: planted */
	gt_store_finish(s);
	char path[] = "/tmp/gtrace-evcheck-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	char err[256];
	cr_assert_eq(gt_file_write_store(s, path, err, sizeof(err)), 0, "%s", err);
	gt_store_free(s);
	struct gt_store *r = gt_store_new();
	int rc = gt_file_read(path, r, NULL, err, sizeof(err));
	unlink(path);
	cr_assert_lt(rc, 0, "a .gtrace with a bad event was read");
	cr_assert(strstr(err, why), "%s", err);
	gt_store_free(r);
}

Test(evcheck, gtrace_negative_duration_refused)
{
	gtrace_refuses(ev(GT_EV_KERNEL, 200, -5), "negative duration");
}

Test(evcheck, gtrace_unknown_kind_refused)
{
	gtrace_refuses(ev(255, 200, 5), "unknown event kind");
}

/* copy sizes: 2^62 and above never enter; five copies of 4e18 bytes sum
 * past uint64 (the total saturates and says so, the mean stays exact) and
 * three sum past int64 (exact: 1.2e19) */
#include "gtrace/kernel_stats.h"
#include "gtrace/report.h"

static struct gt_kernel_stats_row copies(int n, uint64_t bytes)
{
	struct gt_store *s = gt_store_new();
	struct gt_lane_key k = { .type = GT_LANE_GPU, .rank = 0, .device = 0, .id = 7 };
	uint32_t lane = gt_store_lane(s, &k);
	for (int i = 0; i < n; i++) {
		struct gt_event e = ev(GT_EV_MEMCPY, 1000 * i, 100);
		e.sub = GT_COPY_H2D;
		e.arg = bytes;
		e.lane = lane;
		cr_assert_null(gt_evcheck_event(&e));
		gt_store_add(s, &e);
	}
	gt_store_finish(s);
	struct gt_scope sc = { .t0_ns = INT64_MIN, .t1_ns = INT64_MAX, .gpu = -1, .rank = -1,
			       .step = -1 };
	struct gt_kernel_stats_opts o = { .kinds_mask = 1u << GT_EV_MEMCPY, .group = GT_KERNEL_STATS_BY_COPY_KIND,
				 .flags = GT_KERNEL_STATS_WANT_BYTES };
	struct gt_kernel_stats_result r;
	char err[256];
	cr_assert_eq(gt_kernel_stats_compute(s, &sc, &o, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.nrows, 1);
	struct gt_kernel_stats_row row = r.rows[0];
	gt_kernel_stats_result_done(&r);
	gt_store_free(s);
	return row;
}

Test(evcheck, copy_bytes_sums_do_not_overflow)
{
	struct gt_event big = ev(GT_EV_MEMCPY, 0, 1);
	big.arg = UINT64_C(1) << 62;
	cr_assert_str_eq(gt_evcheck_event(&big), "copy size out of range");
	big.arg = 9000000000000000000u;
	cr_assert_not_null(gt_evcheck_event(&big));
	struct gt_kernel_stats_row r = copies(3, 4000000000000000000u);
	cr_assert_eq(r.bytes_total_sat, 0);
	cr_assert_eq(r.bytes_total, 12000000000000000000u);
	cr_assert_float_eq(r.bytes_avg, 4e18, 1e3);
	r = copies(5, 4000000000000000000u);
	cr_assert_eq(r.bytes_total_sat, 1, "2e19 bytes do not fit a uint64");
	cr_assert_float_eq(r.bytes_avg, 4e18, 1e3);
	cr_assert_geq(r.bytes_stddev, 0);
}
