/*
 * view.h - the viewer's pages and the state they share.
 *
 * A view is a struct embedding struct view, with an ops table.  Keys go to
 * the prompt first, then the focused view, then the global table (keys.c).
 * Key handlers change state and return UI_* flags; they never draw.  Every
 * frame is drawn in one place (ui.c: frame), from the store's queries.
 */
#ifndef GTRACE_TUI_VIEW_H
#define GTRACE_TUI_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/store.h"
#include "gtrace/report.h"
#include "layout.h"
#include "ui.h"

/* key handler results */
#define UI_UNHANDLED 0
#define UI_HANDLED   1
#define UI_QUIT      2

/* key codes beyond curses' for mouse actions, filled by ui.c */
struct ui_mouse {
	int x, y;
	int press, release, click, wheel;  /* wheel: -1 up, +1 down */
	int drag_dx;                        /* columns dragged since press */
};

struct view;
struct app;

struct view_ops {
	const char *name;                   /* tab title */
	const char *const *help;            /* "key  action" lines, NULL-terminated */
	void (*draw)(struct view *v, struct lrect area);
	int (*key)(struct view *v, int key);
	int (*mouse)(struct view *v, const struct ui_mouse *m);
	void (*data)(struct view *v);       /* the store changed */
	int (*back)(struct view *v);        /* Esc: 1 when the view used it */
	void (*free)(struct view *v);
};

struct view {
	const struct view_ops *ops;
	struct app *app;
};

enum { VIEW_TRACE = 0, VIEW_KERNELS, VIEW_PIPELINE, VIEW_OVERVIEW, VIEW_OPS, VIEW_MEMORY, VIEW_COUNT };

typedef void (*prompt_done_fn)(struct view *v, const char *text);

struct app {
	struct ui_source *src;
	struct gt_store *store;
	struct view *views[VIEW_COUNT];
	int cur, prev;
	int help;                 /* help overlay shown */
	int paused;
	char msg[160];            /* transient message in the status line */
	char range[96];           /* the trace view's visible or marked range */
	int follow;               /* the trace view follows the newest data (live) */
	char cursor[48];          /* the trace view's cursor time, "cursor +1.234ms" */
	char src_status[512];     /* from src->status (multi-node: a part per node) */
	/* one-line prompt (search, go to time, filter) */
	int prompting;
	char prompt_label[64];
	char prompt_buf[128];
	size_t prompt_len;
	struct view *prompt_view;
	prompt_done_fn prompt_done;
};

/* the viewer's state for a source (views created); NULL on no memory */
struct app *ui_app_new(struct ui_source *src);
void ui_app_free(struct app *a);
/* draw one whole frame on stdscr (ui_run's loop; the benchmark calls it) */
void ui_frame(struct app *a);

/* open a prompt in the status line; done() gets the text on Enter */
void ui_prompt(struct app *a, struct view *v, const char *label, const char *init,
	       prompt_done_fn done);
/* show a transient message in the status line */
void ui_msg(struct app *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 1 when r names an event of the store (refs kept across a live update
 * may not) */
static inline int ui_ref_ok(const struct gt_store *s, struct gt_ref r)
{
	return r.lane < store_lane_count(s) && r.idx < store_lane_at(s, r.lane)->n;
}

/* monotonic clock in milliseconds */
double ui_now_ms(void);
/* analysis pages recompute a changed (live) store at most this often */
#define UI_RECOMPUTE_MS 2000.0
/* 1 when an analysis page should compute its report now: asked for
 * (dirty), or the store changed (stale), UI_RECOMPUTE_MS have passed since
 * computed_ms and the view is not paused (paused: the page holds still) */
int ui_recompute_due(const struct app *a, int dirty, int stale, double computed_ms);
/* show "msg" in the status line at once (before a long computation) */
void ui_busy(struct app *a, const char *msg);
/* focus a view (VIEW_*) */
void ui_switch(struct app *a, int view);

/* the global key table (keys.c); returns UI_* flags */
int keys_global(struct app *a, int key);
/* global key help lines, NULL-terminated */
extern const char *const keys_help[];

/* status.c: the status line and the tab line */
void status_draw(struct app *a, struct lrect r);
void status_tabs(struct app *a, struct lrect r);
/* the width of one tab on a line of `cols` columns (tab i starts at i * it) */
int status_tab_w(int cols);

/* the views */
struct view *tlview_new(struct app *a);
struct view *kview_new(struct app *a);
struct view *pview_new(struct app *a);
struct view *oview_new(struct app *a);
struct view *opview_new(struct app *a);
struct view *mview_new(struct app *a);

/* trace view entry points for drill-down from the other views */
void tlview_goto(struct view *v, struct gt_ref r);
void tlview_zoom_range(struct view *v, int64_t t0_ns, int64_t t1_ns);
/* put the cursor on rank/GPU's compute stream (rank -1: any rank) */
void tlview_goto_gpu(struct view *v, int32_t rank, int32_t gpu);
/* pipeline view: show rank R's steps (a rank with steps; else unchanged) */
void pview_show_rank(struct view *v, int32_t rank);

/* tables.c: draw a gt_table: header, rows[0..nrows) (indices into the
 * table), the selected one highlighted; a column named "Name" goes last
 * and gets the remaining width (at least what name_wide asks), a name too
 * long for it is cut in the middle; columns "... (ns)" print as durations;
 * the sort column's heading ends in " ▼" / " ▲" (" v" / " ^" in ASCII) */
struct tables_state {
	size_t top, sel;          /* first shown, selected (indices into rows[]) */
	int sort_col, sort_desc;  /* -1 = unsorted */
	int left;                 /* first non-name column shown */
	int name_wide;            /* 0 normal, 1 half, 2 three quarters of the width
				     for the name column (the kernel page's w key) */
};
void tables_draw(const struct gt_table *t, struct tables_state *st, struct lrect r,
		 const size_t *rows, size_t nrows);
/* format one cell as the table view shows it */
void tables_cell_text(const struct gt_table *t, size_t row, size_t col, char *buf, size_t len);
/* the index of the first column whose name contains `part` (case-insensitive), or -1 */
int tables_find_col(const struct gt_table *t, const char *part);
/* the column shown last with the remaining width: "Name", else a last
 * string column ("Operation", "Collective"); -1 when none */
int tables_name_col(const struct gt_table *t);
/* move the selection by delta rows (clamped) / to an absolute row */
void tables_move(struct tables_state *st, size_t nrows, long delta);

#endif
