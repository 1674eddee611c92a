/*
 * test_ops.c - the operator table (gtrace/ops.h) against three truths:
 *  - the TensorBoard plugin's own published operator table for ResNet-50
 *    (../shared/testdata/kineto/expected/tb_plugin_operators_nw0.json, from
 *    the plugin's regression test): all 76 operators, calls and the four
 *    durations exactly, and Tensor Core eligibility;
 *  - an independent Python pass over the raw JSON (ops_ref.py beside this
 *    file) on both ResNet-50 runs: every operator, every figure;
 *  - a planted store whose figures are worked out by hand below.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gtrace/export.h"
#include "gtrace/gtfile.h"
#include "gtrace/import.h"
#include "gtrace/ops.h"
#include "test_steps_fixture.h"

static const struct gt_ops_row *find(const struct gt_store *s, const struct gt_ops_result *r,
				  const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(gt_store_str(s, r->rows[i].name), name))
			return &r->rows[i];
	return NULL;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	b[n] = 0;
	fclose(f);
	return b;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	cr_assert(cJSON_IsNumber(v), "field %s", k);
	return v->valuedouble;
}

Test(analysis_ops, plugin_published_table, .timeout = 60)
{
	struct gt_store *s;
	char err[256];
	cr_assert_eq(fx_testdata("kineto/resnet50_num_workers_0.pt.trace.json.gz", &s, err,
				 sizeof(err)), 0, "%s", err);
	struct gt_ops_result r;
	cr_assert_eq(gt_ops_compute(s, NULL, &r, err, sizeof(err)), 0, "%s", err);
	const char *td = getenv("GTRACE_TESTDATA");
	char path[1024];
	snprintf(path, sizeof(path), "%s/kineto/expected/tb_plugin_operators_nw0.json",
		 td ? td : "../shared/testdata");
	char *txt = slurp(path);
	cJSON *root = cJSON_Parse(txt);
	cr_assert_not_null(root);
	const cJSON *rows = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "data"), "data");
	cr_assert(cJSON_IsArray(rows));
	cr_assert_eq(cJSON_GetArraySize(rows), 76);
	cr_assert_eq(r.n, 76, "we have %zu operators", r.n);
	const cJSON *x;
	cJSON_ArrayForEach(x, rows) {
		const char *name = cJSON_GetObjectItem(x, "name")->valuestring;
		const struct gt_ops_row *o = find(s, &r, name);
		cr_assert_not_null(o, "%s missing", name);
		cr_expect_eq((double)o->calls, num(x, "calls"), "%s calls", name);
		cr_expect_eq((double)o->dev_self_ns, 1e3 * num(x, "device_self_duration"), "%s", name);
		cr_expect_eq((double)o->dev_total_ns, 1e3 * num(x, "device_total_duration"), "%s", name);
		cr_expect_eq((double)o->host_self_ns, 1e3 * num(x, "host_self_duration"), "%s", name);
		cr_expect_eq((double)o->host_total_ns, 1e3 * num(x, "host_total_duration"), "%s", name);
		const char *tc = cJSON_GetObjectItem(x, "tc_eligible")->valuestring;
		cr_expect_eq(o->tc_eligible, !strcmp(tc, "Yes"), "%s tc", name);
		cr_expect_eq(o->tc_self_ns, 0, "%s: no Tensor Core kernels on a V100 fp32 run", name);
		/* the importer kept the Call stack args: the plugin's has_call_stack */
		cr_expect_eq(o->has_stack, cJSON_IsTrue(cJSON_GetObjectItem(x, "has_call_stack")),
			     "%s has_call_stack", name);
	}
	/* the plugin's default order: device self duration, descending */
	cr_expect_str_eq(gt_store_str(s, r.rows[0].name), "aten::cudnn_convolution_backward_weight");
	cJSON_Delete(root);
	free(txt);
	gt_ops_result_done(&r);
	gt_store_free(s);
}

/* the Python pass's CSV rows compared with gt_ops_compute, name by name */
static void against_python(const char *rel)
{
	struct gt_store *s;
	char err[256];
	cr_assert_eq(fx_testdata(rel, &s, err, sizeof(err)), 0, "%s", err);
	struct gt_ops_result r;
	cr_assert_eq(gt_ops_compute(s, NULL, &r, err, sizeof(err)), 0, "%s", err);
	const char *src = getenv("GTRACE_SRC"), *td = getenv("GTRACE_TESTDATA");
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "python3 '%s/tests/analysis/ops_ref.py' '%s/%s'",
		 src ? src : ".", td ? td : "../shared/testdata", rel);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	char line[4096];
	cr_assert_not_null(fgets(line, sizeof(line), p));   /* header */
	size_t n = 0;
	while (fgets(line, sizeof(line), p)) {
		/* "name",calls,host_total,host_self,device_total,device_self */
		char *q = strrchr(line, '"');
		cr_assert(line[0] == '"' && q && q > line);
		*q = 0;
		long long v[5];
		cr_assert_eq(sscanf(q + 1, ",%lld,%lld,%lld,%lld,%lld", &v[0], &v[1], &v[2], &v[3],
				    &v[4]), 5);
		const struct gt_ops_row *o = find(s, &r, line + 1);
		cr_assert_not_null(o, "%s missing", line + 1);
		cr_expect_eq(o->calls, (uint64_t)v[0], "%s calls", line + 1);
		cr_expect_eq(o->host_total_ns, v[1] * 1000, "%s host total", line + 1);
		cr_expect_eq(o->host_self_ns, v[2] * 1000, "%s host self", line + 1);
		cr_expect_eq(o->dev_total_ns, v[3] * 1000, "%s device total", line + 1);
		cr_expect_eq(o->dev_self_ns, v[4] * 1000, "%s device self", line + 1);
		n++;
	}
	cr_assert_eq(pclose(p), 0, "ops_ref.py failed");
	cr_assert_eq(n, r.n, "python %zu operators, gtrace %zu", n, r.n);
	cr_assert_gt(n, 50);
	gt_ops_result_done(&r);
	gt_store_free(s);
}

/* the row of (name, key text) in a grouped result ("None" = no key) */
static const struct gt_ops_row *find_keyed(const struct gt_store *s, const struct gt_ops_result *r,
					const char *name, const char *key)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct gt_ops_row *o = &r->rows[i];
		const char *k = o->key ? gt_store_str(s, o->key) : "None";
		if (!strcmp(gt_store_str(s, o->name), name) && !strcmp(k, key))
			return o;
	}
	return NULL;
}

/* grouped by name + input shapes / call stack: the Python pass's rows
 * (keys from Python's str() of the raw args) against gt_ops_compute_by */
static void grouped_python(const char *rel, int group, size_t min_rows)
{
	struct gt_store *s;
	char err[256];
	cr_assert_eq(fx_testdata(rel, &s, err, sizeof(err)), 0, "%s", err);
	struct gt_ops_result r;
	cr_assert_eq(gt_ops_compute_by(s, NULL, group, &r, err, sizeof(err)), 0, "%s", err);
	const char *src = getenv("GTRACE_SRC"), *td = getenv("GTRACE_TESTDATA");
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "python3 '%s/tests/analysis/ops_ref.py' '%s/%s' --group %s",
		 src ? src : ".", td ? td : "../shared/testdata", rel,
		 group == GT_OPS_BY_SHAPE ? "shape" : "stack");
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	static char line[1 << 16];
	size_t n = 0;
	while (fgets(line, sizeof(line), p)) {
		char *name = line, *key = strchr(line, '\t');
		cr_assert_not_null(key);
		*key++ = 0;
		char *q = strchr(key, '\t');
		cr_assert_not_null(q);
		*q++ = 0;
		long long v[5];
		cr_assert_eq(sscanf(q, "%lld\t%lld\t%lld\t%lld\t%lld", &v[0], &v[1], &v[2], &v[3],
				    &v[4]), 5);
		const struct gt_ops_row *o = find_keyed(s, &r, name, key);
		cr_assert_not_null(o, "%s / %.80s missing", name, key);
		cr_expect_eq(o->calls, (uint64_t)v[0], "%s / %.80s calls", name, key);
		cr_expect_eq(o->host_total_ns, v[1] * 1000, "%s / %.80s host total", name, key);
		cr_expect_eq(o->host_self_ns, v[2] * 1000, "%s / %.80s host self", name, key);
		cr_expect_eq(o->dev_total_ns, v[3] * 1000, "%s / %.80s device total", name, key);
		cr_expect_eq(o->dev_self_ns, v[4] * 1000, "%s / %.80s device self", name, key);
		n++;
	}
	cr_assert_eq(pclose(p), 0, "ops_ref.py failed");
	cr_assert_eq(n, r.n, "python %zu rows, gtrace %zu", n, r.n);
	cr_assert_geq(n, min_rows);
	gt_ops_result_done(&r);
	gt_store_free(s);
}

Test(analysis_ops, by_shape_python_pass, .timeout = 120)
{
	/* 577 (name, input shapes) rows in the Python pass of this run */
	grouped_python("kineto/resnet50_num_workers_0.pt.trace.json.gz", GT_OPS_BY_SHAPE, 500);
}

Test(analysis_ops, by_stack_python_pass, .timeout = 120)
{
	grouped_python("kineto/resnet50_num_workers_4.pt.trace.json.gz", GT_OPS_BY_STACK, 300);
}

/* a store written as Kineto JSON and read back */
static struct gt_store *round_trip(const struct gt_store *s)
{
	char *json = NULL;
	size_t len = 0;
	cr_assert_eq(gt_export_chrome_mem(s, NULL, &json, &len), 0);
	char path[] = "/tmp/gtrace-ops-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	cr_assert_eq(fwrite(json, 1, len, f), len);
	fclose(f);
	free(json);
	struct gt_store *b;
	char err[256];
	const char *paths[] = { path };
	struct gt_load_opts lo = { .flags = GT_LOAD_QUIET };
	cr_assert_eq(gt_load(paths, 1, &lo, &b, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	return b;
}

/* the export writes Input Dims and Call stack back: both groupings survive */
Test(analysis_ops, groupings_survive_export_and_file, .timeout = 120)
{
	struct gt_store *s;
	char err[256];
	cr_assert_eq(fx_testdata("kineto/resnet50_num_workers_0.pt.trace.json.gz", &s, err,
				 sizeof(err)), 0, "%s", err);
	struct gt_store *b = round_trip(s);
	/* and the native file (its arg and aux columns, its string table) */
	char gpath[] = "/tmp/gtrace-opsf-XXXXXX";
	int fd = mkstemp(gpath);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(gt_file_write_store(s, gpath, err, sizeof(err)), 0, "%s", err);
	struct gt_store *c;
	const char *paths[] = { gpath };
	struct gt_load_opts lo = { .flags = GT_LOAD_QUIET };
	cr_assert_eq(gt_load(paths, 1, &lo, &c, err, sizeof(err)), 0, "%s", err);
	unlink(gpath);
	for (int g = GT_OPS_BY_SHAPE; g <= GT_OPS_BY_STACK; g++) {
		struct gt_ops_result ra, rc;
		cr_assert_eq(gt_ops_compute_by(s, NULL, g, &ra, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(gt_ops_compute_by(c, NULL, g, &rc, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(ra.n, rc.n);
		for (size_t i = 0; i < ra.n; i++)
			cr_assert_str_eq(gt_store_str(s, ra.rows[i].key), gt_store_str(c, rc.rows[i].key));
		gt_ops_result_done(&ra);
		gt_ops_result_done(&rc);
	}
	gt_store_free(c);
	for (int g = GT_OPS_BY_SHAPE; g <= GT_OPS_BY_STACK; g++) {
		struct gt_ops_result ra, rb;
		cr_assert_eq(gt_ops_compute_by(s, NULL, g, &ra, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(gt_ops_compute_by(b, NULL, g, &rb, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(ra.n, rb.n, "grouping %d: %zu rows, %zu after the trip", g, ra.n, rb.n);
		for (size_t i = 0; i < ra.n; i++) {
			const struct gt_ops_row *x = &ra.rows[i];
			const char *k = x->key ? gt_store_str(s, x->key) : "None";
			const struct gt_ops_row *y = find_keyed(b, &rb, gt_store_str(s, x->name), k);
			cr_assert_not_null(y, "%s / %.80s lost", gt_store_str(s, x->name), k);
			cr_expect_eq(x->calls, y->calls);
			cr_expect_eq(x->host_self_ns, y->host_self_ns);
			cr_expect_eq(x->dev_total_ns, y->dev_total_ns);
		}
		gt_ops_result_done(&ra);
		gt_ops_result_done(&rb);
	}
	gt_store_free(b);
	gt_store_free(s);
}

Test(analysis_ops, bad_grouping)
{
	struct gt_store *s = gt_store_new();
	struct gt_ops_result r;
	char err[128];
	cr_assert_eq(gt_ops_compute_by(s, NULL, GT_OPS_GROUP_COUNT, &r, err, sizeof(err)), -EINVAL);
	cr_expect_not_null(strstr(err, "grouping"));
	gt_store_free(s);
}

Test(analysis_ops, python_pass_workers_0, .timeout = 120)
{
	against_python("kineto/resnet50_num_workers_0.pt.trace.json.gz");
}

Test(analysis_ops, python_pass_workers_4, .timeout = 120)
{
	against_python("kineto/resnet50_num_workers_4.pt.trace.json.gz");
}

static void op(struct gt_store *s, uint32_t l, const char *name, int64_t a, int64_t b, uint32_t ext)
{
	struct gt_event e = { .start_ns = a, .dur_ns = b - a, .lane = l, .ext = ext,
			      .kind = GT_EV_CPU_OP };
	e.name = gt_store_intern_cstr(s, name);
	cr_assert_eq(gt_store_add(s, &e), 0);
}

static void rt(struct gt_store *s, uint32_t l, int64_t a, int64_t b, uint32_t corr, uint32_t ext)
{
	struct gt_event e = { .start_ns = a, .dur_ns = b - a, .lane = l, .corr = corr, .ext = ext,
			      .kind = GT_EV_RUNTIME, .flags = GT_EVF_LAUNCH };
	e.name = gt_store_intern_cstr(s, "cudaLaunchKernel");
	cr_assert_eq(gt_store_add(s, &e), 0);
}

/*
 * Planted thread (ns):
 *   ProfilerStep#1 [0,1000) (step span: a container, not counted)
 *     aten::linear [0,400) ext 1
 *       aten::addmm [10,300) ext 2         launches corr 1 [20,40) -> kernel 100 ns
 *         aten::addmm [20,200) ext 3       same name, only child: merged into the outer
 *                                          launches corr 2 [50,60) -> xmma_gemm kernel 50 ns
 *     aten::relu [500,600) ext 4           launches corr 3 [510,530) -> kernel 30 ns
 *     aten::bad [550,700)                  partly overlaps relu: left out
 *     Optimizer.step#SGD.step [700,800)    not counted
 *     aten::far [850,900) ext 4e9          launches corr 4e9 [860,870) -> kernel 40 ns: ids far
 *                                          from the others (the maps' spill path)
 * Truth (plugin rules):
 *   addmm: 1 call, host total 290, runtime calls taken from the merged child
 *     only (its own corr-1 call is dropped with it): self 290 - 0 kids - 10 = 280,
 *     device self = device total = 50, Tensor Core self = total = 50.
 *   linear: 1 call, host total 400, self 400 - 290 = 110, device self 0,
 *     device total 50, eligible (allow-listed).
 *   relu: host total 100, self 100 - 20 = 80, device 30 / 30, not eligible.
 *   far: host self 50 - 10 = 40, device self 40.
 */
Test(analysis_ops, planted_tree)
{
	struct gt_store *s = gt_store_new();
	uint32_t h = fx_lane(s, GT_LANE_HOST, 0, -1, 1), g = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
	fx_add(s, h, GT_EV_STEP, "ProfilerStep#1", 0, 1000, 0, 1);
	op(s, h, "aten::linear", 0, 400, 1);
	op(s, h, "aten::addmm", 10, 300, 2);
	op(s, h, "aten::addmm", 20, 200, 3);
	rt(s, h, 20, 40, 1, 2);
	rt(s, h, 50, 60, 2, 3);
	op(s, h, "aten::relu", 500, 600, 4);
	rt(s, h, 510, 530, 3, 4);
	op(s, h, "aten::bad", 550, 700, 0);
	op(s, h, "Optimizer.step#SGD.step", 700, 800, 0);
	op(s, h, "aten::far", 850, 900, 4000000000u);
	rt(s, h, 860, 870, 4000000000u, 4000000000u);
	fx_add(s, g, GT_EV_KERNEL, "k_far", 1200, 1240, 4000000000u, 0);
	fx_add(s, g, GT_EV_KERNEL, "k_plain", 1000, 1100, 1, 0);
	fx_add(s, g, GT_EV_KERNEL, "sm80_xmma_gemm_f16f16", 1100, 1150, 2, 0);
	fx_add(s, g, GT_EV_KERNEL, "k_relu", 1150, 1180, 3, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_ops_result r;
	char err[128];
	cr_assert_eq(gt_ops_compute(s, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.n, 4);
	cr_expect_eq(r.dropped, 1);
	const struct gt_ops_row *far = find(s, &r, "aten::far");
	cr_assert_not_null(far);
	cr_expect_eq(far->host_self_ns, 40);
	cr_expect_eq(far->dev_self_ns, 40);
	const struct gt_ops_row *a = find(s, &r, "aten::addmm"), *l = find(s, &r, "aten::linear"),
			     *u = find(s, &r, "aten::relu");
	cr_assert(a && l && u);
	cr_expect_eq(a->calls, 1);
	cr_expect_eq(a->host_total_ns, 290);
	cr_expect_eq(a->host_self_ns, 280);
	cr_expect_eq(a->dev_self_ns, 50);
	cr_expect_eq(a->dev_total_ns, 50);
	cr_expect_eq(a->tc_self_ns, 50);
	cr_expect_eq(a->tc_eligible, 1);
	cr_expect_eq(l->host_self_ns, 110);
	cr_expect_eq(l->dev_self_ns, 0);
	cr_expect_eq(l->dev_total_ns, 50);
	cr_expect_eq(l->tc_total_ns, 50);
	cr_expect_eq(l->tc_eligible, 1);
	cr_expect_eq(u->host_self_ns, 80);
	cr_expect_eq(u->dev_self_ns, 30);
	cr_expect_eq(u->tc_eligible, 0);
	/* order: device self descending */
	cr_expect_eq(r.rows[0].name, a->name);
	uint32_t relu = u->name;
	gt_ops_result_done(&r);
	/* scope: only operators starting in [450, 1000) */
	struct gt_scope sc;
	gt_scope_all(&sc);
	sc.t0_ns = 450;
	sc.t1_ns = 1000;
	cr_assert_eq(gt_ops_compute(s, &sc, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.n, 2);
	cr_expect_str_eq(gt_store_str(s, r.rows[0].name), "aten::far");   /* 40 ns device self */
	cr_expect_eq(r.rows[1].name, relu);                             /* 30 ns */
	gt_ops_result_done(&r);
	gt_store_free(s);
}

/*
 * 300 operators in a row, each launching one 10 ns kernel, ids 1..300
 * except the 150th whose external and correlation ids are 4e9: outside the
 * range the lanes' first and last ids span (the maps' spill path).  Truth:
 * every op 1 call, device self 10 ns; the far one too.
 */
Test(analysis_ops, stray_ids)
{
	struct gt_store *s = gt_store_new();
	uint32_t h = fx_lane(s, GT_LANE_HOST, 0, -1, 1), g = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
	for (uint32_t i = 1; i <= 300; i++) {
		uint32_t id = i == 150 ? 4000000000u : i;
		char nm[32];
		snprintf(nm, sizeof(nm), "op_%u", i);
		op(s, h, nm, 100 * i, 100 * i + 50, id);
		rt(s, h, 100 * i + 10, 100 * i + 20, id, id);
		fx_add(s, g, GT_EV_KERNEL, "k", 100 * i + 30, 100 * i + 40, id, 0);
	}
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_ops_result r;
	char err[128];
	cr_assert_eq(gt_ops_compute(s, NULL, &r, err, sizeof(err)), 0);
	cr_assert_eq(r.n, 300);
	for (size_t i = 0; i < r.n; i++) {
		cr_expect_eq(r.rows[i].dev_self_ns, 10, "%s", gt_store_str(s, r.rows[i].name));
		cr_expect_eq(r.rows[i].host_self_ns, 40, "%s", gt_store_str(s, r.rows[i].name));
	}
	gt_ops_result_done(&r);
	gt_store_free(s);
}
