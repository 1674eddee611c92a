/*
 * test_xplane_hostile.c - hostile values in an XPlane profile (issue 11):
 * negative durations and offsets, offsets and timestamps beyond 2^62 ns,
 * copy sizes of 2^64 - 1, huge aggregated counts, device numbers and plane
 * stats out of range, a Steps line of 200,000 distinct group ids.  The
 * files are written by protobuf-c (xpwrite.c) with the truth planted: the
 * good events are kept exactly, every bad one is skipped and counted
 * (gt_evcheck_event, the one check of every store entry), the CLI says so in
 * one line naming the file, nothing crashes and nothing takes long.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/import.h"
#include "gtrace/load.h"
#include "gtrace/store.h"
#include "impcheck.h"
#include "xpwrite.h"

static struct gt_store *load(const XSpace *sp, int *rc, char *err, size_t errlen)
{
	size_t len;
	uint8_t *b = xpw_pack(sp, &len);
	struct gt_store *s = gt_store_new();
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	*rc = gt_xplane_import_mem("hostile.xplane.pb", b, len, &o, s, err, errlen);
	return s;
}

static size_t kind_count(const struct gt_store *s, int kind)
{
	size_t n = 0;
	for (size_t l = 0; l < gt_store_lane_count(s); l++) {
		const struct gt_lane *ln = gt_store_lane_at(s, (uint32_t)l);
		for (size_t i = 0; i < ln->n; i++)
			n += ln->ev[i].kind == kind;
	}
	return n;
}

Test(xplane_hostile, out_of_range_values_skipped_and_counted)
{
	const int64_t base = 1700000000000000000LL;          /* epoch ns */
	XSpace *sp = xpw_space("evil");
	XPlane *h = xpw_plane(sp, "/host:CPU");
	int64_t op = xpw_evmeta(h, "op", NULL);
	XLine *t = xpw_line(h, 1, "python3", base);
	xpw_event(t, op, 1000, 2000);                          /* good */
	xpw_event(t, op, 1000, -5);                            /* negative duration */
	xpw_event(t, op, -1000, 10);                           /* negative offset */
	xpw_event(t, op, INT64_MAX, 1);                        /* offset + duration overflows */
	xpw_event(t, op, (INT64_C(1) << 62) + 1, 0);           /* offset 2^62 ps = 4.6e15 ns: valid */
	xpw_event(t, op, 5000, INT64_MAX - 5000);              /* end 9.2e15 ns after base: valid */
	XLine *late = xpw_line(h, 2, "late", (INT64_C(1) << 62) + 5);   /* timestamp beyond 2^62 ns */
	xpw_event(late, op, 0, 10);
	XLine *neg = xpw_line(h, 3, "neg", -1000);             /* negative line timestamp */
	xpw_event(neg, op, 0, 10);
	XLine *agg = xpw_line(h, 4, "agg", base);              /* aggregated: a count, no time */
	XEvent *ae = xpw_event(agg, op, 0, 10);
	ae->data_case = TENSORFLOW__PROFILER__XEVENT__DATA_NUM_OCCURRENCES;
	ae->num_occurrences = INT64_MAX;
	XPlane *g = xpw_plane(sp, "/device:GPU:0");
	int64_t k = xpw_evmeta(g, "k", NULL), cp = xpw_evmeta(g, "MemcpyH2D", NULL);
	xpw_stat_int(g, NULL, "core_count", INT64_MAX);        /* absurd device properties */
	xpw_stat_int(g, NULL, "memory_size", -1);
	xpw_stat_int(g, NULL, "clock_rate", INT64_MIN);
	XLine *cs = xpw_line(g, 7, "Stream #7(Compute)", base);
	XEvent *ke = xpw_event(cs, k, 0, 1000000);             /* good kernel */
	xpw_stat_str(g, ke, "kernel_details", "regs:99999999999 grid:18446744073709551615,0,-1 "
		     "block:4294967296,1,1 occ_pct:1000");
	xpw_stat_int(g, ke, "correlation_id", INT64_MIN);
	XLine *ms = xpw_line(g, 8, "Stream #8(MemcpyH2D)", base);
	XEvent *c1 = xpw_event(ms, cp, 0, 1000);               /* good copy */
	xpw_stat_str(g, c1, "memcpy_details", "kind_src:host size:4096");
	XEvent *c2 = xpw_event(ms, cp, 2000, 1000);            /* 2^64 - 1 bytes */
	xpw_stat_str(g, c2, "memcpy_details", "size:18446744073709551615");
	XEvent *c3 = xpw_event(ms, cp, 4000, 1000);            /* 2^62 bytes: at the limit, out */
	xpw_stat_str(g, c3, "memcpy_details", "size:4611686018427387904");
	/* a device number past what a GPU plane may be: kept as another plane */
	XPlane *big = xpw_plane(sp, "/device:GPU:99999999999999999999");
	int64_t bk = xpw_evmeta(big, "x", NULL);
	xpw_event(xpw_line(big, 1, "Stream #1(Compute)", base), bk, 0, 10);
	int rc;
	char err[512] = "";
	struct gt_store *s = load(sp, &rc, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	/* kept: the three valid host ops (any int64 of ps is < 2^62 ns after a
	 * valid line timestamp), the other plane's event, the kernel, the good
	 * copy; the aggregated event is counted apart, not kept */
	cr_expect_eq(kind_count(s, GT_EV_CPU_OP), 4, "cpu ops %zu", kind_count(s, GT_EV_CPU_OP));
	cr_expect_eq(kind_count(s, GT_EV_KERNEL), 1);
	cr_expect_eq(kind_count(s, GT_EV_MEMCPY), 1);
	/* skipped: negative duration, negative offset, overflowing offset, the
	 * late line's and the negative line's events, the two huge copies */
	uint64_t skipped = gt_store_drops(s)->import_skipped;
	cr_expect_eq(skipped, 7, "skipped %llu", (unsigned long long)skipped);
	/* the kernel's configuration is clamped, not wrapped */
	for (size_t l = 0; l < gt_store_lane_count(s); l++) {
		const struct gt_lane *ln = gt_store_lane_at(s, (uint32_t)l);
		for (size_t i = 0; i < ln->n; i++) {
			const struct gt_event *e = &ln->ev[i];
			cr_expect_geq(e->dur_ns, 0);
			cr_expect_lt(gt_event_end(e), INT64_C(1) << 62);
			cr_expect_gt(e->start_ns, -(INT64_C(1) << 62));
			if (e->kind == GT_EV_KERNEL) {
				const struct gt_kconf *kc = gt_store_kconf_at(s, gt_event_kconf(e));
				cr_assert(kc);
				cr_expect_eq(kc->regs_per_thread, UINT32_MAX);
				cr_expect_eq(kc->grid[0], UINT32_MAX);
				cr_expect_lt(kc->occupancy_pct, 0.0f, "occupancy 1000 %% kept");
			}
		}
	}
	gt_store_free(s);

	/* the CLI: exit 0 with one warning line naming the file and the count */
	char path[] = "/tmp/gtrace_hostile_XXXXXX.xplane.pb", out[8192];
	int fd = mkstemps(path, 10);
	cr_assert(fd >= 0);
	close(fd);
	cr_assert_eq(xpw_write(sp, path), 0);
	rc = impcheck_cli(out, sizeof(out), "stats '%s' --report kernels", path);
	cr_expect_eq(rc, 0, "%s", out);
	char want[256];
	snprintf(want, sizeof(want), "warning: %s: skipped 7 events", path);
	cr_expect(strstr(out, want), "%s", out);
	unlink(path);
	xpw_reset();
}

/* 200,000 distinct step ids on a Steps line: linear, not one scan of the
 * steps so far per event (about 20 G comparisons) */
Test(xplane_hostile, many_distinct_steps_bounded, .timeout = 60)
{
	XSpace *sp = xpw_space("steps");
	XPlane *g = xpw_plane(sp, "/device:GPU:0");
	int64_t st = xpw_evmeta(g, "step", NULL);
	XLine *sl = xpw_line(g, 99, "Steps", 1000000);
	enum { N = 200000 };
	for (int i = 0; i < N; i++) {
		XEvent *e = xpw_event(sl, st, (int64_t)i * 10000, 5000);
		xpw_stat_int(g, e, "group_id", (int64_t)(N - i));   /* distinct, descending */
	}
	/* the same group on a second GPU widens its window */
	XPlane *g2 = xpw_plane(sp, "/device:GPU:1");
	int64_t st2 = xpw_evmeta(g2, "step", NULL);
	XEvent *w = xpw_event(xpw_line(g2, 99, "Steps", 1000000), st2, 0, (int64_t)N * 10000);
	xpw_stat_int(g2, w, "group_id", 1);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc;
	char err[512] = "";
	struct gt_store *s = load(sp, &rc, err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert_eq(rc, 0, "%s", err);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	cr_expect_lt(secs, 10.0, "%.1f s for %d steps", secs, N);
	cr_expect_eq(kind_count(s, GT_EV_STEP), N);
	/* step 1 (the last event of GPU 0) spans GPU 1's whole window */
	int found = 0;
	for (size_t l = 0; l < gt_store_lane_count(s); l++) {
		const struct gt_lane *ln = gt_store_lane_at(s, (uint32_t)l);
		for (size_t i = 0; i < ln->n; i++)
			if (ln->ev[i].kind == GT_EV_STEP && ln->ev[i].arg == 1) {
				found++;
				cr_expect_eq(ln->ev[i].start_ns, 1000000);
				cr_expect_eq(ln->ev[i].dur_ns, (int64_t)N * 10);
			}
	}
	cr_expect_eq(found, 1);
	gt_store_free(s);
	xpw_reset();
}
