/*
 * The spill (core/util/spill.h): an analysis' scratch arrays in a file
 * mapped shared, dropped from the process past an allowance.  Written
 * values read back after drops; the mapped share (RSS) stays within the
 * allowance and one step while 96 MiB are written and read; releases give
 * the bytes back; two threads writing, reading and dropping at once keep
 * their values.  Golden values: the pattern each test writes.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "../../core/util/spill.h"
#include "../../bench/rss.h"

#define MIB ((size_t)1 << 20)

static uint64_t pat(uint64_t seed, size_t i)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + i;
	x ^= x >> 31;
	return x * 0xBF58476D1CE4E5B9ull;
}

/* write n words, a MiB at a time, each announced */
static void fill(struct spill *sp, uint64_t *v, size_t n, uint64_t seed)
{
	for (size_t b = 0; b < n; b += MIB / 8) {
		spill_touch(sp, MIB);
		for (size_t i = b; i < n && i < b + MIB / 8; i++)
			v[i] = pat(seed, i);
	}
}

static size_t check(struct spill *sp, const uint64_t *v, size_t n, uint64_t seed)
{
	size_t bad = 0;
	for (size_t b = 0; b < n; b += MIB / 8) {
		spill_touch(sp, MIB);
		for (size_t i = b; i < n && i < b + MIB / 8; i++)
			bad += v[i] != pat(seed, i);
	}
	return bad;
}

Test(spill, values_survive_drops_and_rss_stays_in_the_allowance)
{
	struct spill *sp = NULL;
	cr_assert_eq(spill_new(8 * MIB, &sp), 0);
	const size_t n = 96 * MIB / 8;
	size_t base = rss_bytes();
	struct rss_sampler rs;
	cr_assert_eq(rss_sampler_start(&rs, 500), 0);
	uint64_t *v = spill_alloc(sp, n * 8);
	cr_assert(v);
	cr_assert(spill_owns(sp, v) && spill_owns(sp, v + n - 1));
	int on_stack = 0;
	cr_assert(!spill_owns(sp, &on_stack) && !spill_owns(NULL, v));
	fill(sp, v, n, 7);
	cr_assert_eq(check(sp, v, n, 7), 0);
	cr_assert_eq(check(sp, v, n, 7), 0);
	size_t peak = rss_sampler_stop(&rs);
	size_t rise = peak > base ? peak - base : 0;
	/* three passes of 96 MiB under an 8 MiB allowance: about 36 drops */
	cr_assert_geq(spill_drops(sp), 30, "%llu drops", (unsigned long long)spill_drops(sp));
	/* allowance + one step + the sampler's lag (it polls every 0.5 ms) */
	cr_assert_lt(rise, 32 * MIB, "rss rose %zu bytes over 96 MiB written", rise);
	cr_assert_eq(spill_peak(sp), n * 8);
	spill_release(sp, v, n * 8);
	spill_free(sp);
}

Test(spill, rounded_to_pages_zeroed_and_released)
{
	struct spill *sp = NULL;
	cr_assert_eq(spill_new(0, &sp), 0);   /* allowance raised to its 8 MiB floor */
	uint64_t *a = spill_alloc(sp, 3 * MIB + 1);
	uint64_t *b = spill_alloc(sp, MIB);
	cr_assert(a && b);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), a_bytes = (3 * MIB + 1 + pg - 1) / pg * pg;
	cr_assert_geq((char *)b - (char *)a, (ptrdiff_t)a_bytes, "page-rounded, apart");
	fill(sp, b, MIB / 8, 3);
	spill_release(sp, a, 3 * MIB + 1);
	uint64_t *c = spill_alloc(sp, 2 * MIB);
	cr_assert(c);
	for (size_t i = 0; i < 2 * MIB / 8; i++)
		cr_assert_eq(c[i], 0, "fresh scratch is zero");
	cr_assert_eq(check(sp, b, MIB / 8, 3), 0);
	/* the most allocated at once: a and b, then b and c */
	cr_assert_eq(spill_peak(sp), a_bytes + MIB);
	spill_free(sp);
	spill_free(NULL);
}

struct thr {
	struct spill *sp;
	uint64_t seed;
	size_t bad;
};

static void *worker(void *arg)
{
	struct thr *t = arg;
	const size_t n = 24 * MIB / 8;
	uint64_t *v = spill_alloc(t->sp, n * 8);
	if (!v) {
		t->bad = SIZE_MAX;
		return NULL;
	}
	fill(t->sp, v, n, t->seed);
	for (int k = 0; k < 3; k++)
		t->bad += check(t->sp, v, n, t->seed);
	spill_release(t->sp, v, n * 8);
	return NULL;
}

Test(spill, two_threads_drop_under_each_other)
{
	struct spill *sp = NULL;
	cr_assert_eq(spill_new(8 * MIB, &sp), 0);
	struct thr t[2] = { { sp, 11, 0 }, { sp, 12, 0 } };
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, worker, &t[1]), 0);
	worker(&t[0]);
	pthread_join(th, NULL);
	cr_assert_eq(t[0].bad, 0);
	cr_assert_eq(t[1].bad, 0);
	cr_assert_geq(spill_drops(sp), 20);
	spill_free(sp);
}

Test(spill, no_tmpdir_is_an_error_not_a_crash)
{
	setenv("TMPDIR", "/nonexistent-gtrace-dir", 1);
	struct spill *sp = NULL;
	int rc = spill_new(8 * MIB, &sp);
	cr_assert_lt(rc, 0);
	cr_assert_null(sp);
}
