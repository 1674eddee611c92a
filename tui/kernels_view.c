/*
 * kernels_view.c - the kernel statistics page: the "kernels", "memory" and "nccl"
 * report tables (all columns), sortable by any column, filtered by a name
 * regex, per GPU or all; Enter opens a row's instances (kernels_view_inst.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "term.h"
#include "kernels_view.h"

static const char *const tabs[KERNELS_VIEW_NTABS] = { "kernels", "memory", "nccl" };

static const char *const kv_help[] = {
	"j k  Up Down  PgUp PgDn  Home End   move",
	"Enter       instances of the row; Enter there: show it in the trace",
	"< >         sort column left / right     r  reverse the order",
	"h l  Left Right   scroll the columns     w  widen the name column (cycles)",
	"/           filter names (regex; empty clears)",
	"t           next table: kernels, memory, nccl",
	"G           next GPU (all, 0, 1, ...)",
	"instances:  d  by duration   T  by time   Esc  back to the table",
	NULL
};

/* drop the report output and the row filter */
static void free_table(struct kernels_view *k)
{
	gt_report_out_done(&k->out);
	memset(&k->out, 0, sizeof(k->out));
	k->tb = NULL;
	free(k->rows);
	k->rows = NULL;
	k->nrows = 0;
}

/* rows passing the filter, in table order */
static void refilter(struct kernels_view *k)
{
	free(k->rows);
	k->rows = NULL;
	k->nrows = 0;
	if (!k->tb)
		return;
	k->rows = malloc((k->tb->nrows ? k->tb->nrows : 1) * sizeof(*k->rows));
	if (!k->rows)
		return;
	int nc = tables_name_col(k->tb);
	for (size_t i = 0; i < k->tb->nrows; i++) {
		if (k->has_re && nc >= 0) {
			const union gt_cell *c = gt_table_cell(k->tb, i, (size_t)nc);
			char dm[512];
			const char *raw = c && c->s ? c->s : "";
			if (regexec(&k->re, raw, 0, NULL, 0) &&
			    regexec(&k->re, demangle_name(raw, dm, sizeof(dm)), 0, NULL, 0))
				continue;
		}
		k->rows[k->nrows++] = i;
	}
	tables_move(&k->st, k->nrows, 0);
}

/* the name of the selected row into buf ("" when none) */
static void sel_name(const struct kernels_view *k, char *buf, size_t len)
{
	buf[0] = 0;
	int nc = k->tb ? tables_name_col(k->tb) : -1;
	if (nc < 0 || k->st.sel >= k->nrows)
		return;
	const union gt_cell *c = gt_table_cell(k->tb, k->rows[k->st.sel], (size_t)nc);
	snprintf(buf, len, "%s", c && c->s ? c->s : "");
}

/* select the row named `name` (the first; the nccl table has several) */
static void select_name(struct kernels_view *k, const char *name)
{
	int nc = k->tb ? tables_name_col(k->tb) : -1;
	if (nc < 0 || !name[0])
		return;
	for (size_t i = 0; i < k->nrows; i++) {
		const union gt_cell *c = gt_table_cell(k->tb, k->rows[i], (size_t)nc);
		if (c && c->s && !strcmp(c->s, name)) {
			tables_move(&k->st, k->nrows, (long)i - (long)k->st.sel);
			return;
		}
	}
}

/* run the current tab's report for the GPU scope, sort, filter; a live
 * update keeps the selected row and an open instance list (reloaded) */
static void compute(struct kernels_view *k)
{
	ui_busy(k->v.app, "computing the kernel statistics...");
	char was[512];
	sel_name(k, was, sizeof(was));
	free_table(k);
	k->err[0] = 0;
	const struct gt_report *rep = gt_report_find(tabs[k->tab]);
	k->rep = rep;
	if (!rep) {
		snprintf(k->err, sizeof(k->err), "the '%s' report is not available in this build",
			 tabs[k->tab]);
		return;
	}
	struct gt_scope sc;
	gt_scope_all(&sc);
	sc.gpu = k->gpu;
	if (rep->run(k->v.app->store, &sc, &k->out, k->err, sizeof(k->err)) || !k->out.n) {
		if (!k->err[0])
			snprintf(k->err, sizeof(k->err), "%s: no table", tabs[k->tab]);
		gt_report_out_done(&k->out);
		memset(&k->out, 0, sizeof(k->out));
		return;
	}
	k->tb = k->out.tables[0];
	if (k->st.sort_col >= (int)k->tb->ncols)
		k->st.sort_col = -1;
	if (k->st.sort_col < 0) {
		k->st.sort_col = k->tb->sort_col;
		k->st.sort_desc = 1;
	}
	if (k->st.sort_col >= 0)
		gt_table_sort(k->tb, (size_t)k->st.sort_col, k->st.sort_desc);
	refilter(k);
	select_name(k, was);
	/* a live store moved on: the open instance list follows it in place */
	if (k->inst_open)
		kernels_view_inst_refresh(k);
}

/* 1 when lanes of more than one rank exist (G then scopes GPU n of each) */
static int several_ranks(const struct gt_store *s)
{
	int32_t first = -2;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		int32_t r = gt_store_lane_at(s, (uint32_t)i)->key.rank;
		r = r < 0 ? 0 : r;
		if (first == -2)
			first = r;
		else if (r != first)
			return 1;
	}
	return 0;
}

/* tabs line, table (or the instances page) and notes */
static void kv_draw(struct view *v, struct lrect r)
{
	struct kernels_view *k = (struct kernels_view *)v;
	if (ui_due(v))
		compute(k);
	if (k->inst_open) {
		kernels_view_inst_draw(k, r);
		return;
	}
	char g[32] = "all GPUs";
	if (k->gpu >= 0)
		snprintf(g, sizeof(g), "GPU %d%s", k->gpu, several_ranks(k->v.app->store) ?
			 " of every rank" : "");
	int x = r.x + 1;
	for (int i = 0; i < KERNELS_VIEW_NTABS; i++) {
		term_printf(r.y, x, r.w - x, theme_attr(i == k->tab ? TH_TAB_ON : TH_DIM), " %s ", tabs[i]);
		x += (int)strlen(tabs[i]) + 3;
	}
	term_printf(r.y, x + 1, r.w - x - 1, 0, "%s  |  %zu of %zu rows%s%s%s  |  Enter: instances",
		    g, k->nrows, k->tb ? k->tb->nrows : 0, k->has_re ? "  filter /" : "",
		    k->has_re ? k->filter : "", k->has_re ? "/" : "");
	if (r.h < 3)
		return;
	if (!k->tb) {
		term_put(r.y + 2, r.x + 1, r.w - 2, theme_attr(TH_WARN), k->err);
		return;
	}
	int notes = (int)k->tb->nnotes;
	if (notes > r.h / 4)
		notes = r.h / 4;
	/* the footer: the selected row's whole name (demangled), over two lines
	   when it needs them and the page has room */
	char raw[1024], full[1024];
	sel_name(k, raw, sizeof(raw));
	demangle_name(raw, full, sizeof(full));
	int fw = r.w - 8, foot = r.h >= 6 && full[0] ? 1 : 0;
	if (foot && (int)strlen(full) > fw && r.h >= 12)
		foot = 2;
	struct lrect tr = { r.x, r.y + 1, r.w, r.h - 1 - notes - foot };
	tables_draw(k->tb, &k->st, tr, k->rows, k->nrows);
	for (int i = 0; i < notes; i++)
		term_put(tr.y + tr.h + i, r.x + 1, r.w - 2, theme_attr(TH_DIM), k->tb->notes[i]);
	if (foot && fw > 0) {
		int y = tr.y + tr.h + notes;
		size_t n = strlen(full);
		term_printf(y, r.x + 1, r.w - 2, theme_attr(TH_HEADER), "name: %.*s",
			    foot == 2 && n > (size_t)fw ? fw : (int)n, full);
		if (foot == 2 && n > (size_t)fw)
			term_printf(y + 1, r.x + 7, r.w - 8, theme_attr(TH_HEADER), "%s", full + fw);
	}
}

/* the / prompt: compile the name filter (empty clears it) */
static void filter_done(struct view *v, const char *text)
{
	struct kernels_view *k = (struct kernels_view *)v;
	if (k->has_re)
		regfree(&k->re);
	k->has_re = 0;
	k->filter[0] = 0;
	if (*text) {
		int rc = regcomp(&k->re, text, REG_EXTENDED | REG_NOSUB | REG_ICASE);
		if (rc) {
			ui_msg(v->app, "bad regex '%s'", text);
		} else {
			k->has_re = 1;
			snprintf(k->filter, sizeof(k->filter), "%s", text);
		}
	}
	k->st.sel = k->st.top = 0;
	refilter(k);
}

/* the next device ordinal after cur with a GPU lane, -1 after the last */
static int next_gpu(const struct gt_store *s, int cur)
{
	int best = -1;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type == GT_LANE_GPU && l->key.device > cur &&
		    (best < 0 || l->key.device < best))
			best = l->key.device;
	}
	return best;
}

/* the table's keys (see kv_help); UI_* flags */
static int kv_key(struct view *v, int ch)
{
	struct kernels_view *k = (struct kernels_view *)v;
	if (k->inst_open)
		return kernels_view_inst_key(k, ch);
	int page = 10;
	switch (ch) {
	case KEY_UP: case 'k': tables_move(&k->st, k->nrows, -1); break;
	case KEY_DOWN: case 'j': tables_move(&k->st, k->nrows, 1); break;
	case KEY_PPAGE: tables_move(&k->st, k->nrows, -page); break;
	case KEY_NPAGE: tables_move(&k->st, k->nrows, page); break;
	case KEY_HOME: tables_move(&k->st, k->nrows, -(long)k->nrows); break;
	case KEY_END: tables_move(&k->st, k->nrows, (long)k->nrows); break;
	case KEY_LEFT: case 'h': if (k->st.left > 0) k->st.left--; break;
	case KEY_RIGHT: case 'l': if (k->tb && k->st.left + 1 < (int)k->tb->ncols) k->st.left++; break;
	case '<': case '>': case 'r':
		if (!k->tb)
			break;
		if (ch == 'r') {
			k->st.sort_desc = !k->st.sort_desc;
		} else {
			int n = (int)k->tb->ncols;
			k->st.sort_col = ((k->st.sort_col < 0 ? 0 : k->st.sort_col) + (ch == '>' ? 1 : n - 1)) % n;
			k->st.sort_desc = k->tb->cols[k->st.sort_col].type != GT_COL_STR;
		}
		gt_table_sort(k->tb, (size_t)k->st.sort_col, k->st.sort_desc);
		refilter(k);
		break;
	case '/': ui_prompt(v->app, v, "filter names (regex, empty clears): ", "", filter_done); break;
	case 'w':
		k->st.name_wide = (k->st.name_wide + 1) % 3;
		ui_msg(v->app, "name column: %s (w: %s)", k->st.name_wide == 0 ? "normal" :
		       k->st.name_wide == 1 ? "half the width" : "three quarters of the width",
		       k->st.name_wide == 2 ? "back to normal" : "wider");
		break;
	case 't':
		k->tab = (k->tab + 1) % KERNELS_VIEW_NTABS;
		k->st = (struct tables_state){ .sort_col = -1, .name_wide = k->st.name_wide };
		k->v.due.dirty = 1;
		break;
	case 'G':
		k->gpu = next_gpu(v->app->store, k->gpu);
		k->v.due.dirty = 1;
		break;
	case '\n': case '\r': case KEY_ENTER:
		kernels_view_inst_open(k);
		break;
	default:
		return UI_UNHANDLED;
	}
	return UI_HANDLED;
}

/* Esc: close instances, else clear the filter; 0 when neither */
static int kv_back(struct view *v)
{
	struct kernels_view *k = (struct kernels_view *)v;
	if (k->inst_open) {
		k->inst_open = 0;
		return 1;
	}
	if (k->has_re) {
		filter_done(v, "");
		return 1;
	}
	return 0;
}

/* free the page */
static void kv_free(struct view *v)
{
	struct kernels_view *k = (struct kernels_view *)v;
	free_table(k);
	if (k->has_re)
		regfree(&k->re);
	free(k->inst);
	free(k);
}

/* a ring window cut lanes: the open instance list follows its events
 * (the selected one kept), then is listed again over what the store keeps,
 * its count, totals and histogram with it */
static void kv_data(struct view *v)
{
	struct kernels_view *k = (struct kernels_view *)v;
	if (!v->app->moved)
		return;
	k->ninst = ui_refs_move(v->app, k->inst, k->ninst, &k->inst_sel);
	if (k->inst_top > k->inst_sel)
		k->inst_top = k->inst_sel;
	if (k->inst_open)
		kernels_view_inst_refresh(k);
}

static const struct view_ops kv_ops = {
	.data = kv_data,
	.help = kv_help,
	.draw = kv_draw,
	.key = kv_key,
	.back = kv_back,
	.free = kv_free,
};

struct view *kernels_view_new(struct app *a)
{
	struct kernels_view *k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->v.ops = &kv_ops;
	k->v.app = a;
	k->gpu = -1;
	k->st.sort_col = -1;
	return &k->v;
}
