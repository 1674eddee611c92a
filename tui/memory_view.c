/*
 * memory_view.c - the Memory page: allocated bytes over the whole capture per
 * device that has allocator records (gt_mem_usage_compute / gt_mem_usage_series,
 * gtrace/mem_usage.h rules), one sparkline per device scaled to its peak, the
 * peak's column marked, then the selected device's peak (time, operator,
 * step) and its steps (allocated at start and end, peak, growth).
 * Enter shows the peak in the trace view.  A live store is recomputed as
 * the analysis pages are (ui_due); paused, the page holds still.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/mem_usage.h"
#include "term.h"
#include "view.h"

struct memory_view {
	struct view v;
	int ok;
	struct gt_mem_usage_result res;
	char err[160];
	size_t sel;                /* selected device (index in res.dev) */
	size_t step_top;           /* first step line shown */
	/* sparklines: res.n rows of ncols samples over [t0, t0 + ncols * dt) */
	int64_t *series;
	int ncols;
	int64_t t0_ns, dt_ns;
};

static const char *const mv_help[] = {
	"j k  Up Down   choose a device",
	"PgDn PgUp      scroll its steps",
	"Enter          show the device's peak in the trace view",
	NULL
};

/* bytes as "88.00 MiB" */
static char *fmt_bytes(int64_t b, char *buf, size_t len)
{
	double v = (double)b;
	const char *u = "B";
	if (b >= (1 << 30) || b <= -(1 << 30)) {
		v /= (double)(1 << 30);
		u = "GiB";
	} else if (b >= (1 << 20) || b <= -(1 << 20)) {
		v /= (double)(1 << 20);
		u = "MiB";
	} else if (b >= 1024 || b <= -1024) {
		v /= 1024.0;
		u = "KiB";
	}
	snprintf(buf, len, *u == 'B' ? "%.0f %s" : "%.2f %s", v, u);
	return buf;
}

/* run gt_mem_usage_compute over the whole store; the selected device kept */
static void compute(struct memory_view *m)
{
	ui_busy(m->v.app, "computing memory usage...");
	int32_t was_rank = -1;
	uint32_t was_dev = 0;
	if (m->ok && m->sel < m->res.n) {
		was_rank = m->res.dev[m->sel].rank;
		was_dev = m->res.dev[m->sel].device;
	}
	if (m->ok)
		gt_mem_usage_result_done(&m->res);
	free(m->series);
	m->series = NULL;
	m->ncols = 0;
	m->err[0] = 0;
	struct gt_scope sc;
	gt_scope_all(&sc);
	m->ok = gt_mem_usage_compute(m->v.app->store, &sc, &m->res, m->err, sizeof(m->err)) == 0;
	if (!m->ok) {
		memset(&m->res, 0, sizeof(m->res));
		return;
	}
	for (size_t i = 0; i < m->res.n; i++)
		if (m->res.dev[i].rank == was_rank && m->res.dev[i].device == was_dev)
			m->sel = i;
	if (m->sel >= m->res.n)
		m->sel = 0;
}

/* the sparklines for n columns (recomputed when the width changed) */
static void series_update(struct memory_view *m, int n)
{
	if (n == m->ncols && m->series)
		return;
	free(m->series);
	m->series = NULL;
	m->ncols = 0;
	const struct gt_store *s = m->v.app->store;
	if (n <= 0 || !m->res.n)
		return;
	m->series = calloc(m->res.n * (size_t)n, sizeof(*m->series));
	if (!m->series)
		return;
	m->ncols = n;
	m->t0_ns = gt_store_t_min(s);
	int64_t span = gt_store_t_max(s) - m->t0_ns;
	m->dt_ns = (span + n) / n;
	if (m->dt_ns < 1)
		m->dt_ns = 1;
	for (size_t i = 0; i < m->res.n; i++)
		if (gt_mem_usage_series(s, m->res.dev[i].rank, m->res.dev[i].device, m->t0_ns, m->dt_ns,
				(size_t)n, m->series + i * (size_t)n))
			memset(m->series + i * (size_t)n, 0, (size_t)n * sizeof(*m->series));
}

/* "r0 GPU 0" / "r0 host" */
static void dev_name(const struct gt_mem_usage_dev *d, char *buf, size_t len)
{
	if (d->device == GT_MEM_HOST)
		snprintf(buf, len, "r%d host", d->rank);
	else
		snprintf(buf, len, "r%d GPU %u", d->rank, d->device);
}

/* one device: its name and peak, the sparkline, the peak's column marked */
static int draw_dev(struct memory_view *m, size_t i, int y, struct lrect r)
{
	const struct gt_mem_usage_dev *d = &m->res.dev[i];
	char nm[32], pk[32];
	dev_name(d, nm, sizeof(nm));
	term_printf(y, r.x + 1, 21, theme_attr(i == m->sel ? TH_SELECT : TH_NORMAL), "%-9s%11s", nm,
		    fmt_bytes(d->peak_bytes, pk, sizeof(pk)));
	const int64_t *row = m->series + i * (size_t)m->ncols;
	int peak_col = (int)((d->peak_ns - m->t0_ns) / m->dt_ns);
	for (int c = 0; c < m->ncols; c++) {
		double u = d->peak_bytes > 0 ? (double)row[c] / (double)d->peak_bytes : 0;
		attrset(theme_attr(c == peak_col ? TH_WARN : TH_COMPUTE));
		term_glyph(y, r.x + 22 + c, term_spark(u < 0 ? 0 : u));
	}
	attrset(A_NORMAL);
	if (peak_col >= 0 && peak_col < m->ncols)
		term_put(y + 1, r.x + 22 + peak_col - (peak_col > m->ncols - 5 ? 4 : 0), 5,
			 theme_attr(TH_WARN), peak_col > m->ncols - 5 ? "peak^" : "^peak");
	return y + 2;
}

static void mv_draw(struct view *v, struct lrect r)
{
	struct memory_view *m = (struct memory_view *)v;
	if (ui_due(v))
		compute(m);
	int y = r.y, end = r.y + r.h;
	if (!m->ok) {
		term_printf(y, r.x + 1, r.w - 2, theme_attr(TH_WARN), "memory: %s",
			    m->err[0] ? m->err : "no data");
		return;
	}
	if (!m->res.n) {
		term_put(y, r.x + 1, r.w - 2, 0, "memory: no allocator records in this capture "
			 "(Kineto [memory] events; gtrace sim --memory plants them)");
		return;
	}
	term_put(y++, r.x + 1, r.w - 2, theme_attr(TH_HEADER),
		 "Allocated memory over the capture, per device (scaled to its peak)  |  Enter: peak in trace");
	series_update(m, r.w - 24);
	for (size_t i = 0; i < m->res.n && y + 1 < end - 4; i++)
		y = draw_dev(m, i, y, r);
	const struct gt_mem_usage_dev *d = &m->res.dev[m->sel];
	char nm[32], a[32], b[32], c[32], t[32];
	dev_name(d, nm, sizeof(nm));
	layout_fmt_rel(d->peak_ns - gt_store_t_origin(v->app->store), t, sizeof(t));
	y++;
	char step[32] = "n/a";
	if (d->peak_step >= 0)
		snprintf(step, sizeof(step), "%lld", (long long)d->peak_step);
	if (y < end)
		term_printf(y++, r.x + 1, r.w - 2, 0, "%s: peak %s at %s in step %s, operator %s; "
			    "%llu allocs (%s), %llu frees, %s allocated at the end", nm,
			    fmt_bytes(d->peak_bytes, a, sizeof(a)), t, step,
			    d->peak_op ? gt_store_str(v->app->store, d->peak_op) : "(none open)",
			    (unsigned long long)d->allocs, fmt_bytes(d->alloc_bytes, b, sizeof(b)),
			    (unsigned long long)d->frees, fmt_bytes(d->end_bytes, c, sizeof(c)));
	/* the allocator's own totals, when the records carry them */
	if (d->total_samples[0] && y < end) {
		char ta[32], tr[32], tt[32], ts[32] = "n/a";
		layout_fmt_rel(d->total_peak_ns[0] - gt_store_t_origin(v->app->store), tt, sizeof(tt));
		if (d->total_peak_step >= 0)
			snprintf(ts, sizeof(ts), "%lld", (long long)d->total_peak_step);
		term_printf(y++, r.x + 1, r.w - 2, 0, "%s allocator: Total Allocated peak %s at %s in "
			    "step %s, operator %s; Total Reserved peak %s", nm,
			    fmt_bytes(d->total_peak[0], ta, sizeof(ta)), tt, ts,
			    d->total_peak_op ? gt_store_str(v->app->store, d->total_peak_op) : "(none open)",
			    d->total_samples[1] ? fmt_bytes(d->total_peak[1], tr, sizeof(tr)) : "n/a");
	}
	if (y < end)
		term_printf(y++, r.x + 1, r.w - 2, theme_attr(TH_HEADER), "%8s %14s %14s %14s %14s",
			    "step", "start", "end", "peak", "growth");
	if (m->step_top >= d->nsteps)
		m->step_top = d->nsteps ? d->nsteps - 1 : 0;
	for (size_t i = m->step_top; i < d->nsteps && y < end; i++) {
		const struct gt_mem_usage_step *st = &d->steps[i];
		char g[32];
		term_printf(y++, r.x + 1, r.w - 2, 0, "%8lld %14s %14s %14s %14s", (long long)st->number,
			    fmt_bytes(st->start_bytes, a, sizeof(a)), fmt_bytes(st->end_bytes, b, sizeof(b)),
			    fmt_bytes(st->peak_bytes, c, sizeof(c)),
			    fmt_bytes(st->end_bytes - st->start_bytes, g, sizeof(g)));
	}
}

static int mv_key(struct view *v, int ch)
{
	struct memory_view *m = (struct memory_view *)v;
	size_t n = m->ok ? m->res.n : 0;
	switch (ch) {
	case KEY_UP: case 'k': if (m->sel > 0) m->sel--; m->step_top = 0; break;
	case KEY_DOWN: case 'j': if (m->sel + 1 < n) m->sel++; m->step_top = 0; break;
	case KEY_NPAGE: m->step_top += 10; break;
	case KEY_PPAGE: m->step_top = m->step_top > 10 ? m->step_top - 10 : 0; break;
	case '\n': case '\r': case KEY_ENTER:
		if (m->sel < n) {
			int64_t t = m->res.dev[m->sel].peak_ns, w = m->dt_ns > 0 ? m->dt_ns : 1000000;
			trace_view_zoom_range(ui_page(v->app, "Trace"), t - w, t + w);
			ui_show(v->app, "Trace");
		}
		break;
	default:
		return UI_UNHANDLED;
	}
	return UI_HANDLED;
}

static void mv_free(struct view *v)
{
	struct memory_view *m = (struct memory_view *)v;
	if (m->ok)
		gt_mem_usage_result_done(&m->res);
	free(m->series);
	free(m);
}

static const struct view_ops mv_ops = {
	.help = mv_help,
	.draw = mv_draw,
	.key = mv_key,
	.free = mv_free,
};

struct view *memory_view_new(struct app *a)
{
	struct memory_view *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->v.ops = &mv_ops;
	m->v.app = a;
	return &m->v;
}
