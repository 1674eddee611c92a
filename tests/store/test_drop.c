/*
 * gt_store_drop_before (a live store with --ring): a store cut at t must
 * answer every query exactly as a store built fresh from only the events
 * the cut keeps (those starting at or after t, and a counter's last sample
 * before t, moved to t), chosen here from the planted list by a plain
 * filter; appends
 * after a cut index incrementally to the same answers; a lane that would
 * drop less than 1/keep_div of what it keeps is left whole; the same holds
 * with the lanes in a budget's cache file.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/store.h"

static uint64_t rng;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

enum { L_GPU, L_HOST, L_CTR, L_OLD, L_NEW, NLANES };

static const struct gt_lane_key keys[NLANES] = {
	{ .type = GT_LANE_GPU, .rank = 0, .device = 0, .id = 7 },
	{ .type = GT_LANE_HOST, .rank = 0, .device = -1, .pid = 100, .id = 100 },
	{ .type = GT_LANE_COUNTER, .rank = 0, .device = 0, .pid = 100, .id = 1 },
	{ .type = GT_LANE_GPU, .rank = 0, .device = 1, .id = 9 },   /* all before the cut */
	{ .type = GT_LANE_GPU, .rank = 1, .device = 0, .id = 7 },   /* all after it */
};

struct plant {
	struct gt_event *ev;
	size_t n, cap;
};

static void put(struct plant *p, const struct gt_event *e)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 1024;
		p->ev = realloc(p->ev, p->cap * sizeof(*p->ev));
		cr_assert_not_null(p->ev);
	}
	p->ev[p->n++] = *e;
}

/* [t0, t1): kernels on L_GPU launched by runtime calls on L_HOST inside
 * nested host ranges, counter samples, and the two one-sided lanes */
static void plant(struct plant *p, int64_t t0, int64_t t1, uint32_t *corr)
{
	for (int64_t t = t0; t < t1;) {
		/* a host range of 3-40 us with 1-6 launches inside, nested once */
		int64_t len = 3000 + (int64_t)(next() % 37000);
		struct gt_event r = { .start_ns = t, .dur_ns = len, .lane = L_HOST,
				      .kind = GT_EV_CPU_OP, .name = 1 };
		put(p, &r);
		struct gt_event in = r;
		in.start_ns = t + 100;
		in.dur_ns = len / 2;
		in.name = 2;
		put(p, &in);
		int nl = 1 + (int)(next() % 6);
		for (int i = 0; i < nl; i++) {
			int64_t at = t + 200 + (int64_t)i * (len / 2 - 300) / nl;
			uint32_t c = ++*corr;
			struct gt_event call = { .start_ns = at, .dur_ns = 50, .lane = L_HOST,
						 .kind = GT_EV_RUNTIME, .name = 3, .corr = c };
			put(p, &call);
			struct gt_event k = { .start_ns = at + 1000 + (int64_t)(next() % 3000),
					      .dur_ns = 500 + (int64_t)(next() % 8000), .lane = L_GPU,
					      .kind = GT_EV_KERNEL, .name = 4 + (uint32_t)(next() % 3),
					      .corr = c };
			put(p, &k);
		}
		if (next() % 3 == 0) {
			struct gt_event c = { .start_ns = t + 7, .lane = L_CTR, .kind = GT_EV_COUNTER,
					      .name = 8 };
			double v = (double)(next() % 1000);
			memcpy(&c.arg, &v, sizeof(v));
			put(p, &c);
		}
		t += len + (int64_t)(next() % 5000);
	}
}

static struct gt_store *store_with(const struct gt_event *ev, size_t n, size_t budget)
{
	struct gt_store *s = gt_store_new();
	cr_assert_not_null(s);
	if (budget)
		cr_assert_eq(gt_store_set_budget(s, budget), 0);
	for (int i = 0; i < NLANES; i++)
		cr_assert_eq(gt_store_lane(s, &keys[i]), (uint32_t)i);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(gt_store_add(s, &ev[i]), 0);
	cr_assert_eq(gt_store_finish(s), 0);
	return s;
}

/* the events of p a cut at t keeps (a plain filter over the list): those
 * starting at or after t, and the counter's last sample before t moved to t */
static size_t kept(const struct plant *p, int64_t t, struct gt_event *out)
{
	size_t m = 0;
	/* a counter's last sample before t: the latest start (ties: the last
	 * added, as the store's stable sort orders them) */
	size_t last = SIZE_MAX;
	for (size_t i = 0; i < p->n; i++)
		if (p->ev[i].lane == L_CTR && p->ev[i].start_ns < t &&
		    (last == SIZE_MAX || p->ev[i].start_ns >= p->ev[last].start_ns))
			last = i;
	for (size_t i = 0; i < p->n; i++)
		if (p->ev[i].start_ns >= t || i == last) {
			out[m] = p->ev[i];
			if (i == last)
				out[m].start_ns = t;   /* the value from t on */
			m++;
		}
	return m;
}

/* a and b answer alike: events, spans, busy time, buckets, event at, the
 * correlation both ways */
static void same(const struct gt_store *a, const struct gt_store *b, const char *when)
{
	cr_assert_eq(gt_store_event_count(a), gt_store_event_count(b), "%s: %zu events, fresh %zu",
		     when, gt_store_event_count(a), gt_store_event_count(b));
	cr_assert_eq(gt_store_t_min(a), gt_store_t_min(b), "%s", when);
	cr_assert_eq(gt_store_t_max(a), gt_store_t_max(b), "%s", when);
	int64_t lo = gt_store_t_min(b) - 5000, hi = gt_store_t_max(b) + 5000;
	for (uint32_t li = 0; li < NLANES; li++) {
		const struct gt_lane *la = gt_store_lane_at(a, li), *lb = gt_store_lane_at(b, li);
		cr_assert_eq(la->n, lb->n, "%s: lane %u: %zu events, fresh %zu", when, li, la->n, lb->n);
		if (la->n)
			cr_assert_eq(memcmp(la->ev, lb->ev, la->n * sizeof(*la->ev)), 0, "%s: lane %u", when, li);
		cr_assert_eq(la->busy_total_ns, lb->busy_total_ns, "%s: lane %u busy", when, li);
		for (int q = 0; q < 300; q++) {
			int64_t t0 = lo + (int64_t)(next() % (uint64_t)(hi - lo));
			int64_t w = 1 + (int64_t)(next() % 200000);
			cr_assert_eq(gt_store_lane_busy(la, t0, t0 + w), gt_store_lane_busy(lb, t0, t0 + w),
				     "%s: lane %u busy [%lld, +%lld)", when, li, (long long)t0, (long long)w);
			cr_assert_eq(gt_store_lane_event_at(la, t0), gt_store_lane_event_at(lb, t0),
				     "%s: lane %u event at %lld", when, li, (long long)t0);
			cr_assert_eq(gt_store_lane_lower_start(la, t0), gt_store_lane_lower_start(lb, t0));
			struct gt_bucket ba[40], bb[40];
			gt_store_lane_buckets(la, t0, w / 40 + 1, 40, ba);
			gt_store_lane_buckets(lb, t0, w / 40 + 1, 40, bb);
			for (int c = 0; c < 40; c++) {
				cr_assert_eq(ba[c].busy_ns, bb[c].busy_ns, "%s: lane %u column %d", when, li, c);
				cr_assert_eq(ba[c].dominant, bb[c].dominant, "%s: lane %u column %d", when, li, c);
				cr_assert_eq(ba[c].count, bb[c].count, "%s: lane %u column %d", when, li, c);
			}
		}
	}
	/* every launch of b finds the same kernel in a (and back) */
	const struct gt_lane *h = gt_store_lane_at(b, L_HOST);
	for (size_t i = 0; i < h->n; i++) {
		if (!h->ev[i].corr)
			continue;
		struct gt_ref ra, rb, pa, pb;
		int ea = gt_store_corr_find(a, 0, h->ev[i].corr, 1, &ra);
		int eb = gt_store_corr_find(b, 0, h->ev[i].corr, 1, &rb);
		cr_assert_eq(ea, eb, "%s: corr %u", when, h->ev[i].corr);
		if (!ea) {
			cr_assert(ra.lane == rb.lane && ra.idx == rb.idx, "%s: corr %u", when, h->ev[i].corr);
			cr_assert_eq(gt_store_corr_peer(a, ra, &pa), 0);
			cr_assert_eq(gt_store_corr_peer(b, rb, &pb), 0);
			cr_assert(pa.lane == pb.lane && pa.idx == pb.idx);
		}
	}
}

static void cut_and_grow(size_t budget)
{
	rng = 0x9e3779b97f4a7c15ull;
	struct plant p = { 0 };
	uint32_t corr = 0;
	plant(&p, 1000000, 60000000, &corr);
	for (int i = 0; i < 5; i++) {   /* L_OLD: before any cut; L_NEW: after */
		struct gt_event o = { .start_ns = 2000000 + i * 1000, .dur_ns = 100, .lane = L_OLD,
				      .kind = GT_EV_KERNEL, .name = 4 };
		put(&p, &o);
		o.start_ns = 58000000 + i * 1000;
		o.lane = L_NEW;
		put(&p, &o);
	}
	struct gt_store *a = store_with(p.ev, p.n, budget);
	size_t n_all = gt_store_event_count(a);
	cr_assert_eq(n_all, p.n);

	/* the cut: half of the capture */
	const int64_t t = 30000017;
	struct gt_event *k = malloc(p.n * sizeof(*k));
	size_t nk = kept(&p, t, k);
	uint64_t dropped = 0;
	int64_t t_first = gt_store_t_min(a);
	cr_assert_eq(gt_store_t_origin(a), t_first);
	cr_assert_eq(gt_store_drop_before(a, t, 0, &dropped), 0);
	/* relative times keep their zero: the capture's first start */
	cr_assert_gt(gt_store_t_min(a), t_first);
	cr_assert_eq(gt_store_t_origin(a), t_first);
	cr_assert_eq(dropped, p.n - nk, "dropped %llu, the filter %zu", (unsigned long long)dropped,
		     p.n - nk);
	int64_t last;
	cr_assert_eq(gt_store_dropped(a, &last), dropped);
	cr_assert_lt(last, t);
	cr_assert_eq(gt_store_lane_at(a, L_OLD)->n, 0);
	cr_assert_eq(gt_store_lane_at(a, L_OLD)->dropped, 5);
	cr_assert_eq(gt_store_lane_at(a, L_NEW)->dropped, 0);
	struct gt_store *b = store_with(k, nk, 0);
	same(a, b, "after the cut");
	gt_store_free(b);

	/* the capture goes on: appended lanes index from where they were */
	struct plant q = { 0 };
	plant(&q, 60000000, 90000000, &corr);
	for (size_t i = 0; i < q.n; i++) {
		cr_assert_eq(gt_store_add(a, &q.ev[i]), 0);
		put(&p, &q.ev[i]);
	}
	cr_assert_eq(gt_store_finish(a), 0);
	free(k);
	k = malloc(p.n * sizeof(*k));
	nk = kept(&p, t, k);
	b = store_with(k, nk, 0);
	same(a, b, "grown after the cut");
	cr_assert_eq(gt_store_t_origin(a), t_first);
	gt_store_free(b);

	/* keep_div 2: L_NEW (5 events) at t2 - 2000 would drop 1 and keep 4:
	   left whole; the others drop 28 ms and keep 32: cut.  At t2, L_NEW
	   drops 3 and keeps 2: cut; the others would drop 2 us: left */
	const int64_t t2 = 58002500;
	const struct gt_lane *ln = gt_store_lane_at(a, L_NEW);
	cr_assert_eq(gt_store_lane_lower_start(ln, t2), 3);
	cr_assert_eq(gt_store_drop_before(a, t2 - 2000, 2, &dropped), 0);
	cr_assert_eq(ln->n, 5);
	cr_assert_eq(ln->dropped, 0);
	cr_assert_eq(gt_store_drop_before(a, t2, 2, &dropped), 0);
	cr_assert_eq(dropped, 3);
	cr_assert_eq(ln->n, 2);
	cr_assert_eq(ln->dropped, 3);
	free(k);
	k = malloc(p.n * sizeof(*k));
	nk = kept(&p, t2 - 2000, k);
	size_t m = 0;
	for (size_t i = 0; i < nk; i++)
		if (k[i].lane != L_NEW || k[i].start_ns >= t2)
			k[m++] = k[i];
	b = store_with(k, m, 0);
	same(a, b, "cut with keep_div 2");
	gt_store_free(b);
	free(k);
	free(p.ev);
	free(q.ev);
	gt_store_free(a);
}

Test(drop, cut_store_equals_a_fresh_one)
{
	cut_and_grow(0);
}

Test(drop, cut_store_in_the_cache_file_equals_a_fresh_one)
{
	/* 64 KiB: every lane array larger than a page lives in the cache file */
	cut_and_grow(64 << 10);
}

Test(drop, depth_index_of_a_cut_lane_is_built_again)
{
	rng = 12345;
	struct plant p = { 0 };
	uint32_t corr = 0;
	plant(&p, 0, 5000000, &corr);
	struct gt_store *a = store_with(p.ev, p.n, 0);
	const struct gt_lane *h = gt_store_lane_at(a, L_HOST);
	struct gt_depth *d;
	cr_assert_eq(gt_store_depth_build(h, &d), 0);
	cr_assert_eq(gt_store_drop_before(a, 2500001, 0, NULL), 0);
	cr_assert_gt(h->dropped, 0);
	/* the same count by chance must not pass for "unchanged" */
	cr_assert_eq(gt_store_depth_extend(d, h), -EAGAIN);
	gt_store_depth_free(d);
	struct gt_event *k = malloc(p.n * sizeof(*k));
	size_t nk = kept(&p, 2500001, k);
	struct gt_store *b = store_with(k, nk, 0);
	struct gt_depth *da, *db;
	cr_assert_eq(gt_store_depth_build(h, &da), 0);
	cr_assert_eq(gt_store_depth_build(gt_store_lane_at(b, L_HOST), &db), 0);
	cr_assert_eq(da->nrows, db->nrows);
	for (size_t i = 0; i < h->n; i++)
		cr_assert_eq(gt_store_depth_of(da, h, i), gt_store_depth_of(db, gt_store_lane_at(b, L_HOST), i));
	gt_store_depth_free(da);
	gt_store_depth_free(db);
	free(k);
	free(p.ev);
	gt_store_free(a);
	gt_store_free(b);
}

Test(drop, depth_index_sees_a_cut_that_keeps_the_count_and_the_last_event)
{
	/* events at 0..9 and one at 100; cut before 5 (5 dropped), then 5
	   copies of the last event: the same count, the same last event, yet
	   every index moved */
	struct gt_store *s = gt_store_new();
	cr_assert_eq(gt_store_lane(s, &keys[L_HOST]), 0);
	struct gt_event e = { .dur_ns = 1, .lane = 0, .kind = GT_EV_CPU_OP, .name = 1 };
	for (int i = 0; i < 10; i++) {
		e.start_ns = i;
		cr_assert_eq(gt_store_add(s, &e), 0);
	}
	e.start_ns = 100;
	cr_assert_eq(gt_store_add(s, &e), 0);
	cr_assert_eq(gt_store_finish(s), 0);
	const struct gt_lane *l = gt_store_lane_at(s, 0);
	struct gt_depth *d;
	cr_assert_eq(gt_store_depth_build(l, &d), 0);
	cr_assert_eq(gt_store_drop_before(s, 5, 0, NULL), 0);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(gt_store_add(s, &e), 0);
	cr_assert_eq(gt_store_finish(s), 0);
	cr_assert_eq(l->n, 11);
	cr_assert_eq(gt_store_depth_extend(d, l), -EAGAIN);
	gt_store_depth_free(d);
	gt_store_free(s);
}

Test(drop, exact_cut_moves_a_counters_one_sample_before_it)
{
	/* a counter with one sample before t (value 7 at 100) and one after
	   (9 at 900): a periodic cut (keep_div 2) leaves it; a cut to the
	   window exactly (keep_div 0) moves the first to t, nothing dropped */
	struct gt_store *s = gt_store_new();
	cr_assert_eq(gt_store_lane(s, &keys[L_CTR]), 0);
	struct gt_event c = { .start_ns = 100, .lane = 0, .kind = GT_EV_COUNTER, .name = 8 };
	double v = 7;
	memcpy(&c.arg, &v, sizeof(v));
	cr_assert_eq(gt_store_add(s, &c), 0);
	c.start_ns = 900;
	v = 9;
	memcpy(&c.arg, &v, sizeof(v));
	cr_assert_eq(gt_store_add(s, &c), 0);
	cr_assert_eq(gt_store_finish(s), 0);
	const struct gt_lane *l = gt_store_lane_at(s, 0);
	uint64_t d = 1;
	cr_assert_eq(gt_store_drop_before(s, 500, 2, &d), 0);
	cr_assert_eq(d, 0);
	cr_assert_eq(l->ev[0].start_ns, 100);
	cr_assert_eq(gt_store_drop_before(s, 500, 0, &d), 0);
	cr_assert_eq(d, 0);
	cr_assert_eq(l->n, 2);
	cr_assert_eq(l->dropped, 0);
	cr_assert_eq(l->ev[0].start_ns, 500);
	memcpy(&v, &l->ev[0].arg, sizeof(v));
	cr_assert_eq(v, 7);
	cr_assert_eq(gt_store_t_min(s), 500);
	cr_assert_eq(gt_store_t_origin(s), 100);
	cr_assert_eq(gt_store_lane_lower_start(l, 500), 0);   /* the index knows it moved */
	cr_assert_eq(gt_store_lane_lower_start(l, 501), 1);
	gt_store_free(s);
}
