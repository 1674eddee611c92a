/*
 * gt_store_shift_rank: a rank moved along the time axis keeps its events and
 * their order, the queries (busy time, event at a time, span) answer on the
 * new axis, and the other rank stays where it was.  Expected values are the
 * planted times plus the shift, worked out by hand.
 */
#include <criterion/criterion.h>
#include "gtrace/store.h"

static uint32_t gpu_lane(struct gt_store *s, int rank, int stream)
{
	struct gt_lane_key k = { .type = GT_LANE_GPU, .rank = rank, .device = 0, .id = stream };
	return gt_store_lane(s, &k);
}

static void add(struct gt_store *s, uint32_t lane, int64_t t, int64_t d)
{
	struct gt_event e = { .start_ns = t, .dur_ns = d, .lane = lane, .kind = GT_EV_KERNEL };
	cr_assert_eq(gt_store_add(s, &e), 0);
}

Test(shift, rank_moves_the_other_stays)
{
	struct gt_store *s = gt_store_new();
	uint32_t a = gpu_lane(s, 0, 7), b = gpu_lane(s, 1, 7);
	/* rank 0: 1000 events of 10 ns every 100 ns from 0; rank 1 the same a
	   day later (86400 s) */
	const int64_t day = 86400LL * 1000000000LL;
	for (int i = 0; i < 1000; i++) {
		add(s, a, 100LL * i, 10);
		add(s, b, day + 100LL * i, 10);
	}
	cr_assert_eq(gt_store_finish(s), 0);
	cr_assert_eq(gt_store_t_max(s), day + 100LL * 999 + 10);
	cr_assert_eq(gt_store_shift_rank(s, 1, -day), 0);
	const struct gt_lane *lb = gt_store_lane_at(s, b), *la = gt_store_lane_at(s, a);
	cr_assert_eq(lb->n, 1000);
	for (size_t i = 0; i < lb->n; i++)
		cr_assert_eq(lb->ev[i].start_ns, 100LL * (int64_t)i);
	cr_assert_eq(la->ev[999].start_ns, 100LL * 999);
	cr_assert_eq(gt_store_t_min(s), 0);
	cr_assert_eq(gt_store_t_max(s), 100LL * 999 + 10);
	/* indexes on the new axis: 10 events of 10 ns in [0, 1000) */
	cr_assert_eq(gt_store_lane_busy(lb, 0, 1000), 100);
	cr_assert_eq(gt_store_lane_busy(lb, day, day + 1000), 0);
	cr_assert_eq(gt_store_lane_event_at(lb, 505), 5);
	cr_assert_eq(gt_store_lane_event_at(lb, day + 505), SIZE_MAX);
	/* no shift: nothing changes */
	cr_assert_eq(gt_store_shift_rank(s, 0, 0), 0);
	cr_assert_eq(la->ev[0].start_ns, 0);
	gt_store_free(s);
}
