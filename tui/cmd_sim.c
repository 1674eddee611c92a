/*
 * cmd_sim.c - 'gtrace sim': write a synthetic capture of a data-parallel
 * trainer (core/sim, docs/simulator.md) to a .gtrace file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "gtrace/gtfile.h"
#include "gtrace/sim.h"
#include "cmd.h"
#include "live_sess.h"

static void sim_usage(FILE *f)
{
	fprintf(f,
		"usage: gtrace sim -o FILE [--gpus N] [--ranks R] [--steps N] [--scenario NAME]\n"
		"                  [--scenario-rank R] [--events N] [--seed S] [--force]\n\n"
		"Write a synthetic capture of a data-parallel trainer (R ranks x N GPUs, a compute,\n"
		"copy and NCCL stream per GPU, a host thread per rank) with a planted bottleneck.\n\n"
		"  -o, --output FILE   the .gtrace file to write\n"
		"  --force             replace FILE if it exists\n"
		"  --gpus N            GPUs per rank, 1..64 (default 4, or 1 when --ranks > 1)\n"
		"  --ranks R           ranks (processes), default 1\n"
		"  --steps N           training steps, default 20\n"
		"  --scenario NAME     %s\n"
		"                      (default balanced; docs/simulator.md says what each plants)\n"
		"  --scenario-rank R   plant it in rank R only (input-bound, straggler, staggered);\n"
		"                      default every rank\n"
		"  --events N          grow the steps to reach about N events (k, M, G suffixes)\n"
		"  --seed S            PRNG seed, default 1; same seed and options, same capture\n"
		"  --memory PATTERN    also allocator records on GPU 0: steady (a peak in the\n"
		"                      middle op of each step) or leak (also 8 MiB a step never\n"
		"                      freed)\n\n"
		"Events beyond the default memory budget of the other commands (1G or a quarter\n"
		"of RAM, whichever is smaller; not set here: --memory above is the allocator's\n"
		"pattern) are held in a cache file in TMPDIR while the capture is generated and\n"
		"written.\n\n"
		"gtrace sim --live [--gpus N] [--rate EVENTS_PER_S] [--seconds S] runs a stand-in\n"
		"trainer to attach to instead ('gtrace sim --live --help').\n",
		gt_sim_scenario_list());
}

/* strict unsigned number with an optional k/M/G suffix; 0 on success */
static int parse_count(const char *s, uint64_t *out)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	uint64_t mul = 1;
	if (*end == 'k' || *end == 'K')
		mul = 1000, end++;
	else if (*end == 'm' || *end == 'M')
		mul = 1000000, end++;
	else if (*end == 'g' || *end == 'G')
		mul = 1000000000, end++;
	if (*end || (mul > 1 && v > UINT64_MAX / mul))
		return -1;
	*out = (uint64_t)v * mul;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cmd_sim(int argc, char **argv)
{
	struct gt_sim_opts o = { 0 };
	const char *out = NULL;
	uint64_t v;
	int force = 0;
	/* `gtrace sim --live ...`: a stand-in trainer process to attach to */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--live"))
			return live_sim_main(argc, argv);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (cmd_is_help(a)) {
			sim_usage(stdout);
			return 0;
		}
		if (a[0] != '-' || !a[1])
			return cmd_usage_error("sim", "unexpected argument '%s'", a);
		if (!strcmp(a, "--force")) {
			force = 1;
			continue;
		}
		if (!val)
			return cmd_usage_error("sim", "%s needs a value", a);
		i++;
		if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			out = val;
		} else if (!strcmp(a, "--scenario")) {
			int sc = gt_sim_scenario_parse(val);
			if (sc < 0)
				return cmd_usage_error("sim", "unknown scenario '%s' (valid: %s)", val,
						       gt_sim_scenario_list());
			o.scenario = (enum gt_sim_scenario)sc;
		} else if (!strcmp(a, "--scenario-rank")) {
			if (parse_count(val, &v) || v > 1023)
				return cmd_usage_error("sim", "--scenario-rank must be 0..1023 (got '%s')", val);
			o.scenario_rank = (int)v;
			o.flags |= GT_SIM_F_ONE_RANK;
		} else if (!strcmp(a, "--gpus")) {
			if (parse_count(val, &v) || v < 1 || v > 64)
				return cmd_usage_error("sim", "--gpus must be 1..64 (got '%s')", val);
			o.gpus = (int)v;
		} else if (!strcmp(a, "--ranks")) {
			if (parse_count(val, &v) || v < 1 || v > 1024)
				return cmd_usage_error("sim", "--ranks must be 1..1024 (got '%s')", val);
			o.ranks = (int)v;
		} else if (!strcmp(a, "--steps")) {
			if (parse_count(val, &v) || v < 1 || v > 100000000)
				return cmd_usage_error("sim", "--steps must be 1..100000000 (got '%s')", val);
			o.steps = (int)v;
		} else if (!strcmp(a, "--events")) {
			if (parse_count(val, &v) || v < 1)
				return cmd_usage_error("sim", "--events must be a positive count (got '%s')", val);
			o.events = v;
		} else if (!strcmp(a, "--seed")) {
			if (parse_count(val, &v))
				return cmd_usage_error("sim", "--seed must be a number (got '%s')", val);
			o.seed = v;
		} else if (!strcmp(a, "--memory")) {
			if (!strcmp(val, "steady"))
				o.flags |= GT_SIM_F_MEMORY;
			else if (!strcmp(val, "leak"))
				o.flags |= GT_SIM_F_MEMORY | GT_SIM_F_MEMLEAK;
			else
				return cmd_usage_error("sim", "--memory takes steady or leak (got '%s')", val);
		} else {
			return cmd_usage_error("sim", "unknown option '%s'", a);
		}
	}
	if (!out)
		return cmd_usage_error("sim", "missing -o FILE");
	/* the stagger is between GPUs of one rank: with one GPU per rank (the
	   default when --ranks > 1) nothing would be planted */
	int gpus = o.gpus ? o.gpus : (o.ranks > 1 ? 1 : 4);
	if (o.scenario == GT_SIM_STAGGERED && gpus < 2)
		return cmd_usage_error("sim", "staggered needs --gpus 2 or more: it staggers the GPUs "
				       "of one rank (with --ranks the default is 1 GPU per rank)");
	size_t ol = strlen(out);
	if ((ol >= 5 && !strcmp(out + ol - 5, ".json")) || (ol >= 8 && !strcmp(out + ol - 8, ".json.gz")))
		return cmd_usage_error("sim", "%s: sim writes a .gtrace capture, not JSON; write FILE.gtrace "
				       "and run 'gtrace export FILE.gtrace -o %s'", out, out);

	char err[512] = "";
	struct gt_sim_truth t;
	double t0 = now_s();
	struct gt_store *s = gt_store_new();
	if (!s) {
		cmd_error("%s: out of memory", out);
		return 1;
	}
	/* the same bound as open and record: a capture bigger than memory is
	   generated in the store's cache file (in TMPDIR) and written from it */
	int rc = gt_store_set_budget(s, gt_default_memory_budget());
	if (rc) {
		const char *dir = getenv("TMPDIR");
		fprintf(stderr, "gtrace sim: warning: no cache file in %s (%s): generating in memory\n",
			dir && *dir ? dir : "/var/tmp", strerror(-rc));
		gt_store_set_budget(s, 0);
	}
	rc = gt_sim_generate_truth(&o, s, &t, err, sizeof(err));
	if (rc) {
		gt_store_free(s);
		if (rc == -EINVAL)
			return cmd_usage_error("sim", "%s", err);
		cmd_error("%s: %s", out, err);
		return 1;
	}
	/* like export and record: an existing file is replaced only with --force */
	struct gt_file_writer_opts wo = { .open_flags = force ? 0 : GT_FILE_W_KEEP };
	rc = gt_file_write_store_opts(s, out, &wo, err, sizeof(err));
	size_t nev = gt_store_event_count(s);
	gt_store_free(s);
	if (rc) {
		cmd_error("%s", err[0] ? err : "cannot write the capture");
		return 1;
	}
	struct stat sb;
	double mb = stat(out, &sb) ? 0.0 : (double)sb.st_size / 1e6;
	char where[32] = "";
	if (t.scenario_rank >= 0)
		snprintf(where, sizeof(where), " in rank %d", t.scenario_rank);
	fprintf(stderr, "gtrace sim: %s: %zu events, %d steps, %d GPU%s x %d rank%s (%s%s), %.1f MB, %.2f s\n",
		out, nev, t.steps, t.gpus, t.gpus > 1 ? "s" : "", t.ranks, t.ranks > 1 ? "s" : "",
		gt_sim_scenario_name(t.scenario), where, mb, now_s() - t0);
	return 0;
}
