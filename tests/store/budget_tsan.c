/*
 * budget_tsan.c - the budgeted store under ThreadSanitizer: the trimmer
 * thread samples and drops the cache file every millisecond while this
 * thread builds a store (appends, reallocations that move blocks and punch
 * holes, finishes, the correlation index) and reads it back.  The sums are
 * checked against the generator's; exit 0 when equal and TSan is quiet.
 */
#include <stdio.h>
#include <stdlib.h>
#include "gtrace/store.h"

int main(void)
{
	setenv("GTRACE_STORE_TRIM_MS", "1", 1);
	struct gt_store *s = gt_store_new();
	if (!s || gt_store_set_budget(s, 256 << 10))
		return 1;
	uint32_t lanes[6];
	for (int i = 0; i < 6; i++) {
		struct gt_lane_key k = { .type = i < 2 ? GT_LANE_HOST : GT_LANE_GPU, .device = i,
					 .id = i };
		lanes[i] = gt_store_lane(s, &k);
	}
	int64_t want = 0, got = 0;
	for (int round = 0; round < 4; round++) {
		for (size_t k = 0; k < 150000; k++) {
			int li = (int)(k % 6);
			struct gt_event e = { .lane = lanes[li], .start_ns = (int64_t)(round * 150000 + k) * 100,
					      .dur_ns = (int64_t)(k % 13), .corr = (uint32_t)(k + 1),
					      .kind = li < 2 ? GT_EV_RUNTIME : GT_EV_KERNEL };
			want += e.dur_ns;
			if (gt_store_add(s, &e))
				return 1;
		}
		if (gt_store_finish(s))
			return 1;
		struct gt_ref r;
		if (gt_store_corr_find(s, 0, 7, 1, &r) && round == 0)
			fprintf(stderr, "note: no GPU work for correlation 7\n");
	}
	for (uint32_t i = 0; i < 6; i++) {
		const struct gt_lane *l = gt_store_lane_at(s, i);
		for (size_t k = 0; k < l->n; k++)
			got += l->ev[k].dur_ns;
	}
	printf("resident %zu bytes, sums %lld / %lld\n", gt_store_resident_bytes(s), (long long)got,
	       (long long)want);
	gt_store_free(s);
	return got == want ? 0 : 1;
}
