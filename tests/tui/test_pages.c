/*
 * test_pages.c - the viewer built from pages_table: the tab bar, the help
 * line and the number keys list exactly the table's pages, in its order;
 * the one recompute throttle every analysis page uses (ui_due); a report
 * shown as a table page from one line (report_page); and the trace view's step
 * marks from the analyses' steps on captures without GT_EV_STEP spans
 * (NVTX-only, inferred).  Frames are drawn on a curses screen writing to
 * /dev/null and read back.
 */
#include <criterion/criterion.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include "term.h"
#include "view.h"
#include "kernels_view.h"
#include "operators_view.h"
#include "trace_view.h"

static SCREEN *scr;
static FILE *fout, *fin;

static void screen_open(int w, int h)
{
	setlocale(LC_ALL, "C.UTF-8");
	term_caps.utf8 = 0;
	fout = fopen("/dev/null", "w");
	fin = fopen("/dev/null", "r");
	scr = newterm("xterm-256color", fout, fin);
	cr_assert_not_null(scr, "no terminfo for xterm-256color");
	set_term(scr);
	resizeterm(h, w);
	theme_init();
}

static void screen_close(void)
{
	endwin();
	delscreen(scr);
	fclose(fout);
	fclose(fin);
}

/* row y of the screen as text (ASCII frames) */
static void row_text(int y, char *buf, int len)
{
	int n = mvwinnstr(stdscr, y, 0, buf, len - 1);
	buf[n < 0 ? 0 : n] = 0;
}

/* 1 when some row of the screen contains s */
static int screen_has(const char *s)
{
	char line[512];
	for (int y = 0; y < getmaxy(stdscr); y++) {
		row_text(y, line, sizeof(line));
		if (strstr(line, s))
			return 1;
	}
	return 0;
}

static uint32_t lane(struct gt_store *s, int type, int dev, int64_t id)
{
	struct gt_lane_key k = { .type = (uint8_t)type, .rank = 0, .device = dev, .pid = 1, .id = id };
	uint32_t l = gt_store_lane(s, &k);
	cr_assert_neq(l, UINT32_MAX);
	return l;
}

static void add(struct gt_store *s, uint32_t l, int kind, const char *name, int64_t t0, int64_t t1)
{
	struct gt_event e = { .start_ns = t0, .dur_ns = t1 - t0, .lane = l, .kind = (uint8_t)kind,
			      .name = gt_store_intern_cstr(s, name) };
	cr_assert_eq(gt_store_add(s, &e), 0);
}

/* a small capture: three kernels on one stream */
static struct gt_store *kernels_store(void)
{
	struct gt_store *s = gt_store_new();
	uint32_t g = lane(s, GT_LANE_GPU, 0, 7);
	add(s, g, GT_EV_KERNEL, "small_k", 0, 1000);
	add(s, g, GT_EV_KERNEL, "big_k", 2000, 9000);
	add(s, g, GT_EV_KERNEL, "mid_k", 10000, 13000);
	cr_assert_eq(gt_store_finish(s), 0);
	return s;
}

Test(pages, tab_bar_help_and_number_keys_list_the_table)
{
	cr_assert(pages_count >= 1 && pages_count <= PAGES_MAX);
	struct gt_store *s = kernels_store();
	screen_open(200, 40);
	struct ui_source src = { .name = "planted", .store = s };
	struct app *ap = ui_app_new(&src);
	cr_assert_not_null(ap);
	cr_assert_eq(ap->nviews, (int)pages_count);
	ui_frame(ap);
	/* the tab bar: tab i at column i * w reads " i+1 NAME", nothing after the last */
	char tabs[512], want[64];
	row_text(0, tabs, sizeof(tabs));
	int w = status_tab_w(200);
	for (size_t i = 0; i < pages_count; i++) {
		snprintf(want, sizeof(want), " %zu %s", i + 1, pages_table[i].name);
		cr_expect(!strncmp(tabs + i * (size_t)w, want, strlen(want)), "tab %zu: want '%s' in '%s'",
			  i, want, tabs);
	}
	snprintf(want, sizeof(want), " %zu ", pages_count + 1);
	cr_expect(!strstr(tabs, want), "a tab beyond the table: '%s'", tabs);
	/* the help box: "1-N ... switch view (a, b, ...)" with exactly the table's names */
	keys_global(ap, '?');
	ui_frame(ap);
	char line[512];
	const char *list = NULL;
	for (int y = 0; y < 40 && !list; y++) {
		row_text(y, line, sizeof(line));
		list = strstr(line, "switch view (");
	}
	cr_assert_not_null(list, "no page line in the help box");
	char *p = strstr(line, "1-");
	cr_assert_not_null(p);
	cr_expect_eq(strtol(p + 2, NULL, 10), (long)pages_count);
	char names[400];
	snprintf(names, sizeof(names), "%s", strchr(list, '(') + 1);
	cr_assert_not_null(strchr(names, ')'));
	*strchr(names, ')') = 0;
	size_t n = 0;
	for (char *tok = strtok(names, ", "); tok; tok = strtok(NULL, ", "), n++) {
		cr_assert_lt(n, pages_count, "the help lists more pages than the table: %s", tok);
		cr_expect(!strcasecmp(tok, pages_table[n].name), "help page %zu: '%s', table '%s'", n,
			  tok, pages_table[n].name);
	}
	cr_expect_eq(n, pages_count);
	keys_global(ap, '?');
	/* number keys: i + 1 focuses page i, the key after the last does nothing */
	for (size_t i = pages_count; i-- > 0;) {
		cr_expect_eq(keys_global(ap, '1' + (int)i), UI_HANDLED);
		cr_expect_eq(ap->cur, (int)i);
		cr_expect_eq(ui_page(ap, pages_table[i].name), ap->views[i]);
	}
	if (pages_count < 9)
		cr_expect_eq(keys_global(ap, '1' + (int)pages_count), UI_UNHANDLED);
	cr_expect_null(ui_page(ap, "no such page"));
	ui_app_free(ap);
	screen_close();
	gt_store_free(s);
}

Test(pages, one_throttle_for_every_page)
{
	struct gt_store *s = kernels_store();
	screen_open(120, 30);
	struct ui_source src = { .name = "planted", .store = s };
	struct app *ap = ui_app_new(&src);
	cr_assert_not_null(ap);
	for (int i = 0; i < ap->nviews; i++) {
		struct view *v = ap->views[i];
		cr_expect_eq(ui_due(v), 1, "page %d does not start dirty", i);
		cr_expect_eq(ui_due(v), 0, "page %d: due twice", i);
		v->due.stale = 1;                       /* the store changed just now */
		cr_expect_eq(ui_due(v), 0, "page %d: recomputed before UI_RECOMPUTE_MS", i);
		v->due.computed_ms -= UI_RECOMPUTE_MS + 1;
		ap->paused = 1;
		cr_expect_eq(ui_due(v), 0, "page %d: recomputed while paused", i);
		ap->paused = 0;
		cr_expect_eq(ui_due(v), 1, "page %d: stale and due, not recomputed", i);
		v->due.dirty = 1;                       /* a key asked: at once, even paused */
		ap->paused = 1;
		cr_expect_eq(ui_due(v), 1);
		ap->paused = 0;
	}
	ui_app_free(ap);
	screen_close();
	gt_store_free(s);
}

/* an allocator record of GPU 0 on host lane l: +bytes (a free: negative) */
static void alloc_rec(struct gt_store *s, uint32_t l, int64_t t, int64_t bytes)
{
	struct gt_event e = { .start_ns = t, .lane = l, .kind = GT_EV_INSTANT,
			      .flags = GT_EVF_MEMORY, .arg = (uint64_t)bytes, .aux = 0,
			      .name = gt_store_intern_cstr(s, "[memory]") };
	cr_assert_eq(gt_store_add(s, &e), 0);
}

/* the overview's memory row of r0 GPU0: its peak in MiB, -1 when not shown */
static long mem_row_mib(void)
{
	char line[512];
	for (int y = 0; y < getmaxy(stdscr); y++) {
		row_text(y, line, sizeof(line));
		char *p = strstr(line, "mem r0 GPU0");
		if (p)
			return strtol(p + strlen("mem r0 GPU0"), NULL, 10);
	}
	return -1;
}

/* the overview's memory sparklines recompute when the page's one throttle
 * (ui_due) says so, not on a clock of their own: a store grown to a higher
 * peak shows the old peak until UI_RECOMPUTE_MS have passed by the page's
 * own due.computed_ms, not while paused, and the new one then */
Test(pages, overview_memory_rows_follow_the_page_throttle)
{
	struct gt_store *s = gt_store_new();
	uint32_t g = lane(s, GT_LANE_GPU, 0, 7), h = lane(s, GT_LANE_HOST, 0, 1);
	add(s, g, GT_EV_KERNEL, "k", 0, 5000000);
	alloc_rec(s, h, 1000, 100ll << 20);       /* 100 MiB, then freed */
	alloc_rec(s, h, 2000000, -(100ll << 20));
	cr_assert_eq(gt_store_finish(s), 0);
	screen_open(200, 60);
	struct ui_source src = { .name = "planted", .store = s };
	struct app *ap = ui_app_new(&src);
	cr_assert_not_null(ap);
	ui_show(ap, "Overview");
	struct view *v = ui_page(ap, "Overview");
	cr_assert_not_null(v);
	ui_frame(ap);
	cr_assert_eq(mem_row_mib(), 100, "first frame: want a 100 MiB peak, got %ld", mem_row_mib());
	/* the store grows (a live update): a 300 MiB allocation at the end */
	alloc_rec(s, h, 6000000, 300ll << 20);
	add(s, g, GT_EV_KERNEL, "k", 6000000, 7000000);
	cr_assert_eq(gt_store_finish(s), 0);
	v->due.stale = 1;                         /* as ui.c marks every page */
	ui_frame(ap);
	cr_expect_eq(mem_row_mib(), 100, "recomputed before the page was due");
	v->due.computed_ms -= UI_RECOMPUTE_MS + 1;
	ap->paused = 1;
	ui_frame(ap);
	cr_expect_eq(mem_row_mib(), 100, "recomputed while paused");
	ap->paused = 0;
	ui_frame(ap);
	cr_expect_eq(mem_row_mib(), 300, "due and not recomputed: %ld MiB", mem_row_mib());
	ui_app_free(ap);
	screen_close();
	gt_store_free(s);
}

Test(pages, a_report_as_a_table_page_in_one_line)
{
	static const struct page_def def = { "Kernel table", NULL, "kernels" };
	struct gt_store *s = kernels_store();
	screen_open(160, 30);
	struct ui_source src = { .name = "planted", .store = s };
	struct app *ap = ui_app_new(&src);
	cr_assert_not_null(ap);
	struct view *v = report_page_new(ap, &def);
	cr_assert_not_null(v);
	v->due.dirty = 1;
	erase();
	v->ops->draw(v, (struct lrect){ 0, 1, 160, 28 });
	cr_expect(screen_has("3 of 3 rows"), "no row count");
	cr_expect(screen_has("Total Time"), "no kernels table header");
	/* the first numeric column, largest first: big_k (7 us), mid_k, small_k */
	int yb = -1, ym = -1, ys = -1;
	char line[512];
	for (int y = 0; y < 30; y++) {
		row_text(y, line, sizeof(line));
		yb = strstr(line, "big_k") && yb < 0 ? y : yb;
		ym = strstr(line, "mid_k") && ym < 0 ? y : ym;
		ys = strstr(line, "small_k") && ys < 0 ? y : ys;
	}
	cr_expect(yb > 0 && yb < ym && ym < ys, "rows big %d mid %d small %d", yb, ym, ys);
	/* the name filter */
	v->ops->key(v, '/');
	cr_assert(ap->prompting);
	ap->prompt_done(v, "mid");
	ap->prompting = 0;
	erase();
	v->ops->draw(v, (struct lrect){ 0, 1, 160, 28 });
	cr_expect(screen_has("1 of 3 rows"), "filter not applied");
	cr_expect_eq(v->ops->back(v), 1);
	v->ops->free(v);
	ui_app_free(ap);
	screen_close();
	gt_store_free(s);
}

/* the trace view's "steps" row: the number of "#N" labels, the first N
 * (the first frame asks for a second one, which finds the steps) */
static int step_marks(struct app *ap, long *first)
{
	ui_show(ap, "Trace");
	ui_frame(ap);
	cr_expect(ap->again, "the first frame asks for no second one");
	ui_frame(ap);
	char line[512];
	for (int y = 0; y < getmaxy(stdscr); y++) {
		row_text(y, line, sizeof(line));
		if (strncmp(line, "steps", 5))
			continue;
		int n = 0;
		for (char *p = strchr(line, '#'); p; p = strchr(p + 1, '#'), n++)
			if (!n)
				*first = strtol(p + 1, NULL, 10);
		return n;
	}
	return -1;
}

/* NVTX ranges "train_step 4".."train_step 7", no GT_EV_STEP: four marks #4..#7, Z zooms */
Test(pages, trace_step_marks_from_nvtx_only_steps)
{
	struct gt_store *s = gt_store_new();
	uint32_t h = lane(s, GT_LANE_HOST, -1, 1), g = lane(s, GT_LANE_GPU, 0, 7);
	const int64_t ms = 1000000;
	for (int i = 0; i < 4; i++) {
		char nm[32];
		snprintf(nm, sizeof(nm), "train_step %d", 4 + i);
		add(s, h, GT_EV_NVTX, nm, i * 100 * ms, (i + 1) * 100 * ms);
		add(s, g, GT_EV_KERNEL, "k", i * 100 * ms + 10 * ms, i * 100 * ms + 60 * ms);
	}
	cr_assert_eq(gt_store_finish(s), 0);
	screen_open(160, 30);
	struct ui_source src = { .name = "planted", .store = s };
	struct app *ap = ui_app_new(&src);
	long first = -1;
	cr_expect_eq(step_marks(ap, &first), 4);
	cr_expect_eq(first, 4);
	struct view *tv = ui_page(ap, "Trace");
	tv->ops->key(tv, 'Z');
	cr_expect(!strstr(ap->msg, "no step"), "Z found no step: %s", ap->msg);
	ui_app_free(ap);
	screen_close();
	gt_store_free(s);
}

/* no annotation and no NVTX: the kernel sequence A B C repeats 4 times then
 * a partial A (1 < 80 % of 3: cut off): four inferred steps, four marks */
Test(pages, trace_step_marks_from_inferred_steps)
{
	struct gt_store *s = gt_store_new();
	uint32_t g = lane(s, GT_LANE_GPU, 0, 7);
	const char *seq[] = { "A", "B", "C" };
	const int64_t ms = 1000000;
	for (int i = 0; i < 13; i++)
		add(s, g, GT_EV_KERNEL, seq[i % 3], i * 10 * ms, i * 10 * ms + 5 * ms);
	cr_assert_eq(gt_store_finish(s), 0);
	screen_open(160, 30);
	struct ui_source src = { .name = "planted", .store = s };
	struct app *ap = ui_app_new(&src);
	long first = -1;
	cr_expect_eq(step_marks(ap, &first), 4);
	ui_app_free(ap);
	screen_close();
	gt_store_free(s);
}

/* trial 5: at 160 columns a multi-node status line was cut at the ", "
 * inside the clock's parentheses ("... vs nodeA (512 collectives"): the
 * state is cut only between its parts, never inside (...) */
Test(pages, status_line_never_cut_inside_parentheses)
{
	struct gt_store *s = kernels_store();
	screen_open(160, 30);
	struct ui_source src = { .name = "2 nodes", .store = s };
	struct app *ap = ui_app_new(&src);
	cr_assert_not_null(ap);
	snprintf(ap->src_status, sizeof(ap->src_status), "nodes: 2 receiving, 90k ev/s, 270k events, "
		 "0 lost, mem 15.3M/1.0G | clock: nodeB +3.000 ms vs nodeA (512 collectives, "
		 "+-0.000 ms; not applied)");
	for (int w = 60; w <= 160; w++) {
		erase();
		status_draw(ap, (struct lrect){ 0, 0, w, 1 });
		char line[512];
		row_text(0, line, sizeof(line));
		int depth = 0;
		for (char *c = line; *c; c++)
			depth += *c == '(' ? 1 : *c == ')' ? -1 : 0;
		cr_assert_eq(depth, 0, "%d columns: '%s'", w, line);
		if (w == 160)
			cr_assert(strstr(line, "nodes: 2 receiving"), "'%s'", line);
	}
	ui_app_free(ap);
	screen_close();
	gt_store_free(s);
}

/* a live store with --ring cuts each lane's front (gt_store_drop_before):
 * the pages' references move with their events.  Planted: kernels k at
 * 1000 k ns (k = 0..99) on one stream, "long_k" on even k (700 ns) and
 * "short_k" on odd k (300 ns).  The trace view's pinned selection (kernel
 * 60) and the Kernels page's open instance list of long_k (50 events,
 * kernel 80 selected) name the same events after a cut at 30500 ns, the
 * 16 long_k cut are gone from the list, and a selection on a cut kernel
 * (10) is dropped rather than left naming another event */
Test(pages, ring_cut_moves_the_pages_references)
{
	struct gt_store *s = gt_store_new();
	uint32_t g = lane(s, GT_LANE_GPU, 0, 7);
	for (int k = 0; k < 100; k++)
		add(s, g, GT_EV_KERNEL, k % 2 ? "short_k" : "long_k", 1000LL * k,
		    1000LL * k + (k % 2 ? 300 : 700));
	cr_assert_eq(gt_store_finish(s), 0);
	screen_open(120, 30);
	struct ui_source src = { .name = "planted", .store = s };
	struct app *ap = ui_app_new(&src);
	cr_assert_not_null(ap);
	struct trace_view *t = (struct trace_view *)ui_page(ap, "Trace");
	struct kernels_view *kv = (struct kernels_view *)ui_page(ap, "Kernels");
	cr_assert(t && kv);
	trace_view_goto(&t->v, (struct gt_ref){ g, 60 });
	cr_assert(t->has_sel && t->pinned);
	for (int i = 0; i < ap->nviews; i++)
		if (ap->views[i] == &kv->v)
			ui_switch(ap, i);
	ui_frame(ap);
	cr_assert_eq(kv->v.ops->key(&kv->v, '\n'), UI_HANDLED);
	ui_frame(ap);
	cr_assert(kv->inst_open);
	cr_assert_eq(kv->ninst, 50, "%zu instances of long_k", kv->ninst);
	size_t sel = SIZE_MAX;
	for (size_t i = 0; i < kv->ninst; i++)
		if (gt_store_ev(s, kv->inst[i])->start_ns == 80000)
			sel = i;
	cr_assert_neq(sel, SIZE_MAX);
	kv->inst_sel = sel;

	cr_assert_eq(gt_store_drop_before(s, 30500, 0, NULL), 0);
	ui_data_changed(ap);
	cr_assert(t->has_sel);
	cr_assert_eq(gt_store_ev(s, t->sel)->start_ns, 60000);
	cr_assert_eq(kv->ninst, 34);
	for (size_t i = 0; i < kv->ninst; i++) {
		const struct gt_event *e = gt_store_ev(s, kv->inst[i]);
		cr_assert(e->start_ns >= 30500 && e->dur_ns == 700 && e->start_ns % 2000 == 0,
			  "instance %zu: start %lld dur %lld", i, (long long)e->start_ns, (long long)e->dur_ns);
	}
	cr_assert_eq(gt_store_ev(s, kv->inst[kv->inst_sel])->start_ns, 80000);
	cr_assert_eq(kv->inst_total_ns, 34 * 700, "the list's total: %lld", (long long)kv->inst_total_ns);

	/* a selection on an event the next cut takes */
	trace_view_goto(&t->v, (struct gt_ref){ g, 10 });   /* kernel 41 now */
	cr_assert_eq(gt_store_ev(s, t->sel)->start_ns, 41000);
	cr_assert_eq(gt_store_drop_before(s, 50500, 0, NULL), 0);
	ui_data_changed(ap);
	cr_assert(!t->has_sel || gt_store_ev(s, t->sel)->start_ns == 41000,
		  "the selection names another event");
	cr_assert(!t->pinned);
	ui_frame(ap);
	ui_app_free(ap);
	screen_close();
	gt_store_free(s);
}

/* the same for the Operators page's open list of calls: aten::mm at
 * 1000 k ns (k = 0..59, 400 ns), call 45 selected; a cut at 20500 ns
 * leaves calls 21..59 listed, call 45 still selected */
Test(pages, ring_cut_moves_the_operator_calls)
{
	struct gt_store *s = gt_store_new();
	uint32_t h = lane(s, GT_LANE_HOST, -1, 11);
	for (int k = 0; k < 60; k++)
		add(s, h, GT_EV_CPU_OP, "aten::mm", 1000LL * k, 1000LL * k + 400);
	cr_assert_eq(gt_store_finish(s), 0);
	screen_open(120, 30);
	struct ui_source src = { .name = "planted", .store = s };
	struct app *ap = ui_app_new(&src);
	cr_assert_not_null(ap);
	struct operators_view *o = (struct operators_view *)ui_page(ap, "Operators");
	cr_assert_not_null(o);
	for (int i = 0; i < ap->nviews; i++)
		if (ap->views[i] == &o->v)
			ui_switch(ap, i);
	ui_frame(ap);
	cr_assert_eq(o->v.ops->key(&o->v, '\n'), UI_HANDLED);
	ui_frame(ap);
	cr_assert_eq(o->mode, 1);
	cr_assert_eq(o->ncalls, 60);
	for (size_t i = 0; i < o->ncalls; i++)
		if (gt_store_ev(s, o->calls[i])->start_ns == 45000)
			o->sel = i;
	cr_assert_eq(gt_store_ev(s, o->calls[o->sel])->start_ns, 45000);
	cr_assert_eq(gt_store_drop_before(s, 20500, 0, NULL), 0);
	ui_data_changed(ap);
	cr_assert_eq(o->ncalls, 39);
	for (size_t i = 0; i < o->ncalls; i++)
		cr_assert_geq(gt_store_ev(s, o->calls[i])->start_ns, 21000);
	cr_assert_eq(gt_store_ev(s, o->calls[o->sel])->start_ns, 45000);
	cr_assert_eq(o->calls_total_ns, 39 * 400, "the list's total: %lld", (long long)o->calls_total_ns);
	ui_frame(ap);
	ui_app_free(ap);
	screen_close();
	gt_store_free(s);
}

/* count of screen cells drawn as events (block glyphs or '#' in ASCII) in
 * rows [y0, y1) from column x0 */
static int drawn_cells(int y0, int y1, int x0)
{
	int n = 0;
	for (int y = y0; y < y1; y++) {
		char line[512];
		row_text(y, line, sizeof(line));
		for (int x = x0; line[x]; x++)
			n += line[x] != ' ' && line[x] != '|';
	}
	return n;
}

/* a ring cut under an expanded host thread (its depth rows rebuilt): every
 * row still draws its events */
Test(pages, ring_cut_with_depth_rows_draws_every_row)
{
	struct gt_store *s = gt_store_new();
	uint32_t g = lane(s, GT_LANE_GPU, 0, 7);
	uint32_t h = lane(s, GT_LANE_HOST, -1, 11);
	for (int k = 0; k < 200; k++) {
		add(s, g, GT_EV_KERNEL, "kern", 1000LL * k, 1000LL * k + 800);
		add(s, h, GT_EV_CPU_OP, "outer", 1000LL * k, 1000LL * k + 900);
		add(s, h, GT_EV_CPU_OP, "inner", 1000LL * k + 100, 1000LL * k + 600);
	}
	cr_assert_eq(gt_store_finish(s), 0);
	screen_open(120, 30);
	struct ui_source src = { .name = "planted", .store = s };
	struct app *ap = ui_app_new(&src);
	struct trace_view *t = (struct trace_view *)ui_page(ap, "Trace");
	ui_frame(ap);
	/* the host thread's row: expand it */
	for (size_t r = 0; r < t->L.nvis; r++)
		if (t->L.all[t->L.vis[r]].kind == LROW_LANE && t->L.all[t->L.vis[r]].lane == h)
			t->row = r;
	cr_assert_eq(t->v.ops->key(&t->v, 'e'), UI_HANDLED);
	ui_frame(ap);
	int before = drawn_cells(2, 29, 30);
	cr_assert_gt(before, 100);
	cr_assert_eq(gt_store_drop_before(s, 100500, 0, NULL), 0);
	ui_data_changed(ap);
	cr_assert_eq(t->v.ops->key(&t->v, 'f'), UI_HANDLED);
	ui_frame(ap);
	int after = drawn_cells(2, 29, 30);
	cr_assert_gt(after, before / 2, "%d cells drawn after the cut, %d before", after, before);
	ui_app_free(ap);
	screen_close();
	gt_store_free(s);
}

/* a store cut before the viewer was made (the pages' references are taken
 * over it as it is): the next cut moves them by its own count only */
Test(pages, store_cut_before_the_viewer_moves_refs_by_later_cuts_only)
{
	struct gt_store *s = gt_store_new();
	uint32_t g = lane(s, GT_LANE_GPU, 0, 7);
	for (int k = 0; k < 100; k++)
		add(s, g, GT_EV_KERNEL, "kern", 1000LL * k, 1000LL * k + 500);
	cr_assert_eq(gt_store_finish(s), 0);
	cr_assert_eq(gt_store_drop_before(s, 20500, 0, NULL), 0);   /* kernels 0..20 */
	screen_open(120, 30);
	struct ui_source src = { .name = "planted", .store = s };
	struct app *ap = ui_app_new(&src);
	struct trace_view *t = (struct trace_view *)ui_page(ap, "Trace");
	trace_view_goto(&t->v, (struct gt_ref){ g, 40 });   /* kernel 61 */
	cr_assert_eq(gt_store_ev(s, t->sel)->start_ns, 61000);
	cr_assert_eq(gt_store_drop_before(s, 30500, 0, NULL), 0);   /* kernels 21..30 */
	ui_data_changed(ap);
	cr_assert(t->has_sel);
	cr_assert_eq(gt_store_ev(s, t->sel)->start_ns, 61000);
	ui_app_free(ap);
	screen_close();
	gt_store_free(s);
}
