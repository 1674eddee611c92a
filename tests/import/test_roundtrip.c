/*
 * test_roundtrip.c - export to Chrome JSON, import again: every event keeps
 * its lane key (type, rank, device, pid, id), name, kind, start and
 * duration exactly, and copies their kind (H2D, D2H, ...) and bytes.  On the real traces of testdata and on every simulator
 * scenario (several ranks and GPUs).
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/export.h"
#include "gtrace/import.h"
#include "gtrace/sim.h"
#include "impcheck.h"

struct row {
	int64_t start, dur;
	uint8_t kind, sub;
	uint64_t bytes;   /* memcpy only */
	const char *name;
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur < y->dur ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	if (x->sub != y->sub)
		return x->sub - y->sub;
	return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

static struct row *rows_of(const struct gt_store *s, const struct gt_lane *l)
{
	struct row *r = malloc((l->n ? l->n : 1) * sizeof(*r));
	for (size_t i = 0; i < l->n; i++)
		r[i] = (struct row){ l->ev[i].start_ns, l->ev[i].dur_ns, l->ev[i].kind,
				     l->ev[i].kind == GT_EV_MEMCPY ? l->ev[i].sub : 0,
				     l->ev[i].kind == GT_EV_MEMCPY ? l->ev[i].arg : 0,
				     gt_store_str(s, l->ev[i].name) };
	qsort(r, l->n, sizeof(*r), row_cmp);
	return r;
}

/* a's events all reappear in b on the lane with the same key, and b has no others */
static void same_events(const struct gt_store *a, const struct gt_store *b)
{
	size_t na = 0, nb = 0;
	for (size_t i = 0; i < gt_store_lane_count(b); i++)
		nb += gt_store_lane_at(b, (uint32_t)i)->n;
	for (size_t i = 0; i < gt_store_lane_count(a); i++) {
		const struct gt_lane *la = gt_store_lane_at(a, (uint32_t)i);
		if (!la->n)
			continue;
		na += la->n;
		const struct gt_lane *lb = NULL;
		for (size_t j = 0; j < gt_store_lane_count(b) && !lb; j++) {
			const struct gt_lane_key *k = &gt_store_lane_at(b, (uint32_t)j)->key;
			if (k->type == la->key.type && k->rank == la->key.rank && k->device == la->key.device &&
			    k->pid == la->key.pid && k->id == la->key.id)
				lb = gt_store_lane_at(b, (uint32_t)j);
		}
		cr_assert(lb, "lane type %d rank %d dev %d pid %lld id %lld missing after round trip",
			  la->key.type, la->key.rank, la->key.device, (long long)la->key.pid,
			  (long long)la->key.id);
		cr_assert_eq(lb->n, la->n, "lane %s: %zu events, %zu after", gt_store_str(a, la->name), la->n,
			     lb->n);
		struct row *ra = rows_of(a, la), *rb = rows_of(b, lb);
		for (size_t k = 0; k < la->n; k++) {
			cr_assert_eq(ra[k].start, rb[k].start, "start %lld vs %lld", (long long)ra[k].start,
				     (long long)rb[k].start);
			cr_assert_eq(ra[k].dur, rb[k].dur);
			cr_assert_eq(ra[k].kind, rb[k].kind, "%s kind %d vs %d", ra[k].name, ra[k].kind,
				     rb[k].kind);
			cr_assert_str_eq(ra[k].name, rb[k].name);
			cr_assert_eq(ra[k].sub, rb[k].sub, "%s: copy kind %d vs %d", ra[k].name,
				     ra[k].sub, rb[k].sub);
			cr_assert_eq(ra[k].bytes, rb[k].bytes, "%s: bytes", ra[k].name);
		}
		free(ra);
		free(rb);
	}
	cr_assert_eq(na, nb, "%zu events before, %zu after", na, nb);
}

static void roundtrip(struct gt_store *a)
{
	char *txt;
	size_t len;
	cr_assert_eq(gt_export_chrome_mem(a, NULL, &txt, &len), 0);
	/* strict JSON (cJSON), with every event of the store as an X, i or C element */
	cJSON *j = cJSON_ParseWithLength(txt, len);
	cr_assert(j, "export is not valid JSON");
	cJSON *te = cJSON_GetObjectItemCaseSensitive(j, "traceEvents"), *e;
	cr_assert(cJSON_IsArray(te));
	size_t nev = 0;
	cJSON_ArrayForEach(e, te) {
		const char *ph = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "ph"));
		cr_assert(ph);
		nev += !strcmp(ph, "X") || !strcmp(ph, "i") || !strcmp(ph, "C");
	}
	cr_expect_eq(nev, gt_store_event_count(a));
	cJSON_Delete(j);
	struct gt_store *b = gt_store_new();
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	char err[256];
	int rc = gt_import_json_mem("export.json", txt, len, &o, b, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	same_events(a, b);
	cr_expect_eq(gt_store_drops(b)->import_skipped, 0);
	free(txt);
	gt_store_free(b);
}

static void real(const char *rel)
{
	struct gt_store *a = tload(rel);
	roundtrip(a);
	gt_store_free(a);
}

Test(roundtrip, resnet50_2021_schema) { real("kineto/resnet50_num_workers_0.pt.trace.json.gz"); }
Test(roundtrip, nccl_data_base_time) { real("hta/nccl_data.json.gz"); }
Test(roundtrip, ns_resolution) { real("hta/v100_ns_resolution.pt.trace.json.gz"); }
Test(roundtrip, h100_qwen) { real("tracelens/h100_qwen_inference.json.gz"); }
Test(roundtrip, b200_no_metadata) { real("tracelens/b200_eager_no_metadata.json.gz"); }
Test(roundtrip, a100_16rank) { real("hta/a100_16rank_rank0.json.gz"); }

#include "gtrace_config.h"
#if GTRACE_HAVE_SQLITE
Test(roundtrip, nsys_sqlite) { real("nsys/a100_cloverleaf.nsys.sqlite"); }
#endif

Test(roundtrip, directory_two_ranks)
{
	real("hta/trace_filter");
}

Test(roundtrip, sim_scenarios)
{
	for (int sc = 0; sc < GT_SIM_SCENARIO_COUNT; sc++) {
		struct gt_sim_opts so = { .gpus = 2, .ranks = 2, .steps = 3, .scenario = sc, .seed = 7 };
		struct gt_store *a = gt_store_new();
		char err[256];
		cr_assert_eq(gt_sim_generate(&so, a, err, sizeof(err)), 0, "%s: %s", gt_sim_scenario_name(sc), err);
		cr_assert_gt(gt_store_event_count(a), 100);
		roundtrip(a);
		gt_store_free(a);
	}
}
