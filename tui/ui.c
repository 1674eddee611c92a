/*
 * ui.c - the viewer's main loop: terminal set-up, one frame drawn per
 * change, keys routed prompt -> focused view -> global table, KEY_RESIZE
 * handled here only, live sources polled between frames.
 */
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "term.h"
#include "view.h"

void ui_prompt(struct app *a, struct view *v, const char *label, const char *init,
	       prompt_done_fn done)
{
	a->prompting = 1;
	snprintf(a->prompt_label, sizeof(a->prompt_label), "%s", label);
	snprintf(a->prompt_buf, sizeof(a->prompt_buf), "%s", init ? init : "");
	a->prompt_len = strlen(a->prompt_buf);
	a->prompt_view = v;
	a->prompt_done = done;
}

void ui_msg(struct app *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->msg, sizeof(a->msg), fmt, ap);
	va_end(ap);
}

double ui_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int ui_due(struct view *v)
{
	struct view_due *d = &v->due;
	if (!d->dirty && !(d->stale && !v->app->paused &&
			   ui_now_ms() - d->computed_ms >= UI_RECOMPUTE_MS))
		return 0;
	d->dirty = d->stale = 0;
	d->computed_ms = ui_now_ms();
	return 1;
}

void ui_busy(struct app *a, const char *msg)
{
	(void)a;
	int rows, cols;
	getmaxyx(stdscr, rows, cols);
	if (rows < 1 || cols < 1)
		return;
	/* a window of its own over the status line: the frame being built in
	 * stdscr (erased, not drawn yet) is not shown, the old frame stays up */
	WINDOW *w = newwin(1, cols, rows - 1, 0);
	if (!w)
		return;
	wbkgdset(w, ' ' | theme_attr(TH_SELECT));
	werase(w);
	wattrset(w, theme_attr(TH_SELECT));
	mvwaddnstr(w, 0, 1, msg, cols - 2);
	wrefresh(w);
	delwin(w);
}

void ui_switch(struct app *a, int view)
{
	if (view < 0 || view >= a->nviews || view == a->cur)
		return;
	a->prev = a->cur;
	a->cur = view;
	a->help = 0;
}

/* the index of the page called name, -1 when none */
static int page_index(const struct app *a, const char *name)
{
	for (int i = 0; i < a->nviews; i++)
		if (!strcasecmp(pages_table[i].name, name))
			return i;
	return -1;
}

struct view *ui_page(struct app *a, const char *name)
{
	int i = page_index(a, name);
	return i < 0 ? NULL : a->views[i];
}

struct view *ui_show(struct app *a, const char *name)
{
	int i = page_index(a, name);
	if (i < 0)
		return NULL;
	ui_switch(a, i);
	return a->views[i];
}

/* keys while the prompt is open; returns 1 when consumed */
static void prompt_key(struct app *a, int ch)
{
	if (ch == 27) {
		a->prompting = 0;
		return;
	}
	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		a->prompting = 0;
		a->prompt_buf[a->prompt_len] = 0;
		if (a->prompt_done)
			a->prompt_done(a->prompt_view, a->prompt_buf);
		return;
	}
	if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (a->prompt_len)
			a->prompt_buf[--a->prompt_len] = 0;
		return;
	}
	if (ch == 21) { /* ^U */
		a->prompt_len = 0;
		a->prompt_buf[0] = 0;
		return;
	}
	if (ch >= 32 && ch < 127 && a->prompt_len + 1 < sizeof(a->prompt_buf)) {
		a->prompt_buf[a->prompt_len++] = (char)ch;
		a->prompt_buf[a->prompt_len] = 0;
	}
}

/* one help line wrapped to w columns (continuations indented 4, broken at
 * a space when there is one); draws its rows from y while y < ymax when
 * draw, returns the rows it takes */
static int help_line(int y, int x, int w, int ymax, attr_t at, const char *s, int draw)
{
	int rows = 0, ind = 0;
	char buf[256];
	if (w < 1)
		return 1;
	while (*s) {
		int room = w - ind, n = (int)strlen(s);
		if (room < 8)
			room = w, ind = 0;
		if (n > room) {
			int cut = room;
			while (cut > room / 2 && s[cut] != ' ')
				cut--;
			n = s[cut] == ' ' ? cut : room;
		}
		if (draw && y + rows < ymax) {
			snprintf(buf, sizeof(buf), "%*s%.*s", ind, "", n, s);
			term_put(y + rows, x, w, at, buf);
		}
		rows++;
		s += n;
		while (*s == ' ')
			s++;
		ind = 4;
	}
	return rows ? rows : 1;
}

/* the `?` box: the focused view's keys, then the global ones; as wide as
 * its longest line allows on the terminal, lines wrapped to it */
static void help_overlay(struct app *a, struct lrect area)
{
	const char *const *vh = a->views[a->cur]->ops->help;
	const char *const *gh = keys_help();
	int longest = 40;
	for (const char *const *p = vh; p && *p; p++)
		longest = (int)strlen(*p) > longest ? (int)strlen(*p) : longest;
	for (const char *const *p = gh; *p; p++)
		longest = (int)strlen(*p) > longest ? (int)strlen(*p) : longest;
	int w = longest + 4 < area.w ? longest + 4 : area.w;
	int n = 0;
	for (const char *const *p = vh; p && *p; p++)
		n += help_line(0, 0, w - 3, 0, 0, *p, 0);
	for (const char *const *p = gh; *p; p++)
		n += help_line(0, 0, w - 3, 0, 0, *p, 0);
	int h = n + 4 > area.h ? area.h : n + 4;
	struct lrect r = { area.x + (area.w - w) / 2, area.y + (area.h - h) / 2, w, h };
	term_fill(r, theme_attr(TH_STATUS));
	term_printf(r.y, r.x + 1, r.w - 2, theme_attr(TH_STATUS) | A_BOLD,
		    "keys: %s (Esc or ? closes)", pages_table[a->cur].name);
	int y = r.y + 1, ymax = r.y + r.h - 1;
	for (const char *const *p = vh; p && *p && y < ymax; p++)
		y += help_line(y, r.x + 2, r.w - 3, ymax, theme_attr(TH_STATUS), *p, 1);
	if (y < ymax)
		term_put(y++, r.x + 2, r.w - 3, theme_attr(TH_STATUS) | A_BOLD, "everywhere:");
	for (const char *const *p = gh; *p && y < r.y + r.h; p++)
		y += help_line(y, r.x + 2, r.w - 3, r.y + r.h, theme_attr(TH_STATUS), *p, 1);
}

void ui_frame(struct app *a)
{
	int rows, cols;
	getmaxyx(stdscr, rows, cols);
	erase();
	struct layout_screen ls;
	layout_screen(cols, rows, &ls);
	if (a->src->status)
		a->src->status(a->src->ctx, a->src_status, sizeof(a->src_status));
	if (ls.body.w > 0 && ls.body.h > 0)
		a->views[a->cur]->ops->draw(a->views[a->cur], ls.body);
	if (ls.tabs.h)
		status_tabs(a, ls.tabs);
	if (ls.status.h)
		status_draw(a, ls.status);
	if (a->help && ls.body.h > 2)
		help_overlay(a, ls.body);
	if (a->prompting && rows > 0) {
		int y = ls.status.h ? ls.status.y : rows - 1;
		term_fill((struct lrect){ 0, y, cols, 1 }, A_NORMAL);
		term_printf(y, 0, cols, A_BOLD, "%s%s", a->prompt_label, a->prompt_buf);
		curs_set(1);
	} else {
		curs_set(0);
	}
	refresh();
}

/* a mouse report: tab clicks here, the rest to the view; UI_* flags */
static int mouse_event(struct app *a, struct ui_mouse *st)
{
	MEVENT me;
	if (getmouse(&me) != OK)
		return UI_UNHANDLED;
	struct ui_mouse m = { .x = me.x, .y = me.y };
	if (me.bstate & BUTTON4_PRESSED)
		m.wheel = -1;
#ifdef BUTTON5_PRESSED
	else if (me.bstate & BUTTON5_PRESSED)
		m.wheel = 1;
#endif
	else if (me.bstate & BUTTON1_PRESSED) {
		m.press = 1;
		st->x = me.x;
		st->y = me.y;
		st->press = 1;
	} else if (me.bstate & (BUTTON1_RELEASED | BUTTON1_CLICKED)) {
		if (st->press && me.x != st->x)
			m.drag_dx = me.x - st->x;
		else
			m.click = 1;
		m.release = 1;
		st->press = 0;
	} else {
		return UI_UNHANDLED;
	}
	if (m.y == 0 && (m.click || m.press)) {
		int w = status_tab_w(getmaxx(stdscr));
		if (w > 0 && m.x / w < a->nviews)
			ui_switch(a, m.x / w);
		return UI_HANDLED;
	}
	struct view *v = a->views[a->cur];
	return v->ops->mouse ? v->ops->mouse(v, &m) : UI_UNHANDLED;
}

/* route a key: prompt, help, Esc to the view's back, the view, the global table */
static int dispatch(struct app *a, int ch, struct ui_mouse *ms)
{
	if (a->prompting) {
		prompt_key(a, ch);
		return UI_HANDLED;
	}
	a->msg[0] = 0;
	if (ch == KEY_MOUSE)
		return mouse_event(a, ms);
	if (a->help && (ch == 27 || ch == '?' || ch == 'q')) {
		a->help = 0;
		return UI_HANDLED;
	}
	struct view *v = a->views[a->cur];
	if (ch == 27 && v->ops->back && v->ops->back(v))
		return UI_HANDLED;
	int r = v->ops->key(v, ch);
	if (r != UI_UNHANDLED)
		return r;
	return keys_global(a, ch);
}

static SCREEN *screen;
static volatile sig_atomic_t stop_requested;

/* SIGINT/SIGTERM/SIGHUP: only set the flag the main loop checks */
static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* locale, terminal and colours; 0, or -1 with a line on stderr */
static int term_start(void)
{
	setlocale(LC_ALL, "");
	const char *cs = nl_langinfo(CODESET);
	term_caps.utf8 = cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "gtrace: the viewer needs a terminal (try 'gtrace stats')\n");
		return -1;
	}
	SCREEN *sc = newterm(NULL, stdout, stdin);
	if (!sc) {
		fprintf(stderr, "gtrace: cannot use terminal type '%s'\n",
			getenv("TERM") ? getenv("TERM") : "(unset)");
		return -1;
	}
	struct sigaction sa = { .sa_handler = on_stop };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	set_term(sc);
	screen = sc;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	/* Home/End as tmux, screen, rxvt and the Linux console send them, whatever
	 * TERM says (tmux with TERM=xterm-256color sends ESC [1~, not ESC OH) */
	static const char *const home[] = { "\033[1~", "\033[7~", "\033[H", "\033OH" };
	static const char *const end[] = { "\033[4~", "\033[8~", "\033[F", "\033OF" };
	for (size_t i = 0; i < sizeof(home) / sizeof(home[0]); i++) {
		if (key_defined(home[i]) == 0)
			define_key(home[i], KEY_HOME);
		if (key_defined(end[i]) == 0)
			define_key(end[i], KEY_END);
	}
	set_escdelay(25);
	curs_set(0);
	theme_init();
	mmask_t want = BUTTON1_PRESSED | BUTTON1_RELEASED | BUTTON1_CLICKED | BUTTON4_PRESSED;
#ifdef BUTTON5_PRESSED
	want |= BUTTON5_PRESSED;
#endif
	term_caps.mouse = mousemask(want, NULL) != 0;
	mouseinterval(0);
	return 0;
}

static void seen_take(struct app *a);

struct app *ui_app_new(struct ui_source *src)
{
	struct app *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->src = src;
	a->store = src->store;
	for (size_t i = 0; i < pages_count; i++) {
		const struct page_def *d = &pages_table[i];
		struct view *v = d->make ? d->make(a) : report_page_new(a, d);
		if (!v) {
			ui_app_free(a);
			return NULL;
		}
		v->due.dirty = 1;
		a->views[a->nviews++] = v;
	}
	seen_take(a);   /* a store cut before the pages were made moved nothing of theirs */
	return a;
}

void ui_app_free(struct app *a)
{
	if (!a)
		return;
	for (int i = 0; i < a->nviews; i++)
		a->views[i]->ops->free(a->views[i]);
	free(a->seen_dropped);
	free(a);
}

/* the lanes' cut counts as the pages see them now (gt_lane.dropped) */
static void seen_take(struct app *a)
{
	size_t nl = gt_store_lane_count(a->store);
	uint64_t *d = realloc(a->seen_dropped, (nl ? nl : 1) * sizeof(*d));
	if (!d)
		return;
	for (size_t i = 0; i < nl; i++)
		d[i] = gt_store_lane_at(a->store, (uint32_t)i)->dropped;
	a->seen_dropped = d;
	a->n_seen_dropped = nl;
}

/* what lane r.lane dropped since the pages last saw the store */
static uint64_t moved_by(const struct app *a, uint32_t lane)
{
	const struct gt_lane *l = gt_store_lane_at(a->store, lane);
	uint64_t seen = lane < a->n_seen_dropped ? a->seen_dropped[lane] : 0;
	return l->dropped - seen;
}

int ui_ref_move(const struct app *a, struct gt_ref *r)
{
	if (r->lane >= gt_store_lane_count(a->store))
		return 0;
	uint64_t d = a->moved ? moved_by(a, r->lane) : 0;
	if (r->idx < d)
		return 0;
	r->idx -= (uint32_t)d;
	return r->idx < gt_store_lane_at(a->store, r->lane)->n;
}

size_t ui_refs_move(const struct app *a, struct gt_ref *v, size_t n, size_t *sel)
{
	if (!a->moved)
		return n;
	size_t o = 0, ns = sel ? *sel : 0;
	for (size_t i = 0; i < n; i++) {
		if (sel && i == *sel)
			ns = o;   /* the selected one, or the next kept after it */
		if (ui_ref_move(a, &v[i]))
			v[o++] = v[i];
	}
	if (sel)
		*sel = ns < o ? ns : o ? o - 1 : 0;
	return o;
}

void ui_data_changed(struct app *a)
{
	/* a store with a ring window cut lanes (gt_store_drop_before): the
	 * pages' hooks move their references (ui_ref_move), then the counts
	 * are taken as seen */
	size_t nl = gt_store_lane_count(a->store);
	a->moved = 0;
	for (size_t i = 0; i < nl && !a->moved; i++)
		a->moved = moved_by(a, (uint32_t)i) != 0;
	for (int i = 0; i < a->nviews; i++) {
		a->views[i]->due.stale = 1;
		if (a->views[i]->ops->data)
			a->views[i]->ops->data(a->views[i]);
	}
	if (a->moved || nl > a->n_seen_dropped)
		seen_take(a);
	a->moved = 0;
}

int ui_run(struct ui_source *src)
{
	if (term_start())
		return 1;
	struct app *a = ui_app_new(src);
	struct ui_mouse ms = { 0 };
	int poll_ms = src->poll_ms > 0 ? src->poll_ms : 250;
	int quit = !a, dirty = 1;
	while (!quit && !stop_requested) {
		if (dirty)
			ui_frame(a);
		dirty = 0;
		/* a page that deferred work past this frame gets the next one at once */
		timeout(a->again ? 0 : src->poll || src->status ? poll_ms : 500);
		int again = a->again;
		a->again = 0;
		int ch = getch();
		if (ch == KEY_RESIZE) {
			/* ncurses has resized stdscr; the next frame lays out anew */
			dirty = 1;
			continue;
		}
		if (ch == ERR) {
			if (src->poll && src->poll(src->ctx, a->store) > 0)
				ui_data_changed(a);
			dirty = src->poll || src->status || again;
			continue;
		}
		dirty = 1;
		if (dispatch(a, ch, &ms) == UI_QUIT)
			quit = 1;
	}
	int ok = a != NULL;
	ui_app_free(a);
	endwin();
	delscreen(screen);
	screen = NULL;
	if (!ok) {
		fprintf(stderr, "gtrace: out of memory\n");
		return 1;
	}
	return 0;
}
