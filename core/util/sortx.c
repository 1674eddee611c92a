/*
 * sortx.c - LSD radix sort and quickselect on 64-bit keys.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sortx.h"

int sortx_radix_u64(uint64_t *a, size_t n)
{
	if (n < 2)
		return 0;
	uint64_t *tmp = malloc(n * sizeof(*tmp));
	size_t *cnt = malloc(65536 * sizeof(*cnt));
	if (!tmp || !cnt) {
		free(tmp);
		free(cnt);
		return -ENOMEM;
	}
	uint64_t *src = a, *dst = tmp;
	for (int sh = 0; sh < 64; sh += 16) {
		memset(cnt, 0, 65536 * sizeof(*cnt));
		for (size_t i = 0; i < n; i++)
			cnt[(src[i] >> sh) & 0xffff]++;
		if (cnt[(src[0] >> sh) & 0xffff] == n)
			continue;
		size_t sum = 0;
		for (size_t d = 0; d < 65536; d++) {
			size_t c = cnt[d];
			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[cnt[(src[i] >> sh) & 0xffff]++] = src[i];
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
	free(cnt);
	return 0;
}

int sortx_radix_i64(int64_t *v, size_t n)
{
	if (n < 2)
		return 0;
	int64_t lo = v[0];
	for (size_t i = 1; i < n; i++)
		lo = v[i] < lo ? v[i] : lo;
	/* signed and unsigned variants of a type may alias */
	uint64_t *u = (uint64_t *)v;
	for (size_t i = 0; i < n; i++)
		u[i] -= (uint64_t)lo;
	int rc = sortx_radix_u64(u, n);
	for (size_t i = 0; i < n; i++)
		u[i] += (uint64_t)lo;
	return rc;
}

int64_t sortx_select_i64(int64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t a = v[lo], b = v[mid], c = v[hi];
		int64_t p = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		size_t i = lo, j = hi;
		while (i <= j) {
			while (v[i] < p)
				i++;
			while (v[j] > p)
				j--;
			if (i <= j) {
				int64_t t = v[i];
				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return v[k];
	}
	return v[k];
}
