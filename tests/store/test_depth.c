/*
 * Depth index tests (core/store/depth.c).  Truth comes from brute force on
 * small integer time axes: depth = number of enclosing events (properly
 * nested lanes), busy = covered ticks of the row counted one by one, the
 * longest overlapping event and the covering event by scanning every event
 * of the row.  Lanes are random properly-nested trees and random partially
 * overlapping intervals, plus the edge cases.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/store.h"

#define AXIS 3000

static uint32_t host_lane(struct gt_store *s)
{
	struct gt_lane_key k = { .type = GT_LANE_HOST, .rank = 0, .device = -1, .pid = 1, .id = 7 };
	return gt_store_lane(s, &k);
}

static void add(struct gt_store *s, uint32_t lane, int64_t t, int64_t d)
{
	struct gt_event e = { .start_ns = t, .dur_ns = d, .lane = lane, .kind = GT_EV_CPU_OP };
	cr_assert_eq(gt_store_add(s, &e), 0);
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
	cr_assert_eq(gt_store_depth_build(l, &d), 0);
	cr_assert_eq(d->n, l->n);
	size_t total = 0;
	for (int j = 0; j < d->nrows; j++)
		total += d->row[j].n;
	cr_assert_eq(total, l->n);
	/* position lookup and rows sorted by start */
	for (size_t i = 0; i < l->n; i++) {
		size_t p = gt_store_depth_pos(d, l, i);
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
			gt_store_depth_buckets(d, l, j, t0, dt, 64, out);
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
				cr_assert_eq(gt_store_depth_busy(d, l, j, a, b), busy);
				cr_assert_eq(out[c].count, cnt, "depth %d [%ld,%ld): count %u, truth %u",
					     j, (long)a, (long)b, out[c].count, cnt);
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
			size_t got = gt_store_depth_event_at(d, l, j, t);
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
	cr_assert(gt_store_depth_bytes(d) < l->n * 40 + sizeof(*d) + 64, "%zu bytes for %zu events", gt_store_depth_bytes(d), l->n);
	gt_store_depth_free(d);
}

static struct gt_store *finished(struct gt_store *s)
{
	cr_assert_eq(gt_store_finish(s), 0);
	return s;
}

Test(depth, random_nested)
{
	for (int seed = 1; seed <= 12; seed++) {
		srand((unsigned)seed);
		struct gt_store *s = gt_store_new();
		uint32_t lane = host_lane(s);
		gen_nested(s, lane, 0, AXIS, 0);
		finished(s);
		check_lane(gt_store_lane_at(s, lane), 1);
		gt_store_free(s);
	}
}

Test(depth, random_overlapping)
{
	for (int seed = 1; seed <= 12; seed++) {
		srand((unsigned)seed * 7919u);
		struct gt_store *s = gt_store_new();
		uint32_t lane = host_lane(s);
		gen_overlap(s, lane, 60 + seed * 20);
		finished(s);
		check_lane(gt_store_lane_at(s, lane), 0);
		gt_store_free(s);
	}
}

Test(depth, deeper_than_the_rows)
{
	/* 45 nested ranges, then random ones inside the innermost: the last
	 * row holds everything from depth 31 on and overlaps */
	srand(5);
	struct gt_store *s = gt_store_new();
	uint32_t lane = host_lane(s);
	for (int i = 0; i < 45; i++)
		add(s, lane, i * 10, AXIS - i * 20);
	for (int i = 0; i < 40; i++)
		add(s, lane, 500 + rand() % 1500, rand() % 300);
	finished(s);
	const struct gt_lane *l = gt_store_lane_at(s, lane);
	check_lane(l, 0);
	struct gt_depth *d;
	cr_assert_eq(gt_store_depth_build(l, &d), 0);
	cr_assert_eq(d->nrows, GT_DEPTH_ROWS);
	cr_assert_neq(d->row[GT_DEPTH_ROWS - 1].cs, NULL);
	/* the busy of the last row is the union: never more than the span */
	cr_assert_leq(gt_store_depth_busy(d, l, GT_DEPTH_ROWS - 1, 0, 100), 100);
	gt_store_depth_free(d);
	gt_store_free(s);
}

Test(depth, empty_lane)
{
	struct gt_store *s = gt_store_new();
	uint32_t lane = host_lane(s);
	finished(s);
	const struct gt_lane *l = gt_store_lane_at(s, lane);
	struct gt_depth *d;
	cr_assert_eq(gt_store_depth_build(l, &d), 0);
	cr_assert_eq(d->nrows, 0);
	struct gt_bucket b[4];
	gt_store_depth_buckets(d, l, 0, 0, 10, 4, b);
	cr_assert_eq(b[2].busy_ns, 0);
	cr_assert_eq(b[2].dominant, SIZE_MAX);
	cr_assert_eq(gt_store_depth_event_at(d, l, 0, 5), SIZE_MAX);
	cr_assert_eq(gt_store_depth_busy(d, l, 0, 0, 100), 0);
	gt_store_depth_free(d);
	gt_store_free(s);
}

Test(depth, one_event)
{
	struct gt_store *s = gt_store_new();
	uint32_t lane = host_lane(s);
	add(s, lane, 100, 50);
	finished(s);
	const struct gt_lane *l = gt_store_lane_at(s, lane);
	check_lane(l, 1);
	struct gt_depth *d;
	cr_assert_eq(gt_store_depth_build(l, &d), 0);
	cr_assert_eq(d->nrows, 1);
	cr_assert_eq(gt_store_depth_event_at(d, l, 0, 100), 0);
	cr_assert_eq(gt_store_depth_event_at(d, l, 0, 149), 0);
	cr_assert_eq(gt_store_depth_event_at(d, l, 0, 150), SIZE_MAX);
	cr_assert_eq(gt_store_depth_busy(d, l, 0, 0, 1000), 50);
	cr_assert_eq(gt_store_depth_busy(d, l, 0, 120, 130), 10);
	gt_store_depth_free(d);
	gt_store_free(s);
}

Test(depth, zero_duration_and_equal_starts)
{
	/* a child added before its parent with the same start; zero-length
	 * events at a start, inside and at an end */
	struct gt_store *s = gt_store_new();
	uint32_t lane = host_lane(s);
	add(s, lane, 10, 5);     /* child */
	add(s, lane, 10, 20);    /* parent, same start */
	add(s, lane, 10, 0);     /* instant at the start: innermost */
	add(s, lane, 30, 0);     /* instant at the parent's end: not inside */
	add(s, lane, 12, 0);     /* instant inside the child */
	add(s, lane, 30, 0);     /* a second instant at the same time */
	finished(s);
	const struct gt_lane *l = gt_store_lane_at(s, lane);
	check_lane(l, 1);
	struct gt_depth *d;
	cr_assert_eq(gt_store_depth_build(l, &d), 0);
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
	gt_store_depth_buckets(d, l, 0, 30, 1, 1, b);
	cr_assert_eq(b[0].count, 2);
	cr_assert_eq(b[0].busy_ns, 0);
	cr_assert_neq(b[0].dominant, SIZE_MAX);
	gt_store_depth_free(d);
	gt_store_free(s);
}

/* the events of a lane in the stack rule's order (start, longer first) */
static int ev_cmp(const void *pa, const void *pb)
{
	const struct gt_event *a = pa, *b = pb;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->dur_ns != b->dur_ns)
		return a->dur_ns > b->dur_ns ? -1 : 1;
	return 0;
}

/* every array of two indexes over the same lane holds the same values */
static void same_index(const struct gt_depth *x, const struct gt_depth *y)
{
	cr_assert_eq(x->n, y->n);
	cr_assert_eq(x->nrows, y->nrows);
	cr_assert_eq(memcmp(x->depth, y->depth, x->n), 0);
	for (int j = 0; j < x->nrows; j++) {
		const struct gt_depth_row *a = &x->row[j], *b = &y->row[j];
		cr_assert_eq(a->n, b->n, "row %d: %zu vs %zu", j, a->n, b->n);
		cr_assert_eq(memcmp(a->idx, b->idx, a->n * sizeof(*a->idx)), 0, "row %d idx", j);
		cr_assert_eq(memcmp(a->cum_ns, b->cum_ns, (a->n + 1) * sizeof(int64_t)), 0, "row %d", j);
		cr_assert_eq(a->nb, b->nb);
		cr_assert_eq(memcmp(a->blk_s, b->blk_s, a->nb * sizeof(int64_t)), 0);
		cr_assert_eq(memcmp(a->blk_e, b->blk_e, a->nb * sizeof(int64_t)), 0);
		cr_assert_eq(!a->cs, !b->cs, "row %d clipped in one only", j);
		if (a->cs) {
			cr_assert_eq(memcmp(a->cs, b->cs, a->n * sizeof(int64_t)), 0);
			cr_assert_eq(memcmp(a->ce, b->ce, a->n * sizeof(int64_t)), 0);
		}
		cr_assert_eq(!a->tdep, !b->tdep);
		if (a->tdep)
			cr_assert_eq(memcmp(a->tdep, b->tdep, a->n), 0);
		cr_assert_eq(a->n_lvl, b->n_lvl, "row %d levels", j);
		for (int k = 0; k < a->n_lvl; k++) {
			cr_assert_eq(a->pyr_n[k], b->pyr_n[k]);
			cr_assert_eq(memcmp(a->pyr[k], b->pyr[k], a->pyr_n[k] * sizeof(uint32_t)), 0,
				     "row %d pyramid level %d", j, k);
		}
	}
}

/* a live lane: events arrive in chunks in start order; extending the index
 * chunk by chunk gives the index a full build gives, and the queries agree */
static void extend_like_live(void (*gen)(struct gt_store *, uint32_t), int nested)
{
	struct gt_store *src = gt_store_new();
	uint32_t sl = host_lane(src);
	gen(src, sl);
	finished(src);
	const struct gt_lane *L = gt_store_lane_at(src, sl);
	size_t n = L->n;
	struct gt_event *all = malloc(n * sizeof(*all));
	memcpy(all, L->ev, n * sizeof(*all));
	qsort(all, n, sizeof(*all), ev_cmp);
	struct gt_store *s = gt_store_new();
	uint32_t lane = host_lane(s);
	struct gt_depth *d = NULL;
	size_t at = 0;
	int extended = 0;
	while (at < n) {
		size_t k = 1 + (size_t)rand() % (n / 5 + 1);
		for (; k-- && at < n; at++) {
			struct gt_event e = all[at];
			e.lane = lane;
			cr_assert_eq(gt_store_add(s, &e), 0);
		}
		finished(s);
		const struct gt_lane *l = gt_store_lane_at(s, lane);
		if (!d) {
			cr_assert_eq(gt_store_depth_build(l, &d), 0);
			continue;
		}
		cr_assert_eq(gt_store_depth_extend(d, l), 0, "in-order events not taken");
		extended++;
		struct gt_depth *f;
		cr_assert_eq(gt_store_depth_build(l, &f), 0);
		same_index(d, f);
		for (size_t i = 0; i < l->n; i += 7)
			cr_assert_eq(gt_store_depth_of(d, l, i), gt_store_depth_of(f, l, i));
		gt_store_depth_free(f);
	}
	cr_assert_gt(extended, 1);
	check_lane(gt_store_lane_at(s, lane), nested);
	gt_store_depth_free(d);
	gt_store_free(s);
	gt_store_free(src);
	free(all);
}

static void gen_tree(struct gt_store *s, uint32_t lane)
{
	gen_nested(s, lane, 0, AXIS, 0);
}

static void gen_random(struct gt_store *s, uint32_t lane)
{
	gen_overlap(s, lane, 300);
}

static void gen_deep(struct gt_store *s, uint32_t lane)
{
	for (int i = 0; i < 45; i++)
		add(s, lane, i * 10, AXIS - i * 20);
	gen_overlap(s, lane, 100);
}

Test(depth, extend_equals_full_build)
{
	for (int seed = 1; seed <= 6; seed++) {
		srand((unsigned)seed * 31u);
		extend_like_live(gen_tree, 1);
		extend_like_live(gen_random, 0);
		extend_like_live(gen_deep, 0);
	}
}

Test(depth, extend_refuses_a_resorted_lane)
{
	struct gt_store *s = gt_store_new();
	uint32_t lane = host_lane(s);
	add(s, lane, 100, 50);
	add(s, lane, 200, 50);
	finished(s);
	struct gt_depth *d;
	cr_assert_eq(gt_store_depth_build(gt_store_lane_at(s, lane), &d), 0);
	cr_assert_eq(gt_store_depth_extend(d, gt_store_lane_at(s, lane)), 0);   /* nothing new */
	add(s, lane, 120, 10);   /* earlier than the last: the lane is sorted again */
	finished(s);
	cr_assert_eq(gt_store_depth_extend(d, gt_store_lane_at(s, lane)), -EAGAIN);
	gt_store_depth_free(d);
	/* same start as the last but longer: it would have come first */
	cr_assert_eq(gt_store_depth_build(gt_store_lane_at(s, lane), &d), 0);
	add(s, lane, 200, 80);
	finished(s);
	cr_assert_eq(gt_store_depth_extend(d, gt_store_lane_at(s, lane)), -EAGAIN);
	gt_store_depth_free(d);
	gt_store_free(s);
}

/* lane index of the event starting at t with duration dur */
static size_t find_ev(const struct gt_lane *l, int64_t t, int64_t dur)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->ev[i].start_ns == t && l->ev[i].dur_ns == dur)
			return i;
	cr_assert_fail("no event at %ld dur %ld", (long)t, (long)dur);
	return SIZE_MAX;
}

Test(depth, true_depth_and_parent_below_the_last_row)
{
	/* 45 properly nested ranges: range k starts at 10 k and is at depth k;
	 * its parent is range k - 1 (planted) */
	struct gt_store *s = gt_store_new();
	uint32_t lane = host_lane(s);
	for (int k = 0; k < 45; k++)
		add(s, lane, k * 10, 10000 - k * 20);
	finished(s);
	const struct gt_lane *l = gt_store_lane_at(s, lane);
	struct gt_depth *d;
	cr_assert_eq(gt_store_depth_build(l, &d), 0);
	for (int k = 0; k < 45; k++) {
		size_t i = find_ev(l, k * 10, 10000 - k * 20);
		cr_assert_eq(gt_store_depth_of(d, l, i), k);
		cr_assert_eq(d->depth[i], k < GT_DEPTH_ROWS - 1 ? k : GT_DEPTH_ROWS - 1);
		int inside = -1;
		size_t p = gt_store_depth_parent(d, l, i, &inside);
		if (!k) {
			cr_assert_eq(p, SIZE_MAX);
			continue;
		}
		cr_assert_neq(p, SIZE_MAX, "range %d: no parent", k);
		cr_assert_eq(l->ev[p].start_ns, (k - 1) * 10, "range %d: parent starts at %ld", k,
			     (long)l->ev[p].start_ns);
		cr_assert_eq(inside, 1);
	}
	gt_store_depth_free(d);
	gt_store_free(s);
}

Test(depth, parent_of_a_partly_overlapping_range)
{
	struct gt_store *s = gt_store_new();
	uint32_t lane = host_lane(s);
	add(s, lane, 0, 100);    /* A */
	add(s, lane, 50, 100);   /* B [50, 150): overlaps A only partly */
	add(s, lane, 60, 10);    /* C inside B */
	add(s, lane, 120, 10);   /* D inside B, after A ended */
	add(s, lane, 200, 100);  /* P */
	add(s, lane, 210, 50);   /* E [210, 260) inside P */
	add(s, lane, 250, 40);   /* F [250, 290): overlaps E, inside P */
	finished(s);
	const struct gt_lane *l = gt_store_lane_at(s, lane);
	struct gt_depth *d;
	cr_assert_eq(gt_store_depth_build(l, &d), 0);
	int in;
	size_t b = find_ev(l, 50, 100), a = find_ev(l, 0, 100), p = find_ev(l, 200, 100);
	cr_assert_eq(gt_store_depth_parent(d, l, b, &in), a);
	cr_assert_eq(in, 0, "B only overlaps A");
	cr_assert_eq(gt_store_depth_parent(d, l, find_ev(l, 60, 10), &in), b);
	cr_assert_eq(in, 1);
	cr_assert_eq(gt_store_depth_parent(d, l, find_ev(l, 120, 10), &in), b);
	cr_assert_eq(in, 1);
	cr_assert_eq(gt_store_depth_of(d, l, find_ev(l, 250, 40)), 2);
	cr_assert_eq(gt_store_depth_parent(d, l, find_ev(l, 250, 40), &in), p);
	cr_assert_eq(in, 1, "F is inside P, not inside E");
	gt_store_depth_free(d);
	gt_store_free(s);
}

Test(depth, merged_row_column_at_the_end_of_its_container)
{
	/* Y = the range at depth 31, [310, 1000); its children at depth 32
	 * are clipped to Y's end on the merged row; a column starting at 1000
	 * overlaps none of them */
	struct gt_store *s = gt_store_new();
	uint32_t lane = host_lane(s);
	for (int k = 0; k < 32; k++)
		add(s, lane, k * 10, 2000 - k * 10 - (k == 31 ? 690 - 10 * 31 + 310 : 0));
	finished(s);
	const struct gt_lane *l0 = gt_store_lane_at(s, lane);
	size_t y = SIZE_MAX;
	for (size_t i = 0; i < l0->n; i++)
		if (l0->ev[i].start_ns == 310)
			y = i;
	int64_t yend = gt_event_end(&l0->ev[y]);
	add(s, lane, 400, 100);
	add(s, lane, 600, 300);
	finished(s);
	const struct gt_lane *l = gt_store_lane_at(s, lane);
	struct gt_depth *d;
	cr_assert_eq(gt_store_depth_build(l, &d), 0);
	int last = GT_DEPTH_ROWS - 1;
	cr_assert_eq(d->nrows, GT_DEPTH_ROWS);
	struct gt_bucket b[3];
	gt_store_depth_buckets(d, l, last, yend, 5, 3, b);
	for (int c = 0; c < 3; c++)
		if (b[c].dominant != SIZE_MAX) {
			const struct gt_event *e = &l->ev[b[c].dominant];
			cr_assert(overlaps(e, yend + 5 * c, yend + 5 * c + 5),
				  "column at %ld reports [%ld, %ld)", (long)(yend + 5 * c),
				  (long)e->start_ns, (long)gt_event_end(e));
		}
	size_t f, la;
	gt_store_depth_range(d, l, last, yend, yend + 10, &f, &la);
	for (size_t k = f; k < la; k++)
		cr_assert(overlaps(&l->ev[d->row[last].idx[k]], yend, yend + 10));
	gt_store_depth_free(d);
	gt_store_free(s);
}
