/*
 * gcwatch.c - the second-CUPTI-client rule (capture/gcwatch.h).
 */
#include "gcwatch.h"

void gcwatch_init(struct gcwatch *w, int64_t window_ns)
{
	atomic_store(&w->calls, 0);
	atomic_store(&w->traffic, 0);
	w->window_ns = window_ns > 0 ? window_ns : GCWATCH_WINDOW_NS;
	w->seen_traffic = 0;
	w->calls_at = 0;
	w->since_ns = 0;
}

enum gcwatch_verdict gcwatch_check(struct gcwatch *w, int64_t now_ns, int sub_ok)
{
	if (!sub_ok)
		return GCWATCH_FINALIZED;
	uint64_t t = atomic_load_explicit(&w->traffic, memory_order_relaxed);
	uint64_t c = atomic_load_explicit(&w->calls, memory_order_relaxed);
	if (w->since_ns == 0 || t != w->seen_traffic) {
		w->seen_traffic = t;
		w->calls_at = c;
		w->since_ns = now_ns;
		return GCWATCH_OK;
	}
	if (now_ns - w->since_ns >= w->window_ns && c - w->calls_at >= GCWATCH_MIN_CALLS)
		return GCWATCH_TAKEN;
	return GCWATCH_OK;
}
