/*
 * test_bounded.c - bounded costs on hostile input: what was quadratic is
 * run at a size that took tens of seconds before, under a time bound with
 * room for a sanitizer build.  Truths are the planted inputs.
 *   - 200k B on one thread, then 200k E on another (unmatched): 42 s before
 *   - B/E nesting on interleaved threads still closes the latest B
 *   - export of 120k processes (one lane each): 10 s at 80k before
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/export.h"
#include "gtrace/load.h"
#include "gtrace/store.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *tmp_path(const char *tag)
{
	static char p[256];
	snprintf(p, sizeof(p), "/tmp/gtrace-bounded-%d-%s", (int)getpid(), tag);
	return p;
}

static struct gt_store *load(const char *path)
{
	const char *paths[] = { path };
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	struct gt_store *s = NULL;
	char err[256];
	cr_assert_eq(gt_load(paths, 1, &o, &s, err, sizeof(err)), 0, "%s", err);
	return s;
}

Test(bounded, unmatched_e_after_many_open_b, .timeout = 60)
{
	enum { N = 200000 };
	const char *path = tmp_path("be.json");
	FILE *f = fopen(path, "w");
	fputs("{\"traceEvents\":[", f);
	for (int i = 0; i < N; i++)
		fprintf(f, "{\"ph\":\"B\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":%d},", i);
	for (int i = 0; i < N; i++)
		fprintf(f, "%s{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":%d}", i ? "," : "", N + i);
	fputs("]}\n", f);
	fclose(f);
	double t0 = now_s();
	struct gt_store *s = load(path);
	double secs = now_s() - t0;
	unlink(path);
	cr_assert_lt(secs, 10.0, "200k B + 200k unmatched E took %.1f s", secs);
	cr_assert_eq(gt_store_event_count(s), N);
	cr_assert_eq(gt_store_drops(s)->import_skipped, N, "every E is without its B");
	const struct gt_lane *l = gt_store_lane_at(s, 0);
	cr_assert_eq(l->n, N);
	for (size_t i = 0; i < l->n; i++)
		cr_assert(l->ev[i].flags & GT_EVF_TRUNCATED);
	gt_store_free(s);
}

/* the latest open B of the same thread closes, whatever other threads do */
Test(bounded, nesting_on_interleaved_threads)
{
	const char *path = tmp_path("nest.json");
	FILE *f = fopen(path, "w");
	fputs("{\"traceEvents\":["
	      "{\"ph\":\"B\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0},"
	      "{\"ph\":\"B\",\"name\":\"c\",\"pid\":1,\"tid\":2,\"ts\":5},"
	      "{\"ph\":\"B\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":10},"
	      "{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":17},"
	      "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":20},"
	      "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":50},"
	      "{\"ph\":\"E\",\"pid\":2,\"tid\":1,\"ts\":60}"
	      "]}\n", f);
	fclose(f);
	struct gt_store *s = load(path);
	unlink(path);
	cr_assert_eq(gt_store_event_count(s), 3);
	cr_assert_eq(gt_store_drops(s)->import_skipped, 1, "the E of pid 2 has no B");
	int seen = 0;
	for (uint32_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, i);
		for (size_t j = 0; j < l->n; j++) {
			const char *n = gt_store_str(s, l->ev[j].name);
			int64_t want = !strcmp(n, "a") ? 50000 : !strcmp(n, "b") ? 10000 : 12000;
			cr_assert_eq(l->ev[j].dur_ns, want, "%s: %lld ns", n, (long long)l->ev[j].dur_ns);
			cr_assert_eq(l->ev[j].flags & GT_EVF_TRUNCATED, 0);
			seen++;
		}
	}
	cr_assert_eq(seen, 3);
	gt_store_free(s);
}

Test(bounded, export_many_processes, .timeout = 60)
{
	enum { N = 120000 };
	struct gt_store *s = gt_store_new();
	uint32_t name = gt_store_intern_cstr(s, "op");
	for (int i = 0; i < N; i++) {
		struct gt_lane_key k = { .type = GT_LANE_HOST, .rank = 0, .device = -1,
					 .pid = 100000 + i, .id = 7 };
		struct gt_event e = { .kind = GT_EV_CPU_OP, .start_ns = i, .dur_ns = 1,
				      .name = name, .lane = gt_store_lane(s, &k) };
		gt_store_add(s, &e);
	}
	gt_store_finish(s);
	const char *path = tmp_path("many.json");
	char err[256];
	/* 120k lanes is past the default lanes-per-file limit (100k, loadlim.h) */
	setenv("GTRACE_MAX_LANES", "200000", 1);
	double t0 = now_s();
	cr_assert_eq(gt_export_chrome(s, path, NULL, err, sizeof(err)), 0, "%s", err);
	double secs = now_s() - t0;
	cr_assert_lt(secs, 10.0, "export of %d processes took %.1f s", N, secs);
	struct gt_store *r = load(path);
	unlink(path);
	cr_assert_eq(gt_store_lane_count(r), N);
	cr_assert_eq(gt_store_event_count(r), N);
	gt_store_free(r);
	gt_store_free(s);
}
