/*
 * test_sim_cli.c - `gtrace sim`: usage errors, and the round trip
 * simulator -> .gtrace file -> reader for every scenario (the reader must
 * give back exactly the events the simulator generated).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gtrace/gtfile.h"
#include "simcheck.h"

static char tmpdir[256];

static void setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gtrace-simcli-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

/* run `gtrace ARGS`; returns the exit status, stderr in err */
static int gtrace(const char *args, char *err, size_t errlen)
{
	const char *b = getenv("GTRACE_BUILD");
	cr_assert_not_null(b, "GTRACE_BUILD not set");
	char cmd[1024], ef[300];
	snprintf(ef, sizeof(ef), "%s/stderr", tmpdir);
	snprintf(cmd, sizeof(cmd), "%s/tui/gtrace %s >/dev/null 2>%s", b, args, ef);
	int st = system(cmd);
	FILE *f = fopen(ef, "r");
	size_t n = f ? fread(err, 1, errlen - 1, f) : 0;
	err[n] = 0;
	if (f)
		fclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TestSuite(sim_cli, .init = setup, .fini = teardown);

Test(sim_cli, usage_errors)
{
	char err[4096], args[512];
	cr_assert_eq(gtrace("sim --help", err, sizeof(err)), 0);
	cr_assert_eq(gtrace("sim", err, sizeof(err)), 2);
	cr_assert_not_null(strstr(err, "-o"), "%s", err);
	snprintf(args, sizeof(args), "sim -o %s/x.gtrace --scenario fast", tmpdir);
	cr_assert_eq(gtrace(args, err, sizeof(err)), 2);
	cr_assert_not_null(strstr(err, "straggler"), "valid names listed: %s", err);
	cr_assert_not_null(strstr(err, "copy-heavy"), "%s", err);
	snprintf(args, sizeof(args), "sim -o %s/x.gtrace --gpus 0", tmpdir);
	cr_assert_eq(gtrace(args, err, sizeof(err)), 2);
	cr_assert_not_null(strstr(err, "--gpus"), "%s", err);
	snprintf(args, sizeof(args), "sim -o %s/x.gtrace --gpus 65", tmpdir);
	cr_assert_eq(gtrace(args, err, sizeof(err)), 2);
	snprintf(args, sizeof(args), "sim -o %s/x.gtrace --gpus 4x", tmpdir);
	cr_assert_eq(gtrace(args, err, sizeof(err)), 2);
	snprintf(args, sizeof(args), "sim -o %s/x.gtrace --steps -1", tmpdir);
	cr_assert_eq(gtrace(args, err, sizeof(err)), 2);
	snprintf(args, sizeof(args), "sim -o %s/x.gtrace --frobnicate 1", tmpdir);
	cr_assert_eq(gtrace(args, err, sizeof(err)), 2);
	cr_assert_eq(gtrace("sim --live 1", err, sizeof(err)), 2);
	cr_assert_eq(gtrace("sim -o", err, sizeof(err)), 2);
	cr_assert_eq(access(args, F_OK), -1);
	/* not writable: exit 1 naming the file */
	cr_assert_eq(gtrace("sim -o /nonexistent-dir/x.gtrace --steps 1", err, sizeof(err)), 1);
	cr_assert_not_null(strstr(err, "/nonexistent-dir/x.gtrace"), "%s", err);
}

static void same_store(const struct gt_store *a, const struct gt_store *b)
{
	cr_assert_eq(gt_store_event_count(a), gt_store_event_count(b));
	cr_assert_eq(gt_store_lane_count(a), gt_store_lane_count(b));
	for (uint32_t i = 0; i < gt_store_lane_count(a); i++) {
		const struct gt_lane *la = gt_store_lane_at(a, i), *lb = gt_store_lane_at(b, i);
		cr_assert_eq(la->n, lb->n);
		cr_assert_str_eq(gt_store_str(a, la->name), gt_store_str(b, lb->name));
		for (size_t k = 0; k < la->n; k++) {
			const struct gt_event *x = &la->ev[k], *y = &lb->ev[k];
			cr_assert(x->start_ns == y->start_ns && x->dur_ns == y->dur_ns &&
				  x->kind == y->kind && x->corr == y->corr && x->flags == y->flags,
				  "lane %u event %zu differs", i, k);
			cr_assert_str_eq(gt_store_str(a, x->name), gt_store_str(b, y->name));
		}
	}
	cr_assert_str_eq(gt_store_meta_get(b, "source"), "gtrace sim");
	cr_assert_str_eq(gt_store_meta_get(b, "scenario"), gt_store_meta_get(a, "scenario"));
	cr_assert_eq(gt_store_device_count(b), gt_store_device_count(a));
}

/* every scenario at 1 and 16 GPUs: file holds exactly the generated capture
 * (staggered at 1 GPU is refused) */
Test(sim_cli, round_trip, .timeout = 120)
{
	static const char *const gpus[] = { "1", "16" };
	char err[4096], args[512], path[300];
	for (int sc = 0; sc < GT_SIM_SCENARIO_COUNT; sc++)
		for (int g = 0; g < 2; g++) {
			snprintf(path, sizeof(path), "%s/%d-%s.gtrace", tmpdir, sc, gpus[g]);
			snprintf(args, sizeof(args), "sim -o %s --scenario %s --gpus %s --steps 2 --seed 5",
				 path, gt_sim_scenario_name(sc), gpus[g]);
			if (sc == GT_SIM_STAGGERED && g == 0) {
				/* one GPU has nothing to stagger against: refused, not faked */
				cr_assert_eq(gtrace(args, err, sizeof(err)), 2, "%s", err);
				cr_assert_not_null(strstr(err, "staggered needs --gpus 2"), "%s", err);
				continue;
			}
			cr_assert_eq(gtrace(args, err, sizeof(err)), 0, "%s", err);
			cr_assert_not_null(strstr(err, "events"), "summary line: %s", err);
			struct gt_sim_opts o = { .gpus = atoi(gpus[g]), .steps = 2, .seed = 5,
					      .scenario = (enum gt_sim_scenario)sc };
			struct gt_store *a = gt_store_new(), *b = gt_store_new();
			cr_assert_eq(gt_sim_generate(&o, a, err, sizeof(err)), 0, "%s", err);
			struct gt_file_info info;
			cr_assert_eq(gt_file_read(path, b, &info, err, sizeof(err)), 0, "%s", err);
			cr_assert_not(info.truncated);
			same_store(a, b);
			gt_store_free(a);
			gt_store_free(b);
		}
}

/* --scenario-rank R: the plant in rank R only, the line says so; usage
 * errors for a rank out of range and for a scenario planted everywhere */
Test(sim_cli, scenario_rank)
{
	char err[4096], args[512];
	snprintf(args, sizeof(args), "sim -o %s/r.gtrace --ranks 3 --gpus 1 --steps 2 "
		 "--scenario input-bound --scenario-rank 1", tmpdir);
	cr_assert_eq(gtrace(args, err, sizeof(err)), 0, "%s", err);
	cr_assert_not_null(strstr(err, "(input-bound in rank 1)"), "%s", err);
	snprintf(args, sizeof(args), "sim -o %s/r.gtrace --ranks 3 --scenario input-bound "
		 "--scenario-rank 3", tmpdir);
	cr_assert_eq(gtrace(args, err, sizeof(err)), 2);
	cr_assert_not_null(strstr(err, "0..2"), "%s", err);
	snprintf(args, sizeof(args), "sim -o %s/r.gtrace --ranks 2 --scenario comm-bound "
		 "--scenario-rank 0", tmpdir);
	cr_assert_eq(gtrace(args, err, sizeof(err)), 2);
	cr_assert_not_null(strstr(err, "every rank"), "%s", err);
	snprintf(args, sizeof(args), "sim -o %s/r.gtrace --scenario-rank x", tmpdir);
	cr_assert_eq(gtrace(args, err, sizeof(err)), 2);
}
