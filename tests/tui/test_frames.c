/*
 * test_frames.c - whole frames of the viewer drawn on a curses screen that
 * writes to /dev/null, read back with winnwstr: planted events must show
 * (a 1 ns kernel in a 1 s capture still marks its column; an event jumped
 * to is centred and described at its planted start), and a frame built
 * from the row cache after pans and zooms must equal a frame computed from
 * scratch.
 */
#include <criterion/criterion.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>
#include "gtrace/sim.h"
#include "term.h"
#include "view.h"
#include "trace_view.h"
#include "core/store/store_priv.h"

static SCREEN *scr;
static FILE *fout, *fin;

static void screen_open(int w, int h)
{
	setlocale(LC_ALL, "C.UTF-8");
	term_caps.utf8 = 1;
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

/* the screen as UTF-8 text, rows separated by '\n' */
static char *screen_text(void)
{
	int rows, cols;
	getmaxyx(stdscr, rows, cols);
	size_t cap = (size_t)rows * ((size_t)cols * 4 + 1) + 1, n = 0;
	char *out = malloc(cap);
	cr_assert_not_null(out);
	wchar_t *w = calloc((size_t)cols + 1, sizeof(*w));
	for (int y = 0; y < rows; y++) {
		int k = mvwinnwstr(stdscr, y, 0, w, cols);
		for (int i = 0; i < k && w[i]; i++) {
			char mb[8];
			mbstate_t st;
			memset(&st, 0, sizeof(st));
			size_t l = wcrtomb(mb, w[i], &st);
			if (l != (size_t)-1 && n + l < cap) {
				memcpy(out + n, mb, l);
				n += l;
			}
		}
		out[n++] = '\n';
	}
	out[n] = 0;
	free(w);
	return out;
}

/* the line of the screen text holding `needle`, copied into buf */
static const char *line_with(const char *text, const char *needle, char *buf, size_t len)
{
	const char *p = strstr(text, needle);
	if (!p)
		return NULL;
	const char *b = p, *e = strchr(p, '\n');
	while (b > text && b[-1] != '\n')
		b--;
	snprintf(buf, len, "%.*s", (int)(e ? e - b : (long)strlen(b)), b);
	return buf;
}

static uint32_t gpu_lane(struct gt_store *s, int dev, int64_t stream)
{
	struct gt_lane_key k = { .type = GT_LANE_GPU, .rank = 0, .device = dev, .id = stream };
	return gt_store_lane(s, &k);
}

static void add(struct gt_store *s, uint32_t lane, const char *name, int64_t t, int64_t d)
{
	struct gt_event e = { .start_ns = t, .dur_ns = d, .lane = lane, .kind = GT_EV_KERNEL,
			      .name = gt_store_intern_cstr(s, name) };
	cr_assert_eq(gt_store_add(s, &e), 0);
}

Test(frames, tiny_event_stays_visible)
{
	struct gt_store *s = gt_store_new();
	uint32_t a = gpu_lane(s, 0, 7), b = gpu_lane(s, 0, 8);
	add(s, a, "long", 0, 1000);                      /* the capture spans 1 s */
	add(s, a, "end", 999999000, 1000);
	add(s, b, "tiny", 500000000, 1);                 /* 1 ns in the middle */
	cr_assert_eq(gt_store_finish(s), 0);
	screen_open(120, 40);
	struct ui_source src = { .name = "planted", .store = s };
	struct app *ap = ui_app_new(&src);
	cr_assert_not_null(ap);
	ui_frame(ap);
	char *txt = screen_text(), line[1024];
	/* lane rows: "stream 7", "stream 8"; each column is about 10 ms wide */
	cr_assert_not_null(line_with(txt, "stream 8", line, sizeof(line)), "%s", txt);
	int marks = 0;
	for (const char *p = line + 24; *p; p++)
		marks += (unsigned char)*p >= 0x80;      /* a block glyph */
	cr_expect_gt(marks, 0, "the 1 ns kernel vanished: '%s'", line);
	free(txt);
	ui_app_free(ap);
	screen_close();
	gt_store_free(s);
}

Test(frames, goto_centres_and_describes_the_event)
{
	struct gt_store *s = gt_store_new();
	uint32_t a = gpu_lane(s, 0, 7);
	add(s, a, "first", 0, 1000);
	add(s, a, "target_kernel", 123456000, 2000);      /* +123.456 ms, 2 us */
	add(s, a, "last", 400000000, 1000);
	cr_assert_eq(gt_store_finish(s), 0);
	screen_open(120, 40);
	struct ui_source src = { .name = "planted", .store = s };
	struct app *ap = ui_app_new(&src);
	ui_frame(ap);
	trace_view_goto(ui_page(ap, "Trace"), (struct gt_ref){ a, 1 });
	ui_frame(ap);
	char *txt = screen_text(), line[1024];
	cr_expect(strstr(txt, "[kernel] target_kernel") != NULL, "%s", txt);
	cr_expect(strstr(txt, "start +123.456ms  dur 2.00us  end +123.458ms") != NULL, "%s", txt);
	/* the event is drawn with its name across the middle of the lane */
	cr_assert_not_null(line_with(txt, " target_kernel", line, sizeof(line)));
	const char *p = strstr(line, " target_kernel");
	long col = p - line;
	cr_expect(col > 24 + 96 / 4 && col < 24 + 96 / 2, "not centred: column %ld in '%s'", col, line);
	free(txt);
	ui_app_free(ap);
	screen_close();
	gt_store_free(s);
}

/* every frame after a key equals the frame drawn from scratch */
static void cached_equals_fresh(int gpus, int w, int h)
{
	struct gt_store *s = gt_store_new();
	struct gt_sim_opts o = { .gpus = gpus, .steps = 6, .scenario = GT_SIM_COMM_BOUND };
	char err[128];
	cr_assert_eq(gt_sim_generate(&o, s, err, sizeof(err)), 0, "%s", err);
	screen_open(w, h);
	struct ui_source src = { .name = "sim", .store = s };
	struct app *ap = ui_app_new(&src);
	struct view *tv = ui_page(ap, "Trace");
	ui_frame(ap);
	static const int keys[] = { 'w', 'w', 'w', 'd', 'd', 'a', 'l', 'l', 'h', 'L', 'w', 'd', 's',
				    'a', 'a', 'o', 'd', 'O', 'j', 'j', 'd', 'f', 'd', 'a', KEY_END,
				    KEY_HOME, 'w', 'w', 'w', 'w', 'w', 'd', 'a' };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		tv->ops->key(tv, keys[i]);
		ui_frame(ap);
		char *cached = screen_text();
		tv->ops->data(tv);        /* drops every cached row */
		ui_frame(ap);
		char *fresh = screen_text();
		cr_assert_str_eq(cached, fresh, "after key %zu ('%c') the cached frame differs", i,
				 keys[i] < 128 ? keys[i] : '?');
		free(cached);
		free(fresh);
	}
	ui_app_free(ap);
	screen_close();
	gt_store_free(s);
}

Test(frames, cached_frames_equal_fresh_frames)
{
	cached_equals_fresh(2, 130, 45);
}

/* 16 GPUs on a wide screen: whole rows are filled on two threads (trace_draw.c
 * prefill), shifted rows on one; both must draw the same frame */
Test(frames, two_thread_rows_equal_one_thread_rows)
{
	cached_equals_fresh(16, 220, 70);
}

/* the ruler and lane rows of the screen (not the status line: it shows the
 * memory budget) */
static char *lane_rows(const struct trace_view *t)
{
	char *all = screen_text(), *p = all;
	for (int y = 0; y < t->lay.ruler.y && p; y++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	cr_assert_not_null(p);
	char *e = p;
	for (int y = t->lay.ruler.y; y < t->lay.cells.y + t->lay.cells.h && e; y++) {
		e = strchr(e, '\n');
		e = e ? e + 1 : NULL;
	}
	cr_assert_not_null(e);
	char *out = strndup(p, (size_t)(e - p));
	free(all);
	return out;
}

/* the frames of a key sequence that zooms in to single events and pans
 * there (with nesting rows expanded), for a store built by the simulator
 * with or without a 64 KiB budget; under the budget the cache file is
 * evicted from the page cache before every frame (the prefetch and the
 * coarse index at work) */
#define BKEYS 46
static void budget_frames(size_t budget, char **out)
{
	struct gt_store *s = gt_store_new();
	if (budget)
		cr_assert_eq(gt_store_set_budget(s, budget), 0);
	struct gt_sim_opts o = { .gpus = 2, .events = 200000, .scenario = GT_SIM_COMM_BOUND };
	char err[128];
	cr_assert_eq(gt_sim_generate(&o, s, err, sizeof(err)), 0, "%s", err);
	cr_assert(!budget || s->arena, "the cache file is engaged");
	size_t most = 0;
	for (uint32_t i = 0; i < gt_store_lane_count(s); i++)
		if (gt_store_lane_at(s, i)->n > most)
			most = gt_store_lane_at(s, i)->n;
	cr_assert(most > 4 * GT_LOD_TOP * GT_LOD_BLOCK, "lanes of several superblocks (%zu)", most);
	screen_open(160, 50);
	struct ui_source src = { .name = "sim", .store = s };
	struct app *ap = ui_app_new(&src);
	struct view *tv = ui_page(ap, "Trace");
	/* zoom in (w) to a microsecond a column and pan (a, d), folded (o) and
	 * unfolded (O), the host thread's nesting expanded (e), fit (f) */
	static const int keys[BKEYS] = { 'w', 'w', 'w', 'w', 'd', 'd', 'w', 'w', 'w', 'w', 'a', 'l',
					 'w', 'w', 'w', 'd', 'd', 'o', 'd', 'a', 'O', 'j', 'j', 'j',
					 'j', 'j', 'j', 'j', 'j', 'j', 'e', 'd', 'w', 'w', 'a', 'a',
					 'w', 'd', 'a', 's', 's', 'd', 'd', 'f', 'w', 'd' };
	for (size_t i = 0; i < BKEYS; i++) {
		tv->ops->key(tv, keys[i]);
		if (s->arena)
			store_arena_cold(s->arena);
		ui_frame(ap);
		out[i] = lane_rows((const struct trace_view *)tv);
		if (getenv("FRAMES_DUMP"))
			fprintf(stderr, "key %zu npc %lld\n%s\n", i,
				(long long)((const struct trace_view *)tv)->m.ns_per_col, out[i]);
	}
	ui_app_free(ap);
	screen_close();
	gt_store_free(s);
}

/* issue 16: zoomed in under a tiny memory budget, a cold cache file read
 * ahead by the frame, every frame equals the unbounded store's, cell by cell */
Test(frames, budget_frames_equal_unbounded_frames, .timeout = 240)
{
	setenv("GTRACE_STORE_TRIM_MS", "1", 1);
	char *u[BKEYS], *b[BKEYS];
	budget_frames(0, u);
	budget_frames(64 << 10, b);
	for (size_t i = 0; i < BKEYS; i++) {
		cr_assert_str_eq(b[i], u[i], "frame %zu differs under the budget", i);
		free(u[i]);
		free(b[i]);
	}
}

/* a step label at the right edge is drawn whole or not at all: step 133
 * starting in the last columns must never read "#1" (trial 2) */
Test(frames, step_label_never_truncated)
{
	struct gt_store *s = gt_store_new();
	struct gt_lane_key hk = { .type = GT_LANE_HOST, .rank = 0, .device = -1, .id = 1 };
	uint32_t h = gt_store_lane(s, &hk), a = gpu_lane(s, 0, 7);
	static const struct { const char *name; int64_t t0, t1; } st[] = {
		{ "ProfilerStep#131", 0, 400000000 }, { "ProfilerStep#132", 400000000, 970000000 },
		{ "ProfilerStep#133", 970000000, 1500000000 }, { "ProfilerStep#134", 1500000000, 2000000000 },
	};
	for (size_t i = 0; i < 4; i++) {
		struct gt_event e = { .start_ns = st[i].t0, .dur_ns = st[i].t1 - st[i].t0, .lane = h,
				      .kind = GT_EV_STEP, .name = gt_store_intern_cstr(s, st[i].name),
				      .arg = (uint64_t)(131 + i) };
		cr_assert_eq(gt_store_add(s, &e), 0);
	}
	add(s, a, "k", 0, 1000);
	add(s, a, "k", 1999999000, 1000);
	cr_assert_eq(gt_store_finish(s), 0);
	screen_open(120, 40);
	struct ui_source src = { .name = "planted", .store = s };
	struct app *ap = ui_app_new(&src);
	ui_frame(ap);
	/* the view ends at 1 s: step 133 starts in its last columns, 134 after */
	struct trace_view *t = (struct trace_view *)ui_page(ap, "Trace");
	layout_tmap_fit(&t->m, 0, 1000000000, t->m.cols);
	ui_frame(ap);
	char *txt = screen_text(), line[1024];
	cr_assert_not_null(line_with(txt, "steps", line, sizeof(line)), "%s", txt);
	cr_expect(strstr(line, "#131") && strstr(line, "#132"), "'%s'", line);
	/* every number drawn is a whole step number */
	for (const char *p = strchr(line, '#'); p; p = strchr(p + 1, '#'))
		cr_expect(!strncmp(p, "#131", 4) || !strncmp(p, "#132", 4) || !strncmp(p, "#133", 4),
			  "a cut step label: '%s'", line);
	free(txt);
	ui_app_free(ap);
	screen_close();
	gt_store_free(s);
}

/* the operators page grouped by shape or stack: a long key is cut in the
 * middle like the name column (both ends stay), and the plugin's "None"
 * (no stack recorded) shows as "-" (trial 2) */
Test(frames, grouped_keys_elided_in_the_middle)
{
	struct gt_table *t = gt_table_new("ops", "planted");
	cr_assert_eq(gt_table_col(t, "Call Stack", GT_COL_STR, 0), 0);
	cr_assert_eq(gt_table_col(t, "Calls", GT_COL_INT, 0), 1);
	cr_assert_eq(gt_table_col(t, "Name", GT_COL_STR, 0), 2);
	const char *stack = "/home/u/envs/lib/python3.8/site-packages/torch/nn/modules/conv.py(443): forward_END";
	cr_assert_eq(gt_table_row(t), 0);
	cr_assert_eq(gt_table_set_str(t, 0, 0, stack), 0);
	gt_table_set_int(t, 0, 1, 36);
	cr_assert_eq(gt_table_set_str(t, 0, 2, "aten::cudnn_convolution"), 0);
	cr_assert_eq(gt_table_row(t), 1);
	cr_assert_eq(gt_table_set_str(t, 1, 0, "None"), 0);
	gt_table_set_int(t, 1, 1, 318);
	cr_assert_eq(gt_table_set_str(t, 1, 2, "cudnn_batch_norm_backward"), 0);
	screen_open(120, 10);
	struct tables_state st = { .sort_col = -1 };
	size_t rows[2] = { 0, 1 };
	tables_draw(t, &st, (struct lrect){ 0, 0, 120, 5 }, rows, 2);
	char *txt = screen_text(), line[1024];
	cr_assert_not_null(line_with(txt, "aten::cudnn_convolution", line, sizeof(line)), "%s", txt);
	cr_expect(strstr(line, "/home/u/") && strstr(line, "forward_END") && strstr(line, "\u2026"),
		  "stack not cut in the middle: '%s'", line);
	cr_assert_not_null(line_with(txt, "cudnn_batch_norm_backward", line, sizeof(line)), "%s", txt);
	cr_expect(!strstr(line, "None") && !strncmp(line, "-  ", 3), "empty stack: '%s'", line);
	free(txt);
	screen_close();
	gt_table_free(t);
}
