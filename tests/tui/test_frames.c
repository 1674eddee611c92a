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
	return store_lane(s, &k);
}

static void add(struct gt_store *s, uint32_t lane, const char *name, int64_t t, int64_t d)
{
	struct gt_event e = { .start_ns = t, .dur_ns = d, .lane = lane, .kind = GT_EV_KERNEL,
			      .name = store_intern_cstr(s, name) };
	cr_assert_eq(store_add(s, &e), 0);
}

Test(frames, tiny_event_stays_visible)
{
	struct gt_store *s = store_new();
	uint32_t a = gpu_lane(s, 0, 7), b = gpu_lane(s, 0, 8);
	add(s, a, "long", 0, 1000);                      /* the capture spans 1 s */
	add(s, a, "end", 999999000, 1000);
	add(s, b, "tiny", 500000000, 1);                 /* 1 ns in the middle */
	cr_assert_eq(store_finish(s), 0);
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
	store_free(s);
}

Test(frames, goto_centres_and_describes_the_event)
{
	struct gt_store *s = store_new();
	uint32_t a = gpu_lane(s, 0, 7);
	add(s, a, "first", 0, 1000);
	add(s, a, "target_kernel", 123456000, 2000);      /* +123.456 ms, 2 us */
	add(s, a, "last", 400000000, 1000);
	cr_assert_eq(store_finish(s), 0);
	screen_open(120, 40);
	struct ui_source src = { .name = "planted", .store = s };
	struct app *ap = ui_app_new(&src);
	ui_frame(ap);
	tlview_goto(ui_page(ap, "Trace"), (struct gt_ref){ a, 1 });
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
	store_free(s);
}

/* every frame after a key equals the frame drawn from scratch */
static void cached_equals_fresh(int gpus, int w, int h)
{
	struct gt_store *s = store_new();
	struct sim_opts o = { .gpus = gpus, .steps = 6, .scenario = SIM_COMM_BOUND };
	char err[128];
	cr_assert_eq(sim_generate(&o, s, err, sizeof(err)), 0, "%s", err);
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
	store_free(s);
}

Test(frames, cached_frames_equal_fresh_frames)
{
	cached_equals_fresh(2, 130, 45);
}

/* 16 GPUs on a wide screen: whole rows are filled on two threads (tldraw.c
 * prefill), shifted rows on one; both must draw the same frame */
Test(frames, two_thread_rows_equal_one_thread_rows)
{
	cached_equals_fresh(16, 220, 70);
}
