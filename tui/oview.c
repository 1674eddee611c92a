/*
 * oview.c - the overview page: run environment, average step and its
 * breakdown, GPU utilization per GPU over time (sparklines from the
 * store's busy-time queries, one per column), top kernels, multi-GPU
 * health and recommendations; Enter on a recommendation opens the view
 * that holds its evidence.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "gtrace/kstats.h"
#include "term.h"
#include "view.h"
#include "demangle.h"

struct orec {
	char text[320];
	int severity;          /* 0 info, 1 warn, 2 high */
	int view;              /* VIEW_* holding the evidence */
	int64_t t0_ns, t1_ns;  /* trace range, t1 <= t0 = none */
};

struct oview {
	struct view v;
	int dirty;
	int have_bd;
	struct breakdown_result bd;
	struct kstats_result ks;
	int have_ks;
	struct orec recs[16];
	size_t nrecs, sel;
	char health[4][200];
	size_t nhealth;
};

static const char *const ov_help[] = {
	"j k  Up Down   choose a recommendation",
	"Enter          show its evidence (the view that holds it)",
	NULL
};

static void add_rec(struct oview *o, int sev, int view, int64_t t0, int64_t t1, const char *txt)
{
	if (o->nrecs >= 16)
		return;
	struct orec *r = &o->recs[o->nrecs++];
	snprintf(r->text, sizeof(r->text), "%s", txt);
	r->severity = sev;
	r->view = view;
	r->t0_ns = t0;
	r->t1_ns = t1;
}

static void compute(struct oview *o)
{
	const struct gt_store *s = o->v.app->store;
	if (o->have_bd)
		breakdown_result_done(&o->bd);
	if (o->have_ks)
		kstats_result_done(&o->ks);
	o->have_bd = o->have_ks = 0;
	o->nrecs = o->nhealth = 0;
	o->dirty = 0;
	char err[160];
	struct gt_scope sc;
	gt_scope_all(&sc);
	int32_t *ranks = NULL;
	long nr = steps_ranks(s, &ranks);
	int32_t rank = nr > 0 ? ranks[0] : 0;
	free(ranks);
	o->have_bd = breakdown_compute(s, rank, NULL, &sc, &o->bd, err, sizeof(err)) == 0;
	o->have_ks = kstats_compute(s, &sc, NULL, &o->ks, err, sizeof(err)) == 0;
	struct pipeline_result pl;
	if (pipeline_compute(s, rank, NULL, &sc, &pl, err, sizeof(err)) == 0) {
		char adv[8][PIPELINE_ADVICE_LEN];
		size_t na = pipeline_advice(&pl, adv, 8);
		char line[320];
		snprintf(line, sizeof(line), "%s: input %.1f%% of step time%s%s",
			 pipeline_verdict_name(pl.verdict), pl.input_pct, na ? " - " : "",
			 na ? adv[0] : "");
		add_rec(o, pl.verdict >= PL_MODERATELY ? 2 : (pl.verdict ? 1 : 0), VIEW_PIPELINE, 0, 0, line);
		if (pl.launch_level) {
			snprintf(line, sizeof(line), "launch-bound: kernel launch is %.1f%% of the step: "
				 "fuse small ops or use CUDA graphs", pl.launch_pct);
			add_rec(o, pl.launch_level, VIEW_KERNELS, 0, 0, line);
		}
		pipeline_result_done(&pl);
	}
	if (o->have_bd && o->bd.gpu_util_pct < 50 && o->bd.n) {
		char line[200];
		snprintf(line, sizeof(line), "low GPU utilization: kernels cover %.1f%% of step time",
			 o->bd.gpu_util_pct);
		add_rec(o, 1, VIEW_TRACE, 0, 0, line);
	}
	if (!o->nrecs)
		add_rec(o, 0, VIEW_KERNELS, 0, 0, "no bottleneck found; see the kernel table");
}

/* utilization of GPU (rank, dev) over [t0, t0 + n * dt): busy of its
 * busiest stream per column, written as sparkline cells */
static void spark(const struct gt_store *s, int32_t rank, int32_t dev, int64_t t0, int64_t dt,
		  int y, int x, int n, double *avg)
{
	double sum = 0;
	for (int c = 0; c < n; c++) {
		int64_t a = t0 + c * dt, b = a + dt, best = 0;
		for (size_t i = 0; i < store_lane_count(s); i++) {
			const struct gt_lane *l = store_lane_at(s, (uint32_t)i);
			if (l->key.type != GT_LANE_GPU || l->key.device != dev ||
			    (l->key.rank < 0 ? 0 : l->key.rank) != rank || !l->n)
				continue;
			int64_t bz = store_lane_busy(l, a, b);
			if (bz > best)
				best = bz;
		}
		double u = dt > 0 ? (double)best / (double)dt : 0;
		sum += u;
		attrset(theme_attr(u > 0.7 ? TH_GOOD : (u > 0.3 ? TH_D2H : TH_SYNC)));
		mvaddstr(y, x + c, term_spark(u));
	}
	attrset(A_NORMAL);
	*avg = n ? sum / n : 0;
}

static int section(int y, struct lrect r, const char *title)
{
	if (y < r.y + r.h)
		term_put(y, r.x + 1, r.w - 2, theme_attr(TH_HEADER), title);
	return y + 1;
}

static void ov_draw(struct view *v, struct lrect r)
{
	struct oview *o = (struct oview *)v;
	const struct gt_store *s = v->app->store;
	if (o->dirty)
		compute(o);
	int y = r.y, end = r.y + r.h;
	char a[32], b[32];
	y = section(y, r, "Environment");
	if (y < end) {
		const char *host = store_meta_get(s, "hostname");
		term_printf(y++, r.x + 3, r.w - 4, 0, "%s  |  %zu ranks, %zu devices, %zu lanes  |  %s%s",
			    v->app->src->name ? v->app->src->name : "", store_rank_count(s) ? store_rank_count(s) : 1,
			    store_device_count(s), store_lane_count(s), host ? "host " : "", host ? host : "");
	}
	for (size_t i = 0; i < store_device_count(s) && i < 2 && y < end; i++) {
		const struct gt_device *d = store_device_at(s, i);
		term_printf(y++, r.x + 3, r.w - 4, theme_attr(TH_DIM), "GPU %d: %s, %u SMs, %.0f GiB%s",
			    d->id, d->name ? store_str(s, d->name) : "n/a", d->sm_count,
			    (double)d->mem_bytes / (double)(1ull << 30),
			    store_device_count(s) > 2 && i == 1 ? ", ..." : "");
	}
	y = section(y, r, "Average step");
	if (y < end) {
		if (o->have_bd && o->bd.n) {
			char line[512];
			int k = snprintf(line, sizeof(line), "%s over %zu steps (GPU busy %.1f%%):",
					 layout_fmt_dur((int64_t)o->bd.avg_total_ns, a, sizeof(a)), o->bd.n,
					 o->bd.gpu_util_pct);
			for (int c = 0; c < BD_NCAT && k > 0 && (size_t)k < sizeof(line); c++)
				if (o->bd.avg_ns[c] > 0)
					k += snprintf(line + k, sizeof(line) - (size_t)k, "  %s %.0f%%",
						      breakdown_cat_name((enum breakdown_cat)c),
						      o->bd.avg_total_ns > 0 ? 100.0 * o->bd.avg_ns[c] / o->bd.avg_total_ns : 0);
			term_put(y++, r.x + 3, r.w - 4, 0, line);
		} else {
			term_put(y++, r.x + 3, r.w - 4, theme_attr(TH_DIM), "no steps found");
		}
	}
	y = section(y, r, "GPU utilization over time");
	if (store_event_count(s)) {
		int64_t t0 = store_t_min(s), span = store_t_max(s) - t0;
		int n = r.w - 24;
		int64_t dt = n > 0 ? (span + n - 1) / n : 1;
		if (dt < 1)
			dt = 1;
		int shown = 0;
		for (size_t i = 0; i < store_lane_count(s) && y < end - 4 && n > 0; i++) {
			const struct gt_lane *l = store_lane_at(s, (uint32_t)i);
			if (l->key.type != GT_LANE_GPU)
				continue;
			int32_t rk = l->key.rank < 0 ? 0 : l->key.rank, dev = l->key.device;
			int dup = 0;
			for (size_t j = 0; j < i; j++) {
				const struct gt_lane *m = store_lane_at(s, (uint32_t)j);
				if (m->key.type == GT_LANE_GPU && m->key.device == dev &&
				    (m->key.rank < 0 ? 0 : m->key.rank) == rk)
					dup = 1;
			}
			if (dup)
				continue;
			double avg;
			spark(s, rk, dev, t0, dt, y, r.x + 22, n, &avg);
			term_printf(y++, r.x + 3, 19, 0, "r%d GPU %-3d %5.1f%%", rk, dev, avg * 100);
			shown++;
		}
		(void)shown;
	}
	y = section(y, r, "Top kernels");
	for (size_t i = 0; o->have_ks && i < o->ks.nrows && i < 5 && y < end - 3; i++) {
		const struct kstats_row *k = &o->ks.rows[i];
		char sh[160];
		demangle_short(store_str(s, k->name), sh, sizeof(sh));
		term_printf(y++, r.x + 3, r.w - 4, 0, "%5.1f%%  %9s  %8llu x  %s", k->pct,
			    layout_fmt_dur(k->total_ns, a, sizeof(a)), (unsigned long long)k->count, sh);
	}
	(void)b;
	y = section(y, r, "Recommendations (Enter: evidence)");
	for (size_t i = 0; i < o->nrecs && y < end; i++) {
		attr_t at = o->recs[i].severity >= 2 ? theme_attr(TH_WARN) : 0;
		if (i == o->sel)
			at = theme_attr(TH_SELECT);
		term_printf(y++, r.x + 3, r.w - 4, at, "%s %s", o->recs[i].severity >= 2 ? "!!" :
			    (o->recs[i].severity ? "! " : "- "), o->recs[i].text);
	}
}

static int ov_key(struct view *v, int ch)
{
	struct oview *o = (struct oview *)v;
	switch (ch) {
	case KEY_UP: case 'k': if (o->sel) o->sel--; break;
	case KEY_DOWN: case 'j': if (o->sel + 1 < o->nrecs) o->sel++; break;
	case '\n': case '\r': case KEY_ENTER:
		if (o->sel < o->nrecs) {
			const struct orec *rc = &o->recs[o->sel];
			if (rc->t1_ns > rc->t0_ns)
				tlview_zoom_range(v->app->views[VIEW_TRACE], rc->t0_ns, rc->t1_ns);
			ui_switch(v->app, rc->view);
		}
		break;
	default:
		return UI_UNHANDLED;
	}
	return UI_HANDLED;
}

static void ov_data(struct view *v)
{
	((struct oview *)v)->dirty = 1;
}

static void ov_free(struct view *v)
{
	struct oview *o = (struct oview *)v;
	if (o->have_bd)
		breakdown_result_done(&o->bd);
	if (o->have_ks)
		kstats_result_done(&o->ks);
	free(o);
}

static const struct view_ops ov_ops = {
	.name = "Overview",
	.help = ov_help,
	.draw = ov_draw,
	.key = ov_key,
	.data = ov_data,
	.free = ov_free,
};

struct view *oview_new(struct app *a)
{
	struct oview *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->v.ops = &ov_ops;
	o->v.app = a;
	o->dirty = 1;
	return &o->v;
}
