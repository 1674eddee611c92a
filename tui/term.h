/*
 * term.h - the curses wrapper: the only header that includes curses.  The
 * drawing files (ui*.c, theme.c, status.c, *view.c) include it; layout.c,
 * lanes.c and demangle.c stay terminal-free.
 *
 * Colours are named by meaning (enum theme_role); drawing code asks
 * theme_attr() and never uses colour pairs itself.
 */
#ifndef GTRACE_TUI_TERM_H
#define GTRACE_TUI_TERM_H

#include <curses.h>
#include <stdint.h>
#include "gtrace/event.h"
#include "layout.h"

enum theme_role {
	TH_NORMAL = 0,
	/* event categories (legend order) */
	TH_COMPUTE, TH_NCCL, TH_H2D, TH_D2H, TH_D2D, TH_MEMSET, TH_SYNC, TH_API,
	TH_RANGE, TH_STEP,
	TH_CAT_END,
	/* chrome */
	TH_TITLE = TH_CAT_END, TH_TAB, TH_TAB_ON, TH_STATUS, TH_HEADER, TH_SELECT,
	TH_CURSOR, TH_MARK, TH_DIM, TH_WARN, TH_GOOD, TH_GROUP,
	TH_ROLE_COUNT
};

/* terminal capabilities found at start */
struct term_caps {
	int utf8;      /* locale is UTF-8: eighth blocks and box lines */
	int colors;    /* 0 (mono), 8 or 256 */
	int mouse;     /* mouse reporting enabled */
};
extern struct term_caps term_caps;

/* set up colours for what the terminal offers (after initscr) */
void theme_init(void);
attr_t theme_attr(enum theme_role r);
/* the category of an event (TH_COMPUTE ... TH_STEP) */
enum theme_role theme_cat(const struct gt_event *e);
const char *theme_cat_name(enum theme_role r);
/* the glyph drawn for a cell of category r filled `eighths`/8 (1..8), as a
 * UTF-8 or ASCII string */
const char *theme_cell(enum theme_role r, int eighths);

/* draw one glyph (a static one-cell UTF-8 or ASCII string, e.g. from
 * theme_cell) at (y, x) in the current attributes; wide glyphs are converted
 * once and cached by address, so frames avoid multibyte decoding */
void term_glyph(int y, int x, const char *g);
/* write at most w cells of s at (y, x); non-printable bytes become '?' */
void term_put(int y, int x, int w, attr_t a, const char *s);
/* printf variant of term_put */
void term_printf(int y, int x, int w, attr_t a, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* fill a rectangle with blanks in attribute a */
void term_fill(struct lrect r, attr_t a);
/* a horizontal bar of `len` eighths of a cell, clipped to w cells */
void term_hbar(int y, int x, int w, attr_t a, int64_t len_eighths);
/* a sparkline cell for value 0..1 */
const char *term_spark(double v);

#endif
