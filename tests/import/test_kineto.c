/*
 * test_kineto.c - what the Kineto importer makes of the real traces beyond
 * the MANIFEST table: kinds of both schema eras, steps, DataLoader flags,
 * fixed-point ns times, directories as ranks on one axis, lane names with
 * and without metadata, correlations, NCCL args, devices and ranks.
 * Every expected number was counted once from the raw JSON with the Python
 * one-liner written next to it (python3 + gzip + json, Decimal for times).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/import.h"
#include "gtrace/load.h"
#include "impcheck.h"

/* python3 -c "import gzip,json; ev=json.load(gzip.open(F))['traceEvents']; X=[e for e in ev
 *   if e.get('ph')=='X']; print(sum(1 for e in X if e['name'].startswith('ProfilerStep#')),
 *   sum(1 for e in X if e.get('cat')=='Operator'), sum(1 for e in X if e.get('cat')=='Runtime'),
 *   sum(1 for e in X if 'DataLoader' in e['name'] and '__next__' in e['name']),
 *   sum(1 for e in ev if e.get('ph')=='i'), sum(1 for e in X if e.get('cat')=='Memcpy'),
 *   sum(1 for e in X if e.get('cat')=='Memset'), sum(1 for e in X if e.get('cat')=='Runtime'
 *   and e['name'].startswith(('cudaLaunch','cudaMemcpy','cudaMemset'))))"
 * -> 6 23646 11923 6 12840 12 312 9096  (F = kineto/resnet50_num_workers_0) */
Test(kineto, schema_2021_kinds)
{
	struct gt_store *s = tload("kineto/resnet50_num_workers_0.pt.trace.json.gz");
	cr_expect_eq(count_kind(s, GT_EV_STEP), 6);
	cr_expect_eq(count_kind(s, GT_EV_CPU_OP), 23646 - 6);
	cr_expect_eq(count_kind(s, GT_EV_RUNTIME), 11923);
	cr_expect_eq(count_kind(s, GT_EV_INSTANT), 12840);
	cr_expect_eq(count_kind(s, GT_EV_MEMCPY), 12);
	cr_expect_eq(count_kind(s, GT_EV_MEMSET), 312);
	size_t dl = 0, launch = 0, h2d_pageable = 0;
	int64_t step5 = -1;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		for (size_t j = 0; j < l->n; j++) {
			const struct gt_event *e = &l->ev[j];
			dl += (e->flags & GT_EVF_DATALOADER) != 0;
			launch += (e->flags & GT_EVF_LAUNCH) != 0;
			h2d_pageable += e->kind == GT_EV_MEMCPY && e->sub == GT_COPY_H2D &&
					(e->flags & GT_EVF_PAGEABLE);
			if (e->kind == GT_EV_STEP && !strcmp(gt_store_str(s, e->name), "ProfilerStep#5")) {
				cr_expect_eq(e->arg, 5);
				step5 = e->start_ns;
			}
		}
	}
	cr_expect_eq(dl, 6);
	cr_expect_eq(launch, 9096);
	cr_expect_gt(h2d_pageable, 0);
	cr_expect_gt(step5, 1623142623000000000LL);
	/* "stream 7" tids become stream 7 of device 0 */
	int found = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type == GT_LANE_GPU && l->key.device == 0 && l->key.id == 7 && l->key.pid == 0) {
			found = 1;
			cr_expect_str_eq(gt_store_str(s, l->name), "GPU 0 stream 7");
		}
	}
	cr_expect(found);
	gt_store_free(s);
}

/* python3 -c "import gzip,json,decimal; d=json.load(gzip.open('hta/v100_ns_resolution.pt.trace.json.gz'),
 *   parse_float=decimal.Decimal); k=[e for e in d['traceEvents'] if e.get('ph')=='X' and
 *   e.get('cat')=='kernel']; print(len(k), sum(e['dur'] for e in k)*1000, min(e['ts'] for e in k)*1000)"
 * -> 4350 468153602.000 1712195495505582988.000 */
Test(kineto, ns_resolution_fixed_point)
{
	struct gt_store *s = tload("hta/v100_ns_resolution.pt.trace.json.gz");
	struct kfacts f;
	kfacts_of(s, &f);
	cr_expect_eq(f.kernels, 4350);
	cr_expect_eq(f.dur_ns, 468153602LL);
	int64_t first = INT64_MAX;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		for (size_t j = 0; j < l->n; j++)
			if (l->ev[j].kind == GT_EV_KERNEL && l->ev[j].start_ns < first)
				first = l->ev[j].start_ns;
	}
	cr_expect_eq(first, 1712195495505582988LL);
	gt_store_free(s);
}

/* python3 -c "import gzip,json,decimal; D=decimal.Decimal; ev=[e for f in
 *   ['hta/trace_filter/sampled_rank-0.json.gz','hta/trace_filter/sampled_rank-1.json.gz'] for e in
 *   json.load(gzip.open(f),parse_float=D)['traceEvents'] if e.get('ph') in ('X','i') and
 *   e.get('cat')!='Trace']; print(len(ev), min(e['ts'] for e in ev)*1000,
 *   max((e['ts']+e.get('dur',0)) for e in ev)*1000)"
 * -> 9485 1682725898079292000 1682725899318077000; kernels 1154 + 1104 */
Test(kineto, directory_two_ranks_one_axis)
{
	struct gt_store *s = tload("hta/trace_filter");
	cr_expect_eq(gt_store_rank_count(s), 2);
	cr_expect_eq(gt_store_event_count(s), 9485);
	cr_expect_eq(gt_store_t_min(s), 1682725898079292000LL);
	cr_expect_eq(gt_store_t_max(s), 1682725899318077000LL);
	size_t k[2] = { 0, 0 };
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		cr_assert(l->key.rank == 0 || l->key.rank == 1);
		for (size_t j = 0; j < l->n; j++)
			k[l->key.rank] += l->ev[j].kind == GT_EV_KERNEL;
	}
	cr_expect_eq(k[0], 1154);
	cr_expect_eq(k[1], 1104);
	for (size_t i = 0; i < gt_store_rank_count(s); i++)
		cr_expect_eq(gt_store_rank_at(s, i)->world_size, 128);
	gt_store_free(s);
}

Test(kineto, several_files_on_the_command_line)
{
	const char *p[2] = { tpath("hta/trace_filter/sampled_rank-1.json.gz"),
			     tpath("hta/trace_filter/sampled_rank-0.json.gz") };
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	struct gt_store *s;
	char err[256];
	cr_assert_eq(gt_load(p, 2, &o, &s, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(gt_store_event_count(s), 9485);
	cr_expect_eq(gt_store_rank_count(s), 2);
	gt_store_free(s);
}

/* python3 -c "import gzip,json,collections; d=json.load(gzip.open('tracelens/b200_eager_no_metadata.json.gz'));
 *   print(collections.Counter((e.get('cat'),e['pid'],e['tid']) for e in d['traceEvents'] if e['ph']=='X'))"
 * -> python_function/cpu_op/cuda_runtime/cuda_driver/user_annotation on 6583/6583, kernel 768 +
 *    gpu_memcpy 161 + gpu_user_annotation 3 on 0/7, overhead 9 on -1/0 */
Test(kineto, b200_without_metadata_names_lanes)
{
	struct gt_store *s = tload("tracelens/b200_eager_no_metadata.json.gz");
	int host = 0, gpu = 0, annot = 0, ovh = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		const char *n = gt_store_str(s, l->name);
		cr_expect(n[0], "lane %zu has no name", i);
		if (l->key.type == GT_LANE_HOST && l->key.pid == 6583 && l->key.id == 6583) {
			host = 1;
			cr_expect_str_eq(n, "thread 6583");
			cr_expect_eq(l->n, 15230 + 4809 + 1151 + 221 + 3);
		} else if (l->key.type == GT_LANE_GPU && l->key.pid == 0) {
			gpu = 1;
			cr_expect_str_eq(n, "GPU 0 stream 7");
			cr_expect_eq(l->n, 768 + 161);
		} else if (l->key.type == GT_LANE_GPU && l->key.pid == -1) {
			annot = 1;
			cr_expect_str_eq(n, "GPU 0 stream 7 annotations");
			cr_expect_eq(l->n, 3);
		} else if (l->key.type == GT_LANE_HOST && l->key.pid == -1) {
			ovh = 1;
			cr_expect_eq(count_kind(s, GT_EV_OVERHEAD), 9);
		}
	}
	cr_expect(host && gpu && annot && ovh);
	cr_expect_eq(gt_store_rank_at(s, 0)->rank, 0);
	cr_expect_eq(gt_store_rank_at(s, 0)->world_size, 8);
	gt_store_free(s);
}

/* python3 -c "import gzip,json; ev=json.load(gzip.open('hta/nccl_data.json.gz'))['traceEvents'];
 *   X=[e for e in ev if e.get('ph')=='X']; rc={e['args']['correlation'] for e in X if e.get('cat') in
 *   ('cuda_runtime','cuda_driver')}; k=[e for e in X if e.get('cat')=='kernel']; print(sum(1 for e in k
 *   if e['args'].get('correlation') in rc)); n=[e for e in k if 'Collective name' in e['args']];
 *   print(len(n), sum(e['args']['In msg nelems'] for e in n)); print(collections.Counter((e['args']
 *   ['Collective name'],e['args']['dtype'],e['args']['Group size']) for e in n))"
 * -> 2700; 21 76830615; allreduce/Float/2: 15, broadcast/Float/2: 3, broadcast/Long/2: 3 */
Test(kineto, nccl_args_and_correlation)
{
	struct gt_store *s = tload("hta/nccl_data.json.gz");
	size_t linked = 0, with_nccl = 0, allreduce = 0, f32 = 0;
	uint64_t nelems = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		for (size_t j = 0; j < l->n; j++) {
			const struct gt_event *e = &l->ev[j];
			if (e->kind != GT_EV_KERNEL)
				continue;
			struct gt_ref me = { (uint32_t)i, (uint32_t)j }, peer;
			if (gt_store_corr_peer(s, me, &peer) == 0) {
				linked++;
				cr_expect_eq(gt_store_ev(s, peer)->kind, GT_EV_RUNTIME);
			}
			if (gt_event_nccl(e)) {
				const struct gt_nccl *n = gt_store_nccl_at(s, gt_event_nccl(e));
				with_nccl++;
				nelems += n->in_nelems;
				allreduce += !strcmp(gt_store_str(s, n->collective), "allreduce");
				f32 += !strcmp(gt_store_str(s, n->dtype), "Float") && n->dtype_bytes == 4;
				cr_expect_eq(n->group_size, 2);
			}
			const struct gt_kconf *k = gt_store_kconf_at(s, gt_event_kconf(e));
			cr_assert(k);
			cr_expect_gt(k->block[0], 0);
		}
	}
	cr_expect_eq(linked, 2700);
	/* python3 -c "import gzip,json,collections; ev=json.load(gzip.open('hta/nccl_data.json.gz'))
	 *   ['traceEvents']; g=collections.defaultdict(list); [g[e['id']].append(e['ph']) for e in ev if
	 *   e.get('ph') in ('s','f') and e.get('cat')=='ac2g']; print(sum(len(v) for v in g.values()
	 *   if not ('s' in v and 'f' in v)))" -> 4966 */
	cr_expect_str_eq(gt_store_meta_get(s, "import.flow_ends_unmatched"), "4966");
	cr_expect_eq(with_nccl, 21);
	cr_expect_eq(allreduce, 15);
	cr_expect_eq(f32, 18);
	cr_expect_eq(nelems, 76830615);
	cr_expect_eq(gt_store_device_count(s), 8);
	cr_expect_str_eq(gt_store_str(s, gt_store_device_at(s, 0)->name), "NVIDIA A100-PG509-200");
	cr_expect_eq(gt_store_device_at(s, 0)->sm_count, 108);
	cr_expect_eq(gt_store_rank_at(s, 0)->world_size, 2);
	/* metadata thread names are used for host lanes */
	int named = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++)
		named |= !strcmp(gt_store_str(s, gt_store_lane_at(s, (uint32_t)i)->name),
				 "thread 2919752 (pt_autograd_0)");
	cr_expect(named);
	gt_store_free(s);
}

/* the largest file: every X except the Trace span, every i, and a counter
 * sample for each Total Allocated / Total Reserved arg of a [memory] record;
 * python3 -c "import gzip,json; ev=json.load(gzip.open('hta/v100_ddp_allreduce.json.gz'))
 *   ['traceEvents']; print(sum(1 for e in ev if e['ph'] in 'Xi' and e.get('cat')!='Trace') +
 *   sum(('Total Allocated' in e['args']) + ('Total Reserved' in e['args']) for e in ev
 *   if e.get('name') == '[memory]'))" -> 207410 (151390 + 56020) */
Test(kineto, largest_file_every_event)
{
	struct gt_store *s = tload("hta/v100_ddp_allreduce.json.gz");
	cr_expect_eq(gt_store_event_count(s), 207410);
	cr_expect_eq(gt_store_rank_at(s, 0)->rank, 1);
	struct kfacts f;
	kfacts_of(s, &f);
	cr_expect_eq(f.nccl, 2020);
	gt_store_free(s);
}

static struct gt_store *load_threads(const char *rel, int threads)
{
	const char *p = tpath(rel);
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET, .threads = threads };
	struct gt_store *s;
	char err[256];
	cr_assert_eq(gt_load(&p, 1, &o, &s, err, sizeof(err)), 0, "%s", err);
	return s;
}

/* files parsed by parallel threads (private string tables, remapped) give
 * the same store as one thread: lanes, names, events and their side records */
Test(kineto, parallel_files_same_as_sequential)
{
	struct gt_store *a = load_threads("hta/trace_filter", 1), *b = load_threads("hta/trace_filter", 2);
	cr_assert_eq(gt_store_lane_count(a), gt_store_lane_count(b));
	cr_assert_eq(gt_store_event_count(a), gt_store_event_count(b));
	for (uint32_t i = 0; i < gt_store_lane_count(a); i++) {
		const struct gt_lane *la = gt_store_lane_at(a, i), *lb = gt_store_lane_at(b, i);
		cr_assert_eq(memcmp(&la->key, &lb->key, sizeof(la->key)), 0);
		cr_assert_str_eq(gt_store_str(a, la->name), gt_store_str(b, lb->name));
		cr_assert_eq(la->n, lb->n);
		for (size_t j = 0; j < la->n; j++) {
			const struct gt_event *x = &la->ev[j], *y = &lb->ev[j];
			cr_assert_eq(x->start_ns, y->start_ns);
			cr_assert_eq(x->dur_ns, y->dur_ns);
			cr_assert_eq(x->kind, y->kind);
			cr_assert_eq(x->flags, y->flags);
			cr_assert_eq(x->corr, y->corr);
			cr_assert_str_eq(gt_store_str(a, x->name), gt_store_str(b, y->name));
			if (x->kind == GT_EV_KERNEL) {
				const struct gt_kconf *ka = gt_store_kconf_at(a, gt_event_kconf(x));
				const struct gt_kconf *kb = gt_store_kconf_at(b, gt_event_kconf(y));
				cr_assert(ka && kb);
				cr_assert_eq(memcmp(ka, kb, sizeof(*ka)), 0);
			}
		}
	}
	gt_store_free(a);
	gt_store_free(b);
}

/* the gzip inflate thread (forced on) gives the same events as one thread */
Test(kineto, inflate_thread)
{
	struct gt_store *a = load_threads("hta/v100_ddp_allreduce.json.gz", 2);
	struct gt_store *b = load_threads("hta/v100_ddp_allreduce.json.gz", 1);
	cr_expect_eq(gt_store_event_count(a), 207410);
	cr_expect_eq(gt_store_event_count(b), 207410);
	cr_expect_eq(gt_store_t_min(a), gt_store_t_min(b));
	cr_expect_eq(gt_store_t_max(a), gt_store_t_max(b));
	gt_store_free(a);
	gt_store_free(b);
}

/* the CPU op of name `nm` in s (the first one) */
static const struct gt_event *op_named(const struct gt_store *s, const char *nm)
{
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		for (size_t j = 0; j < l->n; j++)
			if (l->ev[j].kind == GT_EV_CPU_OP && !strcmp(gt_store_str(s, l->ev[j].name), nm))
				return &l->ev[j];
	}
	cr_assert_fail("no op %s", nm);
	return NULL;
}

/* Input Dims kept as Python's str() of the list (planted texts: spacing,
 * nesting, a string with an escaped quote, one over 4 KiB cut with "..."),
 * Call stack as written (escapes undone), both absent: 0 */
Test(kineto, op_shapes_and_stacks)
{
	char *big = malloc(6000);
	size_t n = 0;
	n += (size_t)sprintf(big + n, "[");
	for (int i = 0; i < 800; i++)
		n += (size_t)sprintf(big + n, "%s[%d]", i ? "," : "", i);
	sprintf(big + n, "]");
	char *json = NULL;
	cr_assert(asprintf(&json,
		"{\"traceEvents\": ["
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, "
		"\"dur\": 1, \"args\": {\"Input Dims\": [[32,3, 224 ,224],[ ],[[1],[2, 3]]], "
		"\"Call stack\": \"x.py(1): f;\\\"y\\\".py(2): g\"}},"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 3, "
		"\"dur\": 1, \"args\": {\"Input Dims\": [\"s,\\\"t\", 1]}},"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"c\", \"pid\": 1, \"tid\": 1, \"ts\": 5, "
		"\"dur\": 1, \"args\": {\"Input Dims\": %s}},"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"d\", \"pid\": 1, \"tid\": 1, \"ts\": 7, "
		"\"dur\": 1, \"args\": {}}]}", big) > 0);
	struct gt_store *s = gt_store_new();
	char err[256];
	struct gt_load_opts lo = { .flags = GT_LOAD_QUIET };
	cr_assert_eq(gt_import_json_mem("ops.json", json, strlen(json), &lo, s, err, sizeof(err)), 0,
		     "%s", err);
	const struct gt_event *a = op_named(s, "a"), *b = op_named(s, "b"), *c = op_named(s, "c"),
			      *d = op_named(s, "d");
	cr_expect_str_eq(gt_store_str(s, (uint32_t)a->arg), "[[32, 3, 224, 224], [], [[1], [2, 3]]]");
	cr_expect_str_eq(gt_store_str(s, a->aux), "x.py(1): f;\"y\".py(2): g");
	/* python3 -c "print(str(['s,\"t', 1]))" -> ['s,"t', 1] */
	cr_expect_str_eq(gt_store_str(s, (uint32_t)b->arg), "['s,\"t', 1]");
	cr_expect_eq(b->aux, 0);
	const char *cs = gt_store_str(s, (uint32_t)c->arg);
	cr_expect(strlen(cs) < 4096 && !strcmp(cs + strlen(cs) - 3, "...") &&
		  !strncmp(cs, "[[0], [1], [2], ", 16), "%.40s", cs);
	cr_expect_eq((uint32_t)d->arg, 0);
	cr_expect_eq(d->aux, 0);
	gt_store_free(s);
	free(json);
	free(big);
}
