/*
 * keys.c - the global key table: actions that work in every view (after
 * the focused view declined the key).  Actions change state and return
 * UI_* flags; they never draw.
 */
#include <stdio.h>
#include <time.h>
#include "term.h"
#include "view.h"

/* q: leave the viewer */
static int act_quit(struct app *a)
{
	(void)a;
	return UI_QUIT;
}

/* ?: toggle the help overlay */
static int act_help(struct app *a)
{
	a->help = !a->help;
	return UI_HANDLED;
}

/* Tab: next view */
static int act_next(struct app *a)
{
	ui_switch(a, (a->cur + 1) % a->nviews);
	return UI_HANDLED;
}

/* Shift-Tab: previous view */
static int act_prev(struct app *a)
{
	ui_switch(a, (a->cur + a->nviews - 1) % a->nviews);
	return UI_HANDLED;
}

/* Esc nobody else wanted: close help, else the previous view */
static int act_back(struct app *a)
{
	if (a->help)
		a->help = 0;
	else if (a->cur != a->prev)
		ui_switch(a, a->prev);
	return UI_HANDLED;
}

/* the W prompt's Enter: keep the capture under that name */
static void save_done(struct view *v, const char *text)
{
	struct app *a = v->app;
	char m[160] = "";
	a->src->save_as(a->src->ctx, text, m, sizeof(m));
	/* a ring's W cuts the store to its window: the pages' references move */
	ui_data_changed(a);
	ui_msg(a, "%s", m);
}

/* W: the source's save action (asking for a name where the source keeps
 * its capture file under one), its message in the status line */
static int act_save(struct app *a)
{
	if (a->src->save_as) {
		char name[64];
		snprintf(name, sizeof(name), "gtrace-%ld.gtrace", (long)time(NULL));
		ui_prompt(a, a->views[a->cur], "keep the capture as: ", name, save_done);
		return UI_HANDLED;
	}
	if (!a->src->save) {
		ui_msg(a, "nothing to save: this capture is already a file");
		return UI_HANDLED;
	}
	char m[160] = "";
	a->src->save(a->src->ctx, m, sizeof(m));
	ui_msg(a, "%s", m);
	return UI_HANDLED;
}

/* p / space: pause or resume the live view; the capture keeps arriving
 * into the store (nothing is lost), the trace view stops following it */
static int act_pause(struct app *a)
{
	if (!a->src->pause) {
		ui_msg(a, "not a live capture");
		return UI_HANDLED;
	}
	a->paused = !a->paused;
	a->src->pause(a->src->ctx, a->paused);
	ui_msg(a, a->paused ? "view paused, capture continues (space resumes)" : "view resumed");
	return UI_HANDLED;
}

/* C: apply the clock offsets between nodes (multi-node live views) */
static int act_align(struct app *a)
{
	if (!a->src->align_clocks) {
		ui_msg(a, "clock offsets apply to the nodes of a multi-node view (open --live, attach --hosts, "
		       "several .gtrace files of one job)");
		return UI_HANDLED;
	}
	char m[160] = "";
	a->src->align_clocks(a->src->ctx, m, sizeof(m));
	ui_msg(a, "%s", m);
	return UI_HANDLED;
}

/* ^L: repaint the whole terminal on the next frame */
static int act_redraw(struct app *a)
{
	(void)a;
	clearok(stdscr, TRUE);
	return UI_HANDLED;
}

static const struct {
	int key;
	int (*fn)(struct app *a);
} table[] = {
	{ 'q', act_quit }, { 'Q', act_quit }, { '?', act_help }, { KEY_F(1), act_help },
	{ '\t', act_next }, { KEY_BTAB, act_prev }, { 27, act_back },
	{ 'W', act_save }, { 'p', act_pause }, { ' ', act_pause }, { 12 /* ^L */, act_redraw },
	{ 'C', act_align },
};

int keys_global(struct app *a, int key)
{
	if (key >= '1' && key < '1' + a->nviews) {
		ui_switch(a, key - '1');
		return UI_HANDLED;
	}
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].key == key)
			return table[i].fn(a);
	return UI_UNHANDLED;
}

const char *const *keys_help(void)
{
	static const char *lines[] = {
		NULL,     /* pages_help() */
		"?  F1          this help     Esc  back   ^L  redraw   q  quit",
		"W              save the capture (live)   Space p  pause/resume (live)",
		"C              apply the clock offsets between nodes (open --live, attach --hosts)",
		NULL
	};
	lines[0] = pages_help();
	return lines;
}
