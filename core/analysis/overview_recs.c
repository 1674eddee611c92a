/*
 * overview_recs.c - recommendations of the overview, each from a threshold
 * of docs/analyses.md §3-§6 and each naming its evidence (numbers, steps, GPUs):
 *   input-bound   pipeline verdict HIGHLY/MODERATELY with host wait >= H2D
 *   launch-bound  >= 50 % of kernels under 10 us, >= 30 % GPU idle and kernel
 *                 launch >= 3 % of the step, or kernel launch >= 15 %
 *   straggler     one GPU has the most compute in > half of the steps, by >= 5 %
 *   comm-bound    exposed communication >= 20 % of the step
 *   copy-heavy    copies (Memcpy) >= 10 % of the step
 *   staggered     a GPU's first kernel of a step >= 100 us and >= 0.5 % of
 *                 the step after the earliest GPU's of its rank, on average
 *   slow-collectives  (only when the user gave parameter bytes and link
 *                 bandwidth) the least collective time per step of any GPU
 *                 >= 2x the expected all-reduce time (high at 4x); below 2x
 *                 it is info
 * Severity: high above the second threshold noted per rule, else warn;
 * POTENTIALLY input-bound and low utilization are info.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "overview_priv.h"

#define REC_MAX 16

static const char *const kind_names[GT_OVERVIEW_K_COUNT] = {
	[GT_OVERVIEW_K_OTHER] = "",
	[GT_OVERVIEW_K_INPUT_BOUND] = "input-bound",
	[GT_OVERVIEW_K_LAUNCH_BOUND] = "launch-bound",
	[GT_OVERVIEW_K_STRAGGLER] = "straggler",
	[GT_OVERVIEW_K_COMM_BOUND] = "comm-bound",
	[GT_OVERVIEW_K_COPY_HEAVY] = "copy-heavy",
	[GT_OVERVIEW_K_STAGGERED] = "staggered",
	[GT_OVERVIEW_K_HOST_BOUND] = "host-bound",
	[GT_OVERVIEW_K_LOW_UTILIZATION] = "low-utilization",
	[GT_OVERVIEW_K_SLOW_COLLECTIVES] = "slow-collectives",
};

const char *gt_overview_kind_name(enum gt_overview_kind k)
{
	return (unsigned)k < GT_OVERVIEW_K_COUNT ? kind_names[k] : "";
}

/* the enum of a kind's text (OTHER when it is none of them) */
static enum gt_overview_kind kind_of(const char *kind)
{
	for (int k = 1; kind && k < GT_OVERVIEW_K_COUNT; k++)
		if (!strcmp(kind, kind_names[k]))
			return (enum gt_overview_kind)k;
	return GT_OVERVIEW_K_OTHER;
}

static struct gt_overview_rec *add(struct gt_overview_result *r, enum gt_overview_severity sev,
				const char *kind, double value, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static struct gt_overview_rec *add(struct gt_overview_result *r, enum gt_overview_severity sev,
				const char *kind, double value, const char *fmt, ...)
{
	if (r->nrecs >= REC_MAX)
		return NULL;
	struct gt_overview_rec *x = &r->recs[r->nrecs++];
	memset(x, 0, sizeof(*x));
	x->severity = sev;
	x->kind = kind;
	x->kid = kind_of(kind);
	x->value = value;
	x->rank = x->gpu = -1;
	x->step0 = x->step1 = -1;
	x->t0_ns = x->t1_ns = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(x->text, sizeof(x->text), fmt, ap);
	va_end(ap);
	return x;
}

static double bd_pct(const struct gt_overview_result *r, int c)
{
	return r->bd.avg_total_ns > 0 ? 100.0 * r->bd.avg_ns[c] / r->bd.avg_total_ns : 0;
}

/* evidence: the breakdown's steps (every rank's when there are several) */
static void steps_evidence(const struct gt_overview_result *r, struct gt_overview_rec *x)
{
	if (!x || !r->bd.n)
		return;
	if (r->nrk > 1 && r->step_lo >= 0) {     /* every rank's steps */
		x->evidence = GT_OVERVIEW_EV_STEPS;
		x->rank = -1;
		x->step0 = r->step_lo;
		x->step1 = r->step_hi;
		x->t0_ns = r->steps_t0_ns;
		x->t1_ns = r->steps_t1_ns;
		return;
	}
	const struct gt_breakdown_row *a = &r->bd.rows[0], *b = &r->bd.rows[r->bd.n - 1];
	x->evidence = a->step >= 0 ? GT_OVERVIEW_EV_STEPS : GT_OVERVIEW_EV_TIME;
	x->rank = r->nrk > 1 ? -1 : r->bd.rank;
	x->step0 = a->step;
	x->step1 = b->step;
	x->t0_ns = a->t0_ns;
	x->t1_ns = b->t1_ns;
}

/* evidence: one GPU, over its rank's steps (step0..step1, t0..t1) when the
 * rank has steps, since what a GPU recommendation cites is step by step */
static void gpu_evidence(const struct gt_overview_result *r, struct gt_overview_rec *x, int32_t rank,
			 int32_t gpu)
{
	if (!x)
		return;
	x->evidence = GT_OVERVIEW_EV_GPU;
	x->rank = rank;
	x->gpu = gpu;
	for (size_t i = 0; i < r->nrk; i++) {
		const struct gt_overview_rank *k = &r->rk[i];
		if (k->rank != rank || !k->nsteps || k->no_steps)
			continue;
		x->step0 = k->step0;
		x->step1 = k->step1;
		x->t0_ns = k->t0_ns;
		x->t1_ns = k->t1_ns;
	}
}

/* evidence: one rank's steps */
static void rank_evidence(const struct gt_overview_rank *k, struct gt_overview_rec *x)
{
	if (!x || !k->nsteps)
		return;
	x->evidence = k->step0 >= 0 ? GT_OVERVIEW_EV_STEPS : GT_OVERVIEW_EV_TIME;
	x->rank = k->rank;
	x->step0 = k->step0;
	x->step1 = k->step1;
	x->t0_ns = k->t0_ns;
	x->t1_ns = k->t1_ns;
}

/* "steps 3-9" of one rank's rows */
static void rank_steps_text(const struct gt_overview_rank *k, char *buf, size_t len)
{
	if (!k->nsteps || k->step0 < 0)
		snprintf(buf, len, "the capture");
	else if (k->nsteps == 1)
		snprintf(buf, len, "step %lld", (long long)k->step0);
	else
		snprintf(buf, len, "steps %lld-%lld", (long long)k->step0, (long long)k->step1);
}

/* the breakdown's steps; with several ranks it averages all of them */
static void steps_text(const struct gt_overview_result *r, char *buf, size_t len)
{
	if (r->nrk > 1 && r->step_lo >= 0) {
		size_t k = r->ranks_with_steps;
		if (r->steps_vary)
			snprintf(buf, len, "the steps of %zu ranks (numbered %lld-%lld)", k,
				 (long long)r->step_lo, (long long)r->step_hi);
		else if (r->step_lo == r->step_hi)
			snprintf(buf, len, "step %lld of %zu ranks", (long long)r->step_lo, k);
		else
			snprintf(buf, len, "steps %lld-%lld of %zu ranks", (long long)r->step_lo,
				 (long long)r->step_hi, k);
		return;
	}
	if (!r->bd.n || r->bd.rows[0].step < 0)
		snprintf(buf, len, "the capture");
	else if (r->bd.n == 1)
		snprintf(buf, len, "step %lld", (long long)r->bd.rows[0].step);
	else
		snprintf(buf, len, "steps %lld-%lld", (long long)r->bd.rows[0].step,
			 (long long)r->bd.rows[r->bd.n - 1].step);
	size_t n = strlen(buf);
	if (r->nrk > 1 && n < len)
		snprintf(buf + n, len - n, " of %zu ranks", r->nrk);
}

/* "; also VERDICT: ranks 0, 3 (+2 more)" for the flagged ranks other than
 * `w` (flag: 1 = input-bound, 2 = POTENTIALLY); empty when none */
static void also_text(const struct gt_overview_result *r, const struct gt_overview_rank *w, int flag,
		      char *buf, size_t len)
{
	char list[64] = "";
	size_t n = 0, shown = 0, k = 0;
	buf[0] = 0;
	for (size_t i = 0; i < r->nrk; i++) {
		const struct gt_overview_rank *x = &r->rk[i];
		int f = flag == 1 ? x->verdict >= GT_PL_MODERATELY && x->host_wait_pct >= x->h2d_pct
				  : x->verdict == GT_PL_POTENTIALLY;
		if (!f || x == w || x->no_steps)
			continue;
		n++;
		if (shown < 6) {
			int m = snprintf(list + k, sizeof(list) - k, "%s%d", shown ? ", " : "", x->rank);
			if (m > 0 && k + (size_t)m < sizeof(list))
				k += (size_t)m;
			shown++;
		}
	}
	if (!n)
		return;
	int m = snprintf(buf, len, "; also %s: rank%s %s", flag == 1 ? "input-bound" : "POTENTIALLY",
			 n > 1 ? "s" : "", list);
	if (n > shown && m > 0 && (size_t)m < len)
		snprintf(buf + m, len - (size_t)m, " (+%zu more)", n - shown);
}

static void gpu_name(const struct gt_overview_result *r, int32_t rank, int32_t dev, char *buf,
		     size_t len)
{
	if (r->ranks > 1)
		snprintf(buf, len, "rank %d GPU %d", rank, dev);
	else
		snprintf(buf, len, "GPU %d", dev);
}

/* 1 when rank a's input verdict is worse than b's (verdict, then input %) */
static int rank_worse(const struct gt_overview_rank *a, const struct gt_overview_rank *b)
{
	return a->verdict != b->verdict ? a->verdict > b->verdict : a->input_pct > b->input_pct;
}

/* the words around a rank's verdict: its steps, "rank R: " with several
 * ranks, and the other flagged ranks (flag as in also_text) */
struct rank_words {
	char st[64], pre[24], also[120];
};

static void rank_words(const struct gt_overview_result *r, const struct gt_overview_rank *w, int flag,
		       struct rank_words *rw)
{
	rank_steps_text(w, rw->st, sizeof(rw->st));
	rw->pre[0] = 0;
	if (r->nrk > 1)
		snprintf(rw->pre, sizeof(rw->pre), "rank %d: ", w->rank);
	also_text(r, w, flag, rw->also, sizeof(rw->also));
}

/* input-bound: every rank counts; the worst one is named with its numbers
 * and steps, the other ranks that are input-bound too are listed */
static void rec_input(struct gt_overview_result *r)
{
	const struct gt_overview_rank *w = NULL;
	for (size_t i = 0; i < r->nrk; i++) {
		const struct gt_overview_rank *k = &r->rk[i];
		if (!k->no_steps && k->verdict >= GT_PL_MODERATELY && k->host_wait_pct >= k->h2d_pct &&
		    (!w || rank_worse(k, w)))
			w = k;
	}
	if (!w)
		return;
	struct rank_words rw;
	rank_words(r, w, 1, &rw);
	struct gt_overview_rec *x = add(r, w->verdict == GT_PL_HIGHLY ? GT_OVERVIEW_HIGH : GT_OVERVIEW_WARN,
		"input-bound", w->input_pct,
		"%s%s %s %s (%.1f %% of step time waiting for input: DataLoader %.1f %%, "
		"host-to-device %.1f %%): raise DataLoader workers or prefetch%s",
		rw.pre, rw.st, w->nsteps > 1 ? "are" : "is", gt_pipeline_verdict_name(w->verdict),
		w->input_pct, w->host_wait_pct, w->h2d_pct, rw.also);
	rank_evidence(w, x);
}

/* POTENTIALLY input-bound (info): the rank with the most host time */
static void rec_host(struct gt_overview_result *r)
{
	const struct gt_overview_rank *w = NULL;
	for (size_t i = 0; i < r->nrk; i++) {
		const struct gt_overview_rank *k = &r->rk[i];
		if (!k->no_steps && k->verdict == GT_PL_POTENTIALLY && (!w || k->others_pct > w->others_pct))
			w = k;
	}
	if (!w)
		return;
	struct rank_words rw;
	rank_words(r, w, 2, &rw);
	/* the verdict stays TensorFlow's; the words name the largest non-GPU
	   cost so nobody tunes a DataLoader that takes 0.8 % */
	struct gt_overview_rec *x = add(r, GT_OVERVIEW_INFO, "host-bound", w->others_pct,
		"%s%s %s POTENTIALLY input-bound (TensorFlow's verdict: %.1f %% of the step is host "
		"compute or unaccounted); the largest non-GPU cost is %s, %.1f %% of the step "
		"(input %.1f %%)%s", rw.pre, rw.st, w->nsteps > 1 ? "are" : "is", w->others_pct,
		gt_pipeline_host_cost_name(w->host_cost), w->host_cost_pct, w->input_pct, rw.also);
	rank_evidence(w, x);
}

static void rec_launch(struct gt_overview_result *r)
{
	uint64_t k = 0, tiny = 0;
	int64_t idle = 0, span = 0;
	const struct gt_gputime_gpu *worst = NULL;
	for (size_t i = 0; i < r->gt.ngpus; i++) {
		const struct gt_gputime_gpu *g = &r->gt.gpus[i];
		k += g->kernels;
		tiny += g->under_10us;
		idle += g->idle_ns;
		span += g->span_ns;
		/* the GPU with the largest idle share (compared as doubles: the
		 * cross products of two nanosecond spans overflow int64) */
		if (!worst || (double)g->idle_ns * (double)(worst->span_ns ? worst->span_ns : 1) >
			      (double)worst->idle_ns * (double)(g->span_ns ? g->span_ns : 1))
			worst = g;
	}
	double tiny_pct = k ? 100.0 * (double)tiny / (double)k : 0;
	double idle_pct = span ? 100.0 * (double)idle / (double)span : 0;
	/* kernel launch share: the rank where it is largest, named with it */
	const struct gt_overview_rank *lr = NULL;
	for (size_t i = 0; i < r->nrk; i++)
		if (!r->rk[i].no_steps &&
		    (!lr || r->rk[i].launch_level > lr->launch_level ||
		     (r->rk[i].launch_level == lr->launch_level && r->rk[i].launch_pct > lr->launch_pct)))
			lr = &r->rk[i];
	int level = lr ? lr->launch_level : 0;
	double launch_pct = lr ? lr->launch_pct : 0;
	char in_rank[24] = "";
	if (lr && r->nrk > 1)
		snprintf(in_rank, sizeof(in_rank), " in rank %d", lr->rank);
	/* tiny kernels and an idle GPU alone do not show launch overhead (the
	   GPU may be waiting for input or for a blocking copy): the host must
	   also spend a moderate share of the step in launch calls */
	if (!worst || !((tiny_pct >= 50.0 && idle_pct >= 30.0 && level >= 1) || level == 2))
		return;
	char gn[48];
	gpu_name(r, worst->rank, worst->device, gn, sizeof(gn));
	struct gt_overview_rec *x = add(r, level == 2 ? GT_OVERVIEW_HIGH : GT_OVERVIEW_WARN,
		"launch-bound", tiny_pct,
		"%.0f %% of kernels run under 10 us and the GPU idles between them (%s idle "
		"%.1f %% of its active span, kernel launch %.1f %% of the step%s): fuse ops (XLA, "
		"torch.compile) or use CUDA graphs", tiny_pct, gn,
		worst->span_ns ? 100.0 * (double)worst->idle_ns / (double)worst->span_ns : 0,
		launch_pct, in_rank);
	gpu_evidence(r, x, worst->rank, worst->device);
}

static void rec_straggler(struct gt_overview_result *r)
{
	const struct gt_multigpu_result *m = &r->mg;
	if (m->straggler < 0 || m->straggler_pct < 5.0)
		return;
	const struct gt_multigpu_gpu *g = &m->gpus[m->straggler];
	char gn[48];
	gpu_name(r, g->rank, g->device, gn, sizeof(gn));
	struct gt_overview_rec *x = add(r, m->straggler_pct >= 15.0 ? GT_OVERVIEW_HIGH : GT_OVERVIEW_WARN,
		"straggler", m->straggler_pct,
		"%s finishes steps %.0f %% later than the others (its compute takes %.1f %% longer; "
		"slowest in %u of %zu steps): check its load balance, clocks and thermals, "
		"or other processes on it", gn, m->straggler_pct, m->straggler_pct, g->slowest,
		m->ncompared);
	gpu_evidence(r, x, g->rank, g->device);
}

static void rec_comm(struct gt_overview_result *r, const char *st)
{
	double c = bd_pct(r, GT_BD_COMM);
	if (c < 20.0)
		return;
	double ovl = 0;
	size_t n = 0;
	for (size_t i = 0; i < r->mg.ngpus; i++)
		if (r->mg.gpus[i].mean_comm_ns > 0) {
			ovl += r->mg.gpus[i].comm_overlap_pct;
			n++;
		}
	/* several ranks: an input-bound rank with less communication than the
	   average holds the others up; they wait for it inside the collectives */
	const struct gt_overview_rank *w = NULL;
	for (size_t i = 0; r->nrk > 1 && i < r->nrk; i++) {
		const struct gt_overview_rank *k = &r->rk[i];
		double kc = k->avg_step_ns > 0 ? 100.0 * k->avg_ns[GT_BD_COMM] / k->avg_step_ns : 0;
		if (!k->no_steps && k->verdict >= GT_PL_MODERATELY && k->host_wait_pct >= k->h2d_pct && kc < c &&
		    (!w || k->input_pct > w->input_pct))
			w = k;
	}
	struct gt_overview_rec *x;
	if (w)      /* the cure is rank w's input, not the collectives: say that first */
		x = add(r, GT_OVERVIEW_WARN, "comm-bound", c,
			"communication is exposed for %.1f %% of the step in %s, but rank %d is "
			"input-bound (%.1f %% waiting for input) and the other ranks wait for it inside "
			"the collectives: fix rank %d's input first (see input-bound), then look at the "
			"collectives again", c, st, w->rank, w->input_pct, w->rank);
	else
		x = add(r, c >= 40.0 ? GT_OVERVIEW_HIGH : GT_OVERVIEW_WARN, "comm-bound", c,
			"communication is exposed for %.1f %% of the step in %s (collectives overlap "
			"compute for %.1f %% of their time): overlap all-reduce with backward (DDP "
			"buckets), reduce or compress gradients, check the interconnect",
			c, st, n ? ovl / (double)n : 0);
	steps_evidence(r, x);
}

static void rec_copy(struct gt_overview_result *r, const char *st)
{
	double c = bd_pct(r, GT_BD_MEMCPY);
	if (c < 10.0)
		return;
	const struct gt_multigpu_copy *big = NULL;
	for (size_t i = 0; i < r->mg.ncopies; i++)
		if (!big || r->mg.copies[i].mean_ns > big->mean_ns)
			big = &r->mg.copies[i];
	char ev[160] = "";
	if (big)
		snprintf(ev, sizeof(ev), "; %zu copies recur every step, the longest %s %.1f MB at "
			 "+%.2f ms on GPU %d", r->mg.ncopies, gt_copy_kind_name(big->kind),
			 (double)big->bytes / 1e6, big->mean_offset_ns / 1e6, big->device);
	struct gt_overview_rec *x = add(r, c >= 25.0 ? GT_OVERVIEW_HIGH : GT_OVERVIEW_WARN, "copy-heavy", c,
		"memory copies take %.1f %% of the step in %s%s: keep tensors on the GPU, avoid "
		"offloading, overlap copies with compute (pinned memory, non_blocking)", c, st, ev);
	steps_evidence(r, x);
}

static void rec_stagger(struct gt_overview_result *r)
{
	const struct gt_multigpu_gpu *w = NULL;
	for (size_t i = 0; i < r->mg.ngpus; i++)
		if (!w || r->mg.gpus[i].stagger_mean_ns > w->stagger_mean_ns)
			w = &r->mg.gpus[i];
	if (!w || w->stagger_mean_ns < 100e3 || w->stagger_pct < 0.5)
		return;
	char gn[48];
	gpu_name(r, w->rank, w->device, gn, sizeof(gn));
	struct gt_overview_rec *x = add(r, w->stagger_pct >= 5.0 ? GT_OVERVIEW_HIGH : GT_OVERVIEW_WARN,
		"staggered", w->stagger_pct,
		"%s starts each step's first kernel %.0f us after its rank's earliest GPU on average "
		"(max %.0f us, %.1f %% of the step): the host thread launching for several GPUs "
		"is contended; use one process per GPU (DistributedDataParallel) or CUDA graphs",
		gn, w->stagger_mean_ns / 1e3, w->stagger_max_ns / 1e3, w->stagger_pct);
	gpu_evidence(r, x, w->rank, w->device);
}

/* collective time per step against the expected all-reduce time
 * (parameter bytes / link bandwidth, docs/analyses.md §6), when the user gave them.
 * A collective's kernel time includes waiting for the other ranks, so the
 * GPU with the least collective time is the one compared: it is the closest
 * to the transfer itself (a rank that others wait for has the least) */
static void rec_expected(struct gt_overview_result *r)
{
	const struct gt_multigpu_result *m = &r->mg;
	if (!(m->expected_comm_ns > 0))
		return;
	const struct gt_multigpu_gpu *w = NULL, *most = NULL;
	for (size_t i = 0; i < m->ngpus; i++) {
		if (!(m->gpus[i].mean_comm_ns > 0))
			continue;
		if (!w || m->gpus[i].mean_comm_ns < w->mean_comm_ns)
			w = &m->gpus[i];
		if (!most || m->gpus[i].mean_comm_ns > most->mean_comm_ns)
			most = &m->gpus[i];
	}
	if (!w)
		return;
	char waits[96] = "";
	if (most->mean_comm_ns > 1.5 * w->mean_comm_ns)
		snprintf(waits, sizeof(waits), "; other GPUs spend up to %.0f us in them, waiting for "
			 "slower ranks", most->mean_comm_ns / 1e3);
	char gn[48];
	gpu_name(r, w->rank, w->device, gn, sizeof(gn));
	double x_ = w->comm_vs_expected;
	enum gt_overview_severity sev = x_ >= 4.0 ? GT_OVERVIEW_HIGH : x_ >= 2.0 ? GT_OVERVIEW_WARN : GT_OVERVIEW_INFO;
	struct gt_overview_rec *x;
	if (x_ < 0.8)
		x = add(r, GT_OVERVIEW_INFO, "slow-collectives", x_,
			"collectives take %.0f us per step on %s (the least of any GPU), only %.2fx the "
			"expected all-reduce time (%.3g MiB at %.6g GB/s = %.3g us): the figures given "
			"do not match the job (fp16 or compressed gradients, fewer bytes, or a faster "
			"link); check --param-bytes and --link-gbps", w->mean_comm_ns / 1e3, gn, x_,
			(double)m->param_bytes / 1048576.0, m->link_gbps, m->expected_comm_ns / 1e3);
	else if (sev == GT_OVERVIEW_INFO)
		x = add(r, sev, "slow-collectives", x_,
			"collectives take %.0f us per step on %s (the least of any GPU), %.2fx the "
			"expected all-reduce time (%.1f MiB at %.6g GB/s = %.0f us): the interconnect "
			"delivers what was given%s",
			w->mean_comm_ns / 1e3, gn, x_, (double)m->param_bytes / 1048576.0, m->link_gbps,
			m->expected_comm_ns / 1e3, waits);
	else
		x = add(r, sev, "slow-collectives", x_,
			"collectives take %.0f us per step on %s (the least of any GPU), %.1fx the "
			"expected all-reduce time (%.1f MiB at %.6g GB/s = %.0f us): check the link "
			"NCCL uses (NCCL_DEBUG=INFO: NVLink/InfiniBand, not PCIe or sockets), "
			"NCCL_ALGO/NCCL_PROTO, and that gradients are all-reduced once per step",
			w->mean_comm_ns / 1e3, gn, x_, (double)m->param_bytes / 1048576.0, m->link_gbps,
			m->expected_comm_ns / 1e3);
	gpu_evidence(r, x, w->rank, w->device);
}

int overview_recs(struct gt_overview_result *r)
{
	char st[112];
	r->recs = calloc(REC_MAX, sizeof(*r->recs));
	if (!r->recs)
		return -ENOMEM;
	steps_text(r, st, sizeof(st));
	rec_input(r);
	rec_launch(r);
	rec_straggler(r);
	rec_comm(r, st);
	rec_copy(r, st);
	rec_stagger(r);
	int alarms = r->nrecs > 0;
	rec_expected(r);
	rec_host(r);
	if (!alarms && r->bd.n && r->bd.gpu_util_pct < 50.0) {
		struct gt_overview_rec *x = add(r, GT_OVERVIEW_INFO, "low-utilization", r->bd.gpu_util_pct,
			"kernels cover only %.1f %% of step time in %s", r->bd.gpu_util_pct, st);
		steps_evidence(r, x);
	}
	/* every recommendation carries the time span of its steps for the viewer */
	for (size_t i = 0; i < r->nrecs && r->bd.n; i++) {
		struct gt_overview_rec *x = &r->recs[i];
		if (x->t0_ns == 0 && x->t1_ns == 0) {
			x->t0_ns = r->bd.rows[0].t0_ns;
			x->t1_ns = r->bd.rows[r->bd.n - 1].t1_ns;
			if (r->bd.rows[0].step >= 0) {
				x->step0 = r->bd.rows[0].step;
				x->step1 = r->bd.rows[r->bd.n - 1].step;
			}
		}
	}
	/* most severe first; the order of the rules within a severity */
	for (size_t i = 1; i < r->nrecs; i++)
		for (size_t k = i; k > 0 && r->recs[k].severity > r->recs[k - 1].severity; k--) {
			struct gt_overview_rec tmp = r->recs[k];
			r->recs[k] = r->recs[k - 1];
			r->recs[k - 1] = tmp;
		}
	return 0;
}
