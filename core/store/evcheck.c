/*
 * evcheck.c - the validation point of gtrace/evcheck.h.  Pure: reads the
 * event, touches nothing; cheap enough for every event of every source.
 */
#include "gtrace/evcheck.h"

const char *gt_evcheck_event(const struct gt_event *e)
{
	if (e->kind == GT_EV_NONE || e->kind >= GT_EV_KIND_COUNT)
		return "unknown event kind";
	if (e->kind == GT_EV_MEMCPY && e->sub >= GT_COPY_KIND_COUNT)
		return "unknown copy kind";
	if (e->kind == GT_EV_SYNC && e->sub >= GT_SYNC_KIND_COUNT)
		return "unknown synchronization kind";
	/* 2^62 bytes (4 EiB) in one copy: sums of a few stay exact in 128 bits */
	if ((e->kind == GT_EV_MEMCPY || e->kind == GT_EV_MEMSET) && e->arg >= (UINT64_C(1) << 62))
		return "copy size out of range";
	if (e->dur_ns < 0)
		return "negative duration";
	if (e->start_ns <= -GT_EVCHECK_TIME_LIMIT_NS || e->start_ns >= GT_EVCHECK_TIME_LIMIT_NS)
		return "start time out of range";
	int64_t end;
	if (__builtin_add_overflow(e->start_ns, e->dur_ns, &end) || end >= GT_EVCHECK_TIME_LIMIT_NS)
		return "end time out of range";
	return 0;
}
