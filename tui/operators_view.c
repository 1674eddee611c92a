/*
 * operators_view.c - the Operators page: the "ops" report table (framework
 * operators per name, gtrace/ops.h rules), sortable by any column, filtered
 * by a name regex; Enter lists an operator's calls (operators_view_calls.c).
 * g cycles the plugin's groupings (name, + input shapes, + call stack); c
 * shows `gtrace diff`'s operator, kernel, step-breakdown (average, then the
 * steps side by side) and overview-verdict tables of the store's two lowest
 * ranks (two runs opened together, operators_view_cmp.c), Enter on a delta
 * row listing the instances in both, on a step showing it in the trace.
 * A live store is recomputed as every analysis page is (ui_due),
 * the selected row and an open list kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/diff.h"
#include "gtrace/ops.h"
#include "term.h"
#include "drill.h"
#include "operators_view.h"

static const char *const op_help[] = {
	"j k  Up Down  PgUp PgDn  Home End   move",
	"Enter       calls of the operator; Enter there: show it in the trace",
	"< >         sort column left / right     r  reverse the order",
	"h l  Left Right   scroll the columns",
	"/           filter names (regex; empty clears)",
	"g           group by name / name + input shapes / name + call stack",
	"c           compare two runs opened together (gtrace open A B): operator",
	"            deltas, kernel deltas, step breakdown, steps side by side,",
	"            overview verdicts, off; Enter: the instances in both runs;",
	"            on a step: the trace view over it in both runs",
	"calls:      K  GPU work the call launched (Enter: show it)",
	"            d  by duration   T  by time   Esc  back",
	NULL
};

/* drop the report output and the row filter */
static void free_table(struct operators_view *o)
{
	gt_report_out_done(&o->out);
	memset(&o->out, 0, sizeof(o->out));
	o->tb = NULL;
	free(o->rows);
	o->rows = NULL;
	o->nrows = 0;
}

/* rows passing the filter, in table order */
static void refilter(struct operators_view *o)
{
	free(o->rows);
	o->rows = NULL;
	o->nrows = 0;
	if (!o->tb)
		return;
	o->rows = malloc((o->tb->nrows ? o->tb->nrows : 1) * sizeof(*o->rows));
	if (!o->rows)
		return;
	int nc = tables_name_col(o->tb);
	for (size_t i = 0; i < o->tb->nrows; i++) {
		if (!operators_view_cmp_keep(o, i))
			continue;
		if (o->has_re && nc >= 0) {
			const union gt_cell *c = gt_table_cell(o->tb, i, (size_t)nc);
			if (regexec(&o->re, c && c->s ? c->s : "", 0, NULL, 0))
				continue;
		}
		o->rows[o->nrows++] = i;
	}
	tables_move(&o->st, o->nrows, 0);
}

/* the name of the selected row into buf ("" when none) */
static void sel_name(const struct operators_view *o, char *buf, size_t len)
{
	buf[0] = 0;
	int nc = o->tb ? tables_name_col(o->tb) : -1;
	if (nc < 0 || o->st.sel >= o->nrows)
		return;
	const union gt_cell *c = gt_table_cell(o->tb, o->rows[o->st.sel], (size_t)nc);
	snprintf(buf, len, "%s", c && c->s ? c->s : "");
}

/* select the row named `name` */
static void select_name(struct operators_view *o, const char *name)
{
	int nc = o->tb ? tables_name_col(o->tb) : -1;
	if (nc < 0 || !name[0])
		return;
	for (size_t i = 0; i < o->nrows; i++) {
		const union gt_cell *c = gt_table_cell(o->tb, o->rows[i], (size_t)nc);
		if (c && c->s && !strcmp(c->s, name)) {
			tables_move(&o->st, o->nrows, (long)i - (long)o->st.sel);
			return;
		}
	}
}

/* run the ops report over the whole store, sort, filter; the selected row
 * and an open list survive (a live update) */
static void compute(struct operators_view *o)
{
	ui_busy(o->v.app, "computing the operator table...");
	char was[512];
	sel_name(o, was, sizeof(was));
	free_table(o);
	o->err[0] = 0;
	const struct gt_report *rep = gt_report_find("ops");
	struct gt_scope sc;
	gt_scope_all(&sc);
	sc.flags |= (unsigned)o->group << GT_OPS_SCOPE_GROUP_SHIFT;
	if (!rep) {
		snprintf(o->err, sizeof(o->err), "the 'ops' report is not available in this build");
		return;
	}
	long shown = o->cmp ? operators_view_cmp_compute(o)
			    : rep->run(o->v.app->store, &sc, &o->out, o->err, sizeof(o->err));
	if (shown < 0 || (size_t)shown >= o->out.n) {
		if (!o->err[0])
			snprintf(o->err, sizeof(o->err), "ops: no table");
		gt_report_out_done(&o->out);
		memset(&o->out, 0, sizeof(o->out));
		return;
	}
	o->tb = o->out.tables[shown];
	if (o->st.sort_col >= (int)o->tb->ncols)
		o->st.sort_col = -1;
	if (o->st.sort_col < 0 && !o->cmp) {   /* a diff table comes sorted by |delta| */
		o->st.sort_col = o->tb->sort_col;
		o->st.sort_desc = 1;
	}
	if (o->st.sort_col >= 0)
		gt_table_sort(o->tb, (size_t)o->st.sort_col, o->st.sort_desc);
	refilter(o);
	select_name(o, was);
	if (o->mode)
		operators_view_calls_refresh(o);
}

/* title line, table, notes (or the open list) */
static void op_draw(struct view *v, struct lrect r)
{
	struct operators_view *o = (struct operators_view *)v;
	if (ui_due(v))
		compute(o);
	if (o->mode) {
		operators_view_calls_draw(o, r);
		return;
	}
	static const char *const by[] = { "name", "name + input shapes", "name + call stack" };
	if (o->cmp) {
		const char *next = operators_view_cmp_name((o->cmp + 1) % OPV_CMP_N);
		term_printf(r.y, r.x + 1, r.w - 2, 0, "compare %s  |  r%d baseline vs r%d experiment  |  "
			    "%zu of %zu rows%s%s%s  |  %sc: %s", operators_view_cmp_name(o->cmp),
			    o->cmp_ra, o->cmp_rb, o->nrows, o->tb ? o->tb->nrows : 0,
			    o->has_re ? "  filter /" : "", o->has_re ? o->filter : "",
			    o->has_re ? "/" : "", o->cmp < 3 ? "Enter: instances in both  " :
			    o->cmp == 4 ? "Enter: the step in both  " : "", next[0] ? next : "off");
	} else {
		term_printf(r.y, r.x + 1, r.w - 2, 0,
			    "operators  |  %zu of %zu rows%s%s%s  |  by %s  |  Enter: calls  g: grouping",
			    o->nrows, o->tb ? o->tb->nrows : 0, o->has_re ? "  filter /" : "",
			    o->has_re ? o->filter : "", o->has_re ? "/" : "", by[o->group % 3]);
	}
	if (r.h < 3)
		return;
	if (!o->tb) {
		term_put(r.y + 2, r.x + 1, r.w - 2, theme_attr(TH_WARN), o->err);
		return;
	}
	int notes = (int)o->tb->nnotes;
	if (notes > r.h / 4)
		notes = r.h / 4;
	struct lrect tr = { r.x, r.y + 1, r.w, r.h - 1 - notes };
	tables_draw(o->tb, &o->st, tr, o->rows, o->nrows);
	for (int i = 0; i < notes; i++)
		term_put(tr.y + tr.h + i, r.x + 1, r.w - 2, theme_attr(TH_DIM), o->tb->notes[i]);
}

/* the / prompt: compile the name filter (empty clears it) */
static void filter_done(struct view *v, const char *text)
{
	struct operators_view *o = (struct operators_view *)v;
	if (o->has_re)
		regfree(&o->re);
	o->has_re = 0;
	o->filter[0] = 0;
	if (*text) {
		if (regcomp(&o->re, text, REG_EXTENDED | REG_NOSUB | REG_ICASE)) {
			ui_msg(v->app, "bad regex '%s'", text);
		} else {
			o->has_re = 1;
			snprintf(o->filter, sizeof(o->filter), "%s", text);
		}
	}
	o->st.sel = o->st.top = 0;
	refilter(o);
}

/* the table's keys (see op_help); UI_* flags */
static int op_key(struct view *v, int ch)
{
	struct operators_view *o = (struct operators_view *)v;
	if (o->mode)
		return operators_view_calls_key(o, ch);
	switch (ch) {
	case KEY_UP: case 'k': tables_move(&o->st, o->nrows, -1); break;
	case KEY_DOWN: case 'j': tables_move(&o->st, o->nrows, 1); break;
	case KEY_PPAGE: tables_move(&o->st, o->nrows, -10); break;
	case KEY_NPAGE: tables_move(&o->st, o->nrows, 10); break;
	case KEY_HOME: tables_move(&o->st, o->nrows, -(long)o->nrows); break;
	case KEY_END: tables_move(&o->st, o->nrows, (long)o->nrows); break;
	case KEY_LEFT: case 'h': if (o->st.left > 0) o->st.left--; break;
	case KEY_RIGHT: case 'l': if (o->tb && o->st.left + 1 < (int)o->tb->ncols) o->st.left++; break;
	case '<': case '>': case 'r':
		if (!o->tb)
			break;
		if (ch == 'r') {
			o->st.sort_desc = !o->st.sort_desc;
		} else {
			int n = (int)o->tb->ncols;
			o->st.sort_col = ((o->st.sort_col < 0 ? 0 : o->st.sort_col) + (ch == '>' ? 1 : n - 1)) % n;
			o->st.sort_desc = o->tb->cols[o->st.sort_col].type != GT_COL_STR;
		}
		gt_table_sort(o->tb, (size_t)o->st.sort_col, o->st.sort_desc);
		refilter(o);
		break;
	case '/': ui_prompt(v->app, v, "filter operators (regex, empty clears): ", "", filter_done); break;
	case 'c':
		if (!o->cmp && !operators_view_cmp_ranks(o)) {
			ui_msg(v->app, "c: compare needs two runs opened together (gtrace open A B)");
			break;
		}
		o->cmp = (o->cmp + 1) % OPV_CMP_N;
		o->st.sort_col = -1;
		o->st.left = 0;
		o->st.sel = o->st.top = 0;
		o->v.due.dirty = 1;
		break;
	case 'g':
		/* the columns change: default sort, first column */
		if (o->cmp) {
			ui_msg(v->app, "g: the compare tables are per name (c turns compare off)");
			break;
		}
		o->group = (o->group + 1) % GT_OPS_GROUP_COUNT;
		o->st.sort_col = -1;
		o->st.left = 0;
		o->st.sel = o->st.top = 0;
		o->v.due.dirty = 1;
		break;
	case '\n': case '\r': case KEY_ENTER:
		if (o->cmp >= 3) {
			operators_view_cmp_enter(o);
			break;
		}
		sel_name(o, o->calls_name, sizeof(o->calls_name));
		if (!o->calls_name[0])
			break;
		drill_key(o->tb, o->rows[o->st.sel], o->calls_row, sizeof(o->calls_row));
		o->calls_keyed = !o->cmp && o->group != GT_OPS_BY_NAME;
		o->calls_kernels = o->cmp == 2;
		operators_view_calls_open(o);
		break;
	default:
		return UI_UNHANDLED;
	}
	return UI_HANDLED;
}

/* Esc: one list back, else clear the filter; 0 when neither */
static int op_back(struct view *v)
{
	struct operators_view *o = (struct operators_view *)v;
	if (o->mode) {
		o->mode--;
		return 1;
	}
	if (o->has_re) {
		filter_done(v, "");
		return 1;
	}
	return 0;
}

static void op_free(struct view *v)
{
	struct operators_view *o = (struct operators_view *)v;
	free_table(o);
	if (o->has_re)
		regfree(&o->re);
	operators_view_calls_free(o);
	operators_view_cmp_free(o);
	free(o);
}

/* a ring window cut lanes: the open lists follow their events (a compare
 * list keeps its two ranks' parts), the selected ones kept, then are
 * listed again */
static void op_data(struct view *v)
{
	struct operators_view *o = (struct operators_view *)v;
	const struct app *a = v->app;
	if (!a->moved || !o->calls)
		return;
	size_t na = o->calls_n_ra < o->ncalls ? o->calls_n_ra : o->ncalls;
	size_t sel_a = o->sel < na ? o->sel : 0, sel_b = o->sel >= na ? o->sel - na : 0;
	size_t ka = ui_refs_move(a, o->calls, na, &sel_a);
	size_t kb = ui_refs_move(a, o->calls + na, o->ncalls - na, &sel_b);
	memmove(o->calls + ka, o->calls + na, kb * sizeof(*o->calls));
	if (o->calls_n_ra || o->calls_n_rb) {
		o->calls_n_ra = ka;
		o->calls_n_rb = kb;
	}
	o->sel = o->sel < na ? sel_a : ka + sel_b;
	o->ncalls = ka + kb;
	if (o->sel >= o->ncalls)
		o->sel = o->ncalls ? o->ncalls - 1 : 0;
	if (o->top > o->sel)
		o->top = o->sel;
	if (o->work)
		o->nwork = ui_refs_move(a, o->work, o->nwork, &o->wsel);
	if (o->wtop > o->wsel)
		o->wtop = o->wsel;
	/* listed again over what the store keeps (counts and totals with it) */
	if (o->mode)
		operators_view_calls_refresh(o);
}

static const struct view_ops op_ops = {
	.data = op_data,
	.help = op_help,
	.draw = op_draw,
	.key = op_key,
	.back = op_back,
	.free = op_free,
};

struct view *operators_view_new(struct app *a)
{
	struct operators_view *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->v.ops = &op_ops;
	o->v.app = a;
	o->st.sort_col = -1;
	return &o->v;
}
