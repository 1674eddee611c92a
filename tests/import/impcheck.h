/*
 * impcheck.h - helpers of the import tests: load a test data file and
 * count kernels, names, durations and lanes straight from the store.
 */
#ifndef GTRACE_IMPCHECK_H
#define GTRACE_IMPCHECK_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/store.h"

struct kfacts {
	size_t kernels, names, nccl, gpu_lanes;
	int64_t dur_ns;
};

/* path of a test data file (GTRACE_TESTDATA or ../shared/testdata); skips
 * the calling test when it is absent (tests/testdata.h) */
const char *tpath(const char *rel);
/* load paths into a store with GT_LOAD_QUIET; asserts success */
struct gt_store *tload(const char *rel);
void kfacts_of(const struct gt_store *s, struct kfacts *f);
size_t count_kind(const struct gt_store *s, int kind);
/* run `$GTRACE_BUILD/tui/gtrace ARGS 2>&1` (ARGS from the printf format;
 * GTRACE_BUILD unset: ./build); the first outlen - 1 bytes of its output
 * into out (NUL-terminated); its exit status, -1 when it did not exit */
int impcheck_cli(char *out, size_t outlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
