/*
 * Depth index tests (core/store/depth.c).  Truth comes from brute force on
 * small integer time axes: depth = number of enclosing events (properly
 * nested lanes), busy = covered ticks of the row counted one by one, the
 * longest overlapping event and the covering event by scanning every event
 * of the row.  Lanes are random properly-nested trees and random partially
 * overlapping intervals, plus the edge cases.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/store.h"

#define AXIS 3000

static uint32_t host_lane(struct gt_store *s)
{
	struct gt_lane_key k = { .type = GT_LANE_HOST, .rank = 0, .device = -1, .pid = 1, .id = 7 };
	return store_lane(s, &k);
}

static void add(struct gt_store *s, uint32_t lane, int64_t t, int64_t d)
{
	struct gt_event e = { .start_ns = t, .dur_ns = d, .lane = lane, .kind = GT_EV_CPU_OP };
	cr_assert_eq(store_add(s, &e), 0);
}

/* a tree of nested ranges inside [t0, t1): children one after another with
 * random gaps, sometimes starting with the parent, ending with it, or empty */
static void gen_nested(struct gt_store *s, uint32_t lane, int64_t t0, int64_t t1, int lvl)
{
	int64_t t = t0;
	while (t < t1 && lvl < 40) {
		if (rand() % 3)
			t += rand() % 4;            /* 0: a child starting where the last ended */
		if (t >= t1)
			break;
		int64_t room = t1 - t;
		int64_t d = rand() % 7 == 0 ? 0 : 1 + rand() % (room < 60 ? room : 60);
		if (rand() % 9 == 0)
			d = room;                   /* ends with the parent */
		add(s, lane, t, d);
		if (d > 1 && lvl < 38)
			gen_nested(s, lane, t, t + d, lvl + 1);
		t += d;
		if (d == 0)
			t++;
	}
}

/* events that overlap partially: random intervals */
static void gen_overlap(struct gt_store *s, uint32_t lane, int n)
{
	for (int i = 0; i < n; i++)
		add(s, lane, rand() % AXIS, rand() % 5 == 0 ? 0 : rand() % 200);
}

static int64_t end_of(const struct gt_event *e)
{
	return e->start_ns + e->dur_ns;
}

/* a before b in the stack rule's order: start, longer first, index */
static int precedes(const struct gt_lane *l, size_t a, size_t b)
{
	const struct gt_event *x = &l->ev[a], *y = &l->ev[b];
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns;
	if (x->dur_ns != y->dur_ns)
		return x->dur_ns > y->dur_ns;
	return a < b;
}

/* e covers tick t */
static int covers(const struct gt_event *e, int64_t t)
{
	return e->start_ns <= t && (end_of(e) > t || (e->dur_ns == 0 && e->start_ns == t));
}

/* e overlaps [a, b) (a zero-length event at a counts) */
static int overlaps(const struct gt_event *e, int64_t a, int64_t b)
{
	return e->start_ns < b && (end_of(e) > a || (e->dur_ns == 0 && e->start_ns >= a));
}

/* every check against brute force; nested: the lane is properly nested */
static void check_lane(const struct gt_lane *l, int nested)
{
	struct gt_depth *d;
	cr_assert_eq(store_depth_build(l, &d), 0);
	cr_assert_eq(d->n, l->n);
	size_t total = 0;
	for (int j = 0; j < d->nrows; j++)
		total += d->row[j].n;
	cr_assert_eq(total, l->n);
	/* position lookup and rows sorted by start */
	for (size_t i = 0; i < l->n; i++) {
		size_t p = store_depth_pos(d, l, i);
		cr_assert_neq(p, SIZE_MAX);
		cr_assert_eq(d->row[d->depth[i]].idx[p], i);
	}
	/* depth: disjoint within a row below the last; nested: the number of
	 * enclosing events (capped) */
	for (size_t i = 0; i < l->n; i++) {
		const struct gt_event *e = &l->ev[i];
		int anc = 0;
		for (size_t k = 0; k < l->n; k++) {
			if (k == i)
				continue;
			const struct gt_event *f = &l->ev[k];
			if (d->depth[k] == d->depth[i] && d->depth[i] < GT_DEPTH_ROWS - 1)
				cr_assert(end_of(e) <= f->start_ns || end_of(f) <= e->start_ns,
					  "events %zu and %zu overlap on depth %d", i, k, d->depth[i]);
			if (precedes(l, k, i) && f->start_ns <= e->start_ns && end_of(f) >= end_of(e) &&
			    end_of(f) > e->start_ns)
				anc++;
		}
		if (nested)
			cr_assert_eq(d->depth[i], anc < GT_DEPTH_ROWS - 1 ? anc : GT_DEPTH_ROWS - 1,
				     "event %zu: depth %d, %d enclosing", i, d->depth[i], anc);
	}
	/* buckets, busy, event at */
	static const int64_t dts[] = { 1, 3, 17, 250 };
	struct gt_bucket out[64];
	for (int j = 0; j < d->nrows; j++) {
		int overlapping = d->row[j].cs != NULL;
		cr_assert(!overlapping || j == GT_DEPTH_ROWS - 1);
		for (size_t q = 0; q < sizeof(dts) / sizeof(dts[0]); q++) {
			int64_t dt = dts[q], t0 = rand() % AXIS - 100;
			store_depth_buckets(d, l, j, t0, dt, 64, out);
			for (int c = 0; c < 64; c++) {
				int64_t a = t0 + c * dt, b = a + dt, busy = 0, best = -1;
				uint32_t cnt = 0;
				for (int64_t t = a; t < b; t++)
					for (size_t k = 0; k < d->row[j].n; k++) {
						const struct gt_event *e = &l->ev[d->row[j].idx[k]];
						if (e->start_ns <= t && t < end_of(e)) {
							busy++;
							break;
						}
					}
				for (size_t k = 0; k < d->row[j].n; k++) {
					const struct gt_event *e = &l->ev[d->row[j].idx[k]];
					if (e->start_ns >= a && e->start_ns < b)
						cnt++;
					if (overlaps(e, a, b) && e->dur_ns > best)
						best = e->dur_ns;
				}
				cr_assert_eq(out[c].busy_ns, busy, "depth %d [%ld,%ld): busy %ld, truth %ld",
					     j, (long)a, (long)b, (long)out[c].busy_ns, (long)busy);
				cr_assert_eq(store_depth_busy(d, l, j, a, b), busy);
				if (overlapping)
					continue;
				cr_assert_eq(out[c].count, cnt);
				if (best < 0) {
					cr_assert_eq(out[c].dominant, SIZE_MAX);
				} else {
					cr_assert_neq(out[c].dominant, SIZE_MAX);
					const struct gt_event *e = &l->ev[out[c].dominant];
					cr_assert_eq(d->depth[out[c].dominant], j);
					cr_assert(overlaps(e, a, b));
					cr_assert_eq(e->dur_ns, best);
				}
			}
		}
		for (int q = 0; q < 200; q++) {
			int64_t t = rand() % (AXIS + 200) - 100;
			size_t got = store_depth_event_at(d, l, j, t);
			int64_t latest = INT64_MIN;
			for (size_t k = 0; k < d->row[j].n; k++) {
				const struct gt_event *e = &l->ev[d->row[j].idx[k]];
				if (covers(e, t) && e->start_ns > latest)
					latest = e->start_ns;
			}
			if (latest == INT64_MIN) {
				cr_assert_eq(got, SIZE_MAX, "depth %d t %ld: found %zu", j, (long)t, got);
			} else {
				cr_assert_neq(got, SIZE_MAX, "depth %d t %ld: none found", j, (long)t);
				cr_assert_eq(d->depth[got], j);
				cr_assert(covers(&l->ev[got], t));
				cr_assert_eq(l->ev[got].start_ns, latest);
			}
		}
	}
	cr_assert(store_depth_bytes(d) < l->n * 40 + sizeof(*d) + 64);
	store_depth_free(d);
}

static struct gt_store *finished(struct gt_store *s)
{
	cr_assert_eq(store_finish(s), 0);
	return s;
}

Test(depth, random_nested)
{
	for (int seed = 1; seed <= 12; seed++) {
		srand((unsigned)seed);
		struct gt_store *s = store_new();
		uint32_t lane = host_lane(s);
		gen_nested(s, lane, 0, AXIS, 0);
		finished(s);
		check_lane(store_lane_at(s, lane), 1);
		store_free(s);
	}
}

Test(depth, random_overlapping)
{
	for (int seed = 1; seed <= 12; seed++) {
		srand((unsigned)seed * 7919u);
		struct gt_store *s = store_new();
		uint32_t lane = host_lane(s);
		gen_overlap(s, lane, 60 + seed * 20);
		finished(s);
		check_lane(store_lane_at(s, lane), 0);
		store_free(s);
	}
}

Test(depth, deeper_than_the_rows)
{
	/* 45 nested ranges, then random ones inside the innermost: the last
	 * row holds everything from depth 31 on and overlaps */
	srand(5);
	struct gt_store *s = store_new();
	uint32_t lane = host_lane(s);
	for (int i = 0; i < 45; i++)
		add(s, lane, i * 10, AXIS - i * 20);
	for (int i = 0; i < 40; i++)
		add(s, lane, 500 + rand() % 1500, rand() % 300);
	finished(s);
	const struct gt_lane *l = store_lane_at(s, lane);
	check_lane(l, 0);
	struct gt_depth *d;
	cr_assert_eq(store_depth_build(l, &d), 0);
	cr_assert_eq(d->nrows, GT_DEPTH_ROWS);
	cr_assert_neq(d->row[GT_DEPTH_ROWS - 1].cs, NULL);
	/* the busy of the last row is the union: never more than the span */
	cr_assert_leq(store_depth_busy(d, l, GT_DEPTH_ROWS - 1, 0, 100), 100);
	store_depth_free(d);
	store_free(s);
}

Test(depth, empty_lane)
{
	struct gt_store *s = store_new();
	uint32_t lane = host_lane(s);
	finished(s);
	const struct gt_lane *l = store_lane_at(s, lane);
	struct gt_depth *d;
	cr_assert_eq(store_depth_build(l, &d), 0);
	cr_assert_eq(d->nrows, 0);
	struct gt_bucket b[4];
	store_depth_buckets(d, l, 0, 0, 10, 4, b);
	cr_assert_eq(b[2].busy_ns, 0);
	cr_assert_eq(b[2].dominant, SIZE_MAX);
	cr_assert_eq(store_depth_event_at(d, l, 0, 5), SIZE_MAX);
	cr_assert_eq(store_depth_busy(d, l, 0, 0, 100), 0);
	store_depth_free(d);
	store_free(s);
}

Test(depth, one_event)
{
	struct gt_store *s = store_new();
	uint32_t lane = host_lane(s);
	add(s, lane, 100, 50);
	finished(s);
	const struct gt_lane *l = store_lane_at(s, lane);
	check_lane(l, 1);
	struct gt_depth *d;
	cr_assert_eq(store_depth_build(l, &d), 0);
	cr_assert_eq(d->nrows, 1);
	cr_assert_eq(store_depth_event_at(d, l, 0, 100), 0);
	cr_assert_eq(store_depth_event_at(d, l, 0, 149), 0);
	cr_assert_eq(store_depth_event_at(d, l, 0, 150), SIZE_MAX);
	cr_assert_eq(store_depth_busy(d, l, 0, 0, 1000), 50);
	cr_assert_eq(store_depth_busy(d, l, 0, 120, 130), 10);
	store_depth_free(d);
	store_free(s);
}

Test(depth, zero_duration_and_equal_starts)
{
	/* a child added before its parent with the same start; zero-length
	 * events at a start, inside and at an end */
	struct gt_store *s = store_new();
	uint32_t lane = host_lane(s);
	add(s, lane, 10, 5);     /* child */
	add(s, lane, 10, 20);    /* parent, same start */
	add(s, lane, 10, 0);     /* instant at the start: innermost */
	add(s, lane, 30, 0);     /* instant at the parent's end: not inside */
	add(s, lane, 12, 0);     /* instant inside the child */
	add(s, lane, 30, 0);     /* a second instant at the same time */
	finished(s);
	const struct gt_lane *l = store_lane_at(s, lane);
	check_lane(l, 1);
	struct gt_depth *d;
	cr_assert_eq(store_depth_build(l, &d), 0);
	for (size_t i = 0; i < l->n; i++) {
		const struct gt_event *e = &l->ev[i];
		int want = e->dur_ns == 20 ? 0 : e->dur_ns == 5 ? 1 :
			   e->start_ns == 30 ? 0 : 2;
		cr_assert_eq(d->depth[i], want, "event at %ld dur %ld: depth %d", (long)e->start_ns,
			     (long)e->dur_ns, d->depth[i]);
	}
	cr_assert_eq(d->nrows, 3);
	/* the instant at 30 shows up as a count in its column */
	struct gt_bucket b[1];
	store_depth_buckets(d, l, 0, 30, 1, 1, b);
	cr_assert_eq(b[0].count, 2);
	cr_assert_eq(b[0].busy_ns, 0);
	cr_assert_neq(b[0].dominant, SIZE_MAX);
	store_depth_free(d);
	store_free(s);
}
