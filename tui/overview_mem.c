/*
 * overview_mem.c - the overview's memory sparklines (overview_mem.h): gt_mem_usage_compute for
 * the devices and their peaks, gt_mem_usage_series for the columns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "term.h"
#include "overview_mem.h"

/* drop the result and the samples */
static void mem_clear(struct overview_mem *m)
{
	if (m->ok)
		gt_mem_usage_result_done(&m->res);
	memset(&m->res, 0, sizeof(m->res));
	m->ok = 0;
	free(m->series);
	m->series = NULL;
	m->ncols = 0;
}

void overview_mem_update(struct overview_mem *m, const struct app *a, int ncols, int due)
{
	const struct gt_store *s = a->store;
	/* the page's recompute throttle (ui_due) says when a changed store is
	   read again; a new width needs new columns at once */
	if (m->updated && !due && ncols == m->width)
		return;
	mem_clear(m);
	m->updated = 1;
	m->width = ncols;
	if (ncols <= 0 || !gt_store_event_count(s))
		return;
	struct gt_scope sc;
	gt_scope_all(&sc);
	char err[160];
	if (gt_mem_usage_compute(s, &sc, &m->res, err, sizeof(err)))
		return;
	m->ok = 1;
	m->ncols = ncols;
	if (!m->res.n)
		return;
	m->series = calloc(m->res.n * (size_t)ncols, sizeof(*m->series));
	if (!m->series) {
		mem_clear(m);
		return;
	}
	m->t0_ns = gt_store_t_min(s);
	m->dt_ns = (gt_store_t_max(s) - m->t0_ns + ncols) / ncols;
	if (m->dt_ns < 1)
		m->dt_ns = 1;
	for (size_t i = 0; i < m->res.n; i++)
		if (gt_mem_usage_series(s, m->res.dev[i].rank, m->res.dev[i].device, m->t0_ns, m->dt_ns,
				(size_t)ncols, m->series + i * (size_t)ncols))
			memset(m->series + i * (size_t)ncols, 0, (size_t)ncols * sizeof(*m->series));
}

size_t overview_mem_rows(const struct overview_mem *m)
{
	return m->ok && m->series ? m->res.n : 0;
}

void overview_mem_draw(const struct overview_mem *m, size_t i, int y, int x)
{
	const struct gt_mem_usage_dev *d = &m->res.dev[i];
	double v = (double)d->peak_bytes / (double)(1 << 20);
	const char *unit = "MiB";
	if (v >= 9999.5) {
		v /= 1024.0;
		unit = "GiB";
	}
	char dev[16];
	if (d->device == GT_MEM_HOST)
		snprintf(dev, sizeof(dev), "host");
	else
		snprintf(dev, sizeof(dev), "GPU%u", d->device);
	/* "mem r0 GPU0  425MiB": 18 columns, the figure whole at the right, and
	   a space before the sparkline */
	char label[32], num[16];
	snprintf(label, sizeof(label), "mem r%d %s", d->rank, dev);
	snprintf(num, sizeof(num), "%.0f%s", v, unit);
	int lw = 17 - (int)strlen(num);
	term_printf(y, x, 18, 0, "%-*.*s %s", lw < 0 ? 0 : lw, lw < 0 ? 0 : lw, label, num);
	const int64_t *row = m->series + i * (size_t)m->ncols;
	int peak_col = (int)((d->peak_ns - m->t0_ns) / m->dt_ns);
	for (int c = 0; c < m->ncols; c++) {
		double u = d->peak_bytes > 0 ? (double)row[c] / (double)d->peak_bytes : 0;
		attrset(theme_attr(c == peak_col ? TH_WARN : TH_COMPUTE));
		term_glyph(y, x + 19 + c, term_spark(u < 0 ? 0 : u));
	}
	attrset(A_NORMAL);
}

void overview_mem_done(struct overview_mem *m)
{
	mem_clear(m);
}
