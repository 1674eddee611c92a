/*
 * report_page.c - a report shown as a table page (a pages_table line with a
 * report name): the report runs over the whole capture, its tables are
 * shown one at a time (t: next), sortable by any column, scrolled, filtered
 * by a name regex.  It recomputes a live store as every analysis page does
 * (ui_due); the selected row is found again by its name.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "term.h"
#include "view.h"

struct report_page {
	struct view v;
	const struct page_def *def;
	struct gt_report_out out;
	size_t tab;                /* the table shown: out.tables[tab] */
	size_t *rows, nrows;       /* rows passing the filter */
	struct tables_state st;
	regex_t re;
	int has_re;
	char filter[128];
	char err[160];
};

static const char *const rp_help[] = {
	"j k  Up Down  PgUp PgDn  Home End   move",
	"< >         sort column left / right     r  reverse the order",
	"h l  Left Right   scroll the columns",
	"/           filter names (regex; empty clears)",
	"t           next table of the report",
	NULL
};

/* the table shown, NULL when none */
static struct gt_table *shown(const struct report_page *p)
{
	return p->tab < p->out.n ? p->out.tables[p->tab] : NULL;
}

/* rows of the shown table passing the filter, in table order */
static void refilter(struct report_page *p)
{
	free(p->rows);
	p->rows = NULL;
	p->nrows = 0;
	struct gt_table *tb = shown(p);
	if (!tb || !(p->rows = malloc((tb->nrows ? tb->nrows : 1) * sizeof(*p->rows))))
		return;
	int nc = tables_name_col(tb);
	for (size_t i = 0; i < tb->nrows; i++) {
		const union gt_cell *c = nc >= 0 ? gt_table_cell(tb, i, (size_t)nc) : NULL;
		if (p->has_re && nc >= 0 && regexec(&p->re, c && c->s ? c->s : "", 0, NULL, 0))
			continue;
		p->rows[p->nrows++] = i;
	}
	tables_move(&p->st, p->nrows, 0);
}

/* the name of the selected row into buf ("" when none) */
static void sel_name(const struct report_page *p, char *buf, size_t len)
{
	struct gt_table *tb = shown(p);
	int nc = tb ? tables_name_col(tb) : -1;
	const union gt_cell *c = nc >= 0 && p->st.sel < p->nrows ?
		gt_table_cell(tb, p->rows[p->st.sel], (size_t)nc) : NULL;
	snprintf(buf, len, "%s", c && c->s ? c->s : "");
}

/* sort the shown table by the page's sort column (when none was chosen:
 * the table's own sort_col, else the first numeric column, largest first)
 * and filter it again */
static void resort(struct report_page *p)
{
	struct gt_table *tb = shown(p);
	if (!tb)
		return;
	if (p->st.sort_col >= (int)tb->ncols)
		p->st.sort_col = -1;
	if (p->st.sort_col < 0 && tb->sort_col >= 0 && tb->sort_col < (int)tb->ncols) {
		p->st.sort_col = tb->sort_col;
		p->st.sort_desc = 1;
	}
	for (size_t c = 0; p->st.sort_col < 0 && c < tb->ncols; c++)
		if (tb->cols[c].type != GT_COL_STR) {
			p->st.sort_col = (int)c;
			p->st.sort_desc = 1;
		}
	if (p->st.sort_col >= 0)
		gt_table_sort(tb, (size_t)p->st.sort_col, p->st.sort_desc);
	refilter(p);
}

/* run the report over the whole capture; the selected row kept by name */
static void compute(struct report_page *p)
{
	char was[512], busy[96];
	snprintf(busy, sizeof(busy), "computing the %s report...", p->def->report);
	ui_busy(p->v.app, busy);
	sel_name(p, was, sizeof(was));
	gt_report_out_done(&p->out);
	memset(&p->out, 0, sizeof(p->out));
	p->err[0] = 0;
	const struct gt_report *rep = gt_report_find(p->def->report);
	struct gt_scope sc;
	gt_scope_all(&sc);
	if (!rep)
		snprintf(p->err, sizeof(p->err), "the '%s' report is not available in this build",
			 p->def->report);
	else if (rep->run(p->v.app->store, &sc, &p->out, p->err, sizeof(p->err)) || !p->out.n) {
		if (!p->err[0])
			snprintf(p->err, sizeof(p->err), "%s: no table", p->def->report);
		gt_report_out_done(&p->out);
		memset(&p->out, 0, sizeof(p->out));
	}
	resort(p);
	struct gt_table *tb = shown(p);
	int nc = tb ? tables_name_col(tb) : -1;
	for (size_t i = 0; nc >= 0 && was[0] && i < p->nrows; i++) {
		const union gt_cell *c = gt_table_cell(tb, p->rows[i], (size_t)nc);
		if (c && c->s && !strcmp(c->s, was)) {
			tables_move(&p->st, p->nrows, (long)i - (long)p->st.sel);
			break;
		}
	}
}

/* title line, the shown table, its notes */
static void rp_draw(struct view *v, struct lrect r)
{
	struct report_page *p = (struct report_page *)v;
	if (ui_due(v))
		compute(p);
	struct gt_table *tb = shown(p);
	term_printf(r.y, r.x + 1, r.w - 2, 0, "%s  |  %zu of %zu rows%s%s%s%s",
		    tb ? tb->title : p->def->report, p->nrows, tb ? tb->nrows : 0,
		    p->has_re ? "  filter /" : "", p->has_re ? p->filter : "",
		    p->has_re ? "/" : "", p->out.n > 1 ? "  |  t: next table" : "");
	if (r.h < 3)
		return;
	if (!tb) {
		term_put(r.y + 2, r.x + 1, r.w - 2, theme_attr(TH_WARN), p->err);
		return;
	}
	int notes = (int)tb->nnotes > r.h / 4 ? r.h / 4 : (int)tb->nnotes;
	struct lrect tr = { r.x, r.y + 1, r.w, r.h - 1 - notes };
	tables_draw(tb, &p->st, tr, p->rows, p->nrows);
	for (int i = 0; i < notes; i++)
		term_put(tr.y + tr.h + i, r.x + 1, r.w - 2, theme_attr(TH_DIM), tb->notes[i]);
}

/* the / prompt: compile the name filter (empty clears it) */
static void filter_done(struct view *v, const char *text)
{
	struct report_page *p = (struct report_page *)v;
	if (p->has_re)
		regfree(&p->re);
	p->has_re = 0;
	p->filter[0] = 0;
	if (*text && regcomp(&p->re, text, REG_EXTENDED | REG_NOSUB | REG_ICASE))
		ui_msg(v->app, "bad regex '%s'", text);
	else if (*text) {
		p->has_re = 1;
		snprintf(p->filter, sizeof(p->filter), "%s", text);
	}
	p->st.sel = p->st.top = 0;
	refilter(p);
}

/* the table's keys (rp_help); UI_* flags */
static int rp_key(struct view *v, int ch)
{
	struct report_page *p = (struct report_page *)v;
	struct gt_table *tb = shown(p);
	switch (ch) {
	case KEY_UP: case 'k': tables_move(&p->st, p->nrows, -1); break;
	case KEY_DOWN: case 'j': tables_move(&p->st, p->nrows, 1); break;
	case KEY_PPAGE: tables_move(&p->st, p->nrows, -10); break;
	case KEY_NPAGE: tables_move(&p->st, p->nrows, 10); break;
	case KEY_HOME: tables_move(&p->st, p->nrows, -(long)p->nrows); break;
	case KEY_END: tables_move(&p->st, p->nrows, (long)p->nrows); break;
	case KEY_LEFT: case 'h': if (p->st.left > 0) p->st.left--; break;
	case KEY_RIGHT: case 'l': if (tb && p->st.left + 1 < (int)tb->ncols) p->st.left++; break;
	case '<': case '>':
		if (tb && tb->ncols) {
			int n = (int)tb->ncols;
			p->st.sort_col = ((p->st.sort_col < 0 ? 0 : p->st.sort_col) +
					  (ch == '>' ? 1 : n - 1)) % n;
			p->st.sort_desc = tb->cols[p->st.sort_col].type != GT_COL_STR;
			resort(p);
		}
		break;
	case 'r':
		p->st.sort_desc = !p->st.sort_desc;
		resort(p);
		break;
	case '/': ui_prompt(v->app, v, "filter names (regex, empty clears): ", "", filter_done); break;
	case 't':
		if (p->out.n > 1) {
			p->tab = (p->tab + 1) % p->out.n;
			p->st = (struct tables_state){ .sort_col = -1 };
			resort(p);
		}
		break;
	default:
		return UI_UNHANDLED;
	}
	return UI_HANDLED;
}

/* Esc: clear the filter; 0 when there is none */
static int rp_back(struct view *v)
{
	if (!((struct report_page *)v)->has_re)
		return 0;
	filter_done(v, "");
	return 1;
}

static void rp_free(struct view *v)
{
	struct report_page *p = (struct report_page *)v;
	gt_report_out_done(&p->out);
	free(p->rows);
	if (p->has_re)
		regfree(&p->re);
	free(p);
}

static const struct view_ops rp_ops = {
	.help = rp_help,
	.draw = rp_draw,
	.key = rp_key,
	.back = rp_back,
	.free = rp_free,
};

struct view *report_page_new(struct app *a, const struct page_def *def)
{
	struct report_page *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->v.ops = &rp_ops;
	p->v.app = a;
	p->def = def;
	p->st.sort_col = -1;
	return &p->v;
}
