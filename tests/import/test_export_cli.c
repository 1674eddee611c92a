/*
 * test_export_cli.c - 'gtrace export' from the command line: usage errors
 * exit 2, a bad input exits 1 with one "FILE: problem" line, a good one
 * writes JSON (or gzip) that imports back with every event.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "gtrace/load.h"
#include "impcheck.h"

static int run(const char *args, char *out, size_t outlen)
{
	return impcheck_cli(out, outlen, "export %s", args);
}

Test(export_cli, usage_and_errors)
{
	char out[4096];
	cr_expect_eq(run("", out, sizeof(out)), 2);
	cr_expect_eq(run("x.json", out, sizeof(out)), 2, "%s", out);
	cr_expect(strstr(out, "-o"), "%s", out);
	cr_expect_eq(run("--bogus", out, sizeof(out)), 2);
	cr_expect_eq(run("--help", out, sizeof(out)), 0);
	cr_expect(strstr(out, "usage: gtrace export"));
	cr_expect_eq(run("/nonexistent.json -o /tmp/x.json", out, sizeof(out)), 1);
	cr_expect(strstr(out, "/nonexistent.json:"), "%s", out);
	cr_expect_eq(strchr(out, '\n'), strrchr(out, '\n'), "one line: %s", out);
	char args[1024];
	snprintf(args, sizeof(args), "%s -o /nonexistent-dir/out.json", tpath("hta/trace_filter/sampled_rank-0.json.gz"));
	cr_expect_eq(run(args, out, sizeof(out)), 1);
	cr_expect(strstr(out, "/nonexistent-dir/out.json:"), "%s", out);
}

Test(export_cli, json_and_gz_reimport)
{
	const char *outs[2] = { "/tmp/gtrace_export_cli.json", "/tmp/gtrace_export_cli.json.gz" };
	struct gt_store *a = tload("hta/trace_filter");
	for (int i = 0; i < 2; i++) {
		char args[1024], out[4096];
		snprintf(args, sizeof(args), "%s -o %s", tpath("hta/trace_filter"), outs[i]);
		cr_assert_eq(run(args, out, sizeof(out)), 0, "%s", out);
		struct gt_store *b;
		struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
		char err[512];
		cr_assert_eq(gt_load(&outs[i], 1, &o, &b, err, sizeof(err)), 0, "%s", err);
		cr_expect_eq(gt_store_event_count(b), gt_store_event_count(a));
		cr_expect_eq(gt_store_rank_count(b), 2);
		cr_expect_eq(gt_store_t_min(b), gt_store_t_min(a));
		cr_expect_eq(gt_store_t_max(b), gt_store_t_max(a));
		gt_store_free(b);
		remove(outs[i]);
	}
	gt_store_free(a);
}
