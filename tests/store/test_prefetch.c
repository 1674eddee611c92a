/*
 * The lane's coarse index (one entry per GT_LOD_TOP blocks, where every
 * search now starts) and gt_store_prefetch (issue 16: zoomed-in frames with
 * a cold page cache).  Truth by brute force on an integer time axis: lanes
 * of 30,000 events (8 superblocks), long events running across several
 * superblocks (the running max end the coarse index keeps), nested and
 * zero-length ones, a live append across superblock boundaries; every
 * query is checked against tick-by-tick counts.  The read-ahead is checked
 * with mincore: after the cache file is evicted, a narrow window's
 * prefetch brings in the pages holding its events and little else.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/store.h"
#include "core/store/store_priv.h"

#define T 200000
#define TA (2 * T)   /* the truth's axis: every end is before it */

static uint32_t gpu_lane(struct gt_store *s, int stream)
{
	struct gt_lane_key k = { .type = GT_LANE_GPU, .rank = 0, .device = 0, .id = stream };
	return gt_store_lane(s, &k);
}

static void add(struct gt_store *s, uint32_t lane, int64_t t, int64_t d)
{
	struct gt_event e = { .start_ns = t, .dur_ns = d, .lane = lane, .name = 1,
			      .kind = GT_EV_KERNEL };
	cr_assert_eq(gt_store_add(s, &e), 0);
}

/* n events in [t_lo, t_hi): short ones, every 97th nested-long (up to 600
 * ticks), every 1,999th very long (up to a third of the axis), zero-length
 * ones, repeated starts */
static void random_lane(struct gt_store *s, uint32_t lane, unsigned seed, int n, int64_t t_lo,
			int64_t t_hi)
{
	srand(seed);
	for (int i = 0; i < n; i++) {
		int64_t t = t_lo + rand() % (t_hi - t_lo);
		int64_t d = i % 1999 == 0 ? rand() % (T / 3) : i % 97 == 0 ? rand() % 600 :
			    i % 13 == 0 ? 0 : 1 + rand() % 8;
		add(s, lane, t, d);
		if (i % 101 == 0)
			add(s, lane, t, d / 2);   /* same start, nested */
	}
}

/* per tick of [0, TA), as prefix sums */
struct truth {
	int64_t *cov;     /* cov[t] = ticks of [0, t) covered by some event */
	int32_t *starts;  /* starts[t] = events starting before t */
};

static void truth_of(const struct gt_lane *l, struct truth *tr)
{
	tr->cov = calloc(TA + 1, sizeof(*tr->cov));
	tr->starts = calloc(TA + 1, sizeof(*tr->starts));
	/* a difference array of coverage: independent of the index's sweep */
	int32_t *diff = calloc(TA + 1, sizeof(*diff));
	cr_assert(tr->cov && tr->starts && diff);
	for (size_t i = 0; i < l->n; i++) {
		int64_t a = l->ev[i].start_ns, b = gt_event_end(&l->ev[i]);
		cr_assert(a >= 0 && b < TA);
		if (a < b) {
			diff[a]++;
			diff[b]--;
		}
		tr->starts[a + 1]++;
	}
	int32_t run = 0;
	for (int64_t t = 0; t < TA; t++) {
		run += diff[t];
		tr->cov[t + 1] = tr->cov[t] + (run > 0);
		tr->starts[t + 1] += tr->starts[t];
	}
	free(diff);
}

static int64_t busy_of(const struct truth *tr, int64_t t0, int64_t t1)
{
	t0 = t0 < 0 ? 0 : t0 > TA ? TA : t0;
	t1 = t1 < 0 ? 0 : t1 > TA ? TA : t1;
	return t1 > t0 ? tr->cov[t1] - tr->cov[t0] : 0;
}

/* events starting before t */
static size_t starts_before(const struct truth *tr, int64_t t)
{
	t = t < 0 ? 0 : t > TA ? TA : t;
	return (size_t)tr->starts[t];
}

static void check_lane(const struct gt_lane *l, unsigned seed)
{
	cr_assert(l->n_top > 2, "the lane spans %zu superblocks", l->n_top);
	struct truth tr;
	truth_of(l, &tr);
	cr_assert_eq(l->busy_total_ns, busy_of(&tr, 0, TA));
	/* running max end, for the range's first index */
	int64_t *M = malloc(l->n * sizeof(*M));
	int64_t m = INT64_MIN;
	for (size_t i = 0; i < l->n; i++) {
		if (gt_event_end(&l->ev[i]) > m)
			m = gt_event_end(&l->ev[i]);
		M[i] = m;
	}
	srand(seed);
	for (int q = 0; q < 400; q++) {
		int64_t t0 = rand() % T, w = q % 4 == 0 ? rand() % T : rand() % 2000;
		int64_t t1 = t0 + w;
		cr_assert_eq(gt_store_lane_lower_start(l, t0), starts_before(&tr, t0), "lower_start %ld",
			     (long)t0);
		cr_assert_eq(gt_store_lane_busy(l, t0, t1), busy_of(&tr, t0, t1), "busy [%ld,%ld)",
			     (long)t0, (long)t1);
		size_t first, last, want_first = 0;
		while (want_first < l->n && M[want_first] < t0)
			want_first++;
		gt_store_lane_range(l, t0, t1, &first, &last);
		size_t want_last = starts_before(&tr, t1);
		cr_assert_eq(first, want_first, "range first at %ld", (long)t0);
		cr_assert_eq(last, want_last > want_first ? want_last : want_first, "range last at %ld",
			     (long)t1);
		/* 200 columns: starts and covered ticks per column */
		struct gt_bucket b[200];
		int64_t dt = w / 200 + 1;
		gt_store_lane_buckets(l, t0, dt, 200, b);
		for (int c = 0; c < 200; c++) {
			int64_t a = t0 + c * dt, z = a + dt;
			cr_assert_eq(b[c].busy_ns, busy_of(&tr, a, z), "col %d busy", c);
			cr_assert_eq(b[c].count, (uint32_t)(starts_before(&tr, z) - starts_before(&tr, a)),
				     "col %d count", c);
			/* (a column may get no dominant where a long event started
			 * more than 256 events back: lod.c's documented bound) */
			if (b[c].dominant != SIZE_MAX) {
				const struct gt_event *e = &l->ev[b[c].dominant];
				cr_assert(e->dur_ns ? e->start_ns < z && gt_event_end(e) > a :
						      e->start_ns >= a && e->start_ns < z,
					  "col %d dominant overlaps", c);
			}
		}
		/* innermost event at t0: the latest-starting covering one */
		size_t at = gt_store_lane_event_at(l, t0), want = SIZE_MAX;
		for (size_t i = 0; i < l->n && l->ev[i].start_ns <= t0; i++) {
			const struct gt_event *e = &l->ev[i];
			if (gt_event_end(e) > t0 || (e->dur_ns == 0 && e->start_ns == t0))
				want = i;
		}
		if (want == SIZE_MAX)
			cr_assert_eq(at, SIZE_MAX);
		else
			cr_assert_eq(l->ev[at].start_ns, l->ev[want].start_ns, "event at %ld", (long)t0);
	}
	free(M);
	free(tr.cov);
	free(tr.starts);
}

Test(prefetch, coarse_index_matches_brute_force)
{
	struct gt_store *s = gt_store_new();
	uint32_t a = gpu_lane(s, 1), b = gpu_lane(s, 2);
	random_lane(s, a, 1, 30000, 0, T - 1000);
	random_lane(s, b, 2, 30000, 0, T / 2);
	cr_assert_eq(gt_store_finish(s), 0);
	check_lane(gt_store_lane_at(s, a), 11);
	check_lane(gt_store_lane_at(s, b), 12);
	/* a live append after the lane's last start (indexed from its last
	 * superblock on), then one out of order (re-sorted, rebuilt) */
	random_lane(s, b, 3, 20000, T / 2, T - 1000);
	cr_assert_eq(gt_store_finish(s), 0);
	check_lane(gt_store_lane_at(s, b), 13);
	add(s, b, 5, 70000);
	cr_assert_eq(gt_store_finish(s), 0);
	check_lane(gt_store_lane_at(s, b), 14);
	gt_store_free(s);
}

/* a host thread's shape: a step range enclosing thousands of short calls
 * with gaps between them; the innermost event at a gap is the step, found
 * by walking back over whole blocks (skipped on their longest duration) */
Test(prefetch, event_at_walks_back_to_the_enclosing_range)
{
	struct gt_store *s = gt_store_new();
	uint32_t a = gpu_lane(s, 1);
	for (int64_t st = 0; st < 3; st++) {
		add(s, a, st * 60000, 59000);                 /* the step */
		for (int64_t t = st * 60000 + 10; t < st * 60000 + 59000; t += 10)
			add(s, a, t, t % 7000 == 0 ? 3000 : 5);  /* calls, a longer one now and then */
	}
	cr_assert_eq(gt_store_finish(s), 0);
	const struct gt_lane *l = gt_store_lane_at(s, a);
	srand(5);
	for (int q = 0; q < 3000; q++) {
		int64_t t = rand() % 185000;
		size_t at = gt_store_lane_event_at(l, t), want = SIZE_MAX;
		for (size_t i = 0; i < l->n && l->ev[i].start_ns <= t; i++) {
			const struct gt_event *e = &l->ev[i];
			if (gt_event_end(e) > t || (e->dur_ns == 0 && e->start_ns == t))
				want = i;
		}
		if (want == SIZE_MAX)
			cr_assert_eq(at, SIZE_MAX, "at %ld", (long)t);
		else
			cr_assert(at != SIZE_MAX && l->ev[at].start_ns == l->ev[want].start_ns &&
					  l->ev[at].dur_ns == l->ev[want].dur_ns,
				  "event at %ld", (long)t);
	}
	gt_store_free(s);
}

static int in_core(const void *p)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char v = 0;
	void *a = (void *)((uintptr_t)p & ~(uintptr_t)(pg - 1));
	cr_assert_eq(mincore(a, (size_t)pg, &v), 0);
	return v & 1;
}

Test(prefetch, reads_ahead_the_window_only)
{
	setenv("GTRACE_STORE_TRIM_MS", "1", 1);
	struct gt_store *u = gt_store_new(), *s = gt_store_new();
	cr_assert_eq(gt_store_set_budget(s, 64 << 10), 0);
	uint32_t ids[8];
	for (int i = 0; i < 8; i++) {
		ids[i] = gpu_lane(s, i);
		cr_assert_eq(gpu_lane(u, i), ids[i]);
		random_lane(s, ids[i], 100 + (unsigned)i, 20000, 0, T);
		random_lane(u, ids[i], 100 + (unsigned)i, 20000, 0, T);
	}
	cr_assert_eq(gt_store_finish(s), 0);
	cr_assert_eq(gt_store_finish(u), 0);
	cr_assert_not_null(s->arena, "the cache file is engaged");
	/* no cache file: nothing to do */
	cr_assert_eq(gt_store_prefetch(u, ids, 8, 0, T), 0);
	/* a narrow window: its events come in, a small part of the lanes */
	store_arena_cold(s->arena);
	size_t before = store_arena_incore(s->arena);
	int64_t t0 = T / 2, t1 = T / 2 + 200;
	size_t adv = gt_store_prefetch(s, ids, 8, t0, t1);
	cr_assert(adv > 0);
	size_t lane_bytes = 0;
	for (int i = 0; i < 8; i++)
		lane_bytes += gt_store_lane_at(s, ids[i])->n * sizeof(struct gt_event);
	cr_assert(adv < lane_bytes / 8, "advised %zu bytes of %zu for a 0.1%% window", adv, lane_bytes);
	/* wait for the reads (the page cache holds them, not the process) */
	const struct gt_lane *l0 = gt_store_lane_at(s, ids[3]);
	size_t i0 = gt_store_lane_lower_start(u->lanes[ids[3]], t0);
	cr_assert(i0 < l0->n);
	int ok = 0;
	for (int k = 0; k < 400 && !ok; k++) {
		ok = 1;
		for (int i = 0; i < 8; i++) {
			const struct gt_lane *l = s->lanes[ids[i]];
			size_t j = gt_store_lane_lower_start(u->lanes[ids[i]], t0);
			if (j < l->n)
				ok &= in_core(&l->ev[j]);
		}
		if (!ok)
			nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	}
	cr_assert(ok, "the window's first events are in the page cache after the prefetch");
	size_t after = store_arena_incore(s->arena);
	cr_assert(after - before <= (adv + 8 * 8 * 4096) / 4096 + 64,
		  "%zu pages came in for %zu bytes advised", after - before, adv);
	/* and every answer is the unbounded store's */
	for (int i = 0; i < 8; i++) {
		struct gt_bucket ba[200], bb[200];
		gt_store_lane_buckets(s->lanes[ids[i]], t0, 1, 200, ba);
		gt_store_lane_buckets(u->lanes[ids[i]], t0, 1, 200, bb);
		for (int c = 0; c < 200; c++)
			cr_assert(ba[c].busy_ns == bb[c].busy_ns && ba[c].count == bb[c].count &&
					  ba[c].dominant == bb[c].dominant,
				  "lane %d col %d", i, c);
	}
	/* the whole span: every lane's events are advised */
	store_arena_cold(s->arena);
	adv = gt_store_prefetch(s, ids, 8, 0, T);
	cr_assert(adv >= lane_bytes, "whole span: %zu bytes advised of %zu", adv, lane_bytes);
	gt_store_free(s);
	gt_store_free(u);
}

/* the last event covering t by brute force (what gt_store_lane_event_at
 * answers): the same start and duration (ties are interchangeable) */
static void check_event_at(const struct gt_lane *l, int64_t t)
{
	size_t at = gt_store_lane_event_at(l, t), want = SIZE_MAX;
	for (size_t i = 0; i < l->n && l->ev[i].start_ns <= t; i++) {
		const struct gt_event *e = &l->ev[i];
		if (gt_event_end(e) > t || (e->dur_ns == 0 && e->start_ns == t))
			want = i;
	}
	if (want == SIZE_MAX)
		cr_assert_eq(at, SIZE_MAX, "at %ld: got %zu", (long)t, at);
	else
		cr_assert(at != SIZE_MAX && l->ev[at].start_ns == l->ev[want].start_ns &&
				  l->ev[at].dur_ns == l->ev[want].dur_ns,
			  "event at %ld: got %zu want %zu", (long)t, at, want);
}

/* ranges open across many superblocks (lod_open.c): steps of 20,000 calls
 * (5 superblocks) nested 7 deep in the second step (more than the 4 kept
 * per superblock: the walk goes on below them), long events overlapping
 * without nesting, gaps where nothing runs; every superblock's first start
 * and random times against brute force, then after a live append and after
 * an out-of-order event (the lists rebuilt from 0) */
Test(prefetch, event_at_from_the_ranges_open_at_a_superblock)
{
	struct gt_store *s = gt_store_new();
	uint32_t a = gpu_lane(s, 1);
	for (int64_t st = 0; st < 4; st++) {
		int64_t t0 = st * 250000;
		add(s, a, t0, 240000);                          /* the step */
		if (st == 1)
			for (int d = 1; d <= 7; d++)               /* nested ranges */
				add(s, a, t0 + d, 200000 - d * 20000);
		if (st == 2)
			for (int d = 1; d <= 6; d++)               /* overlapping, not nested */
				add(s, a, t0 + d * 9000, 150000);
		for (int64_t t = t0 + 10; t < t0 + 200000; t += 10)
			add(s, a, t, t % 7000 == 0 ? 3000 : 5);  /* calls with gaps */
	}
	cr_assert_eq(gt_store_finish(s), 0);
	const struct gt_lane *l = gt_store_lane_at(s, a);
	cr_assert_gt(l->n_top, 16);
	cr_assert_eq(l->n_open, l->n_top);
	for (size_t j = 0; j < l->n_top; j++) {
		check_event_at(l, l->top_start[j]);
		check_event_at(l, l->top_start[j] + 1);
		check_event_at(l, l->top_start[j] + 7);
	}
	srand(7);
	for (int q = 0; q < 1500; q++)
		check_event_at(l, rand() % 1000000);
	/* a live append (lists kept, new ones built), then one out of order */
	for (int64_t t = 1000000; t < 1100000; t += 10)
		add(s, a, t, t % 50000 == 0 ? 60000 : 5);
	cr_assert_eq(gt_store_finish(s), 0);
	l = gt_store_lane_at(s, a);
	cr_assert_eq(l->n_open, l->n_top);
	for (int q = 0; q < 600; q++)
		check_event_at(l, 950000 + rand() % 200000);
	add(s, a, 5, 1050000);
	cr_assert_eq(gt_store_finish(s), 0);
	l = gt_store_lane_at(s, a);
	for (int q = 0; q < 600; q++)
		check_event_at(l, rand() % 1150000);
	gt_store_free(s);
}

/* a window after a lane's last event: the searches still read its last
 * block (the first start at or after t0 is found there, and the busy time
 * up to t0 sums it), so the prefetch asks for it too (these reads were a
 * synchronous fault, with the disk's read-around, per such lane a frame) */
Test(prefetch, reads_ahead_the_last_block_of_a_lane_ended_before_the_window)
{
	setenv("GTRACE_STORE_TRIM_MS", "1", 1);
	struct gt_store *s = gt_store_new();
	cr_assert_eq(gt_store_set_budget(s, 64 << 10), 0);
	uint32_t ids[8];
	for (int i = 0; i < 8; i++) {
		ids[i] = gpu_lane(s, i);
		for (int64_t t = 0; t < 20000; t++)
			add(s, ids[i], t * 5 + i, 1 + t % 4);   /* ends before 100,010 */
	}
	cr_assert_eq(gt_store_finish(s), 0);
	cr_assert_not_null(s->arena, "the cache file is engaged");
	store_arena_cold(s->arena);
	for (int i = 0; i < 8; i++) {
		const struct gt_lane *l = s->lanes[ids[i]];
		cr_assert(store_arena_owns(s->arena, l->ev));
		cr_assert(!in_core(&l->ev[l->n - 1]), "lane %d evicted", i);
	}
	cr_assert(gt_store_prefetch(s, ids, 8, 3 * T / 4, 3 * T / 4 + 200) > 0);
	int ok = 0;
	for (int k = 0; k < 400 && !ok; k++) {
		ok = 1;
		for (int i = 0; i < 8; i++) {
			const struct gt_lane *l = s->lanes[ids[i]];
			size_t nb = (l->n + GT_LOD_BLOCK - 1) / GT_LOD_BLOCK;
			ok &= in_core(&l->ev[l->n - 1]) && in_core(&l->ev[(nb - 1) * GT_LOD_BLOCK]) &&
			      in_core(&l->blk_busy[nb - 1]);
		}
		if (!ok)
			nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	}
	cr_assert(ok, "the last block of every lane is in the page cache after the prefetch");
	for (int i = 0; i < 8; i++) {
		struct gt_bucket b[4];
		gt_store_lane_buckets(s->lanes[ids[i]], 3 * T / 4, 50, 4, b);
		for (int c = 0; c < 4; c++)
			cr_assert(b[c].busy_ns == 0 && b[c].count == 0 && b[c].dominant == SIZE_MAX);
	}
	gt_store_free(s);
}
