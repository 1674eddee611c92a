/*
 * layout.h - the viewer's geometry without a terminal: screen rectangles,
 * the time -> column map of the trace view, ruler ticks and time labels.
 *
 * Coordinates: (x, y) are 0-based cell columns and rows of the terminal;
 * a rectangle with w or h <= 0 is empty and is not drawn.
 * Time map: column c covers [t0_ns + c * ns_per_col, t0_ns + (c+1) * ns_per_col).
 */
#ifndef GTRACE_TUI_LAYOUT_H
#define GTRACE_TUI_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

struct lrect {
	int x, y, w, h;
};

/* the whole screen: a tab line on top, the view, a status line at the bottom */
struct layout_screen {
	struct lrect tabs, body, status;
};
void layout_screen(int cols, int rows, struct layout_screen *out);

/* the trace view inside `area`: ruler (ticks + steps), lane labels, lane
 * cells, legend and detail pane; small areas drop detail, legend, steps */
struct layout_trace {
	struct lrect ruler;    /* tick labels (cells part only) */
	struct lrect steps;    /* step boundary row (cells part only) */
	struct lrect labels;   /* lane names */
	struct lrect cells;    /* lane timelines */
	struct lrect legend;
	struct lrect detail;
};
void layout_trace(struct lrect area, struct layout_trace *out);

/* time -> column map */
struct layout_tmap {
	int64_t t0_ns;         /* time at the left edge of column 0 */
	int64_t ns_per_col;    /* >= 1 */
	int cols;              /* columns of the cell area, >= 1 */
};

/* map the range [t0, t1) onto cols columns (at least 1 ns per column) */
void layout_tmap_fit(struct layout_tmap *m, int64_t t0_ns, int64_t t1_ns, int cols);
/* the column holding t (may be < 0 or >= cols when outside the screen) */
long layout_t2col(const struct layout_tmap *m, int64_t t_ns);
/* time at the left edge of column c */
int64_t layout_col2t(const struct layout_tmap *m, long c);
/* zoom by num/den (num < den zooms in) keeping column `col`'s start fixed;
 * ns_per_col stays within [1, max_ns_per_col] */
void layout_tmap_zoom(struct layout_tmap *m, int col, int64_t num, int64_t den,
		      int64_t max_ns_per_col);
/* shift by dcols columns (negative = left) */
void layout_tmap_pan(struct layout_tmap *m, long dcols);
/* keep the visible span overlapping [lo, hi): clamp t0 so at least a
 * quarter screen of data stays visible */
void layout_tmap_clamp(struct layout_tmap *m, int64_t lo_ns, int64_t hi_ns);
/* change the width keeping t0 and ns_per_col */
void layout_tmap_resize(struct layout_tmap *m, int cols);
/* change the width keeping t0 and the visible span (cols * ns_per_col, to
 * within a column: ns_per_col is rounded up, at least 1) */
void layout_tmap_rescale(struct layout_tmap *m, int cols);

/* ruler tick step: the smallest 1/2/5 x 10^k ns spanning >= min_cols columns */
int64_t layout_tick_ns(const struct layout_tmap *m, int min_cols);
/* "12.5ms"-style duration with a unit picked for `scale_ns`
 * (the precision of the ruler step); returns buf */
char *layout_fmt_time(int64_t t_ns, int64_t scale_ns, char *buf, size_t len);
/* a duration with 3 significant digits: "812ns", "4.07us", "12.3ms", "1.50s" */
char *layout_fmt_dur(int64_t ns, char *buf, size_t len);
/* an offset from the capture start with its sign: "+12.3ms", "-2.20ms" */
char *layout_fmt_rel(int64_t ns, char *buf, size_t len);
/* a time stamp with microsecond precision: "173.412ms" under a second,
 * "2.500000s" from one second on */
char *layout_fmt_ts(int64_t ns, char *buf, size_t len);
/* parse "12.5ms", "3s", "400us", "100ns", "0" (a unit is needed but for 0); 0 or -EINVAL */
int layout_parse_time(const char *s, int64_t *out_ns);

/* s shortened to at most w cells (one per UTF-8 code point) by cutting its
 * middle: the start (2/5), an ellipsis ("…", or "~" when !utf8), the end
 * (the distinguishing part of a long kernel name), into out; returns out */
char *layout_ellipsize(const char *s, int w, int utf8, char *out, size_t len);

/* a cell's fill in eighths (0..8) for busy/ns_per_col; never 0 when
 * count > 0 or busy > 0 (small things stay visible) */
int layout_eighths(int64_t busy_ns, int64_t ns_per_col, uint32_t count);

#endif
