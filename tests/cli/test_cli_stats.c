/*
 * test_cli_stats.c - `gtrace stats` through the built binary
 * ($GTRACE_BUILD/tui/gtrace) on the real trace corpus.  Golden numbers are
 * the counts in shared/testdata/MANIFEST.md or independent counts over the
 * raw JSON (the Python one-liners are in the comments); 2021-schema traces
 * have integer microseconds, so ns = us x 1000.
 * Real-trace tests skip when ../shared/testdata is absent (tests/testdata.h).
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gtrace_config.h"
#include "../testdata.h"
#if GTRACE_HAVE_SQLITE
#include <math.h>
#include <sqlite3.h>
#endif

struct run {
	char *out, *err;
	int rc;
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return strdup("");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char tmp[65536];
	size_t n;
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		fwrite(tmp, 1, n, m);
	fclose(f);
	fclose(m);
	return buf;
}

/* run `gtrace ARGS` (a shell-quoted string), capturing stdout and stderr */
static struct run gtrace(const char *args)
{
	const char *build = getenv("GTRACE_BUILD");
	const char *src = getenv("GTRACE_SRC");
	cr_assert(build && src, "GTRACE_BUILD / GTRACE_SRC not set");
	char so[] = "/tmp/gt_cli_outXXXXXX", se[] = "/tmp/gt_cli_errXXXXXX";
	int fo = mkstemp(so), fe = mkstemp(se);
	cr_assert(fo >= 0 && fe >= 0);
	char *cmd = NULL;
	cr_assert(asprintf(&cmd, "cd '%s' && '%s/tui/gtrace' %s >%s 2>%s", src, build, args, so, se) > 0);
	int st = system(cmd);
	free(cmd);
	struct run r = { slurp(so), slurp(se), WIFEXITED(st) ? WEXITSTATUS(st) : -1 };
	close(fo);
	close(fe);
	unlink(so);
	unlink(se);
	return r;
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* ---- a small RFC 4180 reader for the first table of a CSV output ---- */

struct csv {
	char ***rows;   /* rows[0] is the header */
	size_t *nf;
	size_t n;
};

static void csv_parse(const char *s, struct csv *c)
{
	memset(c, 0, sizeof(*c));
	while (*s && *s != '\n') {
		char **f = NULL;
		size_t nf = 0;
		for (;;) {
			char *buf = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&buf, &len);
			if (*s == '"') {
				for (s++; *s; s++) {
					if (*s == '"' && s[1] == '"')
						fputc(*s++, m);
					else if (*s == '"')
						break;
					else
						fputc(*s, m);
				}
				if (*s == '"')
					s++;
			} else {
				while (*s && *s != ',' && *s != '\n')
					fputc(*s++, m);
			}
			fclose(m);
			f = realloc(f, (nf + 1) * sizeof(*f));
			f[nf++] = buf;
			if (*s == ',') {
				s++;
				continue;
			}
			break;
		}
		if (*s == '\n')
			s++;
		c->rows = realloc(c->rows, (c->n + 1) * sizeof(*c->rows));
		c->nf = realloc(c->nf, (c->n + 1) * sizeof(*c->nf));
		c->rows[c->n] = f;
		c->nf[c->n++] = nf;
	}
}

static void csv_free(struct csv *c)
{
	for (size_t i = 0; i < c->n; i++) {
		for (size_t j = 0; j < c->nf[i]; j++)
			free(c->rows[i][j]);
		free(c->rows[i]);
	}
	free(c->rows);
	free(c->nf);
}

static size_t csv_col(const struct csv *c, const char *name)
{
	for (size_t j = 0; c->n && j < c->nf[0]; j++)
		if (!strcmp(c->rows[0][j], name))
			return j;
	cr_assert_fail("no column '%s'", name);
	return 0;
}

/* sum of an integer column over the data rows */
static long long csv_sum(const struct csv *c, const char *name)
{
	size_t j = csv_col(c, name);
	long long s = 0;
	for (size_t i = 1; i < c->n; i++) {
		cr_assert_eq(c->nf[i], c->nf[0], "row %zu has %zu fields", i, c->nf[i]);
		s += atoll(c->rows[i][j]);
	}
	return s;
}

/* kernels CSV of a trace: rows, sum of Instances, sum of Total Time (ns) */
static void check_kernels(const char *trace, size_t rows, long long inst, long long total_ns)
{
	td_need(trace);
	char *args = NULL;
	cr_assert(asprintf(&args, "stats '../shared/testdata/%s' --report kernels --format csv",
			   trace) > 0);
	struct run r = gtrace(args);
	free(args);
	cr_assert_eq(r.rc, 0, "exit %d: %s", r.rc, r.err);
	struct csv c;
	csv_parse(r.out, &c);
	cr_assert_eq(c.n - 1, rows, "%s: %zu rows", trace, c.n - 1);
	cr_assert_eq(csv_sum(&c, "Instances"), inst);
	cr_assert_eq(csv_sum(&c, "Total Time (ns)"), total_ns);
	const char *want[] = { "Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)",
			       "Min (ns)", "Max (ns)", "StdDev (ns)", "Name" };
	for (size_t j = 0; j < 9; j++)
		cr_assert_str_eq(c.rows[0][j], want[j]);
	/* sorted by total time, descending */
	size_t tt = csv_col(&c, "Total Time (ns)");
	for (size_t i = 2; i < c.n; i++)
		cr_assert_geq(atoll(c.rows[i - 1][tt]), atoll(c.rows[i][tt]));
	csv_free(&c);
	run_free(&r);
}

/* MANIFEST.md "Facts to test against" */
Test(cli_stats, kernels_resnet50)
{
	check_kernels("kineto/resnet50_num_workers_0.pt.trace.json.gz", 67, 8772, 591532000LL);
}

Test(cli_stats, kernels_hta_sampled_rank0)
{
	check_kernels("hta/trace_filter/sampled_rank-0.json.gz", 194, 1154, 606519000LL);
}

/*
 * Configs = distinct launch configurations (grid, block, registers, shared
 * memory) per kernel name; n/a beyond 8.  Independent count (python3 over
 * the raw JSON, ph == "X", cat == "kernel", a set of (grid, block,
 * "registers per thread", "shared memory") per name): of the 194 names, 96
 * have one configuration, 51 two, 1 eight, and 2 more than eight.
 */
Test(cli_stats, kernels_configs_sampled_rank0)
{
	td_need("hta/trace_filter/sampled_rank-0.json.gz");
	struct run r = gtrace("stats ../shared/testdata/hta/trace_filter/sampled_rank-0.json.gz "
			      "--report kernels --format csv");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	struct csv c;
	csv_parse(r.out, &c);
	size_t col = csv_col(&c, "Configs");
	int one = 0, two = 0, eight = 0, many = 0;
	for (size_t i = 1; i < c.n; i++) {
		const char *v = c.rows[i][col];
		one += !strcmp(v, "1");
		two += !strcmp(v, "2");
		eight += !strcmp(v, "8");
		many += !strcmp(v, "n/a");
	}
	cr_expect_eq(c.n - 1, 194);
	cr_expect_eq(one, 96);
	cr_expect_eq(two, 51);
	cr_expect_eq(eight, 1);
	cr_expect_eq(many, 2);
	csv_free(&c);
	run_free(&r);
}

Test(cli_stats, kernels_hta_nccl_data)
{
	check_kernels("hta/nccl_data.json.gz", 70, 2700, 162532340LL);
}

Test(cli_stats, kernels_tracelens_h100)
{
	check_kernels("tracelens/h100_qwen_inference.json.gz", 26, 1465, 45432698LL);
}

/*
 * resnet50 raw counts (python3: events with ph == "X" grouped by cat):
 * Memcpy 12 events, dur 11,492 us, args.bytes 115,607,040 (all HtoD);
 * Memset 312, 534 us, 366,475,920 bytes; Runtime 11,923 calls in 8 names,
 * 120,433 us.
 */
Test(cli_stats, memory_and_api_resnet50)
{
	td_need("kineto/resnet50_num_workers_0.pt.trace.json.gz");
	struct run r = gtrace("stats ../shared/testdata/kineto/resnet50_num_workers_0.pt.trace.json.gz "
			      "--report memory --format csv");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	struct csv c;
	csv_parse(r.out, &c);
	cr_assert_eq(c.n, 3);
	cr_assert_eq(csv_sum(&c, "Count"), 324);
	cr_assert_eq(csv_sum(&c, "Total Time (ns)"), 12026000LL);
	size_t op = csv_col(&c, "Operation");
	cr_assert_str_eq(c.rows[1][op], "[CUDA memcpy Host-to-Device]");
	cr_assert_str_eq(c.rows[2][op], "[CUDA memset]");
	csv_free(&c);
	cr_assert_null(strstr(r.out, "\n\n"), "one table per CSV: %s", r.out);
	run_free(&r);
	/* the size table is picked by its name */
	r = gtrace("stats ../shared/testdata/kineto/resnet50_num_workers_0.pt.trace.json.gz "
		   "--report memory --format csv --table memory_size");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	csv_parse(r.out, &c);
	cr_assert_str_eq(c.rows[0][0], "Total (MB)");
	cr_assert_str_eq(c.rows[1][0], "366.476");       /* memset, biggest first */
	cr_assert_str_eq(c.rows[2][0], "115.607");
	/* 115,607,040 bytes in 11,492,000 ns = 10.060 GB/s */
	cr_assert_str_eq(c.rows[2][csv_col(&c, "Bandwidth (GB/s)")], "10.060");
	csv_free(&c);
	run_free(&r);

	r = gtrace("stats ../shared/testdata/kineto/resnet50_num_workers_0.pt.trace.json.gz "
		   "--report api --format csv");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	csv_parse(r.out, &c);
	cr_assert_eq(c.n - 1, 8);
	cr_assert_eq(csv_sum(&c, "Num Calls"), 11923);
	cr_assert_eq(csv_sum(&c, "Total Time (ns)"), 120433000LL);
	csv_free(&c);
	run_free(&r);
}

/*
 * nccl_data: MANIFEST says 21 NCCL kernels; sampled_rank-0: 10.  NVTX:
 * user_annotation + gpu_user_annotation events not named ProfilerStep#
 * (those are steps): 69 ranges, 13 (name, cat) pairs, 1,390,945,652 ns
 * (python3 over the raw JSON, dur summed in us then x 1000 rounded).
 */
Test(cli_stats, nccl_and_nvtx)
{
	td_need("hta/nccl_data.json.gz");
	td_need("hta/trace_filter/sampled_rank-0.json.gz");
	struct run r = gtrace("stats ../shared/testdata/hta/nccl_data.json.gz --report nccl --format csv");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	struct csv c;
	csv_parse(r.out, &c);
	cr_assert_eq(csv_sum(&c, "Count"), 21);
	csv_free(&c);
	run_free(&r);

	r = gtrace("stats ../shared/testdata/hta/trace_filter/sampled_rank-0.json.gz --report nccl "
		   "--format csv");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	csv_parse(r.out, &c);
	cr_assert_eq(csv_sum(&c, "Count"), 10);
	/* no collective arguments in this trace: size and bandwidth unknown */
	cr_assert_str_eq(c.rows[1][csv_col(&c, "Size (bytes)")], "n/a");
	cr_assert_str_eq(c.rows[1][csv_col(&c, "Bus BW (GB/s)")], "n/a");
	csv_free(&c);
	run_free(&r);

	r = gtrace("stats ../shared/testdata/hta/nccl_data.json.gz --report nvtx --format csv");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	csv_parse(r.out, &c);
	cr_assert_eq(c.n - 1, 13);
	cr_assert_eq(csv_sum(&c, "Instances"), 69);
	cr_assert_eq(csv_sum(&c, "Total Time (ns)"), 1390945652LL);
	csv_free(&c);
	run_free(&r);
}

Test(cli_stats, json_is_valid)
{
	td_need("tracelens/h100_qwen_inference.json.gz");
	struct run r = gtrace("stats ../shared/testdata/tracelens/h100_qwen_inference.json.gz "
			      "--report kernels,memory,summary --format json");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	cJSON *root = cJSON_Parse(r.out);
	cr_assert(root, "invalid JSON");
	cr_assert_eq(cJSON_GetArraySize(root), 3);
	cJSON *k = cJSON_GetArrayItem(root, 0);
	cr_assert_str_eq(cJSON_GetObjectItem(k, "report")->valuestring, "kernels");
	cJSON *rows = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(k, "tables"), 0),
					  "rows");
	cr_assert_eq(cJSON_GetArraySize(rows), 26);
	double inst = 0;
	cJSON *row;
	cJSON_ArrayForEach(row, rows)
		inst += cJSON_GetObjectItem(row, "Instances")->valuedouble;
	cr_assert_eq(inst, 1465.0);
	cJSON_Delete(root);
	run_free(&r);
}

Test(cli_stats, range_and_filters)
{
	td_need("kineto/resnet50_num_workers_0.pt.trace.json.gz");
	const char *t = "stats ../shared/testdata/kineto/resnet50_num_workers_0.pt.trace.json.gz "
			"--report kernels --format csv";
	char *args = NULL;
	/* the whole trace as an explicit range gives the same totals */
	cr_assert(asprintf(&args, "%s --range 0s:3600s", t) > 0);
	struct run r = gtrace(args);
	free(args);
	cr_assert_eq(r.rc, 0, "%s", r.err);
	struct csv c;
	csv_parse(r.out, &c);
	cr_assert_eq(csv_sum(&c, "Instances"), 8772);
	csv_free(&c);
	run_free(&r);
	/* GPU 1 has no kernels in this trace (one V100 of four did the work):
	 * refused, see gpu_without_events */
	cr_assert(asprintf(&args, "%s --gpu 1", t) > 0);
	r = gtrace(args);
	free(args);
	cr_assert_eq(r.rc, 1, "%s", r.out);
	cr_assert(strstr(r.err, "GPU 1 has no events (GPUs with events: 0)"), "%s", r.err);
	run_free(&r);
	/* a range of the first 100 ms holds fewer kernels than the whole */
	cr_assert(asprintf(&args, "%s --range :100ms", t) > 0);
	r = gtrace(args);
	free(args);
	cr_assert_eq(r.rc, 0, "%s", r.err);
	csv_parse(r.out, &c);
	long long part = csv_sum(&c, "Instances");
	cr_assert(part > 0 && part < 8772, "%lld", part);
	csv_free(&c);
	run_free(&r);
	/* the complement gives the rest */
	cr_assert(asprintf(&args, "%s --range 100ms:", t) > 0);
	r = gtrace(args);
	free(args);
	cr_assert_eq(r.rc, 0, "%s", r.err);
	csv_parse(r.out, &c);
	cr_assert_eq(part + csv_sum(&c, "Instances"), 8772);
	csv_free(&c);
	run_free(&r);
}

/*
 * a directory of two ranks; --rank 1 keeps rank 1 only.  sampled_rank-1 raw
 * count (python3, ph == "X" and cat == "kernel"): 1,104 kernels, 183 names,
 * 651,026 us; with rank 0's 1,154 kernels (MANIFEST) the directory has 2,258.
 */
Test(cli_stats, directory_and_rank)
{
	td_need("hta/trace_filter");
	struct run r = gtrace("stats ../shared/testdata/hta/trace_filter --report kernels --format csv");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	struct csv c;
	csv_parse(r.out, &c);
	cr_assert_eq(csv_sum(&c, "Instances"), 1154 + 1104);
	cr_assert_eq(csv_sum(&c, "Total Time (ns)"), 606519000LL + 651026000LL);
	csv_free(&c);
	run_free(&r);
	r = gtrace("stats ../shared/testdata/hta/trace_filter --report kernels --format csv --rank 1");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	csv_parse(r.out, &c);
	cr_assert_eq(c.n - 1, 183);
	cr_assert_eq(csv_sum(&c, "Instances"), 1104);
	cr_assert_eq(csv_sum(&c, "Total Time (ns)"), 651026000LL);
	csv_free(&c);
	run_free(&r);
}

/* a rank or GPU the trace does not have is an error, not an empty table
 * (trace_filter holds ranks 0 and 1, each with its own GPU 0 or 1) */
Test(cli_stats, unknown_rank_or_gpu)
{
	td_need("hta/trace_filter");
	struct run r = gtrace("stats ../shared/testdata/hta/trace_filter --format csv --rank 5");
	cr_assert_eq(r.rc, 1, "%s", r.out);
	cr_assert_str_eq(r.err, "gtrace: ../shared/testdata/hta/trace_filter: no rank 5 in the trace "
				"(ranks: 0, 1)\n");
	run_free(&r);
	r = gtrace("stats ../shared/testdata/hta/trace_filter --format csv --gpu 99");
	cr_assert_eq(r.rc, 1, "%s", r.out);
	cr_assert(strstr(r.err, "no GPU 99 in the trace"), "%s", r.err);
	run_free(&r);
	r = gtrace("stats ../shared/testdata/hta/trace_filter --format csv --gpu 0 --rank 1");
	cr_assert_eq(r.rc, 1, "%s", r.out);
	cr_assert(strstr(r.err, "no GPU 0 on that rank in the trace (GPUs: 1)"), "%s", r.err);
	run_free(&r);
	r = gtrace("stats ../shared/testdata/hta/trace_filter --format csv --gpu 1 --rank 1");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	struct csv c;
	csv_parse(r.out, &c);
	cr_assert_eq(csv_sum(&c, "Instances"), 1104);   /* sampled_rank-1, see directory_and_rank */
	csv_free(&c);
	run_free(&r);
}

/* a GPU of the device table without events is refused too (it used to give a
 * report over nothing with other figures): the ResNet-50 trace lists GPUs 0-3
 * in its deviceProperties, its kernels are on one GPU lane (MANIFEST: GPU lanes
 * with kernels 1), device 0 */
Test(cli_stats, gpu_without_events)
{
	td_need("kineto/resnet50_num_workers_0.pt.trace.json.gz");
	const char *f = "../shared/testdata/kineto/resnet50_num_workers_0.pt.trace.json.gz";
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "stats %s --gpu 1 --report overview", f);
	struct run r = gtrace(cmd);
	cr_assert_eq(r.rc, 1, "%s", r.out);
	cr_assert_str_eq(r.out, "");
	char want[256];
	snprintf(want, sizeof(want), "gtrace: %s: GPU 1 has no events (GPUs with events: 0)\n", f);
	cr_assert_str_eq(r.err, want);
	run_free(&r);
	snprintf(cmd, sizeof(cmd), "stats %s --gpu 0 --format csv", f);
	r = gtrace(cmd);
	cr_assert_eq(r.rc, 0, "%s", r.err);
	struct csv c;
	csv_parse(r.out, &c);
	cr_assert_eq(csv_sum(&c, "Instances"), 8772);   /* MANIFEST: 8,772 kernels */
	csv_free(&c);
	run_free(&r);
}

/* the overview counts real host threads only: the ResNet-50 trace's CPU
 * events (cat Operator, Runtime) lie on pid 25738, tids 25738 and 25772 (a
 * count over the raw JSON: host_threads.py); its "Traces"/"PyTorch Profiler"
 * lane and an empty-named one are no thread and were counted (4) */
Test(cli_stats, host_threads_real_only)
{
	td_need("kineto/resnet50_num_workers_0.pt.trace.json.gz");
	struct run r = gtrace("stats ../shared/testdata/kineto/resnet50_num_workers_0.pt.trace.json.gz "
			      "--report overview --format csv");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	struct csv c;
	csv_parse(r.out, &c);
	cr_assert_eq(csv_sum(&c, "Host threads"), 2);
	csv_free(&c);
	run_free(&r);
}

/* --step N: the step's window; steps 5..10 exist (MANIFEST: ProfilerStep#5..#10) */
Test(cli_stats, step_scope)
{
	td_need("kineto/resnet50_num_workers_0.pt.trace.json.gz");
	struct run r = gtrace("stats ../shared/testdata/kineto/resnet50_num_workers_0.pt.trace.json.gz "
			      "--step 5 --format csv");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	struct csv c;
	csv_parse(r.out, &c);
	long long n5 = csv_sum(&c, "Instances");
	cr_assert(n5 > 0 && n5 < 8772, "%lld", n5);
	csv_free(&c);
	run_free(&r);
	r = gtrace("stats ../shared/testdata/kineto/resnet50_num_workers_0.pt.trace.json.gz --step 99");
	cr_assert_eq(r.rc, 1);
	cr_assert(strstr(r.err, "no step 99 in the trace (steps: 5..10)"), "%s", r.err);
	run_free(&r);
}

Test(cli_stats, errors)
{
	struct run r = gtrace("stats /nonexistent/trace.json");
	cr_assert_eq(r.rc, 1);
	cr_assert_str_eq(r.err, "gtrace: /nonexistent/trace.json: No such file or directory\n");
	run_free(&r);

	r = gtrace("stats /nonexistent/trace.json --report nosuch");
	cr_assert_eq(r.rc, 2);
	cr_assert(strstr(r.err, "unknown report 'nosuch'"), "%s", r.err);
	cr_assert(strstr(r.err, "kernels") && strstr(r.err, "summary"), "%s", r.err);
	run_free(&r);

	const char *bad[] = { "--format xml", "--range 5", "--range 1parsec:2s", "--gpu x",
			      "--rank -3", "--step abc", "--bogus", "--param-bytes 97.5X --link-gbps 10",
			      "--param-bytes 0 --link-gbps 10", "--param-bytes 1M --link-gbps -1",
			      "--param-bytes 1M", "--link-gbps 25", "--param-bytes 1.5 --link-gbps 10",
			      "--param-bytes 0x10 --link-gbps 10", "--param-bytes nan --link-gbps 10",
			      "--param-bytes 1M --link-gbps 1e-300", "--param-bytes 1M --link-gbps=",
			      "--group-by size", "--group-by", "" };
	/* a trace the test writes (the simulator's), so the clone alone runs it */
	char f[64];
	snprintf(f, sizeof(f), "/tmp/gtrace_cli_errors_%d.gtrace", (int)getpid());
	char *sim = NULL;
	cr_assert(asprintf(&sim, "sim -o %s --gpus 2 --steps 2", f) > 0);
	r = gtrace(sim);
	free(sim);
	cr_assert_eq(r.rc, 0, "%s", r.err);
	run_free(&r);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *args = NULL;
		cr_assert(asprintf(&args, "stats %s %s%s", f, bad[i],
				   bad[i][0] ? "" : " --range 2s:1s") > 0);
		r = gtrace(args);
		cr_assert_eq(r.rc, 2, "%s: exit %d %s", args, r.rc, r.err);
		free(args);
		run_free(&r);
	}
	/* the same file twice (by two names) is refused, not two ranks */
	char *twice = NULL, want[256];
	cr_assert(asprintf(&twice, "stats %s /tmp/./%s --report overview", f, f + 5) > 0);
	r = gtrace(twice);
	free(twice);
	cr_assert_eq(r.rc, 1, "exit %d %s", r.rc, r.err);
	snprintf(want, sizeof(want), "gtrace: /tmp/./%s: the same file as %s, given twice\n", f + 5, f);
	cr_assert_str_eq(r.err, want);
	run_free(&r);
	unlink(f);
	r = gtrace("stats");
	cr_assert_eq(r.rc, 2);
	run_free(&r);
}

/* ops --group-by: the three groupings of the plugin, one table each; rows
 * of one name add up to the name's row (ResNet-50: 577 (name, shapes) and
 * 376 (name, stack) rows by tests/analysis/ops_ref.py --group; 4,404 calls
 * of aten::empty in the plugin's published table) */
Test(cli_stats, ops_group_by)
{
	td_need("kineto/resnet50_num_workers_0.pt.trace.json.gz");
	const char *t = "../shared/testdata/kineto/resnet50_num_workers_0.pt.trace.json.gz";
	static const struct { const char *g, *col; size_t rows; } w[] = {
		{ "name", "Has Call Stack", 76 }, { "shape", "Input Shape", 577 },
		{ "stack", "Call Stack", 376 },
	};
	for (size_t k = 0; k < 3; k++) {
		char *args = NULL;
		cr_assert(asprintf(&args, "stats %s --report ops --group-by %s --format csv", t,
				   w[k].g) > 0);
		struct run r = gtrace(args);
		free(args);
		cr_assert_eq(r.rc, 0, "%s", r.err);
		struct csv c;
		csv_parse(r.out, &c);
		cr_expect_eq(c.n - 1, w[k].rows, "%s: %zu rows", w[k].g, c.n - 1);
		csv_col(&c, w[k].col);
		size_t nc = csv_col(&c, "Name"), cc = csv_col(&c, "Calls");
		long long empty = 0;
		for (size_t i = 1; i < c.n; i++)
			if (!strcmp(c.rows[i][nc], "aten::empty"))
				empty += atoll(c.rows[i][cc]);
		cr_expect_eq(empty, 4404, "%s: aten::empty calls", w[k].g);
		csv_free(&c);
		run_free(&r);
	}
	struct run r = gtrace("stats ../shared/testdata/kineto/resnet50_num_workers_0.pt.trace.json.gz "
			      "--report ops --group-by size");
	cr_expect_eq(r.rc, 2);
	cr_expect(strstr(r.err, "unknown grouping 'size' (name, shape, stack)"), "%s", r.err);
	run_free(&r);
}

/* --param-bytes 1G (2^30 B) at --link-gbps 1073.741824 (GB/s = bytes/ns)
 * is exactly 1 ms of expected all-reduce per step: the note says so and
 * each GPU's Comm/Expected is its Comm/Step over 1000 us */
Test(cli_stats, expected_allreduce)
{
	char f[64];
	snprintf(f, sizeof(f), "/tmp/gtrace_cli_expected_%d.gtrace", (int)getpid());
	char *args = NULL;
	cr_assert(asprintf(&args, "sim -o %s --gpus 2 --steps 4 --scenario comm-bound", f) > 0);
	struct run r = gtrace(args);
	free(args);
	cr_assert_eq(r.rc, 0, "%s", r.err);
	run_free(&r);
	cr_assert(asprintf(&args, "stats %s --report multigpu --param-bytes 1G --link-gbps 1073.741824", f) > 0);
	r = gtrace(args);
	free(args);
	cr_assert_eq(r.rc, 0, "%s", r.err);
	cr_assert(strstr(r.out, "Expected all-reduce time: 1000.0 us per step (1073741824 parameter bytes"),
		  "%s", r.out);
	run_free(&r);
	cr_assert(asprintf(&args, "stats %s --report multigpu --format csv --param-bytes 1024M "
			   "--link-gbps=1073.741824", f) > 0);
	r = gtrace(args);
	free(args);
	cr_assert_eq(r.rc, 0, "%s", r.err);
	struct csv c;
	csv_parse(r.out, &c);
	size_t comm = csv_col(&c, "Comm/Step (us)"), ratio = csv_col(&c, "Comm/Expected (x)");
	size_t rows = 0;
	for (size_t i = 1; i < c.n; i++) {
		cr_assert_eq(c.nf[i], c.nf[0]);
		double want = atof(c.rows[i][comm]) / 1000.0;
		cr_assert(want > 1.0, "comm-bound: collectives exceed 1 ms per step (%s)", c.rows[i][comm]);
		cr_assert(fabs(atof(c.rows[i][ratio]) - want) < 0.006, "%s vs %.3f", c.rows[i][ratio], want);
		rows++;
	}
	cr_assert_eq(rows, 2, "%s", r.out);
	csv_free(&c);
	run_free(&r);
	unlink(f);
}

/* gtrace open: options before or after the paths, --help anywhere, one-line
 * usage errors with exit 2; without a terminal it says so (exit 1) once the
 * command line is good */
Test(cli_stats, open_command_line)
{
	td_need("hta/nccl_data.json.gz");
	struct run r = gtrace("open ../shared/testdata/hta/nccl_data.json.gz --param-bytes 1M --link-gbps 5 </dev/null");
	cr_assert_eq(r.rc, 1, "%s", r.err);
	cr_assert_str_eq(r.err, "gtrace: the viewer needs a terminal (try 'gtrace stats')\n");
	run_free(&r);
	r = gtrace("open --param-bytes 1M --link-gbps 5 --help");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	cr_assert(strstr(r.out, "usage: gtrace open"), "%s", r.out);
	run_free(&r);
	const char *bad[] = { "open", "open --bogus x.gtrace", "open x.gtrace --link-gbps 5",
			      "open x.gtrace --param-bytes 1.5 --link-gbps 5", "open x.gtrace --param-bytes" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = gtrace(bad[i]);
		cr_assert_eq(r.rc, 2, "%s: exit %d %s", bad[i], r.rc, r.err);
		cr_assert(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "one line: %s", r.err);
		run_free(&r);
	}
}

/* several files merged as ranks: unrelated runs are named as such (the two
 * ResNet-50 kineto traces were taken 19 hours apart; the hta directory mixes
 * world sizes 16 and 2, as their distributedInfo says), a real two-rank job
 * (hta/trace_filter) is not */
Test(cli_stats, unrelated_runs_warned)
{
	td_need("kineto");
	td_need("hta/trace_filter");
	struct run r = gtrace("stats ../shared/testdata/kineto --report summary");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	cr_assert(strstr(r.err, "some ranks do not overlap in time"), "%s", r.err);
	run_free(&r);
	r = gtrace("stats ../shared/testdata/hta --report summary");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	cr_assert(strstr(r.err, "come from different runs (world sizes"), "%s", r.err);
	run_free(&r);
	r = gtrace("stats ../shared/testdata/hta/trace_filter --report summary");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	cr_assert_null(strstr(r.err, "different runs"), "%s", r.err);
	cr_assert_null(strstr(r.err, "do not overlap"), "%s", r.err);
	run_free(&r);
}

/* two runs of one model from different times (the ResNet-50 traces, 19 h
 * apart) are aligned as gtrace open aligns them, not put on a 19-hour
 * axis, and no straggler is named across them; a real two-rank job
 * (hta/trace_filter) keeps its verdict (trial 2) */
Test(cli_stats, separate_runs_aligned_no_straggler)
{
	td_need("kineto");
	td_need("hta/trace_filter");
	struct run r = gtrace("stats ../shared/testdata/kineto/resnet50_num_workers_0.pt.trace.json.gz "
			      "../shared/testdata/kineto/resnet50_num_workers_4.pt.trace.json.gz "
			      "--report summary,multigpu --format json");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	cr_assert(strstr(r.err, "treated as separate runs"), "%s", r.err);
	/* each run spans about 1.07 s and 0.85 s (their trace_span metadata):
	   aligned, the whole lies between the longer one and their sum */
	const char *p = strstr(r.out, "\"Span (s)\": ");
	cr_assert_not_null(p, "%s", r.out);
	double span = strtod(p + strlen("\"Span (s)\": "), NULL);
	cr_expect(span >= 1.06 && span < 1.92, "span %.3f s", span);
	cr_expect(strstr(r.out, "No straggler verdict: the ranks are separate runs"), "%s", r.out);
	cr_expect_null(strstr(r.out, "Straggler: rank"), "%s", r.out);
	run_free(&r);
	r = gtrace("stats ../shared/testdata/hta/trace_filter --report multigpu");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	cr_expect_null(strstr(r.out, "separate runs"), "%s", r.out);
	cr_expect(strstr(r.out, "traggler"), "%s", r.out);
	run_free(&r);
}

/* sim writes the .gtrace format whatever the name: a .json name is refused
 * (it would hold a binary capture) and points to gtrace export */
Test(cli_stats, sim_refuses_json_name)
{
	struct run r = gtrace("sim -o /tmp/gtrace_cli_sim_test.json --steps 1");
	cr_assert_eq(r.rc, 2, "%s", r.err);
	cr_assert(strstr(r.err, "gtrace export"), "%s", r.err);
	cr_assert_neq(access("/tmp/gtrace_cli_sim_test.json", F_OK), 0, "no file written");
	run_free(&r);
}

Test(cli_stats, help_and_list)
{
	struct run r = gtrace("stats --help");
	cr_assert_eq(r.rc, 0);
	const char *names[] = { "kernels", "memory", "api", "nvtx", "nccl", "summary" };
	for (size_t i = 0; i < 6; i++)
		cr_assert(strstr(r.out, names[i]), "%s", names[i]);
	cr_assert(strstr(r.out, "cuda_gpu_kern_sum"));
	cr_assert(strstr(r.out, "sample standard deviation"));
	run_free(&r);
	r = gtrace("stats --report list");
	cr_assert_eq(r.rc, 0);
	for (size_t i = 0; i < 6; i++)
		cr_assert(strstr(r.out, names[i]), "%s", names[i]);
	run_free(&r);
}

#if GTRACE_HAVE_SQLITE
struct kdur {
	char *name;
	long long dur;
};

static int kdur_cmp(const void *pa, const void *pb)
{
	const struct kdur *a = pa, *b = pb;
	int r = strcmp(a->name, b->name);
	return r ? r : (a->dur > b->dur) - (a->dur < b->dur);
}

/*
 * The nsys export holds the raw CUPTI kernel records; nsys stats computes
 * cuda_gpu_kern_sum from them with SQL (count, sum, min, max, median,
 * sample stdev per demangled name).  Recompute that here straight from the
 * SQLite file (independent of gtrace) and compare every row.
 */
Test(cli_stats, kernels_match_nsys_definition_on_sqlite)
{
	td_need("nsys/a100_cloverleaf.nsys.sqlite");
	const char *db = "../shared/testdata/nsys/a100_cloverleaf.nsys.sqlite";
	struct run r = gtrace("stats ../shared/testdata/nsys/a100_cloverleaf.nsys.sqlite "
			      "--report kernels --format csv");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", getenv("GTRACE_SRC"), db);
	sqlite3 *h;
	cr_assert_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(h, "SELECT s.value, k.end - k.start FROM "
					   "CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
					   "ON s.id = k.demangledName", -1, &st, NULL), SQLITE_OK);
	struct kdur *v = NULL;
	size_t n = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		v = realloc(v, (n + 1) * sizeof(*v));
		v[n].name = strdup((const char *)sqlite3_column_text(st, 0));
		v[n].dur = sqlite3_column_int64(st, 1);
		n++;
	}
	sqlite3_finalize(st);
	sqlite3_close(h);
	cr_assert_eq(n, 1312);
	qsort(v, n, sizeof(*v), kdur_cmp);
	struct csv c;
	csv_parse(r.out, &c);
	size_t cn = csv_col(&c, "Name"), ci = csv_col(&c, "Instances"), ct = csv_col(&c, "Total Time (ns)");
	size_t cmed = csv_col(&c, "Med (ns)"), csd = csv_col(&c, "StdDev (ns)");
	size_t cmin = csv_col(&c, "Min (ns)"), cmax = csv_col(&c, "Max (ns)");
	size_t groups = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		long long sum = 0;
		while (j < n && !strcmp(v[j].name, v[i].name))
			sum += v[j++].dur;
		size_t m = j - i;
		double mean = (double)sum / (double)m, ss = 0;
		for (size_t k = i; k < j; k++)
			ss += ((double)v[k].dur - mean) * ((double)v[k].dur - mean);
		double sd = m > 1 ? sqrt(ss / (double)(m - 1)) : 0;
		double med = (m & 1) ? (double)v[i + m / 2].dur :
			     ((double)v[i + m / 2 - 1].dur + (double)v[i + m / 2].dur) / 2;
		size_t row = 0;
		for (size_t k = 1; k < c.n; k++)
			if (!strcmp(c.rows[k][cn], v[i].name))
				row = k;
		cr_assert(row, "no row for %s", v[i].name);
		cr_assert_eq(atoll(c.rows[row][ci]), (long long)m, "%s", v[i].name);
		cr_assert_eq(atoll(c.rows[row][ct]), sum, "%s", v[i].name);
		cr_assert_eq(atoll(c.rows[row][cmin]), v[i].dur);
		cr_assert_eq(atoll(c.rows[row][cmax]), v[j - 1].dur);
		cr_assert_float_eq(atof(c.rows[row][cmed]), med, 0.051, "%s", v[i].name);
		cr_assert_float_eq(atof(c.rows[row][csd]), sd, 0.051, "%s", v[i].name);
		groups++;
		i = j;
	}
	cr_assert_eq(groups, c.n - 1);
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	csv_free(&c);
	run_free(&r);
}

/* memory on the same file: SELECT copyKind, count(*), sum(end - start),
 * sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY copyKind gives
 * HtoD 254 / 9,346,285 ns / 225,065,752 B and DtoH 25 / 44,638 ns / 51,200 B */
Test(cli_stats, memory_on_sqlite)
{
	td_need("nsys/a100_cloverleaf.nsys.sqlite");
	struct run r = gtrace("stats ../shared/testdata/nsys/a100_cloverleaf.nsys.sqlite "
			      "--report memory --format csv");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	struct csv c;
	csv_parse(r.out, &c);
	cr_assert_eq(c.n, 3);
	size_t op = csv_col(&c, "Operation");
	cr_assert_str_eq(c.rows[1][op], "[CUDA memcpy Host-to-Device]");
	cr_assert_eq(atoll(c.rows[1][csv_col(&c, "Count")]), 254);
	cr_assert_eq(atoll(c.rows[1][csv_col(&c, "Total Time (ns)")]), 9346285);
	cr_assert_str_eq(c.rows[2][op], "[CUDA memcpy Device-to-Host]");
	cr_assert_eq(atoll(c.rows[2][csv_col(&c, "Total Time (ns)")]), 44638);
	csv_free(&c);
	run_free(&r);
	r = gtrace("stats ../shared/testdata/nsys/a100_cloverleaf.nsys.sqlite "
		   "--report memory --format csv --table memory_size");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	csv_parse(r.out, &c);
	cr_assert_str_eq(c.rows[1][0], "225.066");
	cr_assert_str_eq(c.rows[2][0], "0.051");
	csv_free(&c);
	run_free(&r);
	/* SELECT count(*), sum(end - start) FROM CUPTI_ACTIVITY_KIND_RUNTIME: 3,048 calls of
	 * 6 names (cudaLaunchKernel_v7000 ... as nsys names them without the _v suffix),
	 * 571,656,984 ns */
	r = gtrace("stats ../shared/testdata/nsys/a100_cloverleaf.nsys.sqlite --report api "
		   "--format csv");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	csv_parse(r.out, &c);
	cr_assert_eq(c.n - 1, 6);
	cr_assert_eq(csv_sum(&c, "Num Calls"), 3048);
	cr_assert_eq(csv_sum(&c, "Total Time (ns)"), 571656984LL);
	csv_free(&c);
	run_free(&r);
}

/* the nsys export names no process for the rank: PID is n/a, not -1 */
Test(cli_stats, summary_unknown_pid_on_sqlite)
{
	td_need("nsys/a100_cloverleaf.nsys.sqlite");
	struct run r = gtrace("stats ../shared/testdata/nsys/a100_cloverleaf.nsys.sqlite --report summary "
			      "--format csv --table summary_ranks");
	cr_assert_eq(r.rc, 0, "%s", r.err);
	cr_assert(!strncmp(r.out, "Rank,PID,World Size,Clock Offset (ns),Host,Source\n0,n/a,n/a,0,n/a,", 63),
		  "%s", r.out);
	run_free(&r);
}
#endif
