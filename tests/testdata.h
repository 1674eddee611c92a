/*
 * testdata.h - the real traces of ../shared/testdata in the tests.
 *
 * The traces live beside the repository (../shared/testdata, or
 * $GTRACE_TESTDATA), not inside it.  A clone without them still passes:
 * a test that needs one calls td_need(rel) first, which skips the test with
 * a visible reason when the file is absent.  CI sets
 * GTRACE_REQUIRE_TESTDATA=1, which turns that skip into a failure.
 *
 * The skip line "gtrace-skip: ..." goes to stderr; `make test` counts those
 * lines in the test logs for the "skipped" of its final line.
 */
#ifndef GTRACE_TESTS_TESTDATA_H
#define GTRACE_TESTS_TESTDATA_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the testdata folder: $GTRACE_TESTDATA, else ../shared/testdata */
static inline const char *td_root(void)
{
	const char *td = getenv("GTRACE_TESTDATA");
	return td && *td ? td : "../shared/testdata";
}

/* path of a testdata file (rel to the folder), in one of 8 rotating buffers */
static inline const char *td_path(const char *rel)
{
	static char buf[8][1024];
	static int k;
	char *b = buf[k++ % 8];
	snprintf(b, sizeof(buf[0]), "%s/%s", td_root(), rel);
	return b;
}

/* 1 when GTRACE_REQUIRE_TESTDATA asks for every testdata test to run */
static inline int td_required(void)
{
	const char *r = getenv("GTRACE_REQUIRE_TESTDATA");
	return r && *r && strcmp(r, "0") != 0;
}

/* the test needs testdata file (or folder) rel: returns when it exists;
 * otherwise fails (GTRACE_REQUIRE_TESTDATA set) or skips the test, naming
 * the file; never returns then */
static inline void td_need(const char *rel)
{
	const char *p = td_path(rel);
	if (access(p, R_OK) == 0)
		return;
	if (td_required())
		cr_assert_fail("%s is missing and GTRACE_REQUIRE_TESTDATA is set", p);
	fprintf(stderr, "gtrace-skip: needs %s (absent: the traces of ../shared/testdata are not beside this clone)\n", p);
	cr_skip_test("needs %s (absent)", p);
}

#endif
