/*
 * test_cli_diff.c - `gtrace diff` through the binary on the two ResNet-50
 * runs (0 vs 4 DataLoader workers).  Truth: the TensorBoard plugin's
 * published average step of the 0-worker run (../shared/testdata/MANIFEST.md:
 * Kernel 98,589 ... DataLoader 59,262, Total 177,592 us) and, for both runs,
 * an independent Python pass over the raw JSON (breakdown_ref.py beside
 * this file), the average and every aligned step (its --steps), and the
 * plugin's published steps 5 and 6 of the 0-worker run.  The DataLoader
 * row must carry the difference.  Every row of diff_breakdown carries its
 * keys Step (a number, null for the average) and Row.  Also the operator
 * and kernel comparisons' shape and the error paths.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "../testdata.h"
#include "clirun.h"

#define NW0 "kineto/resnet50_num_workers_0.pt.trace.json.gz"
#define NW4 "kineto/resnet50_num_workers_4.pt.trace.json.gz"

static const char *td(void)
{
	const char *t = getenv("GTRACE_TESTDATA");
	return t ? t : "../shared/testdata";
}

static int gtrace(const char *args, char **out)
{
	return clirun_gtrace(args, "2>&1", out);
}

/* Average (us) of `cat` from breakdown_ref.py's CSV */
static double ref(const char *csv, const char *cat)
{
	char key[64];
	snprintf(key, sizeof(key), "\n%s,", cat);
	const char *p = strstr(csv, key);
	cr_assert_not_null(p, "%s not in the reference", cat);
	return strtod(p + strlen(key), NULL);
}

static char *ref_run_opt(const char *opt, const char *rel)
{
	char *cmd = NULL, *out = NULL;
	cr_assert(asprintf(&cmd, "python3 '%s/tests/cli/breakdown_ref.py' %s '%s/%s'",
			   getenv("GTRACE_SRC"), opt, td(), rel) > 0);
	cr_assert_eq(clirun_capture(cmd, &out), 0, "breakdown_ref.py failed");
	free(cmd);
	return out;
}

static char *ref_run(const char *rel)
{
	return ref_run_opt("", rel);
}

/* step `step`'s `cat` (us) from breakdown_ref.py --steps */
static double ref_step(const char *csv, long long step, const char *cat)
{
	char key[96];
	snprintf(key, sizeof(key), "\n%lld,%s,", step, cat);
	const char *p = strstr(csv, key);
	cr_assert_not_null(p, "step %lld %s not in the reference", step, cat);
	return strtod(p + strlen(key), NULL);
}

static const cJSON *rows_of(const cJSON *root, const char *table)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(root, "tables"))
		if (!strcmp(cJSON_GetObjectItem(t, "name")->valuestring, table))
			return cJSON_GetObjectItem(t, "rows");
	cr_assert_fail("no table %s", table);
	return NULL;
}

static const cJSON *row_named(const cJSON *rows, const char *key, const char *val)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, rows) {
		const cJSON *v = cJSON_GetObjectItem(r, key);
		if (cJSON_IsString(v) && !strcmp(v->valuestring, val))
			return r;
	}
	cr_assert_fail("no row %s", val);
	return NULL;
}

static double num(const cJSON *r, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(r, k);
	cr_assert(cJSON_IsNumber(v), "%s is not a number", k);
	return v->valuedouble;
}

Test(cli_diff, resnet50_dataloader_row, .timeout = 180)
{
	td_need(NW0);   /* skips without ../shared/testdata */
	td_need(NW4);
	char args[2048], *out = NULL;
	snprintf(args, sizeof(args), "diff '%s/" NW0 "' '%s/" NW4 "' --format json", td(), td());
	cr_assert_eq(gtrace(args, &out), 0, "%s", out);
	cJSON *root = cJSON_Parse(out);
	cr_assert_not_null(root, "not JSON: %.200s", out);
	const cJSON *rows = rows_of(root, "diff_breakdown");
	char *ra = ref_run(NW0), *rb = ref_run(NW4);
	static const char *const cats[] = { "Kernel", "Memcpy", "Memset", "Runtime", "DataLoader",
					    "CPU Exec", "Other", "Total", NULL };
	for (size_t i = 0; cats[i]; i++) {
		const cJSON *r = row_named(rows, "Category", cats[i]);
		double a = ref(ra, cats[i]), b = ref(rb, cats[i]);
		cr_expect(fabs(num(r, "Baseline (us)") - a) < 0.06, "%s baseline %f vs %f", cats[i],
			  num(r, "Baseline (us)"), a);
		cr_expect(fabs(num(r, "Experiment (us)") - b) < 0.06, "%s experiment %f vs %f",
			  cats[i], num(r, "Experiment (us)"), b);
		cr_expect(fabs(num(r, "Delta (us)") - (b - a)) < 0.11, "%s delta", cats[i]);
	}
	/* the plugin's published figures for the baseline */
	const cJSON *dl = row_named(rows, "Category", "DataLoader");
	cr_expect(fabs(num(dl, "Baseline (us)") - 59262) <= 1.0);
	cr_expect(fabs(num(row_named(rows, "Category", "Total"), "Baseline (us)") - 177592) <= 1.0);
	/* the DataLoader row carries the difference: the largest change, by far */
	double d = num(dl, "Delta (us)");
	cr_expect_lt(d, -50000.0);
	cr_expect_lt(num(dl, "Delta (%)"), -95.0);
	const cJSON *r;
	cJSON_ArrayForEach(r, rows) {
		const char *c = cJSON_GetObjectItem(r, "Category")->valuestring;
		if (strcmp(c, "DataLoader") && strcmp(c, "Total") &&
		    !strcmp(cJSON_GetObjectItem(r, "Row")->valuestring, "average"))
			cr_expect_lt(fabs(num(r, "Delta (us)")), fabs(d) / 4, "%s", c);
	}
	/* every aligned step side by side, against the reference's per-step pass
	   of each file; the keys in every row */
	char *sa = ref_run_opt("--steps", NW0), *sb = ref_run_opt("--steps", NW4);
	int nstep = 0;
	cJSON_ArrayForEach(r, rows) {
		const cJSON *st = cJSON_GetObjectItem(r, "Step"), *kind = cJSON_GetObjectItem(r, "Row");
		cr_assert(cJSON_IsString(kind), "Row in every row");
		cr_assert(st && (cJSON_IsNull(st) || cJSON_IsNumber(st)), "Step in every row");
		if (strcmp(kind->valuestring, "step")) {
			cr_expect(cJSON_IsNull(st) && !strcmp(kind->valuestring, "average"));
			continue;
		}
		nstep++;
		long long sn = (long long)st->valuedouble;
		const char *c = cJSON_GetObjectItem(r, "Category")->valuestring;
		cr_expect_eq(num(r, "Experiment Step"), (double)sn, "first-step alignment: 5..10 both");
		double a = ref_step(sa, sn, c), b = ref_step(sb, sn, c);
		cr_expect(fabs(num(r, "Baseline (us)") - a) < 0.06, "step %lld %s: %f vs %f", sn, c,
			  num(r, "Baseline (us)"), a);
		cr_expect(fabs(num(r, "Experiment (us)") - b) < 0.06, "step %lld %s: %f vs %f", sn, c,
			  num(r, "Experiment (us)"), b);
		cr_expect(fabs(num(r, "Delta (us)") - (b - a)) < 0.11, "step %lld %s delta", sn, c);
		if (!strcmp(c, "DataLoader"))   /* in every step the DataLoader carries it */
			cr_expect_lt(num(r, "Delta (us)"), -40000.0, "step %lld", sn);
	}
	cr_expect_eq(nstep, 6 * 9, "six aligned steps x (8 categories + Total)");
	/* the plugin's published steps (MANIFEST.md): step 5 DataLoader 69,317,
	   step 6 Kernel 98,570 and DataLoader 57,669 (us) */
	static const struct { long long step; const char *cat; double us; } pub[] = {
		{ 5, "Kernel", 98598 }, { 5, "DataLoader", 69317 }, { 5, "CPU Exec", 14091 },
		{ 6, "Kernel", 98570 }, { 6, "DataLoader", 57669 }, { 6, "Runtime", 2762 },
	};
	for (size_t i = 0; i < sizeof(pub) / sizeof(pub[0]); i++) {
		const cJSON *hit = NULL;
		cJSON_ArrayForEach(r, rows) {
			const cJSON *st = cJSON_GetObjectItem(r, "Step");
			if (cJSON_IsNumber(st) && (long long)st->valuedouble == pub[i].step &&
			    !strcmp(cJSON_GetObjectItem(r, "Category")->valuestring, pub[i].cat))
				hit = r;
		}
		cr_assert_not_null(hit, "step %lld %s", pub[i].step, pub[i].cat);
		cr_expect(fabs(num(hit, "Baseline (us)") - pub[i].us) <= 1.0, "step %lld %s: %f",
			  pub[i].step, pub[i].cat, num(hit, "Baseline (us)"));
	}
	free(sa);
	free(sb);
	free(ra);
	free(rb);
	cJSON_Delete(root);
	free(out);
}

Test(cli_diff, resnet50_ops_and_kernels, .timeout = 180)
{
	td_need(NW0);   /* skips without ../shared/testdata */
	td_need(NW4);
	char args[2048], *out = NULL;
	snprintf(args, sizeof(args), "diff '%s/" NW0 "' '%s/" NW4 "' --report ops --format json",
		 td(), td());
	cr_assert_eq(gtrace(args, &out), 0, "%s", out);
	cJSON *root = cJSON_Parse(out);
	cr_assert_not_null(root);
	const cJSON *rows = rows_of(root, "diff_ops");
	/* same model: every operator of the plugin's table in both runs, same conv count */
	const cJSON *conv = row_named(rows, "Name", "aten::cudnn_convolution");
	cr_expect_eq(num(conv, "Baseline Count"), 318);
	cr_expect_eq(num(conv, "Delta Count"), 0);
	cr_expect_eq(num(conv, "Baseline Device Self (us)"), 126619);  /* plugin's table */
	/* sorted by absolute device self delta */
	double prev = INFINITY;
	cJSON_ArrayForEach(conv, rows) {
		double v = fabs(num(conv, "Delta Device Self (us)"));
		cr_expect_leq(v, prev);
		prev = v;
	}
	cJSON_Delete(root);
	free(out);
	snprintf(args, sizeof(args), "diff '%s/" NW0 "' '%s/" NW4 "' --report kernels --format csv",
		 td(), td());
	cr_assert_eq(gtrace(args, &out), 0, "%s", out);
	cr_expect(strstr(out, "Name,Baseline Time (us),Experiment Time (us),Delta Time (us),") != NULL,
		  "%.100s", out);
	free(out);
}

/* CSV is one table: the main one (the average and every aligned step, keyed
 * by Step and Row), or the one --table names */
Test(cli_diff, csv_tables, .timeout = 120)
{
	td_need(NW0);   /* skips without ../shared/testdata */
	td_need(NW4);
	char args[2048], *out = NULL;
	snprintf(args, sizeof(args), "diff '%s/" NW0 "' '%s/" NW4 "' --format csv", td(), td());
	cr_assert_eq(gtrace(args, &out), 0, "%s", out);
	static const char head[] = "Step,Row,Category,Experiment Step,Baseline (us),"
				   "Experiment (us),Delta (us),Delta (%)\n";
	cr_expect(!strncmp(out, head, strlen(head)), "%.100s", out);
	size_t lines = 0;
	for (const char *p = out; *p; p++)
		lines += *p == '\n';
	cr_expect_eq(lines, 1 + 9 + 6 * 9, "header, the average, six aligned steps: %s", out);
	cr_expect(strstr(out, "\nn/a,average,DataLoader,n/a,59261.8,") != NULL, "%s", out);
	cr_expect(strstr(out, "\n6,step,DataLoader,6,57669.0,0.0,-57669.0,-100.00\n") != NULL,
		  "%s", out);
	free(out);
	snprintf(args, sizeof(args), "diff '%s/" NW0 "' '%s/" NW4 "' --report overview --format csv "
		 "--table diff_verdicts", td(), td());
	cr_assert_eq(gtrace(args, &out), 0, "%s", out);
	cr_expect(!strncmp(out, "Figure,Baseline,Experiment,Delta\n", 33), "%.80s", out);
	cr_expect(strstr(out, "\nInput verdict,HIGHLY input-bound,POTENTIALLY input-bound") != NULL,
		  "%s", out);
	free(out);
}

Test(cli_diff, errors, .timeout = 60)
{
	td_need(NW0);   /* skips without ../shared/testdata */
	td_need(NW4);
	char args[2048], *out = NULL;
	snprintf(args, sizeof(args), "diff '%s/" NW0 "' /nonexistent/b.json", td());
	cr_expect_eq(gtrace(args, &out), 1);
	cr_expect(strstr(out, "/nonexistent/b.json") != NULL, "%s", out);
	cr_expect_eq(strchr(out, '\n') - out + 1, (long)strlen(out), "one line: %s", out);
	free(out);
	cr_expect_eq(gtrace("diff only_one.json", &out), 2);
	free(out);
	cr_expect_eq(gtrace("diff a b --report nope", &out), 2);
	free(out);
	cr_expect_eq(gtrace("diff a b --align step=x", &out), 2);
	free(out);
	snprintf(args, sizeof(args), "diff '%s/" NW0 "' '%s/" NW4 "' --align step=99", td(), td());
	cr_expect_eq(gtrace(args, &out), 1);
	cr_expect(strstr(out, "step 99 is not in the baseline run") != NULL, "%s", out);
	free(out);
}

/* the two new stats reports through the binary: JSON numbers are numbers,
 * the plugin's first operator and the memory peak of GPU 0 (mem_ref.py:
 * 2,791,636,480 bytes) */
Test(cli_diff, stats_ops_and_memory_json, .timeout = 120)
{
	td_need(NW0);   /* skips without ../shared/testdata */
	td_need(NW4);
	char args[2048], *out = NULL;
	snprintf(args, sizeof(args), "stats '%s/" NW0 "' --report ops,memory-usage --format json",
		 td());
	cr_assert_eq(gtrace(args, &out), 0, "%s", out);
	cJSON *root = cJSON_Parse(out);
	cr_assert_not_null(root, "not JSON: %.200s", out);
	cr_assert(cJSON_IsArray(root));
	const cJSON *ops = rows_of(cJSON_GetArrayItem(root, 0), "ops");
	const cJSON *first = cJSON_GetArrayItem(ops, 0);
	cr_expect_str_eq(cJSON_GetObjectItem(first, "Name")->valuestring,
			 "aten::cudnn_convolution_backward_weight");
	cr_expect_eq(num(first, "Calls"), 318);
	cr_expect_eq(num(first, "Device Self Duration (us)"), 142461);
	const cJSON *mu = rows_of(cJSON_GetArrayItem(root, 1), "memory_usage");
	const cJSON *gpu = row_named(mu, "Device", "GPU 0");
	cr_expect_eq(num(gpu, "Peak Allocated (bytes)"), 2791636480.0);
	cr_expect_eq(num(gpu, "Records"), 8220);
	cJSON_Delete(root);
	free(out);
}
