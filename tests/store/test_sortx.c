/*
 * sortx tests: the radix sorts and quickselect against qsort on random,
 * negative, extreme and constant keys.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/util/sortx.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

Test(sortx, radix_matches_qsort)
{
	enum { N = 100003 };
	int64_t *v = malloc(N * sizeof(*v)), *w = malloc(N * sizeof(*w));
	uint64_t x = 12345;
	for (int mode = 0; mode < 4; mode++) {
		for (size_t i = 0; i < N; i++) {
			uint64_t r = rnd(&x);
			v[i] = mode == 0 ? (int64_t)r                       /* full range, negatives */
			     : mode == 1 ? 1700000000000000000 + (int64_t)(r % 1000000) /* epoch ns */
			     : mode == 2 ? (i % 2 ? INT64_MIN : INT64_MAX)  /* extremes */
			     : 42;                                          /* constant */
		}
		memcpy(w, v, N * sizeof(*v));
		cr_assert_eq(sortx_radix_i64(v, N), 0);
		qsort(w, N, sizeof(*w), cmp_i64);
		cr_assert_arr_eq(v, w, N * sizeof(*v), "mode %d", mode);
		uint64_t *u = (uint64_t *)v, *uw = (uint64_t *)w;
		for (size_t i = 0; i < N; i++)
			u[i] = uw[i] = rnd(&x) >> (mode * 16);
		cr_assert_eq(sortx_radix_u64(u, N), 0);
		qsort(uw, N, sizeof(*uw), cmp_u64);
		cr_assert_arr_eq(u, uw, N * sizeof(*u), "u64 mode %d", mode);
	}
	free(v);
	free(w);
}

Test(sortx, select_is_kth_smallest)
{
	enum { N = 2001 };
	int64_t v[N], s[N];
	uint64_t x = 99;
	for (int rep = 0; rep < 20; rep++) {
		for (size_t i = 0; i < N; i++)
			s[i] = (int64_t)(rnd(&x) % (rep % 2 ? 7 : 1000000)) - 3; /* many ties on odd reps */
		qsort(s, N, sizeof(*s), cmp_i64);
		size_t ks[] = { 0, 1, N / 2, N - 2, N - 1, (size_t)rep * 97 % N };
		for (size_t k = 0; k < sizeof(ks) / sizeof(ks[0]); k++) {
			for (size_t i = 0; i < N; i++)
				v[i] = s[(i * 7919) % N]; /* a permutation of the sorted values */
			cr_assert_eq(sortx_select_i64(v, N, ks[k]), s[ks[k]]);
		}
	}
	int64_t one = 5;
	cr_assert_eq(sortx_select_i64(&one, 1, 0), 5);
}

#include "core/util/utf8.h"

/* UTF-8 validation: cases from RFC 3629 section 3 and its table of ranges */
Test(utf8, sequence_lengths)
{
	cr_assert_eq(utf8_seq_len((const unsigned char *)"\xc3\xa9"), 2);          /* é */
	cr_assert_eq(utf8_seq_len((const unsigned char *)"\xe2\x96\x88"), 3);      /* █ */
	cr_assert_eq(utf8_seq_len((const unsigned char *)"\xf0\x9f\x9a\x80"), 4);  /* U+1F680 */
	cr_assert_eq(utf8_seq_len((const unsigned char *)"A"), 0);                 /* ASCII */
	cr_assert_eq(utf8_seq_len((const unsigned char *)"\xc0\xaf"), 0);          /* overlong '/' */
	cr_assert_eq(utf8_seq_len((const unsigned char *)"\xe0\x80\xaf"), 0);      /* overlong */
	cr_assert_eq(utf8_seq_len((const unsigned char *)"\xed\xa0\x80"), 0);      /* U+D800 surrogate */
	cr_assert_eq(utf8_seq_len((const unsigned char *)"\xf4\x90\x80\x80"), 0);  /* > U+10FFFF */
	cr_assert_eq(utf8_seq_len((const unsigned char *)"\xe2\x96"), 0);          /* cut by the NUL */
	cr_assert_eq(utf8_seq_len((const unsigned char *)"\x80"), 0);              /* lone continuation */
}
