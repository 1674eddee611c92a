/*
 * overview_view.c - the overview page: run environment, average step and its
 * breakdown, GPU utilization per GPU over time (sparklines from the
 * store's busy-time queries, one per column), top kernels, multi-GPU
 * health and recommendations; Enter on a recommendation opens the view
 * that holds its evidence.  With several ranks: each rank's input verdict
 * and breakdown (a line per rank as the height allows, else one line).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "gtrace/kernel_stats.h"
#include "term.h"
#include "view.h"
#include "demangle.h"
#include "lanes.h"
#include "overview_mem.h"

struct overview_view {
	struct view v;
	int ok;
	struct gt_overview_result res;
	char err[160];
	size_t sel;
	size_t gpu_first;      /* first GPU row shown (PgDn PgUp scroll them) */
	int gpu_page;          /* GPU rows shown in the last frame */
	/* utilization sparklines: util_ngpu rows of util_n columns */
	float *util;
	struct gt_kernel_stats_gpu *util_gpu;
	size_t util_ngpu;
	int util_n;
	size_t util_events;
	struct overview_mem mem;      /* allocated memory rows (traces with allocator records) */
};

static const char *const ov_help[] = {
	"j k  Up Down   choose a recommendation",
	"PgDn PgUp      scroll the GPU rows (when not all fit)",
	"Enter          show its evidence: the pipeline page for input-bound runs,",
	"               otherwise the trace view zoomed to the steps or time it cites",
	NULL
};

/* run gt_overview_compute over the whole capture */
static void compute(struct overview_view *o)
{
	ui_busy(o->v.app, "computing the overview...");
	/* the selected recommendation, found again by kind, rank and GPU */
	enum gt_overview_kind was = GT_OVERVIEW_K_OTHER;
	int32_t was_rank = -1, was_gpu = -1;
	if (o->ok && o->sel < o->res.nrecs) {
		was = o->res.recs[o->sel].kid;
		was_rank = o->res.recs[o->sel].rank;
		was_gpu = o->res.recs[o->sel].gpu;
	}
	if (o->ok)
		gt_overview_result_done(&o->res);
	o->ok = 0;
	o->err[0] = 0;
	struct gt_scope sc;
	gt_scope_all(&sc);
	sc.param_bytes = o->v.app->src->param_bytes;
	sc.link_gbps = o->v.app->src->link_gbps;
	o->ok = gt_overview_compute(o->v.app->store, &sc, &o->res, o->err, sizeof(o->err)) == 0;
	if (o->sel >= (o->ok ? o->res.nrecs : 0))
		o->sel = 0;
	for (size_t i = 0; o->ok && was != GT_OVERVIEW_K_OTHER && i < o->res.nrecs; i++)
		if (o->res.recs[i].kid == was && o->res.recs[i].rank == was_rank &&
		    o->res.recs[i].gpu == was_gpu) {
			o->sel = i;
			break;
		}
}

/* per-GPU utilization over n columns of the whole trace: for each column
 * the busy share of the GPU's busiest stream (gt_store_lane_busy).  Cached
 * until the width changes, or the store did and the page is due (ui_due:
 * the page's one throttle, which also holds it still while paused). */
static void util_update(struct overview_view *o, int n, int due)
{
	const struct gt_store *s = o->v.app->store;
	if (n == o->util_n && o->util && (gt_store_event_count(s) == o->util_events || !due))
		return;
	free(o->util);
	free(o->util_gpu);
	o->util = NULL;
	o->util_gpu = NULL;
	o->util_ngpu = 0;
	o->util_n = n;
	o->util_events = gt_store_event_count(s);
	if (n <= 0 || !gt_store_event_count(s))
		return;
	size_t nl = gt_store_lane_count(s), ng = 0;
	o->util_gpu = malloc((nl ? nl : 1) * sizeof(*o->util_gpu));
	if (!o->util_gpu)
		return;
	for (size_t i = 0; i < nl; i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type != GT_LANE_GPU)
			continue;
		int32_t rk = l->key.rank;
		size_t j = 0;
		while (j < ng && !(o->util_gpu[j].rank == rk && o->util_gpu[j].device == l->key.device))
			j++;
		if (j == ng)
			o->util_gpu[ng++] = (struct gt_kernel_stats_gpu){ rk, l->key.device };
	}
	o->util = calloc(ng * (size_t)n + 1, sizeof(*o->util));
	if (!o->util)
		return;
	o->util_ngpu = ng;
	int64_t t0 = gt_store_t_min(s), span = gt_store_t_max(s) - t0;
	int64_t dt = (span + n - 1) / n;
	if (dt < 1)
		dt = 1;
	for (size_t i = 0; i < nl; i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		/* GPU work only: a GPU annotation lane (gpu_user_annotation) spans
		   whole phases and would fill the sparkline */
		if (l->key.type != GT_LANE_GPU || !l->n || lanes_role_of(l) == LROLE_NONE)
			continue;
		int32_t rk = l->key.rank;
		size_t g = 0;
		while (g < ng && !(o->util_gpu[g].rank == rk && o->util_gpu[g].device == l->key.device))
			g++;
		float *row = o->util + g * (size_t)n;
		for (int c = 0; c < n; c++) {
			float u = (float)((double)gt_store_lane_busy(l, t0 + c * dt, t0 + (c + 1) * dt) / (double)dt);
			if (u > row[c])
				row[c] = u;
		}
	}
}

/* a section title at row y; returns the next row */
static int section(int y, struct lrect r, const char *title)
{
	if (y < r.y + r.h)
		term_put(y, r.x + 1, r.w - 2, theme_attr(TH_HEADER), title);
	return y + 1;
}

/* text over at most maxl lines from row y (continuations indented 2), broken
 * between tokens only (tokens are separated by two spaces when the text has
 * such separators, else by one), so that no figure is ever cut; tokens that
 * do not fit in maxl lines are left out whole.  Returns the lines used. */
static int wrap_put(int *y, int end, struct lrect r, attr_t at, const char *text, int maxl)
{
	int w = r.w - 4, used = 0;
	const char *sep = strstr(text, "  ") ? "  " : " ";
	size_t sl = strlen(sep);
	const char *p = text;
	while (*p && used < maxl && *y < end && w > 4) {
		int avail = used ? w - 2 : w, n = 0;
		const char *q = p;
		/* take whole tokens while they fit */
		for (;;) {
			const char *nx = strstr(q, sep);
			int tl = nx ? (int)(nx - p) : (int)strlen(p);
			if (tl > avail && n)
				break;
			n = tl > avail ? avail : tl;   /* a single token wider than the line: cut */
			if (!nx || tl > avail)
				break;
			q = nx + sl;
		}
		term_printf((*y)++, r.x + 3 + (used ? 2 : 0), avail, at, "%.*s", n, p);
		used++;
		p += n;
		while (*p == ' ')
			p++;
	}
	return used;
}

/* 1 when a GPU lane of the device's rank and ordinal has events */
static int device_used(const struct gt_store *s, const struct gt_device *d)
{
	int32_t dr = d->rank;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type == GT_LANE_GPU && l->n && l->key.device == d->id &&
		    l->key.rank == dr)
			return 1;
	}
	return 0;
}

/* source, counts, devices, losses */
/* "3,429,000": a count with thousands separators, as stats' tables print it */
static const char *grouped(uint64_t v, char *buf, size_t len)
{
	char d[32];
	int n = snprintf(d, sizeof(d), "%llu", (unsigned long long)v);
	size_t o = 0;
	for (int i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = d[i];
	}
	buf[o] = 0;
	return buf;
}

static void env_lines(struct overview_view *o, int *y, int end, struct lrect r)
{
	const struct gt_store *s = o->v.app->store;
	const struct gt_overview_result *res = &o->res;
	char a[32], ev[40], other[48] = "";
	if (res->host_other)
		snprintf(other, sizeof(other), " (+%zu other host lanes)", res->host_other);
	if (*y < end) {
		const char *host = gt_store_meta_get(s, "hostname");
		term_printf((*y)++, r.x + 3, r.w - 4, 0,
			    "%s  |  %zu rank(s), %zu GPU(s), %zu streams, %zu host threads%s  |  %s events over %s%s%s",
			    o->v.app->src->name ? o->v.app->src->name : "", res->ranks, res->gpus,
			    res->streams, res->host_threads, other, grouped(res->events, ev, sizeof(ev)),
			    layout_fmt_dur(res->t1_ns - res->t0_ns, a, sizeof(a)), host ? "  |  host " : "",
			    host ? host : "");
	}
	/* the GPUs the trace has activity on (metadata often lists every GPU of the
	 * machine); a run of GPUs alike shares one line: "GPU 0-7 (rank 1): ..." */
	size_t nd = gt_store_device_count(s), shown = 0, lines = 0;
	for (size_t i = 0; i < nd && *y < end; i++) {
		const struct gt_device *d = gt_store_device_at(s, i);
		if (!device_used(s, d))
			continue;
		size_t j = i, last = i;
		while (j + 1 < nd) {
			const struct gt_device *e = gt_store_device_at(s, j + 1);
			if (!device_used(s, e)) {
				j++;
				continue;
			}
			if (e->rank != d->rank || e->name != d->name || e->sm_count != d->sm_count ||
			    e->mem_bytes != d->mem_bytes || e->id != gt_store_device_at(s, last)->id + 1)
				break;
			last = ++j;
		}
		const struct gt_device *dl = gt_store_device_at(s, last);
		size_t cnt = 0;
		for (size_t k = i; k <= last; k++)
			cnt += device_used(s, gt_store_device_at(s, k));
		shown += cnt;
		char ids[48], rk[24] = "";
		if (last > i)
			snprintf(ids, sizeof(ids), "GPUs %d-%d", d->id, dl->id);
		else
			snprintf(ids, sizeof(ids), "GPU %d", d->id);
		if (res->ranks > 1)
			snprintf(rk, sizeof(rk), " (rank %d)", d->rank);
		if (lines == (r.h >= 30 ? 2 : 1) && shown < res->gpus) {
			term_printf((*y)++, r.x + 3, r.w - 4, theme_attr(TH_DIM), "... (%zu GPUs in all)",
				    res->gpus);
			break;
		}
		term_printf((*y)++, r.x + 3, r.w - 4, theme_attr(TH_DIM), "%s%s: %s, %u SMs, %.0f GiB",
			    ids, rk, d->name ? gt_store_str(s, d->name) : "n/a", d->sm_count,
			    (double)d->mem_bytes / (double)(1ull << 30));
		lines++;
		i = last;
	}
	if (res->dropped && *y < end)
		term_printf((*y)++, r.x + 3, r.w - 4, theme_attr(TH_WARN),
			    "%llu records were lost by the capture: numbers are lower bounds",
			    (unsigned long long)res->dropped);
}

/* 1 when rank a goes before b: higher verdict, then (flagged ranks) more
 * input, then lower rank (NOT input-bound ranks stay in rank order) */
static int rank_worse(const struct gt_overview_rank *a, const struct gt_overview_rank *b)
{
	if (a->no_steps != b->no_steps)
		return b->no_steps;
	if (a->verdict != b->verdict)
		return a->verdict > b->verdict;
	if (a->verdict > GT_PL_NOT && a->input_pct != b->input_pct)
		return a->input_pct > b->input_pct;
	return a->rank < b->rank;
}

/* the k worst ranks (input verdict), worst first, into idx; returns the count */
static size_t worst_ranks(const struct gt_overview_result *res, size_t *idx, size_t k)
{
	unsigned char *taken = calloc(res->nrk ? res->nrk : 1, 1);
	size_t n = 0;
	if (!taken)
		return 0;
	while (n < k && n < res->nrk) {
		size_t w = SIZE_MAX;
		for (size_t i = 0; i < res->nrk; i++)
			if (!taken[i] && (w == SIZE_MAX || rank_worse(&res->rk[i], &res->rk[w])))
				w = i;
		taken[w] = 1;
		idx[n++] = w;
	}
	free(taken);
	return n;
}

/* "HIGHLY" of "HIGHLY input-bound" */
static void verdict_word(enum gt_pipeline_verdict v, char *buf, size_t len)
{
	const char *n = gt_pipeline_verdict_name(v);
	size_t k = strcspn(n, " ");
	snprintf(buf, len, "%.*s", (int)k, n);
}

/* per rank (several ranks): a line each while the height allows, the worst
 * input verdicts first when not all fit; else one packed line */
static void rank_lines(const struct overview_view *o, int *y, int end, struct lrect r)
{
	const struct gt_overview_result *res = &o->res;
	size_t budget = r.h > 24 ? (size_t)(r.h - 24) / 4 : 0, idx[32];
	char a[32], vw[16];
	if (*y >= end || res->nrk < 2)
		return;
	if (budget >= 2) {
		if (budget > 32)
			budget = 32;
		int all = res->nrk <= budget + 1;   /* a "... more" line would take the last one */
		size_t n = all ? res->nrk : worst_ranks(res, idx, budget - 1);
		for (size_t j = 0; j < n && *y < end; j++) {
			const struct gt_overview_rank *k = &res->rk[all ? j : idx[j]];
			double avg = k->avg_step_ns > 0 ? k->avg_step_ns : 1;
			if (k->no_steps) {
				term_printf((*y)++, r.x + 3, r.w - 4, theme_attr(TH_DIM),
					    "rank %-3d no steps in scope (left out of the averages)", k->rank);
				continue;
			}
			term_printf((*y)++, r.x + 3, r.w - 4,
				    k->verdict >= GT_PL_MODERATELY ? theme_attr(TH_WARN) : 0,
				    "rank %-3d %-22s input %4.1f%%  step %s  Kernel %.0f%%  Exposed comm %.0f%%  DataLoader %.0f%%",
				    k->rank, gt_pipeline_verdict_name(k->verdict), k->input_pct,
				    layout_fmt_dur((int64_t)k->avg_step_ns, a, sizeof(a)),
				    100.0 * k->avg_ns[GT_BD_KERNEL] / avg, 100.0 * k->avg_ns[GT_BD_COMM] / avg,
				    100.0 * k->avg_ns[GT_BD_DATALOADER] / avg);
		}
		if (!all && *y < end)
			term_printf((*y)++, r.x + 3, r.w - 4, theme_attr(TH_DIM),
				    "... %zu more ranks, input verdict %s or less", res->nrk - n,
				    gt_pipeline_verdict_name(res->rk[idx[n - 1]].verdict));
		return;
	}
	/* one line: "per rank: r2 HIGHLY 40.3%  r0 NOT 0.9% ..." worst first */
	size_t cap = (size_t)(r.w > 20 ? r.w / 12 : 1), n = worst_ranks(res, idx, cap < 32 ? cap : 32);
	char line[512];
	int k = snprintf(line, sizeof(line), "per rank, worst first:");
	/* whole entries only: one that does not fit leaves "..." instead of
	   half a figure */
	for (size_t j = 0; j < n && k > 0 && (size_t)k < sizeof(line); j++) {
		const struct gt_overview_rank *x = &res->rk[idx[j]];
		char ent[64];
		if (x->no_steps) {
			snprintf(ent, sizeof(ent), "  r%d no steps", x->rank);
		} else {
			verdict_word(x->verdict, vw, sizeof(vw));
			snprintf(ent, sizeof(ent), "  r%d %s %.1f%%", x->rank, vw, x->input_pct);
		}
		if (k + (int)strlen(ent) + (j + 1 < res->nrk ? 5 : 0) > r.w - 4) {
			k += snprintf(line + k, sizeof(line) - (size_t)k, "  ...");
			break;
		}
		k += snprintf(line + k, sizeof(line) - (size_t)k, "%s", ent);
	}
	term_put((*y)++, r.x + 3, r.w - 4,
		 n && res->rk[idx[0]].verdict >= GT_PL_MODERATELY ? theme_attr(TH_WARN) : 0, line);
}

/* average step, its breakdown and the pipeline verdict; with several ranks
 * the breakdown is over every rank's steps, the verdict the worst rank's,
 * and each rank follows */
static int step_lines(struct overview_view *o, int *y, int end, struct lrect r)
{
	const struct gt_breakdown_result *bd = &o->res.bd;
	const struct gt_overview_result *res = &o->res;
	char a[32], of[80] = "";
	if (*y >= end)
		return 0;
	if (!bd->n) {
		term_put((*y)++, r.x + 3, r.w - 4, theme_attr(TH_DIM), "no steps found");
		return 0;
	}
	size_t with = res->ranks_with_steps;
	if (res->nrk > 1 && with == res->nrk)
		snprintf(of, sizeof(of), " of all %zu ranks", res->nrk);
	else if (res->nrk > 1 && with)
		snprintf(of, sizeof(of), " of %zu ranks (%zu without steps)", with, res->nrk - with);
	char line[512];
	int k;
	if (res->nrk > 1 && !with)
		k = snprintf(line, sizeof(line), "%s, each rank's whole capture (no steps in any of %zu "
			     "ranks), GPU utilization %.1f%% (kernel time / step):", layout_fmt_dur((int64_t)bd->avg_total_ns, a,
			     sizeof(a)), res->nrk, bd->gpu_util_pct);
	else if (res->nrk <= 1 && bd->rows[0].step < 0)
		k = snprintf(line, sizeof(line), "%s, the whole capture (no steps found), GPU "
			     "utilization %.1f%% (kernel time / capture):",
			     layout_fmt_dur((int64_t)bd->avg_total_ns, a, sizeof(a)), bd->gpu_util_pct);
	else
		k = snprintf(line, sizeof(line), "%s over %zu step%s (%s)%s, GPU utilization %.1f%% (kernel time / step):",
			     layout_fmt_dur((int64_t)bd->avg_total_ns, a, sizeof(a)),
			     res->nrk > 1 ? res->step_rows : bd->n,
			     (res->nrk > 1 ? res->step_rows : bd->n) == 1 ? "" : "s",
			     gt_steps_source_name(o->res.source), of, bd->gpu_util_pct);
	/* the categories, largest first, so that a narrow screen leaves out
	   the smallest shares, never a figure of the sum */
	int order[GT_BD_NCAT], nc = 0;
	for (int c = 0; c < GT_BD_NCAT; c++)
		if (bd->avg_ns[c] > 0)
			order[nc++] = c;
	for (int i = 1; i < nc; i++)
		for (int j = i; j > 0 && bd->avg_ns[order[j]] > bd->avg_ns[order[j - 1]]; j--) {
			int x = order[j];
			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	for (int i = 0; i < nc && k > 0 && (size_t)k < sizeof(line); i++)
		k += snprintf(line + k, sizeof(line) - (size_t)k, "  %s %.0f%%",
			      order[i] == GT_BD_COMM ? "Exposed communication" :
			      gt_breakdown_cat_name((enum gt_breakdown_cat)order[i]),
			      bd->avg_total_ns > 0 ? 100.0 * bd->avg_ns[order[i]] / bd->avg_total_ns : 0);
	/* whole on one line when it fits, else the headline, then the shares */
	char *colon = strstr(line, ":  ");
	if ((int)strlen(line) > r.w - 4 && colon) {
		colon[1] = 0;
		wrap_put(y, end, r, 0, line, 2);
		wrap_put(y, end, r, 0, colon + 3, 2);
	} else {
		term_put((*y)++, r.x + 3, r.w - 4, 0, line);
	}
	/* the largest non-GPU cost of the rank whose verdict is shown */
	double cost_pct = 0;
	const char *cost = gt_pipeline_host_cost_name(gt_pipeline_host_cost(&res->pl, &cost_pct));
	char why[160];
	gt_pipeline_verdict_why(&res->pl, why, sizeof(why));
	if (*y < end && res->nrk > 1) {
		snprintf(line, sizeof(line), "input pipeline: %s (%s) in rank %d, the worst of %zu ranks; "
			 "largest non-GPU cost there: %s, %.1f%% of the step",
			 gt_pipeline_verdict_name(res->pl.verdict), why, res->pl.rank,
			 with ? with : res->nrk, cost, cost_pct);
		wrap_put(y, end, r, 0, line, 2);
	} else if (*y < end) {
		snprintf(line, sizeof(line), "input pipeline: %s (%s); largest non-GPU cost: %s, "
			 "%.1f%% of the step", gt_pipeline_verdict_name(o->res.pl.verdict), why,
			 cost, cost_pct);
		wrap_put(y, end, r, 0, line, 2);
	}
	int y0 = *y;
	rank_lines(o, y, end, r);
	return *y - y0;
}

/* the collectives line of the health section */
static void health_text(const struct overview_view *o, char *buf, size_t len)
{
	const struct gt_multigpu_result *mg = &o->res.mg;
	double comm = 0, stag = 0;
	for (size_t i = 0; i < mg->ngpus; i++) {
		comm += mg->gpus[i].comm_share_pct;
		if (mg->gpus[i].stagger_pct > stag)
			stag = mg->gpus[i].stagger_pct;
	}
	comm /= (double)(mg->ngpus ? mg->ngpus : 1);
	snprintf(buf, len,
		 "collectives (total kernel time, overlapped or not): %.1f%% of the step on average;  staggered starts: up to %.1f%% of a step;  recurring copies %.1f%%",
		 comm, stag, mg->copy_share_pct);
}

/* rows the health section takes: its title and lines (the collectives
 * line wraps onto two when the width asks) */
static int health_rows(const struct overview_view *o, struct lrect r)
{
	char line[256];
	if (o->res.mg.ngpus < 2)
		return 2;
	health_text(o, line, sizeof(line));
	return 3 + ((int)strlen(line) > r.w - 4);
}

/* straggler, collective share, staggered starts, recurring copies */
static void health_lines(struct overview_view *o, int *y, int end, struct lrect r)
{
	const struct gt_multigpu_result *mg = &o->res.mg;
	if (*y >= end)
		return;
	if (mg->ngpus < 2) {
		term_put((*y)++, r.x + 3, r.w - 4, theme_attr(TH_DIM), "one GPU: nothing to compare");
		return;
	}
	int flagged = 0;
	for (size_t i = 0; i < o->res.nrecs; i++)
		flagged |= o->res.recs[i].kid == GT_OVERVIEW_K_STRAGGLER;
	if (mg->straggler >= 0)
		term_printf((*y)++, r.x + 3, r.w - 4, theme_attr(flagged ? TH_WARN : TH_NORMAL),
			    "%s: rank %d GPU %d, %.1f%% more compute than the others",
			    flagged ? "straggler" : "slowest GPU (within tolerance)",
			    mg->gpus[mg->straggler].rank, mg->gpus[mg->straggler].device, mg->straggler_pct);
	else
		term_printf((*y)++, r.x + 3, r.w - 4, theme_attr(TH_GOOD),
			    "no straggler over %zu GPUs and %zu steps", mg->ngpus, mg->nsteps);
	if (*y < end) {
		char line[256];
		health_text(o, line, sizeof(line));
		wrap_put(y, end, r, 0, line, 2);
	}
}

/* the selected recommendation as the page shows it, wrapped into up to 6
 * lines of the width (wrap[i], wlen[i] point into text); returns the count */
static int sel_wrap(const struct overview_view *o, struct lrect r, char *text, size_t len,
		    const char **wrap, int *wlen)
{
	int nwrap = 0, ww = r.w - 4;
	if (o->sel >= o->res.nrecs || ww <= 10)
		return 0;
	const struct gt_overview_rec *rc = &o->res.recs[o->sel];
	snprintf(text, len, "%s [%s] %s", rc->severity >= GT_OVERVIEW_HIGH ? "!!" :
		 (rc->severity == GT_OVERVIEW_WARN ? "! " : "- "), rc->kind ? rc->kind : "", rc->text);
	const char *p = text;
	while (*p && nwrap < 6) {
		int avail = nwrap ? ww - 5 : ww, cut = (int)strlen(p);
		if (cut > avail) {           /* break at the last space that fits */
			cut = avail;
			while (cut > avail / 2 && p[cut] != ' ')
				cut--;
			if (p[cut] != ' ')
				cut = avail;
		}
		wrap[nwrap] = p;
		wlen[nwrap++] = cut;
		p += cut;
		while (*p == ' ')
			p++;
	}
	return nwrap;
}

/* every section of the page, top to bottom, as far as it fits */
static void ov_draw(struct view *v, struct lrect r)
{
	struct overview_view *o = (struct overview_view *)v;
	const struct gt_store *s = v->app->store;
	int due = ui_due(v);   /* the page's one throttle, the memory rows' too */
	if (due)
		compute(o);
	int y = r.y, end = r.y + r.h;
	char a[32];
	if (!o->ok) {
		term_printf(y, r.x + 1, r.w - 2, theme_attr(TH_WARN), "overview: %s",
			    o->err[0] ? o->err : "no data");
		return;
	}
	y = section(y, r, "Environment");
	env_lines(o, &y, end, r);
	y = section(y, r, "Average step");
	/* the rank lines take their room from the GPU rows, not from the
	   recommendations below */
	step_lines(o, &y, end, r);
	y = section(y, r, "GPU busy: % of each GPU's active span (HTA), and over time");
	int n = r.w - 24;
	util_update(o, n, due);
	/* the rows left are shared out: the recommendations (up to 6, the list
	   scrolls) and the health lines first, then at least two GPU lines (a
	   row and "... more", never "more" alone), the top kernels (up to 5)
	   giving way to them; the GPU rows scroll with PgDn PgUp */
	/* a row per device with allocator records (up to 2), when the page has room */
	overview_mem_update(&o->mem, v->app, n, due);
	int mem_rows = (int)overview_mem_rows(&o->mem) < 2 ? (int)overview_mem_rows(&o->mem) : 2;
	if (end - y - mem_rows < 16)
		mem_rows = 0;
	int left = end - y - mem_rows, ng = (int)o->util_ngpu;
	char wt[640];
	const char *wp[8];
	int wl[8], sw = sel_wrap(o, r, wt, sizeof(wt), wp, wl);
	/* the selected one takes sw lines, the others one each */
	int rec_rows = o->res.nrecs ? (o->res.nrecs < 6 ? (int)o->res.nrecs : 6) : 1;
	if (sw > 1)
		rec_rows += sw - 1;
	int rec_min = rec_rows < (sw > 2 ? sw : 2) ? rec_rows : (sw > 2 ? sw : 2);
	int topk = o->res.ntop < 5 ? (int)o->res.ntop : 5, health = health_rows(o, r);
	int gmin = ng < 2 ? ng : 2;
	int gpu_lines = left - (1 + rec_rows) - health - (topk ? 1 + topk : 1);
	while (gpu_lines < gmin && topk > 0)
		gpu_lines += --topk ? 1 : 2;
	while (gpu_lines < gmin && rec_rows > rec_min) {
		rec_rows--;
		gpu_lines++;
	}
	if (gpu_lines < gmin)
		gpu_lines = gmin;
	if (gpu_lines > ng)
		gpu_lines = ng;
	int shown = gpu_lines < ng ? gpu_lines - 1 : ng;
	if (shown < 1)
		shown = 1;
	o->gpu_page = shown;
	if (o->gpu_first + (size_t)shown > (size_t)ng)
		o->gpu_first = ng > shown ? (size_t)(ng - shown) : 0;
	for (size_t g = o->gpu_first; g < o->gpu_first + (size_t)shown && g < o->util_ngpu && y < end; g++) {
		const float *row = o->util + g * (size_t)n;
		for (int c = 0; c < n; c++) {
			double u = row[c];
			attrset(theme_attr(u > 0.7 ? TH_GOOD : (u > 0.3 ? TH_D2H : TH_SYNC)));
			term_glyph(y, r.x + 22 + c, term_spark(u));
		}
		attrset(A_NORMAL);
		/* the number is the GPU's busy share as "gtrace stats --report overview"
		 * gives it (HTA: union of its streams over its active span); the
		 * sparkline is the shape over the whole capture */
		double busy = -1;
		for (size_t i = 0; i < o->res.gt.ngpus; i++) {
			const struct gt_gputime_gpu *gg = &o->res.gt.gpus[i];
			if (gg->rank == o->util_gpu[g].rank &&
			    gg->device == o->util_gpu[g].device && gg->span_ns > 0)
				busy = 100.0 * (double)(gg->span_ns - gg->idle_ns) / (double)gg->span_ns;
		}
		if (busy >= 0)
			term_printf(y++, r.x + 3, 19, 0, "r%d GPU %-3d %5.1f%%", o->util_gpu[g].rank,
				    o->util_gpu[g].device, busy);
		else
			term_printf(y++, r.x + 3, 19, 0, "r%d GPU %-3d    n/a", o->util_gpu[g].rank,
				    o->util_gpu[g].device);
	}
	if (shown < ng && y < end) {
		/* the longest wording that fits whole: "rows 1-3 of 40" ("row 1 of 4") */
		char rows[64], line[256];
		if (shown == 1)
			snprintf(rows, sizeof(rows), "row %zu of %d", o->gpu_first + 1, ng);
		else
			snprintf(rows, sizeof(rows), "rows %zu-%zu of %d", o->gpu_first + 1,
				 o->gpu_first + (size_t)shown, ng);
		snprintf(line, sizeof(line), "... %d more GPUs (%s; PgDn PgUp scroll; 'gtrace stats "
			 "--report overview' lists all)", ng - shown, rows);
		if ((int)strlen(line) > r.w - 4)
			snprintf(line, sizeof(line), "... %d more GPUs (%s; PgDn PgUp scroll)",
				 ng - shown, rows);
		if ((int)strlen(line) > r.w - 4)
			snprintf(line, sizeof(line), "... %d more GPUs (PgDn PgUp)", ng - shown);
		term_put(y++, r.x + 3, r.w - 4, theme_attr(TH_DIM), line);
	}
	for (int i = 0; i < mem_rows && y < end; i++)
		overview_mem_draw(&o->mem, (size_t)i, y++, r.x + 3);
	if (topk || !o->res.ntop)
		y = section(y, r, "Top kernels");
	for (size_t i = 0; i < o->res.ntop && (int)i < topk && y < end - 4; i++) {
		const struct gt_overview_kernel *k = &o->res.top[i];
		char sh[160], cut[192];
		demangle_short_of(s, gt_store_str(s, k->name), sh, sizeof(sh));
		/* a long name is cut in the middle: its distinguishing end stays */
		layout_ellipsize(sh, r.w - 4 - 31, term_caps.utf8, cut, sizeof(cut));
		term_printf(y++, r.x + 3, r.w - 4, 0, "%5.1f%%  %9s  %8llu x  %s", k->pct,
			    layout_fmt_dur(k->total_ns, a, sizeof(a)), (unsigned long long)k->count, cut);
	}
	y = section(y, r, "Multi-GPU health");
	health_lines(o, &y, end - 2, r);
	y = section(y, r, "Recommendations (Enter: evidence)");
	if (!o->res.nrecs && y < end)
		term_put(y++, r.x + 3, r.w - 4, theme_attr(TH_GOOD), "no bottleneck found");
	/* the selected recommendation is drawn whole, wrapped over as many
	 * lines as it needs (up to 6); the list scrolls so that it fits */
	size_t room = end > y ? (size_t)(end - y) : 0, first = 0;
	char sel_text[640] = "";
	const char *wrap[8];
	int wlen[8], nwrap = sel_wrap(o, r, sel_text, sizeof(sel_text), wrap, wlen);
	size_t need = nwrap > 1 ? (size_t)nwrap : 1;
	if (room && o->sel + need > room)
		first = o->sel + need > room ? o->sel + need - room : 0;
	if (first > o->sel)
		first = o->sel;
	for (size_t i = first; i < o->res.nrecs && y < end; i++) {
		const struct gt_overview_rec *rc = &o->res.recs[i];
		attr_t at = rc->severity >= GT_OVERVIEW_HIGH ? theme_attr(TH_WARN) : 0;
		if (i == o->sel && nwrap) {
			for (int k = 0; k < nwrap && y < end; k++)
				term_printf(y++, r.x + 3 + (k ? 5 : 0), r.w - 4 - (k ? 5 : 0),
					    theme_attr(TH_SELECT), "%.*s", wlen[k], wrap[k]);
			continue;
		}
		if (i == o->sel)
			at = theme_attr(TH_SELECT);
		term_printf(y++, r.x + 3, r.w - 4, at, "%s [%s] %s", rc->severity >= GT_OVERVIEW_HIGH ? "!!" :
			    (rc->severity == GT_OVERVIEW_WARN ? "! " : "- "), rc->kind ? rc->kind : "", rc->text);
	}
}

/* open the view holding a recommendation's evidence */
static void evidence(struct overview_view *o, const struct gt_overview_rec *rc)
{
	struct app *a = o->v.app;
	const struct gt_store *s = a->store;
	if (rc->kid == GT_OVERVIEW_K_INPUT_BOUND) {
		if (o->res.nrk > 1 && rc->rank >= 0)
			pipeline_view_show_rank(ui_page(a, "Pipeline"), rc->rank);
		ui_show(a, "Pipeline");
		if (o->res.nrk > 1 && rc->rank >= 0)
			ui_msg(a, "evidence: input-bound in rank %d (R on this page: next rank)", rc->rank);
		return;
	}
	int64_t t0 = 0, t1 = 0, x0, x1;
	if ((rc->evidence == GT_OVERVIEW_EV_TIME || rc->evidence == GT_OVERVIEW_EV_GPU) &&
	    rc->t1_ns > rc->t0_ns) {   /* a GPU's evidence: its rank's steps */
		t0 = rc->t0_ns;
		t1 = rc->t1_ns;
	} else if (rc->evidence == GT_OVERVIEW_EV_STEPS && !gt_steps_range(s, rc->step0, &t0, &x1)) {
		t1 = x1;
		if (!gt_steps_range(s, rc->step1, &x0, &x1))
			t1 = x1;
	}
	if (t1 > t0)
		trace_view_zoom_range(ui_page(a, "Trace"), t0, t1);
	if (rc->gpu >= 0)
		trace_view_goto_gpu(ui_page(a, "Trace"), rc->rank, rc->gpu);
	ui_show(a, "Trace");
	char what[64] = "";
	if (rc->step0 >= 0 && rc->step1 >= rc->step0 && t1 > t0)
		snprintf(what, sizeof(what), ", steps %lld-%lld", (long long)rc->step0,
			 (long long)rc->step1);
	else if (t1 > t0)
		snprintf(what, sizeof(what), ", %.3f-%.3f ms", (double)(t0 - o->res.t0_ns) / 1e6,
			 (double)(t1 - o->res.t0_ns) / 1e6);
	if (rc->gpu >= 0)
		ui_msg(a, "evidence: %s%s, cursor on rank %d GPU %d",
		       rc->kind ? rc->kind : "recommendation", what, rc->rank, rc->gpu);
	else
		ui_msg(a, "evidence: %s%s", rc->kind ? rc->kind : "recommendation", what);
}

/* move between recommendations; Enter shows the evidence */
static int ov_key(struct view *v, int ch)
{
	struct overview_view *o = (struct overview_view *)v;
	switch (ch) {
	case KEY_UP: case 'k': if (o->sel) o->sel--; break;
	case KEY_DOWN: case 'j': if (o->ok && o->sel + 1 < o->res.nrecs) o->sel++; break;
	case KEY_NPAGE:
		o->gpu_first += (size_t)(o->gpu_page > 0 ? o->gpu_page : 1);   /* clamped when drawn */
		break;
	case KEY_PPAGE: {
		size_t pg = (size_t)(o->gpu_page > 0 ? o->gpu_page : 1);
		o->gpu_first = o->gpu_first > pg ? o->gpu_first - pg : 0;
		break;
	}
	case '\n': case '\r': case KEY_ENTER:
		if (o->ok && o->sel < o->res.nrecs)
			evidence(o, &o->res.recs[o->sel]);
		break;
	default:
		return UI_UNHANDLED;
	}
	return UI_HANDLED;
}

/* free the page */
static void ov_free(struct view *v)
{
	struct overview_view *o = (struct overview_view *)v;
	if (o->ok)
		gt_overview_result_done(&o->res);
	free(o->util);
	free(o->util_gpu);
	overview_mem_done(&o->mem);
	free(o);
}

static const struct view_ops ov_ops = {
	.help = ov_help,
	.draw = ov_draw,
	.key = ov_key,
	.free = ov_free,
};

struct view *overview_view_new(struct app *a)
{
	struct overview_view *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->v.ops = &ov_ops;
	o->v.app = a;
	return &o->v;
}
