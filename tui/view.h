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
	const char *const *help;            /* "key  action" lines, NULL-terminated */
	void (*draw)(struct view *v, struct lrect area);
	int (*key)(struct view *v, int key);
	int (*mouse)(struct view *v, const struct ui_mouse *m);
	void (*data)(struct view *v);       /* the store changed (optional: due.stale
					       is set for every page anyway) */
	int (*back)(struct view *v);        /* Esc: 1 when the view used it */
	void (*free)(struct view *v);
};

/* the one recompute throttle of every page that computes an analysis: a
 * page computes on its next draw when asked (dirty: a key changed what it
 * shows; every page starts dirty), or when the store changed (stale, set by
 * ui.c for every page) and UI_RECOMPUTE_MS have passed since the last time,
 * unless the view is paused (paused: the page holds still).  ui_due says. */
struct view_due {
	int dirty, stale;
	double computed_ms;        /* ui_now_ms() of the last computation */
};

struct view {
	const struct view_ops *ops;
	struct app *app;
	struct view_due due;
};

/* the viewer's pages, in tab order (pages.c): number key i + 1, tab title
 * and the help line all come from this table.  A page is hand-written
 * (make) or a report shown as a table page (report: report_page.c). */
struct page_def {
	const char *name;          /* tab title; ui_page() finds a page by it */
	struct view *(*make)(struct app *a);
	const char *report;        /* make NULL: this report's tables as a table page */
};
#define PAGES_MAX 9                /* number keys 1-9 */
extern const struct page_def pages_table[];
extern const size_t pages_count;
/* the help line of the page keys: "1-N Tab S-Tab  switch view (a, b, ...)" */
const char *pages_help(void);

typedef void (*prompt_done_fn)(struct view *v, const char *text);

struct app {
	struct ui_source *src;
	struct gt_store *store;
	struct view *views[PAGES_MAX];   /* pages_table's pages, same order */
	int nviews;
	int cur, prev;
	int help;                 /* help overlay shown */
	int paused;
	int again;                /* a page deferred work: draw the next frame at once */
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
	/* per lane, the events a ring window had cut from its front when the
	   pages last saw the store (gt_lane.dropped); moved: some lane was cut
	   since (set while the pages' data hooks run) */
	uint64_t *seen_dropped;
	size_t n_seen_dropped;
	int moved;
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
/* the store changed (a live poll): every page is stale (ui_due) and its
 * data hook is called */
void ui_data_changed(struct app *a);
/* in a page's data hook: a ref taken before the change names its event
 * again (a live store with --ring cuts each lane's front, and its events'
 * indexes move down); 0 when its event was cut */
int ui_ref_move(const struct app *a, struct gt_ref *r);
/* the same for a list: refs to events cut are removed and *sel (may be
 * NULL) follows its ref, or the next one kept; returns the new count */
size_t ui_refs_move(const struct app *a, struct gt_ref *v, size_t n, size_t *sel);
/* 1 when r names an event of the store (refs kept across a live update
 * may not) */
static inline int ui_ref_ok(const struct gt_store *s, struct gt_ref r)
{
	return r.lane < gt_store_lane_count(s) && r.idx < gt_store_lane_at(s, r.lane)->n;
}

/* monotonic clock in milliseconds */
double ui_now_ms(void);
/* analysis pages recompute a changed (live) store at most this often */
#define UI_RECOMPUTE_MS 2000.0
/* 1 when page v should compute now (struct view_due's rule); then its
 * flags are cleared and the time taken, so the caller computes */
int ui_due(struct view *v);
/* show "msg" in the status line at once (before a long computation) */
void ui_busy(struct app *a, const char *msg);
/* focus a view (its index in pages_table) */
void ui_switch(struct app *a, int view);
/* the page called name (pages_table, case-insensitive), NULL when none */
struct view *ui_page(struct app *a, const char *name);
/* focus the page called name; returns it (NULL when none) */
struct view *ui_show(struct app *a, const char *name);

/* the global key table (keys.c); returns UI_* flags */
int keys_global(struct app *a, int key);
/* global key help lines (the first from pages_help), NULL-terminated */
const char *const *keys_help(void);

/* status.c: the status line and the tab line */
void status_draw(struct app *a, struct lrect r);
void status_tabs(struct app *a, struct lrect r);
/* the width of one tab on a line of `cols` columns (tab i starts at i * it) */
int status_tab_w(int cols);

/* the views */
struct view *trace_view_new(struct app *a);
struct view *kernels_view_new(struct app *a);
struct view *pipeline_view_new(struct app *a);
struct view *overview_view_new(struct app *a);
struct view *operators_view_new(struct app *a);
struct view *memory_view_new(struct app *a);
/* a report's tables as a table page (report_page.c): sort, scroll, filter; the
 * page's title is def->name */
struct view *report_page_new(struct app *a, const struct page_def *def);

/* trace view entry points for drill-down from the other views (v from
 * ui_page(a, "Trace"); NULL does nothing) */
void trace_view_goto(struct view *v, struct gt_ref r);
void trace_view_zoom_range(struct view *v, int64_t t0_ns, int64_t t1_ns);
/* put the cursor on rank/GPU's compute stream (rank -1: any rank) */
void trace_view_goto_gpu(struct view *v, int32_t rank, int32_t gpu);
/* pipeline view: show rank R's steps (a rank with steps; else unchanged;
 * v NULL: nothing) */
void pipeline_view_show_rank(struct view *v, int32_t rank);

/* tables.c: draw a gt_table: header, rows[0..nrows) (indices into the
 * table), the selected one highlighted; the name column (tables_name_col)
 * goes last and gets the remaining width (at least what name_wide asks), a
 * name too long for it is cut in the middle; GT_COLF_DUR columns print as
 * durations;
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
/* the column shown last with the remaining width: the GT_COLF_NAME column,
 * else a last string column; -1 when none */
int tables_name_col(const struct gt_table *t);
/* move the selection by delta rows (clamped) / to an absolute row */
void tables_move(struct tables_state *st, size_t nrows, long delta);

#endif
