/*
 * tables.c - draw any gt_table as a scrollable, sortable grid: the stats
 * pages use it for the report tables.  Widths are measured over the rows
 * on screen only, so a frame costs O(screen), not O(rows).
 */
#include <stdio.h>
#include <string.h>
#include "term.h"
#include "view.h"
#include "demangle.h"

/* 1 for a column of nanoseconds: printed as a duration */
static int is_ns(const struct gt_col *c)
{
	return c->type != GT_COL_STR && (c->flags & GT_COLF_DUR);
}

/* a column's heading as shown: "(ns)" dropped where the cells carry their unit */
static const char *col_title(const struct gt_col *c, char *buf, size_t len)
{
	size_t n = strlen(c->name);
	if (!is_ns(c) || n < 4 || strcmp(c->name + n - 4, "(ns)"))
		return c->name;
	n -= 4;
	while (n && c->name[n - 1] == ' ')
		n--;
	snprintf(buf, len, "%.*s", (int)n, c->name);
	return buf;
}

void tables_cell_text(const struct gt_table *t, size_t row, size_t col, char *buf, size_t len)
{
	if (gt_table_is_null(t, row, col)) {
		snprintf(buf, len, "n/a");
		return;
	}
	const union gt_cell *v = gt_table_cell(t, row, col);
	const struct gt_col *c = &t->cols[col];
	switch (c->type) {
	case GT_COL_STR:
		if (c->flags & GT_COLF_NAME)
			demangle_name(v->s ? v->s : "", buf, len);
		else if ((!strcmp(c->name, "Call Stack") || !strcmp(c->name, "Input Shape")) &&
			 v->s && !strcmp(v->s, "None"))
			snprintf(buf, len, "-");   /* the plugin's str(None): nothing recorded */
		else
			snprintf(buf, len, "%s", v->s ? v->s : "");
		break;
	case GT_COL_INT:
		if (is_ns(c))
			layout_fmt_dur(v->i, buf, len);
		else
			snprintf(buf, len, "%lld", (long long)v->i);
		break;
	case GT_COL_FLOAT:
		if (is_ns(c))
			layout_fmt_dur((int64_t)v->f, buf, len);
		else
			snprintf(buf, len, "%.*f", c->decimals, v->f);
		break;
	case GT_COL_PCT:
		snprintf(buf, len, "%.*f", c->decimals ? c->decimals : 1, v->f);
		break;
	}
}

int tables_name_col(const struct gt_table *t)
{
	int c = gt_table_col_with(t, GT_COLF_NAME);
	if (c >= 0)
		return c;
	if (t->ncols && t->cols[t->ncols - 1].type == GT_COL_STR)
		return (int)t->ncols - 1;
	return -1;
}

void tables_move(struct tables_state *st, size_t nrows, long delta)
{
	if (!nrows) {
		st->sel = st->top = 0;
		return;
	}
	long s = (long)st->sel + delta;
	if (s < 0)
		s = 0;
	if (s >= (long)nrows)
		s = (long)nrows - 1;
	st->sel = (size_t)s;
}

/* the sort marker, set apart from the heading by a space */
static const char *sort_mark(const struct tables_state *st)
{
	if (term_caps.utf8)
		return st->sort_desc ? " \u25bc" : " \u25b2";
	return st->sort_desc ? " v" : " ^";
}

/* a name cell into w cells: whole when it fits; a kernel name (mangled ones
 * demangled) as its short form and as much of the full one as fits, each
 * cut in the middle so the distinguishing end stays */
static void fit_name(char *buf, size_t len, int w, int is_name)
{
	char sh[256], full[512], cut[512];
	if (w < 1 || (int)strlen(buf) <= w)
		return;
	snprintf(full, sizeof(full), "%s", buf);
	if (is_name && strcmp(demangle_short(full, sh, sizeof(sh)), full)) {
		int rest = w - (int)strlen(sh) - 4;   /* "  [" and "]" */
		if (rest >= 8) {
			snprintf(buf, len, "%s  [%s]", sh,
				 layout_ellipsize(full, rest, term_caps.utf8, cut, sizeof(cut)));
			return;
		}
		snprintf(full, sizeof(full), "%s", sh);
	}
	layout_ellipsize(full, w, term_caps.utf8, buf, len);
}

void tables_draw(const struct gt_table *t, struct tables_state *st, struct lrect r,
		 const size_t *rows, size_t nrows)
{
	if (r.h < 2 || r.w < 8 || !t)
		return;
	int body = r.h - 1;
	if (st->sel >= nrows)
		st->sel = nrows ? nrows - 1 : 0;
	if (st->sel < st->top)
		st->top = st->sel;
	if (st->sel >= st->top + (size_t)body)
		st->top = st->sel - (size_t)body + 1;
	int name_col = tables_name_col(t);
	/* widths over the visible rows */
	int w[64];
	size_t nc = t->ncols < 64 ? t->ncols : 64;
	char buf[512];
	for (size_t c = 0; c < nc; c++) {
		char ti[64];
		w[c] = (int)strlen(col_title(&t->cols[c], ti, sizeof(ti))) +
		       ((int)c == st->sort_col ? 2 : 0);
		for (size_t i = st->top; i < nrows && i < st->top + (size_t)body; i++) {
			tables_cell_text(t, rows[i], c, buf, sizeof(buf));
			int l = (int)strlen(buf);
			if (l > w[c])
				w[c] = l;
		}
		if (w[c] > 40)
			w[c] = 40;
	}
	int name_min = name_col < 0 ? 0 : st->name_wide == 1 ? r.w / 2 :
		       st->name_wide >= 2 ? r.w * 3 / 4 : (r.w / 3 < 24 ? r.w / 3 : 24);
	if (st->left < 0)
		st->left = 0;
	/* columns drawn: from `left`, skipping the name column, while they fit */
	int xs[64], shown[64], ns = 0, x = 0;
	for (size_t c = 0; c < nc; c++) {
		if ((int)c == name_col || (int)c < st->left)
			continue;
		if (x + w[c] + 2 > r.w - name_min)
			break;
		xs[ns] = x;
		shown[ns++] = (int)c;
		x += w[c] + 2;
	}
	int name_x = x, name_w = r.w - x;
	attr_t ha = theme_attr(TH_HEADER);
	term_fill((struct lrect){ r.x, r.y, r.w, 1 }, 0);
	for (int k = 0; k < ns; k++) {
		int c = shown[k];
		char ti[64];
		snprintf(buf, sizeof(buf), "%s%s", col_title(&t->cols[c], ti, sizeof(ti)),
			 c == st->sort_col ? sort_mark(st) : "");
		int l = (int)strlen(col_title(&t->cols[c], ti, sizeof(ti))) + (c == st->sort_col ? 2 : 0);
		int right = t->cols[c].type != GT_COL_STR;
		term_put(r.y, r.x + xs[k] + (right && l < w[c] ? w[c] - l : 0), w[c] + 1,
			 c == st->sort_col ? ha | A_REVERSE : ha, buf);
	}
	if (name_col >= 0 && name_w > 0)
		term_printf(r.y, r.x + name_x, name_w, name_col == st->sort_col ? ha | A_REVERSE : ha,
			    "%s%s", t->cols[name_col].name,
			    name_col == st->sort_col ? sort_mark(st) : "");
	for (int yy = 0; yy < body; yy++) {
		size_t i = st->top + (size_t)yy;
		if (i >= nrows)
			break;
		int y = r.y + 1 + yy;
		attr_t a = i == st->sel ? theme_attr(TH_SELECT) : 0;
		if (a)
			term_fill((struct lrect){ r.x, y, r.w, 1 }, a);
		for (int k = 0; k < ns; k++) {
			int c = shown[k];
			tables_cell_text(t, rows[i], (size_t)c, buf, sizeof(buf));
			if (t->cols[c].type == GT_COL_STR && (int)strlen(buf) > w[c]) {
				/* cut in the middle as the name column, both ends stay */
				char full[512];
				snprintf(full, sizeof(full), "%s", buf);
				layout_ellipsize(full, w[c], term_caps.utf8, buf, sizeof(buf));
			}
			int l = (int)strlen(buf);
			int right = t->cols[c].type != GT_COL_STR;
			term_put(y, r.x + xs[k] + (right && l < w[c] ? w[c] - l : 0), w[c], a, buf);
		}
		if (name_col >= 0 && name_w > 0) {
			tables_cell_text(t, rows[i], (size_t)name_col, buf, sizeof(buf));
			fit_name(buf, sizeof(buf), name_w - 1,
				 (t->cols[name_col].flags & GT_COLF_NAME) != 0);
			term_put(y, r.x + name_x, name_w, a, buf);
		}
	}
	if (!nrows)
		term_put(r.y + 1, r.x + 1, r.w - 2, theme_attr(TH_DIM), "(no rows)");
}
