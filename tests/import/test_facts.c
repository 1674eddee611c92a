/*
 * test_facts.c - the facts of shared/testdata/MANIFEST.md, asserted
 * exactly on the imported stores (kernel counts, distinct names, summed
 * durations from the fixed-point parse, NCCL kernels, GPU lanes).
 */
#include <criterion/criterion.h>
#include "impcheck.h"

static void check(const char *rel, size_t kernels, size_t names, int64_t dur_ns, size_t nccl,
		  size_t lanes)
{
	struct gt_store *s = tload(rel);
	struct kfacts f;
	kfacts_of(s, &f);
	cr_expect_eq(f.kernels, kernels, "%s kernels %zu", rel, f.kernels);
	cr_expect_eq(f.names, names, "%s names %zu", rel, f.names);
	cr_expect_eq(f.dur_ns, dur_ns, "%s dur %lld", rel, (long long)f.dur_ns);
	cr_expect_eq(f.nccl, nccl, "%s nccl %zu", rel, f.nccl);
	cr_expect_eq(f.gpu_lanes, lanes, "%s lanes %zu", rel, f.gpu_lanes);
	gt_store_free(s);
}

/* MANIFEST.md facts table: 8,772 / 67 / 591,532 us / 0 / 1 */
Test(facts, resnet50_num_workers_0)
{
	check("kineto/resnet50_num_workers_0.pt.trace.json.gz", 8772, 67, 591532000LL, 0, 1);
}

/* MANIFEST.md: 1,154 / 194 / 606,519 us / 10 / 4 */
Test(facts, trace_filter_rank0)
{
	check("hta/trace_filter/sampled_rank-0.json.gz", 1154, 194, 606519000LL, 10, 4);
}

/* MANIFEST.md: 2,700 / 70 / 162,532.340 us / 21 / 2 */
Test(facts, nccl_data)
{
	check("hta/nccl_data.json.gz", 2700, 70, 162532340LL, 21, 2);
}

/* MANIFEST.md: 1,465 / 26 / 45,432.698 us / 0 / 1 */
Test(facts, h100_qwen)
{
	check("tracelens/h100_qwen_inference.json.gz", 1465, 26, 45432698LL, 0, 1);
}
