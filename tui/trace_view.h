/*
 * trace_view.h - the trace view's state, shared by trace_view.c (keys, navigation),
 * trace_draw.c (ruler, lanes, legend) and trace_detail.c (detail pane, range
 * aggregate).  Time runs left to right through a layout_tmap; rows come
 * from struct lanes; the cursor is a (visible row, column) pair and the
 * selected event is the one under it unless pinned by a jump.
 */
#ifndef GTRACE_TUI_TLVIEW_H
#define GTRACE_TUI_TLVIEW_H

#include <regex.h>
#include "view.h"
#include "lanes.h"

struct trace_step {
	int64_t t0_ns, t1_ns;
	int64_t num;
};

/* the depth index of an expanded lane */
struct trace_depth {
	uint32_t lane;
	struct gt_depth *d;
	int64_t built_ns;   /* monotonic time of its last full build */
};

/* one name of an area selection: its events' time inside the area */
struct trace_area_name {
	uint32_t name;
	uint64_t count;
	int64_t total_ns;
};
#define TRACE_AREA_TOP 16

struct trace_view {
	struct view v;
	struct lanes L;
	struct layout_tmap m;
	int fitted;               /* map set from the data at least once */
	int drawn;                /* the first frame is on screen (steps come after it) */
	int follow;               /* live: keep the newest data on screen */
	size_t top, row;          /* first visible row, cursor row (indices into L.vis) */
	int col;                  /* cursor column in the cell area */
	struct gt_ref sel;
	int has_sel, pinned;      /* pinned: selection set by a jump, not the cursor */
	/* range mark: 1 = being extended from mark_t0, 2 = fixed */
	int marking;
	int64_t mark_t0, mark_t1;
	struct gt_table *mark_kernels;   /* kernels report over the range, or NULL */
	/* area selection (trace_area.c): the second m on another row than the
	   first marks the lanes between them; narea 0 = a time range only */
	size_t mark_row0;         /* visible row of the first m */
	uint32_t *area_lanes;
	size_t narea;
	uint64_t area_events;
	int64_t area_busy_ns;     /* sum over the lanes of each lane's busy union */
	struct trace_area_name area_top[TRACE_AREA_TOP];
	size_t area_ntop;
	/* search */
	regex_t re;
	int has_re;
	char pattern[128];
	/* the analyses' steps (gt_steps_find, every rank), sorted by start */
	struct trace_step *steps;
	size_t nsteps;
	/* a live capture's steps are found again as it grows, over all of it:
	 * not before this (ui_now_ms), ten times the last search's time after
	 * it ended, so the search takes at most a tenth of the UI thread */
	double steps_next_ms;
	/* geometry of the last frame (for keys and mouse) */
	struct layout_trace lay;
	/* per-frame scratch bounded by the screen width */
	struct gt_bucket *bk, *bk2;
	uint8_t *cat2;         /* categories of bk2 when drawn from the summary */
	int bk_cap;
	/* bucket rows of the last frame, one per screen row: a frame that only
	 * moves the cursor queries nothing, a pan only the new columns */
	struct trace_rowcache *rc;
	int rc_rows, rc_cols;
	uint64_t gen;             /* bumped when the store or the rows change */
	/* depth indexes of the expanded lanes (e) */
	struct trace_depth *dx;
	size_t ndx;
};

struct trace_rowcache {
	uint64_t key;             /* (row index in L.all + 1) * 2 + folded; 0 = empty */
	uint64_t gen;
	int64_t t0_ns, npc;
	struct gt_bucket *b;      /* rc_cols buckets */
	uint8_t *cat;             /* rc_cols categories (enum theme_role) */
};

/* trace_draw.c (trace_draw_free releases the row cache) */
void trace_draw_free(struct trace_view *t);
void trace_draw_ruler(struct trace_view *t);
void trace_draw_lanes(struct trace_view *t);
void trace_draw_legend(struct trace_view *t);
/* trace_counter.c: a counter track's row as a sparkline over the window (y: the
 * screen row); its highest sample and that sample's time (INT64_MIN: none) */
void trace_counter_draw(struct trace_view *t, int y, const struct gt_lane *l, int cursor);
double trace_counter_peak(const struct gt_lane *l, int64_t *at_ns);
/* trace_detail.c */
void trace_detail_draw(struct trace_view *t);
/* compute the aggregate of the marked range (on fixing it) */
void trace_detail_mark(struct trace_view *t);
/* event name for display, demangled */
const char *trace_detail_name(const struct gt_store *s, const struct gt_event *e,
			  char *buf, size_t len);

/* trace_area.c: the aggregate of the area [mark_t0, mark_t1) x the lanes of
 * visible rows a..b; 0, or -1 (no lanes, no memory: the area is cleared) */
int trace_area_compute(struct trace_view *t, size_t row_a, size_t row_b);
void trace_area_draw(struct trace_view *t, const struct lrect *r);
/* forget the area (a plain time mark stays) */
void trace_area_clear(struct trace_view *t);

/* trace_view.c: the lane shown on visible row v (a lane or one of its depth
 * rows), or UINT32_MAX for a group row */
uint32_t trace_view_lane_of(const struct trace_view *t, size_t v);
/* the nesting depth shown on visible row v, -1 for other rows */
int trace_view_level_of(const struct trace_view *t, size_t v);
/* the depth index of an expanded lane, NULL when collapsed */
const struct gt_depth *trace_view_depth(const struct trace_view *t, uint32_t lane);
/* start of the capture (0 when empty) */
int64_t trace_view_t_lo(const struct trace_view *t);
/* put the cursor on column c, panning when c is off screen */
void trace_view_cursor_to_col(struct trace_view *t, long c);

/* trace_nav.c: jumps; each changes the view state only */
void trace_nav_search(struct trace_view *t, int dir);           /* n (dir 1) / N (dir -1) */
void trace_nav_search_done(struct view *v, const char *text);   /* the / prompt */
void trace_nav_goto_done(struct view *v, const char *text);     /* the g prompt */
void trace_nav_zoom_sel(struct trace_view *t);                  /* z */
void trace_nav_zoom_step(struct trace_view *t);                 /* Z */
void trace_nav_lane_step(struct trace_view *t, int dir);        /* [ ] */
void trace_nav_mark(struct trace_view *t);                      /* m */
void trace_nav_expand(struct trace_view *t);                    /* e: expand/collapse the nesting */
/* the store changed: rebuild the depth indexes of grown lanes */
void trace_nav_depth_sync(struct trace_view *t);
void trace_nav_depth_free(struct trace_view *t);

#endif
