/*
 * test_memu.c - memory usage (gtrace/mem_usage.h) and the operator memory
 * statistics (gt_ops_compute_mem) against:
 *  - independent Python passes over the raw ResNet-50 JSON (both runs have
 *    [memory] events with Bytes, no Total Allocated): mem_ref.py for the
 *    per-device figures and peak, ops_ref.py --mem for the plugin's memory
 *    statistics per operator, GPU 0 and CPU;
 *  - simulator captures with planted allocation patterns (GT_SIM_F_MEMORY:
 *    a peak at a known op; GT_SIM_F_MEMLEAK: 8 MiB a step never freed, found
 *    as growth), whose truth sim_truth reports;
 *  - an export / import round trip keeping every record.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gtrace/export.h"
#include "gtrace/import.h"
#include "gtrace/mem_usage.h"
#include "gtrace/ops.h"
#include "gtrace/sim.h"
#include "test_steps_fixture.h"

static FILE *py(const char *script, const char *rel, const char *extra)
{
	const char *src = getenv("GTRACE_SRC"), *td = getenv("GTRACE_TESTDATA");
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "python3 '%s/tests/analysis/%s' '%s/%s' %s", src ? src : ".",
		 script, td ? td : "../shared/testdata", rel, extra);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	return p;
}

static const struct gt_mem_usage_dev *dev_of(const struct gt_mem_usage_result *m, uint32_t dev)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->dev[i].device == dev)
			return &m->dev[i];
	return NULL;
}

static void against_mem_ref(const char *rel)
{
	struct gt_store *s;
	char err[256], line[512];
	cr_assert_eq(fx_testdata(rel, &s, err, sizeof(err)), 0, "%s", err);
	struct gt_mem_usage_result m;
	cr_assert_eq(gt_mem_usage_compute(s, NULL, &m, err, sizeof(err)), 0, "%s", err);
	FILE *p = py("mem_ref.py", rel, "");
	cr_assert_not_null(fgets(line, sizeof(line), p));
	size_t n = 0;
	while (fgets(line, sizeof(line), p)) {
		char dev[16];
		long long v[8];
		cr_assert_eq(sscanf(line, "%15[^,],%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld", dev, &v[0],
				    &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]), 9);
		const struct gt_mem_usage_dev *d = dev_of(&m, strcmp(dev, "cpu") ? (uint32_t)atoi(dev)
									 : GT_MEM_HOST);
		cr_assert_not_null(d, "device %s", dev);
		cr_expect_eq(d->records, (uint64_t)v[0], "%s records", dev);
		cr_expect_eq(d->allocs, (uint64_t)v[1], "%s allocs", dev);
		cr_expect_eq(d->alloc_bytes, v[2], "%s alloc bytes", dev);
		cr_expect_eq(d->frees, (uint64_t)v[3], "%s frees", dev);
		cr_expect_eq(d->free_bytes, v[4], "%s freed", dev);
		cr_expect_eq(d->peak_bytes, v[5], "%s peak", dev);
		cr_expect_eq(d->peak_ns, v[6] * 1000, "%s peak time", dev);
		cr_expect_eq(d->end_bytes, v[7], "%s end", dev);
		cr_expect_geq(d->peak_step, 0, "%s peak inside a step", dev);
		n++;
	}
	cr_assert_eq(pclose(p), 0);
	cr_expect_eq(n, m.n);
	cr_expect_eq(n, 2);
	gt_mem_usage_result_done(&m);
	gt_store_free(s);
}

/* Total Allocated / Total Reserved (the counters the importer makes of a
 * record's args) against mem_ref.py --totals */
static void against_totals(const char *rel, size_t ndev)
{
	struct gt_store *s;
	char err[256], line[1024];
	cr_assert_eq(fx_testdata(rel, &s, err, sizeof(err)), 0, "%s", err);
	struct gt_mem_usage_result m;
	cr_assert_eq(gt_mem_usage_compute(s, NULL, &m, err, sizeof(err)), 0, "%s", err);
	FILE *p = py("mem_ref.py", rel, "--totals");
	cr_assert_not_null(fgets(line, sizeof(line), p));
	size_t n = 0;
	while (fgets(line, sizeof(line), p)) {
		char dev[16], op[256] = "";
		long long v[7];
		cr_assert_eq(sscanf(line, "%15[^,],%lld,%lld,%lld,%255[^,],%lld,%lld,%lld,%lld", dev,
				    &v[0], &v[1], &v[2], op, &v[3], &v[4], &v[5], &v[6]), 9, "%s", line);
		const struct gt_mem_usage_dev *d = dev_of(&m, strcmp(dev, "cpu") ? (uint32_t)atoi(dev)
									 : GT_MEM_HOST);
		cr_assert_not_null(d, "device %s", dev);
		cr_expect_eq(d->total_samples[0], (uint64_t)v[0], "%s samples", dev);
		cr_expect_eq(d->total_peak[0], v[1], "%s peak total allocated", dev);
		cr_expect_eq(d->total_peak_ns[0] - d->peak_ns, v[2], "%s peak time", dev);
		cr_expect_str_eq(gt_store_str(s, d->total_peak_op), op, "%s peak operator", dev);
		cr_expect_eq(d->total_samples[1], (uint64_t)v[3], "%s reserved samples", dev);
		cr_expect_eq(d->total_peak[1], v[4], "%s peak total reserved", dev);
		cr_expect_eq(d->total_end[0], v[5], "%s end allocated", dev);
		cr_expect_eq(d->total_end[1], v[6], "%s end reserved", dev);
		n++;
	}
	cr_assert_eq(pclose(p), 0);
	cr_expect_eq(n, ndev);
	gt_mem_usage_result_done(&m);
	gt_store_free(s);
}

Test(analysis_memory, totals_h100_qwen_python, .timeout = 120)
{
	against_totals("tracelens/h100_qwen_inference.json.gz", 2);
}

Test(analysis_memory, totals_v100_ddp_python, .timeout = 180)
{
	against_totals("hta/v100_ddp_allreduce.json.gz", 2);
}

/* the totals survive an export / import round trip (category
 * gtrace_memory_total) */
Test(analysis_memory, totals_export_round_trip, .timeout = 120)
{
	struct gt_store *s;
	char err[256];
	cr_assert_eq(fx_testdata("tracelens/h100_qwen_inference.json.gz", &s, err, sizeof(err)), 0,
		     "%s", err);
	char *json = NULL;
	size_t len = 0;
	cr_assert_eq(gt_export_chrome_mem(s, NULL, &json, &len), 0);
	char path[] = "/tmp/gtrace-memt-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	cr_assert_eq(fwrite(json, 1, len, f), len);
	fclose(f);
	free(json);
	struct gt_store *b;
	const char *paths[] = { path };
	struct gt_load_opts lo = { .flags = GT_LOAD_QUIET };
	cr_assert_eq(gt_load(paths, 1, &lo, &b, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	struct gt_mem_usage_result ma, mb;
	cr_assert_eq(gt_mem_usage_compute(s, NULL, &ma, err, sizeof(err)), 0);
	cr_assert_eq(gt_mem_usage_compute(b, NULL, &mb, err, sizeof(err)), 0);
	cr_assert_eq(ma.n, mb.n);
	for (size_t i = 0; i < ma.n; i++) {
		cr_assert_gt(ma.dev[i].total_samples[0], 0);
		for (int k = 0; k < 2; k++) {
			cr_expect_eq(mb.dev[i].total_samples[k], ma.dev[i].total_samples[k]);
			cr_expect_eq(mb.dev[i].total_peak[k], ma.dev[i].total_peak[k]);
			cr_expect_eq(mb.dev[i].total_end[k], ma.dev[i].total_end[k]);
		}
	}
	gt_mem_usage_result_done(&ma);
	gt_mem_usage_result_done(&mb);
	gt_store_free(s);
	gt_store_free(b);
}

/* ResNet-50's records have no totals: none reported, not zeros */
Test(analysis_memory, totals_absent, .timeout = 60)
{
	struct gt_store *s;
	char err[256];
	cr_assert_eq(fx_testdata("kineto/resnet50_num_workers_0.pt.trace.json.gz", &s, err,
				 sizeof(err)), 0, "%s", err);
	struct gt_mem_usage_result m;
	cr_assert_eq(gt_mem_usage_compute(s, NULL, &m, err, sizeof(err)), 0, "%s", err);
	cr_assert_gt(m.n, 0);
	for (size_t i = 0; i < m.n; i++)
		cr_expect_eq(m.dev[i].total_samples[0] + m.dev[i].total_samples[1], 0);
	gt_mem_usage_result_done(&m);
	gt_store_free(s);
}

Test(analysis_memory, resnet50_workers_0_python, .timeout = 120)
{
	against_mem_ref("kineto/resnet50_num_workers_0.pt.trace.json.gz");
}

Test(analysis_memory, resnet50_workers_4_python, .timeout = 120)
{
	against_mem_ref("kineto/resnet50_num_workers_4.pt.trace.json.gz");
}

static void ops_mem(const char *rel, const char *pydev, uint32_t dev)
{
	struct gt_store *s;
	char err[256], line[4096];
	cr_assert_eq(fx_testdata(rel, &s, err, sizeof(err)), 0, "%s", err);
	struct gt_ops_result r;
	cr_assert_eq(gt_ops_compute_mem(s, NULL, dev, &r, err, sizeof(err)), 0, "%s", err);
	char extra[32];
	snprintf(extra, sizeof(extra), "--mem %s", pydev);
	FILE *p = py("ops_ref.py", rel, extra);
	cr_assert_not_null(fgets(line, sizeof(line), p));
	size_t n = 0;
	long long nrec = -1, unatt = -1;
	while (fgets(line, sizeof(line), p)) {
		if (line[0] == '#') {
			cr_assert_eq(sscanf(line, "#records,%lld,unattributed,%lld", &nrec, &unatt), 2);
			continue;
		}
		char *q = strrchr(line, '"');
		cr_assert(line[0] == '"' && q && q > line);
		*q = 0;
		long long v[7];
		cr_assert_eq(sscanf(q + 1, ",%lld,%lld,%lld,%lld,%lld,%lld,%lld", &v[0], &v[1], &v[2],
				    &v[3], &v[4], &v[5], &v[6]), 7);
		const struct gt_ops_row *o = NULL;
		for (size_t i = 0; i < r.n && !o; i++)
			if (!strcmp(gt_store_str(s, r.rows[i].name), line + 1))
				o = &r.rows[i];
		cr_assert_not_null(o, "%s missing", line + 1);
		cr_expect_eq(o->calls, (uint64_t)v[0], "%s calls", line + 1);
		cr_expect_eq(o->mem_self_inc, v[1], "%s self increase", line + 1);
		cr_expect_eq(o->mem_self_alloc_n, v[2], "%s self count", line + 1);
		cr_expect_eq(o->mem_self_alloc_bytes, v[3], "%s self size", line + 1);
		cr_expect_eq(o->mem_inc, v[4], "%s increase", line + 1);
		cr_expect_eq(o->mem_alloc_n, v[5], "%s count", line + 1);
		cr_expect_eq(o->mem_alloc_bytes, v[6], "%s size", line + 1);
		n++;
	}
	cr_assert_eq(pclose(p), 0);
	size_t nz = 0;
	for (size_t i = 0; i < r.n; i++)
		nz += r.rows[i].mem_inc || r.rows[i].mem_alloc_n || r.rows[i].mem_self_inc;
	cr_expect_eq(nz, n, "gtrace %zu operators with memory, python %zu", nz, n);
	cr_expect_gt(n, 10);
	cr_expect_eq((long long)r.mem_records, nrec);
	cr_expect_eq((long long)r.mem_unattributed, unatt);
	gt_ops_result_done(&r);
	gt_store_free(s);
}

Test(analysis_memory, resnet50_ops_gpu0, .timeout = 120)
{
	ops_mem("kineto/resnet50_num_workers_0.pt.trace.json.gz", "0", 0);
}

Test(analysis_memory, resnet50_ops_cpu, .timeout = 120)
{
	ops_mem("kineto/resnet50_num_workers_0.pt.trace.json.gz", "cpu", GT_MEM_HOST);
}

static struct gt_store *planted(unsigned flags, int gpus, int steps, struct gt_sim_truth *t)
{
	struct gt_store *s = gt_store_new();
	char err[256];
	struct gt_sim_opts o = { .gpus = gpus, .steps = steps, .flags = flags, .seed = 3 };
	cr_assert_eq(gt_sim_generate_truth(&o, s, t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(gt_store_event_count(s), t->events);
	return s;
}

Test(analysis_memory, sim_leak_found_as_growth, .timeout = 60)
{
	struct gt_sim_truth t;
	struct gt_store *s = planted(GT_SIM_F_MEMORY | GT_SIM_F_MEMLEAK, 2, 6, &t);
	cr_assert_eq(t.mem_leak_bytes, 8 << 20);
	struct gt_mem_usage_result m;
	char err[128];
	cr_assert_eq(gt_mem_usage_compute(s, NULL, &m, err, sizeof(err)), 0);
	cr_assert_eq(m.n, 1);
	const struct gt_mem_usage_dev *d = &m.dev[0];
	cr_expect_eq(d->device, 0);
	cr_expect_eq(d->peak_bytes, t.mem_peak_bytes);
	cr_expect_eq(d->peak_op, t.mem_peak_op, "peak in %s, planted in %s",
		     gt_store_str(s, d->peak_op), gt_store_str(s, t.mem_peak_op));
	cr_expect_eq(d->peak_step, t.mem_peak_step);
	cr_assert_eq(d->nsteps, 6);
	for (size_t k = 0; k < d->nsteps; k++)
		cr_expect_eq(d->steps[k].end_bytes - d->steps[k].start_bytes, t.mem_leak_bytes,
			     "step %zu", k);
	cr_expect_eq(d->end_bytes, 6 * t.mem_leak_bytes);
	gt_mem_usage_result_done(&m);
	gt_store_free(s);
}

Test(analysis_memory, sim_steady_peak_at_op, .timeout = 60)
{
	struct gt_sim_truth t;
	struct gt_store *s = planted(GT_SIM_F_MEMORY, 1, 4, &t);
	struct gt_mem_usage_result m;
	char err[128];
	cr_assert_eq(gt_mem_usage_compute(s, NULL, &m, err, sizeof(err)), 0);
	cr_assert_eq(m.n, 1);
	const struct gt_mem_usage_dev *d = &m.dev[0];
	cr_expect_eq(d->peak_bytes, t.mem_peak_bytes);
	cr_expect_eq(d->peak_op, t.mem_peak_op);
	cr_expect_eq(d->peak_step, 0, "first reached in the first step");
	for (size_t k = 0; k < d->nsteps; k++) {
		cr_expect_eq(d->steps[k].end_bytes, d->steps[k].start_bytes);
		cr_expect_eq(d->steps[k].peak_bytes, t.mem_peak_bytes);
	}
	cr_expect_eq(d->end_bytes, 0);
	/* the peak op's self allocations: one activation and the planted peak per step */
	struct gt_ops_result r;
	cr_assert_eq(gt_ops_compute_mem(s, NULL, 0, &r, err, sizeof(err)), 0);
	cr_expect_eq(r.mem_unattributed, 0);
	int64_t peak_self = 0;
	for (size_t i = 0; i < r.n; i++)
		if (r.rows[i].name == t.mem_peak_op)
			peak_self = r.rows[i].mem_self_alloc_bytes;
	cr_expect_geq(peak_self, 4 * ((64 << 20) + (1 << 20)));
	gt_ops_result_done(&r);
	gt_mem_usage_result_done(&m);
	gt_store_free(s);
}

Test(analysis_memory, no_flag_no_records)
{
	struct gt_sim_truth t;
	struct gt_store *s = planted(0, 1, 2, &t);
	struct gt_mem_usage_result m;
	char err[128];
	cr_assert_eq(gt_mem_usage_compute(s, NULL, &m, err, sizeof(err)), 0);
	cr_expect_eq(m.n, 0);
	cr_expect_eq(t.mem_peak_bytes, 0);
	gt_mem_usage_result_done(&m);
	gt_store_free(s);
}

Test(analysis_memory, export_round_trip, .timeout = 60)
{
	struct gt_sim_truth t;
	struct gt_store *s = planted(GT_SIM_F_MEMORY | GT_SIM_F_MEMLEAK, 1, 3, &t);
	char *json = NULL;
	size_t len = 0;
	cr_assert_eq(gt_export_chrome_mem(s, NULL, &json, &len), 0);
	char path[] = "/tmp/gtrace-mem_usage-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	cr_assert_eq(fwrite(json, 1, len, f), len);
	fclose(f);
	struct gt_store *b;
	char err[256];
	const char *paths[] = { path };
	struct gt_load_opts lo = { .flags = GT_LOAD_QUIET };
	cr_assert_eq(gt_load(paths, 1, &lo, &b, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	struct gt_mem_usage_result ma, mb;
	cr_assert_eq(gt_mem_usage_compute(s, NULL, &ma, err, sizeof(err)), 0);
	cr_assert_eq(gt_mem_usage_compute(b, NULL, &mb, err, sizeof(err)), 0);
	cr_assert_eq(mb.n, 1);
	cr_expect_eq(mb.dev[0].records, ma.dev[0].records);
	cr_expect_eq(mb.dev[0].alloc_bytes, ma.dev[0].alloc_bytes);
	cr_expect_eq(mb.dev[0].peak_bytes, t.mem_peak_bytes);
	cr_expect_eq(mb.dev[0].end_bytes, 3 * t.mem_leak_bytes);
	gt_mem_usage_result_done(&ma);
	gt_mem_usage_result_done(&mb);
	free(json);
	gt_store_free(s);
	gt_store_free(b);
}
