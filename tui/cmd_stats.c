/*
 * cmd_stats.c - 'gtrace stats PATH... [--report NAME[,NAME...]] [--format
 * table|csv|json] [--step N] [--range T0:T1] [--gpu G] [--rank R]': load any
 * input with gt_load and print reports of the registry (gtrace/report.h).
 * Times of --range are relative to the trace start and need a unit
 * (ns, us, ms, s); either side may be left out.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "gtrace/load.h"
#include "gtrace/ops.h"
#include "gtrace/report.h"
#include "gtrace/steps.h"
#include "runalign.h"
#include "stats_out.h"

#define MAX_REPORTS 32

static void stats_help(FILE *f)
{
	fprintf(f,
		"usage: gtrace stats PATH... [--report NAME[,NAME...]] [--format table|csv|json]\n"
		"                    [--table NAME|list] [-o DIR [--force]]\n"
		"                    [--step N] [--range T0:T1] [--gpu G] [--rank R]\n"
		"                    [--param-bytes B --link-gbps X] [--run NAME] [--memory SIZE]\n"
		"                    [--group-by name|shape|stack]\n\n"
		"Print analyses of a capture (.gtrace), a Kineto/Chrome trace JSON(.gz), an nsys\n"
		"SQLite export, a directory of per-rank traces, a TensorFlow/JAX XPlane profile\n"
		"(.xplane.pb[.gz]) or a TensorBoard log directory.  Several trace JSON (or\n"
		"XPlane) PATHs are merged on one time axis, one rank each.\n\n"
		"options:\n"
		"  --report NAME    report(s) to print, comma separated (default: kernels);\n"
		"                   'list' prints the names\n"
		"  --format F       table (aligned, numbers with thousands separators), csv\n"
		"                   (RFC 4180, plain numbers: one table, the report's main\n"
		"                   one) or json (one object per report, numbers as numbers)\n"
		"  --table NAME     print only table NAME of the reports; 'list' names them\n"
		"  -o DIR           write every table to DIR/NAME.csv (.json, .txt), one each\n"
		"  --force          with -o, replace existing files in DIR\n"
		"  --step N         only step N (ProfilerStep#N or the N-th step found): its\n"
		"                   device-widened window over all ranks\n"
		"  --range T0:T1    only events starting in [T0, T1) after the trace start;\n"
		"                   times need a unit: ns, us, ms or s (1.5s:2s, 100ms:, :250ms)\n"
		"  --gpu G          only GPU lanes of device ordinal G (host lanes stay)\n"
		"  --rank R         only rank R\n"
		"  --param-bytes B  gradient bytes all-reduced per step (k, M, G = 1024-based\n"
		"                   suffixes: 97.5M for ResNet-50's fp32 parameters)\n"
		"  --link-gbps X    link bandwidth in GB/s; with --param-bytes, the multigpu\n"
		"                   and overview reports compare collective time per step\n"
		"                   with the expected all-reduce time B / X\n"
		"  --run NAME       the run of a TensorBoard log directory (default: the newest)\n"
		"  --memory SIZE    decoded events kept in memory (256M, 1G; default: 1 GiB or\n"
		"                   a quarter of RAM); the rest waits in a cache file in\n"
		"                   $TMPDIR (/var/tmp); reports still cover every event;\n"
		"                   0: no budget\n"
		"  --group-by G     ops report: rows per operator name (default), name + input\n"
		"                   shapes (shape) or name + call stack (stack)\n\n"
		"Unknown values are printed as n/a, never as 0.  Kernel, memory, API and NVTX\n"
		"tables use Nsight Systems' definitions: Avg is the mean, Med the exact median\n"
		"(mean of the two middle values for an even count), StdDev the\n"
		"sample standard deviation (n - 1; 0 for one instance).\n\n"
		"reports:\n");
	for (size_t i = 0; i < gt_report_count(); i++) {
		const struct gt_report *r = gt_report_at(i);
		fprintf(f, "  %-10s %s\n", r->name, r->help ? r->help : "");
	}
}

/* "1.5s", "100ms", "250us", "42ns" -> ns; 0 or -1 when malformed */
static int parse_time(const char *s, size_t len, int64_t *out)
{
	char buf[64];
	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (end == buf || errno)
		return -1;
	double mul;
	if (!strcmp(end, "ns"))
		mul = 1;
	else if (!strcmp(end, "us"))
		mul = 1e3;
	else if (!strcmp(end, "ms"))
		mul = 1e6;
	else if (!strcmp(end, "s"))
		mul = 1e9;
	else if (!*end && v == 0)
		mul = 1;
	else
		return -1;
	double ns = v * mul;
	if (!(ns > -9.2e18 && ns < 9.2e18))
		return -1;
	*out = (int64_t)(ns + (ns >= 0 ? 0.5 : -0.5));
	return 0;
}

/* "T0:T1" with either side optional; has0 and has1 say which were given */
static int parse_range(const char *s, int64_t *t0, int64_t *t1, int *has0, int *has1)
{
	const char *c = strchr(s, ':');
	if (!c)
		return -1;
	*has0 = c > s;
	*has1 = c[1] != 0;
	if (*has0 && parse_time(s, (size_t)(c - s), t0))
		return -1;
	if (*has1 && parse_time(c + 1, strlen(c + 1), t1))
		return -1;
	return 0;
}

static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end == s || *end || errno || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* split the --report list into the registry entries; 0, or 2 after
 * printing the usage error */
static int pick_reports(char *list, const struct gt_report **out, size_t *n)
{
	*n = 0;
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		const struct gt_report *r = gt_report_find(tok);
		if (!r) {
			fprintf(stderr, "gtrace stats: unknown report '%s'; reports:", tok);
			for (size_t i = 0; i < gt_report_count(); i++)
				fprintf(stderr, "%s %s", i ? "," : "", gt_report_at(i)->name);
			fputc('\n', stderr);
			return 2;
		}
		size_t k = 0;
		while (k < *n && out[k] != r)
			k++;
		if (k < *n)
			continue;       /* named twice: printed once */
		if (*n == MAX_REPORTS)
			return cmd_usage_error("stats", "too many reports");
		out[(*n)++] = r;
	}
	if (*n == 0)
		return cmd_usage_error("stats", "--report needs a name");
	return 0;
}

struct stats_args {
	const char **paths;
	size_t npaths;
	char *report;
	enum gt_format_out fmt;
	long long step, gpu, rank;
	const char *range;
	uint64_t param_bytes;
	double link_gbps;
	const char *table;      /* --table NAME or list */
	const char *dir;        /* -o DIR */
	int force;              /* --force: -o DIR replaces existing files */
	const char *run;        /* --run: a TensorBoard log directory's run */
	size_t memory;          /* --memory, bytes (0: unbounded) */
	int memory_set;         /* --memory given; else the default budget */
	int group;              /* --group-by: enum gt_ops_group */
};

/* the options, looked up by name; each takes a value */
enum stats_opt {
	OPT_REPORT, OPT_FORMAT, OPT_STEP, OPT_RANGE, OPT_GPU, OPT_RANK, OPT_PARAM_BYTES,
	OPT_LINK_GBPS, OPT_TABLE, OPT_OUTDIR, OPT_RUN, OPT_MEMORY, OPT_GROUP
};

static const struct {
	const char *name;
	enum stats_opt id;
} stats_opts[] = {
	{ "--report", OPT_REPORT }, { "--format", OPT_FORMAT }, { "--step", OPT_STEP },
	{ "--range", OPT_RANGE }, { "--gpu", OPT_GPU }, { "--rank", OPT_RANK },
	{ "--param-bytes", OPT_PARAM_BYTES }, { "--link-gbps", OPT_LINK_GBPS },
	{ "--table", OPT_TABLE }, { "-o", OPT_OUTDIR }, { "--output-dir", OPT_OUTDIR },
	{ "--run", OPT_RUN }, { "--memory", OPT_MEMORY }, { "--group-by", OPT_GROUP },
};

/* one option with its value into a; 0 or the usage error's exit status */
static int set_opt(struct stats_args *a, enum stats_opt id, const char *val)
{
	switch (id) {
	case OPT_REPORT:
		a->report = (char *)val;
		break;
	case OPT_MEMORY:
		if (gt_parse_size(val, &a->memory))
			return cmd_usage_error("stats", "--memory: '%s' is not 0 (no bound) or a size "
					       "(e.g. 256M, 2G)", val);
		a->memory_set = 1;
		break;
	case OPT_FORMAT:
		if (!strcmp(val, "table"))
			a->fmt = GT_OUT_TABLE;
		else if (!strcmp(val, "csv"))
			a->fmt = GT_OUT_CSV;
		else if (!strcmp(val, "json"))
			a->fmt = GT_OUT_JSON;
		else
			return cmd_usage_error("stats", "unknown format '%s' (table, csv, json)", val);
		break;
	case OPT_STEP:
		if (parse_int(val, 0, INT64_MAX, &a->step))
			return cmd_usage_error("stats", "--step needs a step number, not '%s'", val);
		break;
	case OPT_RANGE:
		a->range = val;
		break;
	case OPT_GPU:
		if (parse_int(val, 0, INT32_MAX, &a->gpu))
			return cmd_usage_error("stats", "--gpu needs a device ordinal, not '%s'", val);
		break;
	case OPT_RANK:
		if (parse_int(val, 0, INT32_MAX, &a->rank))
			return cmd_usage_error("stats", "--rank needs a rank number, not '%s'", val);
		break;
	case OPT_PARAM_BYTES:
		if (cmd_parse_bytes(val, &a->param_bytes))
			return cmd_usage_error("stats", "--param-bytes needs a byte count like 4096, "
					       "97.5M or 2G, not '%s'", val);
		break;
	case OPT_LINK_GBPS:
		if (cmd_parse_gbps(val, &a->link_gbps))
			return cmd_usage_error("stats", "--link-gbps needs a bandwidth in GB/s like "
					       "25 or 450, not '%s'", val);
		break;
	case OPT_TABLE:
		if (!val[0])
			return cmd_usage_error("stats", "--table needs a table name or 'list'");
		a->table = val;
		break;
	case OPT_OUTDIR:
		if (!val[0])
			return cmd_usage_error("stats", "-o needs a directory");
		a->dir = val;
		break;
	case OPT_RUN:
		a->run = val;
		break;
	case OPT_GROUP:
		if (!strcmp(val, "name"))
			a->group = GT_OPS_BY_NAME;
		else if (!strcmp(val, "shape"))
			a->group = GT_OPS_BY_SHAPE;
		else if (!strcmp(val, "stack"))
			a->group = GT_OPS_BY_STACK;
		else
			return cmd_usage_error("stats", "unknown grouping '%s' (name, shape, stack)",
					       val);
		break;
	}
	return 0;
}

/* parse the command line; 0, -1 for --help printed, or the exit status 2 */
static int parse_args(int argc, char **argv, struct stats_args *a)
{
	a->fmt = GT_OUT_TABLE;
	a->step = a->gpu = a->rank = -1;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *val = NULL;
		if (cmd_is_help(arg)) {
			stats_help(stdout);
			return -1;
		}
		if (arg[0] != '-' || !strcmp(arg, "-")) {
			a->paths[a->npaths++] = arg;
			continue;
		}
		if (!strcmp(arg, "--force")) {
			a->force = 1;
			continue;
		}
		size_t k = 0, nopt = sizeof(stats_opts) / sizeof(stats_opts[0]);
		for (; k < nopt; k++) {
			size_t ol = strlen(stats_opts[k].name);
			if (!strncmp(arg, stats_opts[k].name, ol) && (arg[ol] == 0 || arg[ol] == '='))
				break;
		}
		if (k == nopt)
			return cmd_usage_error("stats", "unknown option '%s'", arg);
		size_t ol = strlen(stats_opts[k].name);
		if (arg[ol] == '=')
			val = arg + ol + 1;
		else if (i + 1 < argc)
			val = argv[++i];
		else
			return cmd_usage_error("stats", "%s needs a value", stats_opts[k].name);
		int rc = set_opt(a, stats_opts[k].id, val);
		if (rc)
			return rc;
	}
	if (!a->param_bytes != !(a->link_gbps > 0))
		return cmd_usage_error("stats", "--param-bytes and --link-gbps go together");
	return 0;
}

/* does the store know rank R (a rank record or a lane of it; -1 counts as 0)? */
static int has_rank(const struct gt_store *s, int32_t r)
{
	for (size_t i = 0; i < gt_store_rank_count(s); i++)
		if (gt_store_rank_at(s, i)->rank == r)
			return 1;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		int32_t lr = gt_store_lane_at(s, (uint32_t)i)->key.rank;
		if ((lr < 0 ? 0 : lr) == r)
			return 1;
	}
	return 0;
}

/* does the store know GPU G (of rank r, or any rank when r < 0): a device
 * record or a GPU lane? */
static int has_gpu(const struct gt_store *s, int32_t g, int32_t r)
{
	for (size_t i = 0; i < gt_store_device_count(s); i++) {
		const struct gt_device *d = gt_store_device_at(s, i);
		if (d->id == g && (r < 0 || d->rank == r))
			return 1;
	}
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane_key *k = &gt_store_lane_at(s, (uint32_t)i)->key;
		if (k->type == GT_LANE_GPU && k->device == g && (r < 0 || k->rank == r))
			return 1;
	}
	return 0;
}

/* events on GPU G's lanes (of rank r, or any rank when r < 0); G < 0: on
 * every GPU's */
static uint64_t gpu_events(const struct gt_store *s, int32_t g, int32_t r)
{
	uint64_t n = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type == GT_LANE_GPU && (g < 0 || l->key.device == g) &&
		    (r < 0 || l->key.rank == r))
			n += l->n;
	}
	return n;
}

/* "GPUs with events: 0, 3" (of rank r when r >= 0), for the --gpu message */
static void gpus_with_events(const struct gt_store *s, int32_t r, char *buf, size_t len)
{
	size_t w = (size_t)snprintf(buf, len, "GPUs with events:");
	int any = 0;
	for (int32_t g = 0; g < 1024 && w < len; g++) {
		if (!gpu_events(s, g, r))
			continue;
		w += (size_t)snprintf(buf + w, len - w, "%s %d", any ? "," : "", (int)g);
		any = 1;
	}
	if (!any)
		snprintf(buf, len, "no GPU has events");
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* "steps: 5..10" / "steps: 1, 4, 9" / "the trace has no steps": what
 * --step could have named, for the error message */
static void step_numbers(const struct gt_store *s, char *buf, size_t len)
{
	int32_t *ranks = NULL;
	long nr = gt_steps_ranks(s, &ranks);
	int64_t *v = NULL;
	size_t n = 0;
	for (long i = 0; i < nr; i++) {
		struct gt_steps_list l;
		char err[128];
		if (gt_steps_find(s, ranks[i], NULL, &l, err, sizeof(err)))
			continue;
		int64_t *nv = realloc(v, (n + l.n + 1) * sizeof(*v));
		if (nv) {
			v = nv;
			for (size_t k = 0; k < l.n; k++)
				v[n++] = l.v[k].number;
		}
		gt_steps_list_done(&l);
	}
	free(ranks);
	if (!n) {
		snprintf(buf, len, "the trace has no steps");
		free(v);
		return;
	}
	qsort(v, n, sizeof(*v), cmp_i64);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	if (v[u - 1] - v[0] == (int64_t)u - 1 && u > 2) {
		snprintf(buf, len, "steps: %lld..%lld", (long long)v[0], (long long)v[u - 1]);
	} else {
		size_t w = (size_t)snprintf(buf, len, "steps:");
		for (size_t i = 0; i < u && i < 10 && w < len; i++)
			w += (size_t)snprintf(buf + w, len - w, "%s %lld", i ? "," : "", (long long)v[i]);
		if (u > 10 && w < len)
			snprintf(buf + w, len - w, ", ...");
	}
	free(v);
}

/* "ranks: 0, 1" or "GPUs: 0, 1, 3" (of rank r when r >= 0) for the error
 * messages of --rank and --gpu */
static void id_list(const struct gt_store *s, int gpus, int32_t r, char *buf, size_t len)
{
	int64_t v[64];
	size_t n = 0, more = 0;
	size_t nl = gt_store_lane_count(s);
	for (size_t i = 0; i <= nl + gt_store_device_count(s) + gt_store_rank_count(s); i++) {
		int64_t x;
		if (i < nl) {
			const struct gt_lane_key *k = &gt_store_lane_at(s, (uint32_t)i)->key;
			int32_t kr = k->rank;
			if (gpus && (k->type != GT_LANE_GPU || (r >= 0 && kr != r)))
				continue;
			x = gpus ? k->device : kr;
		} else if (i - nl < gt_store_device_count(s)) {
			const struct gt_device *d = gt_store_device_at(s, i - nl);
			if (!gpus || (r >= 0 && d->rank != r))
				continue;
			x = d->id;
		} else if (i - nl - gt_store_device_count(s) < gt_store_rank_count(s)) {
			if (gpus)
				continue;
			x = gt_store_rank_at(s, i - nl - gt_store_device_count(s))->rank;
		} else {
			break;
		}
		size_t k = 0;
		while (k < n && v[k] != x)
			k++;
		if (k == n) {
			if (n < sizeof(v) / sizeof(v[0]))
				v[n++] = x;
			else
				more = 1;
		}
	}
	qsort(v, n, sizeof(*v), cmp_i64);
	size_t w = (size_t)snprintf(buf, len, "%s:", gpus ? "GPUs" : "ranks");
	for (size_t i = 0; i < n && i < 16 && w < len; i++)
		w += (size_t)snprintf(buf + w, len - w, "%s %lld", i ? "," : "", (long long)v[i]);
	if ((more || n > 16) && w < len)
		snprintf(buf + w, len - w, ", ...");
	if (!n)
		snprintf(buf, len, "%s", gpus ? "no GPUs" : "no ranks");
}

/* the scope from the options (needs the loaded store); 0, or an exit status */
static int make_scope(const struct gt_store *s, const struct stats_args *a, struct gt_scope *sc)
{
	gt_scope_all(sc);
	sc->param_bytes = a->param_bytes;
	sc->link_gbps = a->link_gbps;
	sc->flags |= (unsigned)a->group << GT_OPS_SCOPE_GROUP_SHIFT;
	sc->gpu = (int32_t)a->gpu;
	sc->rank = (int32_t)a->rank;
	/* an unknown rank or GPU is a mistake, not an empty table */
	char have[200];
	if (a->rank >= 0 && !has_rank(s, sc->rank)) {
		id_list(s, 0, -1, have, sizeof(have));
		cmd_error("%s: no rank %lld in the trace (%s)", a->paths[0], a->rank, have);
		return 1;
	}
	if (a->gpu >= 0 && !has_gpu(s, sc->gpu, sc->rank)) {
		id_list(s, 1, sc->rank, have, sizeof(have));
		cmd_error("%s: no GPU %lld%s in the trace (%s)", a->paths[0], a->gpu,
			  a->rank >= 0 ? " on that rank" : "", have);
		return 1;
	}
	/* a GPU of the device table with no events would fall back to other
	 * figures (a report over nothing): refuse it the same way */
	if (a->gpu >= 0 && !gpu_events(s, sc->gpu, sc->rank)) {
		gpus_with_events(s, sc->rank, have, sizeof(have));
		cmd_error("%s: GPU %lld%s has no events (%s)", a->paths[0], a->gpu,
			  a->rank >= 0 ? " of that rank" : "", have);
		return 1;
	}
	if (a->range) {
		int64_t t0 = 0, t1 = 0;
		int h0, h1;
		if (parse_range(a->range, &t0, &t1, &h0, &h1))
			return cmd_usage_error("stats", "bad --range '%s' (T0:T1 with units ns, us, ms, s, "
					       "e.g. 1.5s:2s)", a->range);
		int64_t base = gt_store_t_min(s);
		if (h0)
			sc->t0_ns = base + t0;
		if (h1)
			sc->t1_ns = base + t1;
		if (sc->t1_ns <= sc->t0_ns)
			return cmd_usage_error("stats", "empty --range '%s'", a->range);
	}
	if (a->step >= 0) {
		sc->step = a->step;
		if (gt_steps_scope(s, sc, sc, NULL, 0)) {   /* the step's window (core) */
			step_numbers(s, have, sizeof(have));
			cmd_error("%s: no step %lld in the trace (%s)", a->paths[0], a->step, have);
			return 1;
		}
	}
	return 0;
}

int cmd_stats(int argc, char **argv)
{
	const char **paths = calloc((size_t)argc + 1, sizeof(*paths));
	if (!paths) {
		cmd_error("out of memory");
		return 1;
	}
	char defrep[] = "kernels";
	struct stats_args a = { .paths = paths, .report = defrep };
	const struct gt_report *reps[MAX_REPORTS];
	size_t nrep = 0;
	struct gt_store *s = NULL;
	int rc = parse_args(argc, argv, &a);
	if (rc) {
		rc = rc < 0 ? 0 : rc;
		goto out;
	}
	if (!strcmp(a.report, "list")) {
		for (size_t i = 0; i < gt_report_count(); i++)
			printf("%-10s %s\n", gt_report_at(i)->name, gt_report_at(i)->help);
		goto out;
	}
	char *list = strdup(a.report);
	rc = list ? pick_reports(list, reps, &nrep) : 1;
	free(list);
	if (rc)
		goto out;
	if (a.npaths == 0) {
		rc = cmd_usage_error("stats", "no input file given");
		goto out;
	}
	struct stats_out chk = { .n = nrep, .fmt = a.fmt, .table = a.table, .dir = a.dir };
	rc = stats_out_check(&chk);
	if (rc)
		goto out;
	char err[512] = "";
	struct gt_load_opts lo = { .flags = GT_LOAD_PROGRESS, .run = a.run,
				   .memory_bytes = a.memory_set ? a.memory : gt_default_memory_budget() };
	if (!a.memory_set)
		lo.flags |= GT_LOAD_MEMORY_SOFT;
	if (gt_load(paths, a.npaths, &lo, &s, err, sizeof(err))) {
		cmd_error("%s", err[0] ? err : "cannot load the input");
		rc = 1;
		goto out;
	}
	/* separate runs (import.mixed_runs) start together, as in gtrace open */
	char note[96];
	if (runalign_starts(s, note, sizeof(note))) {
		cmd_error("out of memory");
		rc = 1;
		goto out;
	}
	struct gt_scope sc;
	rc = make_scope(s, &a, &sc);
	if (rc)
		goto out;
	struct gt_report_out outs[MAX_REPORTS] = { { 0 } };
	struct stats_out so = { .reps = reps, .outs = outs, .n = nrep, .fmt = a.fmt,
				.table = a.table, .dir = a.dir, .input = a.paths[0], .force = a.force };
	for (size_t i = 0; i < nrep && !rc; i++) {
		err[0] = 0;
		if (reps[i]->run(s, &sc, &outs[i], err, sizeof(err))) {
			cmd_error("%s: %s", reps[i]->name, err[0] ? err : "report failed");
			rc = 1;
		}
	}
	if (!rc)
		rc = stats_out_emit(&so);
	for (size_t i = 0; i < nrep; i++)
		gt_report_out_done(&outs[i]);
	if (fflush(stdout) && !rc) {
		cmd_error("writing the output: %s", strerror(errno));
		rc = 1;
	}
out:
	gt_store_free(s);
	free(paths);
	return rc;
}
