/*
 * test_ops_mem.c - the operator table's maps hold one rank's ids at a time
 * (core/analysis/ops.c): on a 32-rank simulated capture of 3 M events the
 * table's pass raises the heap's resident bytes by a few MB, where maps of
 * every rank at once (hashed: the keys of all ranks are not dense) took
 * ~70 bytes an event, and the table equals the one computed rank by rank
 * through scopes (each rank's rows summed by name: the operators of one
 * rank never look up another's ids).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "gtrace/ops.h"
#include "gtrace/sim.h"
#include "gtrace/steps.h"
#include "gtrace/store.h"
#include "../../bench/rss.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#else
#define UNDER_ASAN 0
#endif

static int by_name(const void *a, const void *b)
{
	const struct gt_ops_row *x = a, *y = b;
	return (x->name > y->name) - (x->name < y->name);
}

Test(ops_mem, one_rank_of_maps_at_a_time, .timeout = 240)
{
	struct gt_store *s = gt_store_new();
	struct gt_sim_opts o = { .ranks = 32, .gpus = 2, .events = 3000000 };
	char err[256];
	cr_assert_eq(gt_sim_generate(&o, s, err, sizeof(err)), 0, "%s", err);
	struct gt_ops_result r;
	size_t base = rss_anon_bytes();
	struct rss_sampler as;
	cr_assert_eq(rss_sampler_start_anon(&as, 500), 0);
	cr_assert_eq(gt_ops_compute(s, NULL, &r, err, sizeof(err)), 0, "%s", err);
	size_t peak = rss_sampler_stop(&as), rise = peak > base ? peak - base : 0;
	printf("operator table's heap rise over 3 M events, 32 ranks: %.1f MB\n", rise / 1e6);
	cr_assert_gt(r.n, 0);

	/* the same table from the ranks one by one (scopes), summed by name */
	struct gt_ops_row *want = calloc(r.n, sizeof(*want));
	cr_assert(want);
	memcpy(want, r.rows, r.n * sizeof(*want));
	qsort(want, r.n, sizeof(*want), by_name);
	struct gt_ops_row *sum = calloc(r.n, sizeof(*sum));
	cr_assert(sum);
	for (size_t i = 0; i < r.n; i++)
		sum[i].name = want[i].name;
	for (int rank = 0; rank < o.ranks; rank++) {
		struct gt_scope sc;
		gt_scope_all(&sc);
		sc.rank = rank;
		struct gt_ops_result rr;
		cr_assert_eq(gt_ops_compute(s, &sc, &rr, err, sizeof(err)), 0, "%s", err);
		for (size_t i = 0; i < rr.n; i++) {
			struct gt_ops_row key = { .name = rr.rows[i].name };
			struct gt_ops_row *t = bsearch(&key, sum, r.n, sizeof(*sum), by_name);
			cr_assert(t, "rank %d: a row the whole table lacks", rank);
			t->calls += rr.rows[i].calls;
			t->host_self_ns += rr.rows[i].host_self_ns;
			t->dev_self_ns += rr.rows[i].dev_self_ns;
			t->dev_total_ns += rr.rows[i].dev_total_ns;
			t->host_total_ns += rr.rows[i].host_total_ns;
			t->tc_self_ns += rr.rows[i].tc_self_ns;
			t->tc_total_ns += rr.rows[i].tc_total_ns;
		}
		gt_ops_result_done(&rr);
	}
	for (size_t i = 0; i < r.n; i++) {
		cr_assert_eq(sum[i].calls, want[i].calls, "%s calls", gt_store_str(s, want[i].name));
		cr_assert_eq(sum[i].host_self_ns, want[i].host_self_ns);
		cr_assert_eq(sum[i].dev_self_ns, want[i].dev_self_ns);
		cr_assert_eq(sum[i].dev_total_ns, want[i].dev_total_ns);
		cr_assert_eq(sum[i].host_total_ns, want[i].host_total_ns);
		cr_assert_eq(sum[i].tc_self_ns, want[i].tc_self_ns);
		cr_assert_eq(sum[i].tc_total_ns, want[i].tc_total_ns);
	}
	free(want);
	free(sum);
	gt_ops_result_done(&r);
	gt_store_free(s);
	if (UNDER_ASAN)
		return;   /* ASan's allocator holds freed memory in quarantine */
	/* one rank's maps: 3.1 MB here; every rank's at once: 206.6 MB */
	cr_assert_lt(rise, (size_t)40000000, "heap rise %zu", rise);
}

/* the table's heap rise (anon) and whole RSS rise over one computation */
static void ops_rises(const struct gt_store *s, struct gt_ops_result *r, size_t *heap, size_t *all)
{
	char err[256];
	size_t base = rss_bytes(), abase = rss_anon_bytes();
	struct rss_sampler rs, as;
	cr_assert_eq(rss_sampler_start(&rs, 500), 0);
	cr_assert_eq(rss_sampler_start_anon(&as, 500), 0);
	cr_assert_eq(gt_ops_compute(s, NULL, r, err, sizeof(err)), 0, "%s", err);
	size_t peak = rss_sampler_stop(&rs), apeak = rss_sampler_stop(&as);
	*heap = apeak > abase ? apeak - abase : 0;
	*all = peak > base ? peak - base : 0;
}

/* one rank of many events (a single-GPU run left open for a day): under a
 * budget its maps live in a spill, the table the same as without */
Test(ops_mem, one_big_rank_in_a_spill, .timeout = 240)
{
	struct gt_store *s = gt_store_new();
	struct gt_sim_opts o = { .ranks = 1, .gpus = 2, .events = 3000000 };
	char err[256];
	cr_assert_eq(gt_sim_generate(&o, s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_ops_result want, got;
	size_t unb, unb_all, bud, bud_all;
	/* budgeted first: the blocks an unbudgeted run frees are kept for
	 * reuse (analysis_mem_get), resident, and would hide a heap map */
	cr_assert_eq(gt_store_set_budget(s, 16u << 20), 0);
	ops_rises(s, &got, &bud, &bud_all);
	cr_assert_eq(gt_store_set_budget(s, 0), 0);
	ops_rises(s, &want, &unb, &unb_all);
	printf("operator table of one rank of 3 M events, heap rise: unbounded %.1f MB, "
	       "16 MiB budget %.1f MB (whole RSS %.1f MB)\n", unb / 1e6, bud / 1e6, bud_all / 1e6);
	cr_assert_gt(want.n, 0);
	cr_assert_eq(got.n, want.n);
	cr_assert_eq(got.ops_seen, want.ops_seen);
	cr_assert_eq(got.dropped, want.dropped);
	for (size_t i = 0; i < want.n; i++) {
		const struct gt_ops_row *a = &want.rows[i], *b = &got.rows[i];
		const char *n = gt_store_str(s, a->name);
		cr_assert_eq(b->name, a->name, "row %zu", i);
		cr_assert_eq(b->key, a->key, "%s", n);
		cr_assert_eq(b->calls, a->calls, "%s", n);
		cr_assert_eq(b->host_total_ns, a->host_total_ns, "%s", n);
		cr_assert_eq(b->host_self_ns, a->host_self_ns, "%s", n);
		cr_assert_eq(b->dev_total_ns, a->dev_total_ns, "%s", n);
		cr_assert_eq(b->dev_self_ns, a->dev_self_ns, "%s", n);
		cr_assert_eq(b->tc_self_ns, a->tc_self_ns, "%s", n);
		cr_assert_eq(b->tc_total_ns, a->tc_total_ns, "%s", n);
		cr_assert_eq(b->tc_eligible, a->tc_eligible, "%s", n);
	}
	gt_ops_result_done(&want);
	gt_ops_result_done(&got);
	gt_store_free(s);
	if (UNDER_ASAN)
		return;
	/* the maps (~32 bytes an id of the rank) left the heap */
	cr_assert_gt(unb, (size_t)40000000, "unbudgeted heap rise %zu: maps too small to tell", unb);
	cr_assert_lt(bud, (size_t)8000000, "budgeted heap rise %zu", bud);
	cr_assert_lt(bud_all, (size_t)48000000, "budgeted RSS rise %zu", bud_all);
}

/* one rank of 3 M events on 2 GPUs in a new store, under budget bytes (0: none) */
static struct gt_store *one_rank_store(size_t budget)
{
	struct gt_sim_opts o = { .ranks = 1, .gpus = 2, .events = 3000000 };
	char err[256];
	struct gt_store *s = gt_store_new();
	cr_assert_not_null(s);
	if (budget)
		cr_assert_eq(gt_store_set_budget(s, budget), 0);
	cr_assert_eq(gt_sim_generate(&o, s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(gt_store_finish(s), 0);
	return s;
}

/* the launch maps of the steps' device windows and of the GPU-time report
 * (correlation id -> launch call, 16 bytes an id): under a budget, a big
 * rank's live in a spill; the numbers the same as without.  (The GPU-time
 * report's per-kernel launch figures, 24 bytes a kernel for their medians,
 * are still on the heap: docs/store.md) */
Test(ops_mem, launch_maps_in_a_spill, .timeout = 240)
{
	char err[256];
	struct gt_store *s[2];
	struct gt_gputime_result g[2];
	struct gt_steps_list st[2];
	size_t rise[2];
	/* the budgeted store [1] first: the blocks an unbudgeted run frees are
	 * kept for reuse (analysis_mem_get), resident, and would hide a heap map */
	for (int b = 1; b >= 0; b--) {
		s[b] = one_rank_store(b ? 16u << 20 : 0);
		size_t base = rss_anon_bytes();
		struct rss_sampler as;
		cr_assert_eq(rss_sampler_start_anon(&as, 500), 0);
		cr_assert_eq(gt_steps_find(s[b], 0, NULL, &st[b], err, sizeof(err)), 0, "%s", err);
		size_t peak = rss_sampler_stop(&as);
		rise[b] = peak > base ? peak - base : 0;
		cr_assert_eq(gt_gputime_compute(s[b], NULL, &g[b], err, sizeof(err)), 0, "%s", err);
	}
	printf("steps of one rank of 3 M events, heap rise: unbounded %.1f MB, "
	       "16 MiB budget %.1f MB\n", rise[0] / 1e6, rise[1] / 1e6);
	cr_assert_gt(g[0].ngpus, 0);
	cr_assert_eq(g[1].ngpus, g[0].ngpus);
	cr_assert_eq(g[1].nstreams, g[0].nstreams);
	cr_assert(!memcmp(g[1].gpus, g[0].gpus, g[0].ngpus * sizeof(*g[0].gpus)), "GPU rows differ");
	cr_assert(!memcmp(g[1].streams, g[0].streams, g[0].nstreams * sizeof(*g[0].streams)),
		  "stream rows differ");
	cr_assert_gt(g[0].gpus[0].launches, 0);
	cr_assert(st[0].widened);
	cr_assert_gt(st[0].n, 0);
	cr_assert_eq(st[1].n, st[0].n);
	for (size_t i = 0; i < st[0].n; i++) {
		cr_assert_eq(st[1].v[i].t0_ns, st[0].v[i].t0_ns, "step %zu", i);
		cr_assert_eq(st[1].v[i].t1_ns, st[0].v[i].t1_ns, "step %zu", i);
		cr_assert_eq(st[1].v[i].acts, st[0].v[i].acts, "step %zu", i);
	}
	for (int b = 0; b < 2; b++) {
		gt_gputime_result_done(&g[b]);
		gt_steps_list_done(&st[b]);
		gt_store_free(s[b]);
	}
	if (UNDER_ASAN)
		return;
	cr_assert_gt(rise[0], (size_t)12000000, "unbudgeted heap rise %zu: maps too small to tell",
		     rise[0]);
	cr_assert_lt(rise[1], (size_t)4000000, "budgeted heap rise %zu", rise[1]);
}

/* the step analyses' busy intervals (16 bytes an interval, about one an
 * event) of one big rank: under a budget the rank goes in time slabs of
 * budget / 512 events (core/analysis/analysis_pass.c, analysis_slabs), one
 * pass of intervals at a time, and every number is the same as in one pass
 * over the whole rank (the per-window times add over the slabs; the first
 * kernel and the last activity of a step are the least and the greatest) */
static size_t step_rises(const struct gt_store *s, struct gt_breakdown_result *bd,
			 struct gt_pipeline_result *pl, struct gt_multigpu_result *mg)
{
	char err[256];
	size_t base = rss_anon_bytes();
	struct rss_sampler as;
	cr_assert_eq(rss_sampler_start_anon(&as, 500), 0);
	cr_assert_eq(gt_breakdown_compute(s, 0, NULL, NULL, bd, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(gt_pipeline_compute(s, 0, NULL, NULL, pl, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(gt_multigpu_compute(s, NULL, mg, err, sizeof(err)), 0, "%s", err);
	size_t peak = rss_sampler_stop(&as);
	return peak > base ? peak - base : 0;
}

Test(ops_mem, step_analyses_in_slabs, .timeout = 240)
{
	struct gt_store *s[2];
	struct gt_breakdown_result bd[2];
	struct gt_pipeline_result pl[2];
	struct gt_multigpu_result mg[2];
	size_t rise[2];
	/* the budgeted store [1] first (freed blocks are kept for reuse) */
	for (int b = 1; b >= 0; b--) {
		s[b] = one_rank_store(b ? 16u << 20 : 0);
		rise[b] = step_rises(s[b], &bd[b], &pl[b], &mg[b]);
	}
	printf("breakdown, pipeline and multi-GPU of one rank of 3 M events, heap rise: "
	       "unbounded %.1f MB, 16 MiB budget %.1f MB\n", rise[0] / 1e6, rise[1] / 1e6);
	cr_assert_gt(bd[0].n, 10);
	cr_assert_eq(bd[1].n, bd[0].n);
	cr_assert(!memcmp(bd[1].rows, bd[0].rows, bd[0].n * sizeof(*bd[0].rows)), "breakdown rows differ");
	cr_assert(!memcmp(bd[1].avg_ns, bd[0].avg_ns, sizeof(bd[0].avg_ns)));
	cr_assert_eq(bd[1].gpu_util_pct, bd[0].gpu_util_pct);
	cr_assert_eq(pl[1].n, pl[0].n);
	cr_assert(!memcmp(pl[1].rows, pl[0].rows, pl[0].n * sizeof(*pl[0].rows)), "pipeline rows differ");
	cr_assert_eq(pl[1].verdict, pl[0].verdict);
	cr_assert_eq(mg[0].ngpus, 2);
	cr_assert_eq(mg[1].ngpus, mg[0].ngpus);
	cr_assert_eq(mg[1].nsteps, mg[0].nsteps);
	cr_assert(!memcmp(mg[1].cells, mg[0].cells, mg[0].nsteps * mg[0].ngpus * sizeof(*mg[0].cells)),
		  "multi-GPU cells differ");
	for (size_t g = 0; g < mg[0].ngpus; g++)
		cr_assert_eq(mg[1].gpus[g].parallel_pct, mg[0].gpus[g].parallel_pct);
	for (int b = 0; b < 2; b++) {
		gt_breakdown_result_done(&bd[b]);
		gt_pipeline_result_done(&pl[b]);
		gt_multigpu_result_done(&mg[b]);
		gt_store_free(s[b]);
	}
	if (UNDER_ASAN)
		return;
	cr_assert_gt(rise[0], (size_t)24000000, "unbudgeted heap rise %zu: intervals too few to tell",
		     rise[0]);
	cr_assert_lt(rise[1], (size_t)8000000, "budgeted heap rise %zu", rise[1]);
}
