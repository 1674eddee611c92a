/*
 * store_drop.c - a live store with a ring window (gtrace/store.h,
 * gt_store_drop_before): each lane's events older than the window leave
 * its front, and its index is built again over what stays.
 *
 * The kept events move down in runs no longer than the dropped prefix
 * (source and destination never overlap within a run), each run through
 * gt_store_copy_in: in the budget's cache file that is a pwrite, so the
 * destination's pages are not mapped into the process, and the source is
 * read a run at a time (gt_store_read_tick), so a cut of a lane larger than
 * the budget stays within it.  The lane's array keeps its capacity: appends
 * after a cut fill the room the dropped events left, so the array (and the
 * cache file) stops growing once the window is full.
 */
#include <errno.h>
#include <string.h>
#include "gtrace/lsum.h"
#include "store_priv.h"

/* move events [k, n) of l to [0, n - k); 0 or -errno */
static int move_down(struct gt_store *s, struct gt_lane *l, size_t k)
{
	size_t n = l->n, run = k < GT_READ_RUN ? k : GT_READ_RUN;
	for (size_t i = k; i < n; i += run) {
		size_t m = n - i < run ? n - i : run;
		gt_store_read_tick(s, l, i, i + m);
		int rc = gt_store_copy_in(s, &l->ev[i - k], &l->ev[i], m * sizeof(*l->ev));
		if (rc)
			return rc;
	}
	return 0;
}

int gt_store_drop_before(struct gt_store *s, int64_t t, unsigned keep_div, uint64_t *dropped)
{
	uint64_t total = 0;
	int changed = 0;
	int64_t last = s->drop_last_start, origin = gt_store_t_min(s);
	if (dropped)
		*dropped = 0;
	for (size_t i = 0; i < s->n_lanes; i++) {
		struct gt_lane *l = s->lanes[i];
		if (!l->n)
			continue;
		size_t k = gt_store_lane_lower_start(l, t);
		/* a counter keeps its last sample before t, moved to t: its
		 * value from t on */
		int ctr = k && l->key.type == GT_LANE_COUNTER;
		if (ctr)
			k--;
		/* a cut to the window exactly (keep_div 0) moves a counter's one
		 * sample before t too */
		if ((!k && !(ctr && !keep_div)) || (keep_div && (uint64_t)k * keep_div < l->n - k))
			continue;
		int rc = 0;
		if (k) {
			if (l->ev[k - 1].start_ns > last)
				last = l->ev[k - 1].start_ns;
			rc = move_down(s, l, k);
			if (rc)
				return rc;
		}
		l->n -= k;
		l->dropped += k;
		changed = 1;
		if (ctr && l->ev[0].start_ns < t) {
			struct gt_event e = l->ev[0];
			e.start_ns = t;
			rc = gt_store_copy_in(s, &l->ev[0], &e, sizeof(e));
			if (rc)
				return rc;
		}
		lod_reset(l);
		total += k;
	}
	if (!changed)
		return 0;
	if (s->summary)
		gt_store_set_summary(s, NULL);   /* it described the events dropped */
	if (s->drop_origin == INT64_MAX)
		s->drop_origin = origin;   /* relative times keep their zero */
	s->n_dropped += total;
	s->drop_last_start = last;
	if (dropped)
		*dropped = total;
	return gt_store_finish(s);
}

uint64_t gt_store_dropped(const struct gt_store *s, int64_t *last_start_ns)
{
	if (last_start_ns)
		*last_start_ns = s->n_dropped ? s->drop_last_start : INT64_MIN;
	return s->n_dropped;
}
