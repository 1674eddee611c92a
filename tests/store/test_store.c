/*
 * Store and index tests.  Truth comes from brute force: on small integer
 * time axes the union busy time, overlap sets and covering events are
 * counted tick by tick, independently of the index.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/store.h"

static uint32_t gpu_lane(struct gt_store *s, int rank, int dev, int stream)
{
	struct gt_lane_key k = { .type = GT_LANE_GPU, .rank = rank, .device = dev, .id = stream };
	return gt_store_lane(s, &k);
}

static void add(struct gt_store *s, uint32_t lane, int64_t t, int64_t d, uint32_t name)
{
	struct gt_event e = { .start_ns = t, .dur_ns = d, .lane = lane, .name = name,
			      .kind = GT_EV_KERNEL };
	cr_assert_eq(gt_store_add(s, &e), 0);
}

Test(store, interning)
{
	struct gt_store *s = gt_store_new();
	uint32_t a = gt_store_intern_cstr(s, "volta_sgemm_128x64_nn");
	uint32_t b = gt_store_intern_cstr(s, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
	cr_assert_neq(a, b);
	cr_assert_eq(gt_store_intern_cstr(s, "volta_sgemm_128x64_nn"), a);
	cr_assert_str_eq(gt_store_str(s, b), "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
	cr_assert_eq(gt_store_intern_cstr(s, ""), 0);
	/* many strings: pointers stay valid while the table grows */
	const char *pa = gt_store_str(s, a);
	char buf[32];
	for (int i = 0; i < 100000; i++) {
		snprintf(buf, sizeof(buf), "k%d", i);
		gt_store_intern_cstr(s, buf);
	}
	cr_assert_eq(pa, gt_store_str(s, a));
	cr_assert_eq(gt_store_str_find(s, "k777", 4), gt_store_intern_cstr(s, "k777"));
	cr_assert_eq(gt_store_str_find(s, "nope", 4), UINT32_MAX);
	/* a huge string */
	size_t big = 3 << 20;
	char *h = malloc(big);
	memset(h, 'x', big);
	uint32_t hid = gt_store_intern(s, h, big);
	cr_assert_eq(strlen(gt_store_str(s, hid)), big);
	free(h);
	gt_store_free(s);
}

Test(store, lanes_and_tables)
{
	struct gt_store *s = gt_store_new();
	uint32_t l0 = gpu_lane(s, 0, 0, 7), l1 = gpu_lane(s, 0, 1, 7), l2 = gpu_lane(s, 1, 0, 7);
	cr_assert(l0 != l1 && l1 != l2 && l0 != l2);
	cr_assert_eq(gpu_lane(s, 0, 1, 7), l1);
	struct gt_lane_key hk = { .type = GT_LANE_HOST, .rank = -1, .device = -1, .pid = 42, .id = 43 };
	uint32_t h = gt_store_lane(s, &hk);
	hk.rank = 0;
	cr_assert_eq(gt_store_lane(s, &hk), h, "rank -1 means rank 0");
	cr_assert_eq(gt_store_lane_at(s, h)->key.rank, 0, "the store keeps rank -1 as 0");
	hk.rank = -1;
	hk.id = 44;   /* a new lane made with rank -1 reads back rank 0 */
	cr_assert_eq(gt_store_lane_at(s, gt_store_lane(s, &hk))->key.rank, 0);
	/* devices and ranks: -1 is stored as 0 and updates the rank-0 entry */
	struct gt_device d = { .rank = -1, .id = 0, .sm_count = 80 };
	cr_assert_eq(gt_store_device(s, &d), 0);
	d.rank = 0;
	d.sm_count = 132;
	cr_assert_eq(gt_store_device(s, &d), 0);
	cr_assert_eq(gt_store_device_count(s), 1);
	cr_assert_eq(gt_store_device_at(s, 0)->rank, 0);
	cr_assert_eq(gt_store_device_at(s, 0)->sm_count, 132);
	struct gt_rank r = { .rank = -1, .pid = 7, .world_size = -1 };
	cr_assert_eq(gt_store_rank(s, &r), 0);
	cr_assert_eq(gt_store_rank_count(s), 1);
	cr_assert_eq(gt_store_rank_at(s, 0)->rank, 0);
	cr_assert_eq(gt_store_rank_at(s, 0)->pid, 7);
	struct gt_kconf k1 = { .grid = { 80, 1, 1 }, .block = { 256, 1, 1 }, .regs_per_thread = 32 };
	struct gt_kconf k2 = k1;
	k2.smem_dynamic_bytes = 1024;
	uint32_t a = gt_store_kconf(s, &k1), b = gt_store_kconf(s, &k2);
	cr_assert(a && b && a != b);
	cr_assert_eq(gt_store_kconf(s, &k1), a);
	cr_assert_eq(gt_store_kconf_at(s, b)->smem_dynamic_bytes, 1024);
	cr_assert_null(gt_store_kconf_at(s, 0));
	gt_store_meta_set(s, "source", "x.json");
	gt_store_meta_set(s, "source", "y.json");
	cr_assert_str_eq(gt_store_meta_get(s, "source"), "y.json");
	cr_assert_eq(gt_store_meta_count(s), 1);
	gt_store_free(s);
}

/* brute force helpers over ticks [0, T) */
#define T 3000

static int64_t brute_busy(const struct gt_event *ev, size_t n, int64_t t0, int64_t t1)
{
	static unsigned char mark[T];
	memset(mark, 0, sizeof(mark));
	for (size_t i = 0; i < n; i++)
		for (int64_t t = ev[i].start_ns; t < gt_event_end(&ev[i]) && t < T; t++)
			mark[t] = 1;
	int64_t b = 0;
	for (int64_t t = t0 < 0 ? 0 : t0; t < t1 && t < T; t++)
		b += mark[t];
	return b;
}

static void random_lane(struct gt_store *s, uint32_t lane, unsigned seed, int n, int nested)
{
	srand(seed);
	for (int i = 0; i < n; i++) {
		int64_t t = rand() % (T - 200);
		int64_t d = nested && i % 17 == 0 ? rand() % 180 : rand() % 12;
		add(s, lane, t, d, (uint32_t)(1 + rand() % 5));
	}
}

static void check_lane(const struct gt_lane *l)
{
	for (size_t i = 1; i < l->n; i++)
		cr_assert(l->ev[i - 1].start_ns <= l->ev[i].start_ns, "sorted");
	cr_assert_eq(l->busy_total_ns, brute_busy(l->ev, l->n, 0, T));
	for (int q = 0; q < 300; q++) {
		int64_t t0 = rand() % T, t1 = t0 + rand() % 400;
		cr_assert_eq(gt_store_lane_busy(l, t0, t1), brute_busy(l->ev, l->n, t0, t1),
			     "busy [%ld,%ld)", (long)t0, (long)t1);
		size_t ls = 0;
		while (ls < l->n && l->ev[ls].start_ns < t0)
			ls++;
		cr_assert_eq(gt_store_lane_lower_start(l, t0), ls, "first start >= %ld", (long)t0);
		size_t first, last;
		gt_store_lane_range(l, t0, t1, &first, &last);
		size_t longest = SIZE_MAX;
		for (size_t i = 0; i < l->n; i++) {
			const struct gt_event *e = &l->ev[i];
			int ov = e->dur_ns ? (e->start_ns < t1 && gt_event_end(e) > t0)
					   : (e->start_ns >= t0 && e->start_ns < t1);
			if (ov) {
				cr_assert(i >= first && i < last, "overlapping event %zu outside range", i);
				if (longest == SIZE_MAX || e->dur_ns > l->ev[longest].dur_ns)
					longest = i;
			}
		}
		struct gt_bucket b;
		gt_store_lane_bucket(l, t0, t1, &b);
		if (t1 > t0 && longest != SIZE_MAX) {
			cr_assert_neq(b.dominant, SIZE_MAX);
			cr_assert_eq(l->ev[b.dominant].dur_ns, l->ev[longest].dur_ns,
				     "dominant is a longest overlapping event");
		}
		/* event at t0: the latest-starting covering event */
		size_t at = gt_store_lane_event_at(l, t0), want = SIZE_MAX;
		for (size_t i = 0; i < l->n; i++) {
			const struct gt_event *e = &l->ev[i];
			if (e->start_ns <= t0 && (gt_event_end(e) > t0 || (e->dur_ns == 0 && e->start_ns == t0)))
				want = i;
		}
		if (want == SIZE_MAX)
			cr_assert_eq(at, SIZE_MAX);
		else
			cr_assert_eq(l->ev[at].start_ns, l->ev[want].start_ns);
	}
}

Test(store, index_matches_brute_force)
{
	struct gt_store *s = gt_store_new();
	uint32_t a = gpu_lane(s, 0, 0, 1), b = gpu_lane(s, 0, 0, 2);
	random_lane(s, a, 1, 400, 0);
	random_lane(s, b, 2, 900, 1);
	cr_assert_eq(gt_store_finish(s), 0);
	check_lane(gt_store_lane_at(s, a));
	check_lane(gt_store_lane_at(s, b));
	cr_assert_eq(gt_store_event_count(s), 1300);
	gt_store_free(s);
}

Test(store, incremental_finish)
{
	struct gt_store *s = gt_store_new();
	uint32_t a = gpu_lane(s, 0, 0, 1);
	for (int i = 0; i < 1000; i++)
		add(s, a, i * 2, 1 + i % 3, 1);
	cr_assert_eq(gt_store_finish(s), 0);
	/* live append in order */
	for (int i = 1000; i < 1400; i++)
		add(s, a, i * 2, 1 + i % 3, 1);
	cr_assert_eq(gt_store_finish(s), 0);
	check_lane(gt_store_lane_at(s, a));
	/* an append out of order forces a full re-sort */
	add(s, a, 5, 100, 2);
	cr_assert_eq(gt_store_finish(s), 0);
	check_lane(gt_store_lane_at(s, a));
	gt_store_free(s);
}

Test(store, buckets_planted)
{
	/* 10 kernels of 60 ns every 100 ns: each 100 ns column is 60 % busy */
	struct gt_store *s = gt_store_new();
	uint32_t a = gpu_lane(s, 0, 0, 1);
	for (int i = 9; i >= 0; i--)
		add(s, a, 1000 + i * 100, 60, (uint32_t)i);
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_bucket b[12];
	gt_store_lane_buckets(gt_store_lane_at(s, a), 900, 100, 12, b);
	cr_assert_eq(b[0].busy_ns, 0);
	cr_assert_eq(b[0].dominant, SIZE_MAX);
	for (int c = 1; c <= 10; c++) {
		cr_assert_eq(b[c].busy_ns, 60);
		cr_assert_eq(b[c].count, 1);
		cr_assert_eq(gt_store_lane_at(s, a)->ev[b[c].dominant].name, (uint32_t)(c - 1));
	}
	cr_assert_eq(b[11].busy_ns, 0);
	/* one column over everything: 600 ns busy, 10 events */
	struct gt_bucket all;
	gt_store_lane_bucket(gt_store_lane_at(s, a), 0, 5000, &all);
	cr_assert_eq(all.busy_ns, 600);
	cr_assert_eq(all.count, 10);
	cr_assert_eq(gt_store_t_min(s), 1000);
	cr_assert_eq(gt_store_t_max(s), 1960);
	gt_store_free(s);
}

Test(store, next_prev_by_name)
{
	struct gt_store *s = gt_store_new();
	uint32_t a = gpu_lane(s, 0, 0, 1);
	for (int i = 0; i < 50; i++)
		add(s, a, i * 10, 5, (uint32_t)(i % 3));
	gt_store_finish(s);
	const struct gt_lane *l = gt_store_lane_at(s, a);
	size_t i = gt_store_lane_next_name(l, SIZE_MAX, 2);
	cr_assert_eq(l->ev[i].start_ns, 20);
	i = gt_store_lane_next_name(l, i, 2);
	cr_assert_eq(l->ev[i].start_ns, 50);
	i = gt_store_lane_prev_name(l, SIZE_MAX, 0);
	cr_assert_eq(l->ev[i].start_ns, 480);
	cr_assert_eq(gt_store_lane_next_name(l, SIZE_MAX, 9), SIZE_MAX);
	gt_store_free(s);
}

Test(store, correlation)
{
	struct gt_store *s = gt_store_new();
	uint32_t g = gpu_lane(s, 0, 0, 7), g1 = gpu_lane(s, 1, 0, 7);
	struct gt_lane_key hk = { .type = GT_LANE_HOST, .device = -1, .pid = 1, .id = 1 };
	uint32_t h = gt_store_lane(s, &hk);
	uint32_t n = gt_store_intern_cstr(s, "cudaLaunchKernel");
	for (uint32_t c = 1; c <= 100; c++) {
		struct gt_event rt = { .start_ns = c * 100, .dur_ns = 5, .lane = h, .name = n,
				       .kind = GT_EV_RUNTIME, .corr = c };
		gt_store_add(s, &rt);
		struct gt_event k = { .start_ns = c * 100 + 20, .dur_ns = 50, .lane = g,
				      .kind = GT_EV_KERNEL, .corr = c };
		gt_store_add(s, &k);
		/* same correlation id on another rank must not be confused */
		k.lane = g1;
		k.start_ns += 1;
		gt_store_add(s, &k);
	}
	gt_store_finish(s);
	struct gt_ref r, p;
	cr_assert_eq(gt_store_corr_find(s, 0, 42, 1, &r), 0);
	cr_assert_eq(r.lane, g);
	cr_assert_eq(gt_store_ev(s, r)->start_ns, 4220);
	cr_assert_eq(gt_store_corr_peer(s, r, &p), 0);
	cr_assert_eq(p.lane, h);
	cr_assert_eq(gt_store_ev(s, p)->start_ns, 4200);
	cr_assert_eq(gt_store_corr_find(s, 1, 42, 1, &r), 0);
	cr_assert_eq(gt_store_ev(s, r)->start_ns, 4221);
	cr_assert_eq(gt_store_corr_find(s, 0, 4242, 1, &r), -ENOENT);
	/* an unknown rank (-1) looks up rank 0 */
	cr_assert_eq(gt_store_corr_find(s, -1, 42, 1, &r), 0);
	cr_assert_eq(r.lane, g);
	gt_store_free(s);
}

/* the change id (the steps cache's key): differs between stores, also one
 * made where a freed one was, and changes at every add, finish and shift */
Test(store, change_id)
{
	struct gt_store *s = gt_store_new();
	uint32_t a = gpu_lane(s, 0, 0, 1);
	uint64_t c0 = gt_store_change_id(s);
	cr_assert_eq(gt_store_change_id(s), c0, "stable while nothing changes");
	add(s, a, 10, 5, 1);
	uint64_t c1 = gt_store_change_id(s);
	cr_assert_neq(c1, c0);
	cr_assert_eq(gt_store_finish(s), 0);
	uint64_t c2 = gt_store_change_id(s);
	cr_assert_neq(c2, c1);
	cr_assert_eq(gt_store_shift_rank(s, 0, 100), 0);
	cr_assert_neq(gt_store_change_id(s), c2, "a time shift changes the events");
	uint64_t last = gt_store_change_id(s);
	gt_store_free(s);
	struct gt_store *t = gt_store_new();
	uint32_t b = gpu_lane(t, 0, 0, 1);
	add(t, b, 10, 5, 1);
	cr_assert_eq(gt_store_finish(t), 0);
	add(t, b, 20, 5, 1);
	cr_assert_eq(gt_store_finish(t), 0);
	cr_assert_neq(gt_store_change_id(t), last, "a new store (perhaps at the same address)");
	gt_store_free(t);
}
