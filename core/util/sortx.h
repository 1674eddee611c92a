/*
 * sortx.h - sorting and selection on 64-bit keys shared by core's modules
 * (importers, analyses): an LSD radix sort and quickselect.
 */
#ifndef GTRACE_SORTX_H
#define GTRACE_SORTX_H

#include <stddef.h>
#include <stdint.h>

/* sort a[0..n) ascending: LSD radix, 16-bit digits, digits that are the
 * same in every key are skipped; 0 or -ENOMEM (a is unchanged then) */
int sortx_radix_u64(uint64_t *a, size_t n);
/* the same for signed keys (sorted on v - min, so only the digits the
 * range of values needs are passed over); 0 or -ENOMEM */
int sortx_radix_i64(int64_t *v, size_t n);
/* the k-th smallest of v[0..n) (k < n), reordering v: quickselect with a
 * median-of-three pivot, O(n) expected */
int64_t sortx_select_i64(int64_t *v, size_t n, size_t k);

#endif
