/*
 * test_gcwatch.c - the second-CUPTI-client rule (capture/gcwatch.c) on
 * planted sequences of launch calls and buffer traffic: a silence of the
 * buffer callbacks while launches go on ends the capture after the window,
 * never earlier; quiet processes (no launches) and busy ones (buffers
 * moving) never; a lost subscription at once.
 */
#include <criterion/criterion.h>
#include "../../capture/gcwatch.h"

#define MS 1000000ll

Test(gcwatch, silence_with_launches_fires_after_the_window)
{
	struct gcwatch w;
	gcwatch_init(&w, 800 * MS);
	int64_t t = 1000 * MS;
	cr_assert_eq(gcwatch_check(&w, t, 1), GCWATCH_OK);
	/* launches and buffers move together for 5 s: fine */
	for (int i = 0; i < 50; i++) {
		t += 100 * MS;
		atomic_fetch_add(&w.calls, 40);
		atomic_fetch_add(&w.traffic, 2);
		cr_assert_eq(gcwatch_check(&w, t, 1), GCWATCH_OK, "busy, step %d", i);
	}
	/* another client takes the pair: launches go on, no traffic */
	int64_t taken = t;
	enum gcwatch_verdict v = GCWATCH_OK;
	while (v == GCWATCH_OK) {
		t += 100 * MS;
		atomic_fetch_add(&w.calls, 40);
		v = gcwatch_check(&w, t, 1);
	}
	cr_assert_eq(v, GCWATCH_TAKEN);
	cr_assert_eq(t - taken, 800 * MS, "fired %lld ms after the last buffer traffic",
		     (long long)((t - taken) / MS));
}

Test(gcwatch, quiet_process_never_fires)
{
	struct gcwatch w;
	gcwatch_init(&w, 800 * MS);
	int64_t t = MS;
	for (int i = 0; i < 100; i++, t += 100 * MS) {
		if (i % 30 == 0)          /* a few launches now and then, fewer than 16 */
			atomic_fetch_add(&w.calls, 5);
		cr_assert_eq(gcwatch_check(&w, t, 1), GCWATCH_OK, "step %d", i);
	}
}

Test(gcwatch, lost_subscription_fires_at_once)
{
	struct gcwatch w;
	gcwatch_init(&w, 0);
	cr_assert_eq(w.window_ns, GCWATCH_WINDOW_NS);
	cr_assert_eq(gcwatch_check(&w, MS, 1), GCWATCH_OK);
	cr_assert_eq(gcwatch_check(&w, 2 * MS, 0), GCWATCH_FINALIZED);
}
