/*
 * store_shift.c - move every event of one rank along the time axis by a
 * constant (two runs opened together are aligned at their starts).  The
 * order of events in a lane does not change; the lanes' indexes are rebuilt
 * (their block keys hold absolute times) and the store's span recomputed.
 */
#include <errno.h>
#include "store_priv.h"
#include "gtrace/lsum.h"

int gt_store_shift_rank(struct gt_store *s, int32_t rank, int64_t delta_ns)
{
	if (!delta_ns)
		return 0;
	gt_store_set_summary(s, NULL);   /* its buckets hold the old times */
	for (size_t i = 0; i < s->n_lanes; i++) {
		struct gt_lane *l = s->lanes[i];
		if (l->key.rank != store_rank_norm(rank))   /* lane ranks are >= 0 */
			continue;
		for (size_t k = 0; k < l->n; k++)
			l->ev[k].start_ns += delta_ns;
		lod_free(s, l);
	}
	return gt_store_finish(s);
}
