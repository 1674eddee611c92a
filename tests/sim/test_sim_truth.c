/*
 * test_sim_truth.c - each scenario's planted bottleneck, measured directly
 * from the generated events (sums of durations per step window), against
 * the numbers docs/simulator.md promises.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "simcheck.h"

#define US 1000

/* compute kernels (not NCCL) of (rank, gpu) inside step window k */
static int64_t compute_ns(const struct gt_store *s, const struct gt_sim_truth *t, int r, int g,
			  const struct span *sp)
{
	return simcheck_sum(s, simcheck_gpu_lane(s, r, g, t->stream_compute), GT_EV_KERNEL, sp->s, sp->e);
}

static void straggler_case(int gpus, int ranks)
{
	struct gt_sim_truth t;
	struct gt_store *s = simcheck_gen(GT_SIM_STRAGGLER, gpus, ranks, 6, 3, &t);
	cr_assert_eq(t.straggler_rank, 0);
	cr_assert_eq(t.straggler_gpu, gpus - 1);
	cr_assert_float_eq(t.straggler_pct, 18.0, 1e-9);
	struct span *sp;
	size_t n = simcheck_steps(s, 0, &sp);
	for (size_t k = 0; k < n; k++) {
		double slow = 0, others = 0, nccl_slow = 0, nccl_others = 0;
		int n_others = 0;
		for (int r = 0; r < ranks; r++) {
			struct span *rsp;
			simcheck_steps(s, r, &rsp);
			for (int g = 0; g < gpus; g++) {
				double c = (double)compute_ns(s, &t, r, g, &rsp[k]);
				double m = (double)simcheck_sum(s, simcheck_gpu_lane(s, r, g, t.stream_nccl),
								GT_EV_KERNEL, rsp[k].s, rsp[k].e);
				if (r == t.straggler_rank && g == t.straggler_gpu) {
					slow = c;
					nccl_slow = m;
				} else {
					others += c;
					nccl_others += m;
					n_others++;
				}
			}
			free(rsp);
		}
		others /= n_others;
		nccl_others /= n_others;
		double pct = (slow / others - 1.0) * 100.0;
		cr_assert(pct > t.straggler_pct - 1.0 && pct < t.straggler_pct + 1.0,
			  "step %zu: straggler +%.2f %%", k, pct);
		cr_assert_gt(nccl_others, nccl_slow, "the others do not wait in AllReduce");
	}
	free(sp);
	gt_store_free(s);
}

Test(sim_truth, straggler)
{
	straggler_case(4, 1);
	straggler_case(2, 2);
	straggler_case(8, 1);
}

Test(sim_truth, input_bound)
{
	struct gt_sim_truth t;
	struct gt_store *s = simcheck_gen(GT_SIM_INPUT_BOUND, 2, 2, 6, 5, &t);
	cr_assert_float_eq(t.input_pct, 40.0, 1e-9);
	for (int r = 0; r < 2; r++) {
		const struct gt_lane *h = gt_store_lane_at(s, simcheck_host_lane(s, r));
		struct span *sp;
		size_t n = simcheck_steps(s, r, &sp);
		double sum = 0;
		for (size_t i = 0; i < h->n; i++) {
			const struct gt_event *e = &h->ev[i];
			if (!(e->flags & GT_EVF_DATALOADER))
				continue;
			long k = simcheck_step_of(sp, n, e->start_ns);
			double pct = 100.0 * (double)e->dur_ns / (double)(sp[k].e - sp[k].s);
			cr_assert_geq(pct, 30.0);
			sum += pct;
			/* the GPUs idle while the host waits for input */
			for (int g = 0; g < 2; g++)
				for (int st = 0; st < 3; st++) {
					int64_t id[3] = { t.stream_compute, t.stream_copy, t.stream_nccl };
					const struct gt_lane *l = gt_store_lane_at(s, simcheck_gpu_lane(s, r, g, id[st]));
					cr_assert_eq(gt_store_lane_busy(l, e->start_ns, gt_event_end(e)), 0);
				}
		}
		double mean = sum / (double)n;
		cr_assert(mean > t.input_pct - 2 && mean < t.input_pct + 2, "input %.2f %%", mean);
		free(sp);
	}
	gt_store_free(s);
}

Test(sim_truth, balanced)
{
	struct gt_sim_truth t;
	struct gt_store *s = simcheck_gen(GT_SIM_BALANCED, 4, 1, 6, 9, &t);
	const struct gt_lane *h = gt_store_lane_at(s, simcheck_host_lane(s, 0));
	struct span *sp;
	size_t n = simcheck_steps(s, 0, &sp);
	for (size_t i = 0; i < h->n; i++)
		if (h->ev[i].flags & GT_EVF_DATALOADER) {
			long k = simcheck_step_of(sp, n, h->ev[i].start_ns);
			cr_assert_lt((double)h->ev[i].dur_ns / (double)(sp[k].e - sp[k].s), 0.05);
		}
	for (size_t k = 0; k < n; k++)
		for (int g = 0; g < 4; g++) {
			const struct gt_lane *l = gt_store_lane_at(s, simcheck_gpu_lane(s, 0, g, t.stream_compute));
			double util = (double)gt_store_lane_busy(l, sp[k].s, sp[k].e) / (double)(sp[k].e - sp[k].s);
			cr_assert_gt(util, 0.85, "GPU %d step %zu: util %.2f", g, k, util);
			/* input copy not hidden: small */
			double h2d = (double)simcheck_sum(s, simcheck_gpu_lane(s, 0, g, t.stream_copy),
							  GT_EV_MEMCPY, sp[k].s, sp[k].e);
			cr_assert_lt(h2d / (double)(sp[k].e - sp[k].s), 0.02);
		}
	free(sp);
	gt_store_free(s);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

Test(sim_truth, launch_bound)
{
	struct gt_sim_truth t;
	struct gt_store *s = simcheck_gen(GT_SIM_LAUNCH_BOUND, 2, 1, 3, 11, &t);
	cr_assert_float_eq(t.tiny_kernel_max_us, 10.0, 1e-9);
	cr_assert_geq(t.kernels_per_step, 1000);
	struct span *sp;
	size_t nsp = simcheck_steps(s, 0, &sp);
	for (int g = 0; g < 2; g++) {
		const struct gt_lane *l = gt_store_lane_at(s, simcheck_gpu_lane(s, 0, g, t.stream_compute));
		int64_t *dur = malloc(l->n * sizeof(*dur)), *gap = malloc(l->n * sizeof(*gap));
		size_t nd = 0, ng = 0;
		for (size_t i = 0; i < l->n; i++) {
			const struct gt_event *e = &l->ev[i];
			if (e->kind != GT_EV_KERNEL)
				continue;
			cr_assert_lt(e->dur_ns, 10 * US, "kernel of %lld ns", (long long)e->dur_ns);
			struct gt_ref ref;
			cr_assert_eq(gt_store_corr_find(s, 0, e->corr, 0, &ref), 0);
			cr_assert_gt(gt_store_ev(s, ref)->dur_ns, e->dur_ns, "launch shorter than kernel");
			dur[nd++] = e->dur_ns;
			if (i && simcheck_step_of(sp, nsp, l->ev[i - 1].start_ns) ==
				 simcheck_step_of(sp, nsp, e->start_ns))
				gap[ng++] = e->start_ns - gt_event_end(&l->ev[i - 1]);
		}
		cr_assert_eq(nd, (size_t)t.kernels_per_step * nsp);
		qsort(dur, nd, sizeof(*dur), cmp_i64);
		qsort(gap, ng, sizeof(*gap), cmp_i64);
		cr_assert_gt(gap[ng / 2], dur[nd / 2], "median gap %lld <= median kernel %lld",
			     (long long)gap[ng / 2], (long long)dur[nd / 2]);
		cr_assert_gt(gap[ng / 10], dur[nd / 2], "most gaps exceed the median kernel");
		free(dur);
		free(gap);
	}
	free(sp);
	gt_store_free(s);
}

Test(sim_truth, comm_bound)
{
	struct gt_sim_truth t;
	struct gt_store *s = simcheck_gen(GT_SIM_COMM_BOUND, 2, 2, 6, 13, &t);
	cr_assert_float_eq(t.comm_pct, 55.0, 1e-9);
	for (int r = 0; r < 2; r++) {
		struct span *sp;
		size_t n = simcheck_steps(s, r, &sp);
		for (int g = 0; g < 2; g++) {
			uint32_t nl = simcheck_gpu_lane(s, r, g, t.stream_nccl);
			const struct gt_lane *cl = gt_store_lane_at(s, simcheck_gpu_lane(s, r, g, t.stream_compute));
			double sum = 0;
			for (size_t k = 0; k < n; k++) {
				double pct = 100.0 * (double)simcheck_sum(s, nl, GT_EV_KERNEL, sp[k].s, sp[k].e) /
					     (double)(sp[k].e - sp[k].s);
				cr_assert_geq(pct, 50.0);
				sum += pct;
			}
			cr_assert(sum / n > t.comm_pct - 3 && sum / n < t.comm_pct + 3, "comm %.2f %%", sum / n);
			/* little overlap with compute */
			const struct gt_lane *l = gt_store_lane_at(s, nl);
			for (size_t i = 0; i < l->n; i++) {
				const struct gt_event *e = &l->ev[i];
				int64_t ov = gt_store_lane_busy(cl, e->start_ns, gt_event_end(e));
				cr_assert_lt((double)ov, 0.05 * (double)e->dur_ns);
			}
		}
		free(sp);
	}
	gt_store_free(s);
}

Test(sim_truth, copy_heavy)
{
	struct gt_sim_truth t;
	struct gt_store *s = simcheck_gen(GT_SIM_COPY_HEAVY, 2, 1, 6, 17, &t);
	cr_assert_float_eq(t.copy_pct, 25.0, 1e-9);
	struct span *sp;
	size_t n = simcheck_steps(s, 0, &sp);
	for (int g = 0; g < 2; g++) {
		const struct gt_lane *cp = gt_store_lane_at(s, simcheck_gpu_lane(s, 0, g, t.stream_copy));
		const struct gt_lane *cl = gt_store_lane_at(s, simcheck_gpu_lane(s, 0, g, t.stream_compute));
		double sum = 0;
		/* signature of step 0's copies: kind, bytes, kernels before them */
		uint64_t sig0[64][3];
		size_t nsig0 = 0;
		for (size_t k = 0; k < n; k++) {
			double pct = 100.0 * (double)simcheck_sum(s, cp->id, GT_EV_MEMCPY, sp[k].s, sp[k].e) /
				     (double)(sp[k].e - sp[k].s);
			cr_assert_geq(pct, 20.0);
			sum += pct;
			size_t ns = 0;
			for (size_t i = 0; i < cp->n; i++) {
				const struct gt_event *e = &cp->ev[i];
				if (e->start_ns < sp[k].s || e->start_ns >= sp[k].e)
					continue;
				uint64_t before = 0;
				for (size_t j = 0; j < cl->n; j++)
					before += cl->ev[j].start_ns >= sp[k].s && cl->ev[j].start_ns < e->start_ns;
				cr_assert_lt(ns, 64u);
				if (k == 0) {
					sig0[ns][0] = e->sub;
					sig0[ns][1] = e->arg;
					sig0[ns][2] = before;
					nsig0++;
				} else {
					cr_assert_eq(sig0[ns][0], e->sub, "copy %zu of step %zu moved", ns, k);
					cr_assert_eq(sig0[ns][1], e->arg);
					cr_assert_eq(sig0[ns][2], before, "copy %zu of step %zu moved", ns, k);
				}
				ns++;
			}
			cr_assert_eq(ns, nsig0);
			cr_assert_geq(ns, 8u, "recurring copies");
		}
		/* planted 25 % plus the input batch and loss copies (< 1 %) */
		cr_assert(sum / n > t.copy_pct - 1 && sum / n < t.copy_pct + 2, "copies %.2f %%", sum / n);
	}
	free(sp);
	gt_store_free(s);
}

static void staggered_case(int gpus, int ranks)
{
	struct gt_sim_truth t;
	struct gt_store *s = simcheck_gen(GT_SIM_STAGGERED, gpus, ranks, 4, 19, &t);
	cr_assert_float_eq(t.stagger_us, 200.0, 1e-9);
	for (int r = 0; r < ranks; r++) {
		struct span *sp;
		size_t n = simcheck_steps(s, r, &sp);
		for (size_t k = 0; k < n; k++) {
			int64_t first0 = 0;
			for (int g = 0; g < gpus; g++) {
				const struct gt_lane *l = gt_store_lane_at(s, simcheck_gpu_lane(s, r, g, t.stream_compute));
				int64_t first = -1;
				for (size_t i = 0; i < l->n && first < 0; i++)
					if (l->ev[i].kind == GT_EV_KERNEL && l->ev[i].start_ns >= sp[k].s)
						first = l->ev[i].start_ns;
				cr_assert_geq(first, 0);
				if (g == 0)
					first0 = first;
				double off_us = (double)(first - first0) / US;
				cr_assert(off_us > g * t.stagger_us - 20 && off_us < g * t.stagger_us + 20,
					  "rank %d GPU %d step %zu: offset %.1f us", r, g, k, off_us);
			}
		}
		free(sp);
	}
	gt_store_free(s);
}

Test(sim_truth, staggered)
{
	staggered_case(4, 1);
	staggered_case(8, 2);
}

/* ---- the plant in one rank only (GT_SIM_F_ONE_RANK, --scenario-rank) ---- */

static struct gt_store *gen_one_rank(enum gt_sim_scenario sc, int gpus, int ranks, int rank,
				     struct gt_sim_truth *t)
{
	struct gt_sim_opts o = { .scenario = sc, .gpus = gpus, .ranks = ranks, .steps = 6, .seed = 5,
			      .flags = GT_SIM_F_ONE_RANK, .scenario_rank = rank };
	struct gt_store *s = gt_store_new();
	char err[256];
	cr_assert(s);
	cr_assert_eq(gt_sim_generate_truth(&o, s, t, err, sizeof(err)), 0, "%s", err);
	simcheck_valid(s, t);
	return s;
}

/* mean DataLoader share of rank r's steps, %, measured from the events */
static double dataloader_pct(const struct gt_store *s, int r)
{
	const struct gt_lane *h = gt_store_lane_at(s, simcheck_host_lane(s, r));
	struct span *sp;
	size_t n = simcheck_steps(s, r, &sp);
	double sum = 0;
	for (size_t i = 0; i < h->n; i++) {
		const struct gt_event *e = &h->ev[i];
		if (!(e->flags & GT_EVF_DATALOADER))
			continue;
		long k = simcheck_step_of(sp, n, e->start_ns);
		cr_assert_geq(k, 0);
		sum += 100.0 * (double)e->dur_ns / (double)(sp[k].e - sp[k].s);
	}
	free(sp);
	return n ? sum / (double)n : 0;
}

Test(sim_truth, input_bound_one_rank)
{
	struct gt_sim_truth t;
	struct gt_store *s = gen_one_rank(GT_SIM_INPUT_BOUND, 2, 4, 2, &t);
	cr_assert_eq(t.scenario_rank, 2);
	cr_assert_float_eq(t.input_pct, 40.0, 1e-9);
	for (int r = 0; r < 4; r++) {
		double p = dataloader_pct(s, r);
		if (r == 2)
			cr_assert(p > t.input_pct - 2 && p < t.input_pct + 2, "rank 2 input %.2f %%", p);
		else
			cr_assert_lt(p, 5.0, "rank %d input %.2f %% (not planted there)", r, p);
	}
	const char *truth = gt_store_meta_get(s, "sim.truth");
	cr_assert(truth && strstr(truth, " scenario_rank=2"), "%s", truth ? truth : "(none)");
	gt_store_free(s);
}

Test(sim_truth, straggler_one_rank)
{
	struct gt_sim_truth t;
	struct gt_store *s = gen_one_rank(GT_SIM_STRAGGLER, 2, 3, 1, &t);
	cr_assert_eq(t.straggler_rank, 1);
	cr_assert_eq(t.straggler_gpu, 1);
	struct span *sp;
	size_t n = simcheck_steps(s, 1, &sp);
	for (size_t k = 0; k < n; k++) {
		double slow = (double)compute_ns(s, &t, 1, 1, &sp[k]);
		double other = (double)compute_ns(s, &t, 1, 0, &sp[k]);
		double pct = (slow / other - 1.0) * 100.0;
		cr_assert(pct > t.straggler_pct - 1.0 && pct < t.straggler_pct + 1.0,
			  "step %zu: straggler +%.2f %%", k, pct);
	}
	free(sp);
	gt_store_free(s);
}

/* the default (every rank) is unchanged: no scenario_rank in the truth
 * line, -1 in the struct, rank 0 still the straggler's */
Test(sim_truth, every_rank_by_default)
{
	struct gt_sim_truth t;
	struct gt_store *s = simcheck_gen(GT_SIM_INPUT_BOUND, 1, 2, 4, 5, &t);
	cr_assert_eq(t.scenario_rank, -1);
	cr_assert_null(strstr(gt_store_meta_get(s, "sim.truth"), "scenario_rank"));
	for (int r = 0; r < 2; r++)
		cr_assert_gt(dataloader_pct(s, r), 35.0, "rank %d", r);
	gt_store_free(s);
}

Test(sim_truth, one_rank_bad_options)
{
	static const enum gt_sim_scenario no[] = { GT_SIM_LAUNCH_BOUND, GT_SIM_COMM_BOUND, GT_SIM_COPY_HEAVY };
	char err[256];
	for (size_t i = 0; i < 3; i++) {
		struct gt_sim_opts o = { .scenario = no[i], .ranks = 2, .steps = 2,
				      .flags = GT_SIM_F_ONE_RANK, .scenario_rank = 1 };
		struct gt_store *s = gt_store_new();
		err[0] = 0;
		cr_assert_eq(gt_sim_generate(&o, s, err, sizeof(err)), -EINVAL);
		cr_assert(strstr(err, "every rank"), "%s", err);
		gt_store_free(s);
	}
	struct gt_sim_opts o = { .scenario = GT_SIM_INPUT_BOUND, .ranks = 2, .steps = 2,
			      .flags = GT_SIM_F_ONE_RANK, .scenario_rank = 2 };
	struct gt_store *s = gt_store_new();
	cr_assert_eq(gt_sim_generate(&o, s, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "0..1"), "%s", err);
	gt_store_free(s);
}
