/*
 * cmd_diff.c - 'gtrace diff A B [--report breakdown|kernels|ops|overview]
 * [--format table|csv|json] [--align first|start|step=N] [--rank R]': load
 * a baseline and an experiment run and print their comparison
 * (gtrace/diff.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "gtrace/diff.h"
#include "gtrace/load.h"
#include "stats_out.h"

static void diff_help(FILE *f)
{
	fprintf(f,
		"usage: gtrace diff BASELINE EXPERIMENT [--report NAME] [--format table|csv|json]\n"
		"                   [--align first|start|step=N] [--rank R] [--table NAME|list] [-o DIR]\n"
		"                   [--force]\n\n"
		"Compare two runs (any input gtrace opens).  Deltas are experiment - baseline.\n\n"
		"options:\n"
		"  --report NAME  breakdown (default): per category (Kernel ... Other, Total)\n"
		"                 the average aligned step, then each aligned step side by\n"
		"                 side (keys Step, Row in every row);\n"
		"                 kernels, ops: per name, time / count / mean of both runs and\n"
		"                 the deltas, sorted by absolute delta, names found in one run\n"
		"                 only marked appeared / disappeared; overview: both overviews,\n"
		"                 then their figures and verdicts side by side (diff_verdicts)\n"
		"  --format F     table, csv or json\n"
		"  --align A      first: each run's complete steps paired from its first\n"
		"                 (default); step=N: paired from step N in both runs; start:\n"
		"                 each whole run from its start as one window\n"
		"  --rank R       compare rank R of both runs (default: the lowest rank)\n"
		"  --table NAME   print only that table (list: the tables); CSV prints the\n"
		"                 first table unless --table or -o says otherwise\n"
		"  -o DIR         one file per table in DIR (NAME.csv, .json or .txt); an\n"
		"                 existing file is not replaced without --force\n"
		"  --force        replace existing files in DIR\n");
}

struct diff_args {
	const char *path[2];
	int npath;
	const char *report;
	const char *table, *dir;
	int force;
	enum gt_format_out fmt;
	struct gt_diff_opts o;
};

static int parse_align(const char *v, struct gt_diff_opts *o)
{
	if (!strcmp(v, "first")) {
		o->align = GT_DIFF_ALIGN_FIRST;
		return 0;
	}
	if (!strcmp(v, "start")) {
		o->align = GT_DIFF_ALIGN_START;
		return 0;
	}
	if (strncmp(v, "step=", 5) || !v[5])
		return -1;
	char *end;
	errno = 0;
	long long n = strtoll(v + 5, &end, 10);
	if (*end || errno || n < 0)
		return -1;
	o->align = GT_DIFF_ALIGN_STEP;
	o->step = n;
	return 0;
}

/* 0, -1 when help was printed, or exit status 2 */
static int parse_args(int argc, char **argv, struct diff_args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *val = NULL;
		if (cmd_is_help(arg)) {
			diff_help(stdout);
			return -1;
		}
		if (!strcmp(arg, "--force")) {
			a->force = 1;
			continue;
		}
		if (arg[0] != '-' || !strcmp(arg, "-")) {
			if (a->npath == 2)
				return cmd_usage_error("diff", "two runs, not more ('%s')", arg);
			a->path[a->npath++] = arg;
			continue;
		}
		static const char *const opts[] = { "--report", "--format", "--align", "--rank",
						     "--table", "-o" };
		size_t k = 0;
		for (; k < 6; k++) {
			size_t ol = strlen(opts[k]);
			if (!strncmp(arg, opts[k], ol) && (arg[ol] == 0 || arg[ol] == '=')) {
				if (arg[ol] == '=')
					val = arg + ol + 1;
				else if (i + 1 < argc)
					val = argv[++i];
				else
					return cmd_usage_error("diff", "%s needs a value", opts[k]);
				break;
			}
		}
		char *end;
		switch (k) {
		case 0:
			a->report = val;
			break;
		case 1:
			if (!strcmp(val, "table"))
				a->fmt = GT_OUT_TABLE;
			else if (!strcmp(val, "csv"))
				a->fmt = GT_OUT_CSV;
			else if (!strcmp(val, "json"))
				a->fmt = GT_OUT_JSON;
			else
				return cmd_usage_error("diff", "unknown format '%s' (table, csv, json)", val);
			break;
		case 2:
			if (parse_align(val, &a->o))
				return cmd_usage_error("diff", "--align takes first, start or step=N, "
						       "not '%s'", val);
			break;
		case 3:
			errno = 0;
			a->o.rank = (int32_t)strtol(val, &end, 10);
			if (*end || !*val || errno || a->o.rank < 0)
				return cmd_usage_error("diff", "--rank needs a rank number, not '%s'", val);
			break;
		case 4:
			a->table = val;
			break;
		case 5:
			a->dir = val;
			break;
		default:
			return cmd_usage_error("diff", "unknown option '%s'", arg);
		}
	}
	size_t k = 0;
	while (diff_report_names[k] && strcmp(diff_report_names[k], a->report))
		k++;
	if (!diff_report_names[k])
		return cmd_usage_error("diff", "unknown report '%s' (breakdown, kernels, ops, "
				       "overview)", a->report);
	if (a->npath != 2)
		return cmd_usage_error("diff", "needs two runs: BASELINE EXPERIMENT");
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_args a = { .report = "breakdown", .fmt = GT_OUT_TABLE,
			       .o = { .align = GT_DIFF_ALIGN_FIRST, .rank = -1 } };
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	struct gt_store *s[2] = { NULL, NULL };
	char err[512] = "";
	struct gt_load_opts lo = { .flags = GT_LOAD_PROGRESS };
	for (int k = 0; k < 2 && !rc; k++) {
		if (gt_load(&a.path[k], 1, &lo, &s[k], err, sizeof(err))) {
			cmd_error("%s", err[0] ? err : "cannot load the input");
			rc = 1;
		}
	}
	struct gt_report_out o = { 0 };
	if (!rc && gt_diff_run(s[0], s[1], a.report, &a.o, &o, err, sizeof(err))) {
		cmd_error("%s vs %s: %s", a.path[0], a.path[1], err);
		rc = 1;
	}
	char rname[64];
	snprintf(rname, sizeof(rname), "diff_%s", a.report);
	const struct gt_report rep = { .name = rname };
	const struct gt_report *reps[] = { &rep };
	struct stats_out so = { .reps = reps, .outs = &o, .n = 1, .fmt = a.fmt, .table = a.table,
				.dir = a.dir, .input = a.path[0], .force = a.force };
	if (!rc)
		rc = stats_out_check(&so);
	if (!rc)
		rc = stats_out_emit(&so);
	if (!rc && fflush(stdout)) {
		cmd_error("writing the output: %s", strerror(errno));
		rc = 1;
	}
	gt_report_out_done(&o);
	gt_store_free(s[0]);
	gt_store_free(s[1]);
	return rc;
}
