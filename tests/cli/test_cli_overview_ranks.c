/*
 * test_cli_overview_ranks.c - `gtrace stats F --report overview --format csv`
 * on simulator captures with several ranks lists a row per rank (Rank,
 * Steps, Avg step, Kernel %, Communication %, DataLoader %, Input %, Input
 * verdict).  Planted truth: `gtrace sim --scenario input-bound
 * --scenario-rank 2` puts a DataLoader of 40 % of the step in rank 2 only
 * (docs/simulator.md); one rank has no per-rank table.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clirun.h"

static char tmpdir[256];

static void setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gtrace-ovranks-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

/* run `gtrace ARGS`, stdout into a malloc'ed string; returns the exit status */
static int gtrace(const char *args, char **out)
{
	return clirun_gtrace(args, "2>/dev/null", out);
}

#define HDR "Rank,Steps,Avg step (us),Kernel %,Exposed Comm %,DataLoader %,Input %,Input verdict," \
	"Largest non-GPU cost,Largest non-GPU cost %\n"

TestSuite(cli_overview_ranks, .init = setup, .fini = teardown);

Test(cli_overview_ranks, csv_lists_each_rank, .timeout = 120)
{
	char args[600], *out = NULL;
	snprintf(args, sizeof(args), "sim -o '%s/r.gtrace' --ranks 4 --gpus 2 --steps 8 "
		 "--scenario input-bound --scenario-rank 2", tmpdir);
	cr_assert_eq(gtrace(args, &out), 0);
	free(out);
	snprintf(args, sizeof(args), "stats '%s/r.gtrace' --report overview --format csv "
		 "--table overview_ranks", tmpdir);
	cr_assert_eq(gtrace(args, &out), 0);
	const char *p = strstr(out, HDR);
	cr_assert(p, "no per-rank table:\n%s", out);
	p += strlen(HDR);
	for (int r = 0; r < 4; r++) {
		int rank, steps;
		double avg, kern, comm, dl, input;
		char verdict[64];
		int n = sscanf(p, "%d,%d,%lf,%lf,%lf,%lf,%lf,%63[^,\n]", &rank, &steps, &avg, &kern, &comm,
			       &dl, &input, verdict);
		cr_assert_eq(n, 8, "row %d: %.80s", r, p);
		cr_assert_eq(rank, r);
		cr_assert_eq(steps, 8);
		cr_assert_gt(avg, 0);
		if (r == 2) {
			cr_assert_str_eq(verdict, "HIGHLY input-bound");
			cr_assert(fabs(dl - 40.0) < 3.0, "rank 2 DataLoader %.2f %% (planted 40)", dl);
		} else {
			cr_assert_str_eq(verdict, "NOT input-bound", "rank %d", r);
			cr_assert_lt(dl, 5.0, "rank %d DataLoader %.2f %%", r, dl);
		}
		p = strchr(p, '\n');
		cr_assert(p);
		p++;
	}
	cr_assert(*p == 0, "more than 4 rank rows: %.80s", p);
	free(out);
	/* the recommendation names rank 2 */
	snprintf(args, sizeof(args), "stats '%s/r.gtrace' --report overview --format csv "
		 "--table overview_recs", tmpdir);
	cr_assert_eq(gtrace(args, &out), 0);
	cr_assert(strstr(out, "input-bound,\"rank 2: steps 0-7 are HIGHLY input-bound"), "%s", out);
	free(out);
	/* json has the same table */
	snprintf(args, sizeof(args), "stats '%s/r.gtrace' --report overview --format json", tmpdir);
	cr_assert_eq(gtrace(args, &out), 0);
	cr_assert(strstr(out, "\"overview_ranks\""), "%.300s", out);
	free(out);
}

Test(cli_overview_ranks, one_rank_has_no_rank_table, .timeout = 120)
{
	char args[600], *out = NULL;
	snprintf(args, sizeof(args), "sim -o '%s/one.gtrace' --gpus 2 --steps 4 --scenario input-bound",
		 tmpdir);
	cr_assert_eq(gtrace(args, &out), 0);
	free(out);
	snprintf(args, sizeof(args), "stats '%s/one.gtrace' --report overview --table list", tmpdir);
	cr_assert_eq(gtrace(args, &out), 0);
	cr_assert_null(strstr(out, "overview_ranks"), "%s", out);
	free(out);
	snprintf(args, sizeof(args), "stats '%s/one.gtrace' --report overview --format csv "
		 "--table overview_recs", tmpdir);
	cr_assert_eq(gtrace(args, &out), 0);
	cr_assert(strstr(out, "input-bound,\"steps 0-3 are HIGHLY input-bound"), "%s", out);
	free(out);
}
