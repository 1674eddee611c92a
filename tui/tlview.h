/*
 * tlview.h - the trace view's state, shared by tlview.c (keys, navigation),
 * tldraw.c (ruler, lanes, legend) and tldetail.c (detail pane, range
 * aggregate).  Time runs left to right through a layout_tmap; rows come
 * from struct lanes; the cursor is a (visible row, column) pair and the
 * selected event is the one under it unless pinned by a jump.
 */
#ifndef GTRACE_TUI_TLVIEW_H
#define GTRACE_TUI_TLVIEW_H

#include <regex.h>
#include "view.h"
#include "lanes.h"

struct tl_step {
	int64_t t0_ns, t1_ns;
	int64_t num;
};

/* the depth index of an expanded lane */
struct tl_depth {
	uint32_t lane;
	struct gt_depth *d;
	int64_t built_ns;   /* monotonic time of its last full build */
};

/* one name of an area selection: its events' time inside the area */
struct tl_area_name {
	uint32_t name;
	uint64_t count;
	int64_t total_ns;
};
#define TL_AREA_TOP 16

struct tlview {
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
	/* area selection (tlarea.c): the second m on another row than the
	   first marks the lanes between them; narea 0 = a time range only */
	size_t mark_row0;         /* visible row of the first m */
	uint32_t *area_lanes;
	size_t narea;
	uint64_t area_events;
	int64_t area_busy_ns;     /* sum over the lanes of each lane's busy union */
	struct tl_area_name area_top[TL_AREA_TOP];
	size_t area_ntop;
	/* search */
	regex_t re;
	int has_re;
	char pattern[128];
	/* the analyses' steps (steps_find, every rank), sorted by start */
	struct tl_step *steps;
	size_t nsteps;
	/* geometry of the last frame (for keys and mouse) */
	struct layout_trace lay;
	/* per-frame scratch bounded by the screen width */
	struct gt_bucket *bk, *bk2;
	uint8_t *cat2;         /* categories of bk2 when drawn from the summary */
	int bk_cap;
	/* bucket rows of the last frame, one per screen row: a frame that only
	 * moves the cursor queries nothing, a pan only the new columns */
	struct tl_rowcache *rc;
	int rc_rows, rc_cols;
	uint64_t gen;             /* bumped when the store or the rows change */
	/* depth indexes of the expanded lanes (e) */
	struct tl_depth *dx;
	size_t ndx;
};

struct tl_rowcache {
	uint64_t key;             /* (row index in L.all + 1) * 2 + folded; 0 = empty */
	uint64_t gen;
	int64_t t0_ns, npc;
	struct gt_bucket *b;      /* rc_cols buckets */
	uint8_t *cat;             /* rc_cols categories (enum theme_role) */
};

/* tldraw.c (tldraw_free releases the row cache) */
void tldraw_free(struct tlview *t);
void tldraw_ruler(struct tlview *t);
void tldraw_lanes(struct tlview *t);
void tldraw_legend(struct tlview *t);
/* tlcounter.c: a counter track's row as a sparkline over the window (y: the
 * screen row); its highest sample and that sample's time (INT64_MIN: none) */
void tlcounter_draw(struct tlview *t, int y, const struct gt_lane *l, int cursor);
double tlcounter_peak(const struct gt_lane *l, int64_t *at_ns);
/* tldetail.c */
void tldetail_draw(struct tlview *t);
/* compute the aggregate of the marked range (on fixing it) */
void tldetail_mark(struct tlview *t);
/* event name for display, demangled */
const char *tldetail_name(const struct gt_store *s, const struct gt_event *e,
			  char *buf, size_t len);

/* tlarea.c: the aggregate of the area [mark_t0, mark_t1) x the lanes of
 * visible rows a..b; 0, or -1 (no lanes, no memory: the area is cleared) */
int tlarea_compute(struct tlview *t, size_t row_a, size_t row_b);
void tlarea_draw(struct tlview *t, const struct lrect *r);
/* forget the area (a plain time mark stays) */
void tlarea_clear(struct tlview *t);

/* tlview.c: the lane shown on visible row v (a lane or one of its depth
 * rows), or UINT32_MAX for a group row */
uint32_t tlview_lane_of(const struct tlview *t, size_t v);
/* the nesting depth shown on visible row v, -1 for other rows */
int tlview_level_of(const struct tlview *t, size_t v);
/* the depth index of an expanded lane, NULL when collapsed */
const struct gt_depth *tlview_depth(const struct tlview *t, uint32_t lane);
/* start of the capture (0 when empty) */
int64_t tlview_t_lo(const struct tlview *t);
/* put the cursor on column c, panning when c is off screen */
void tlview_cursor_to_col(struct tlview *t, long c);

/* tlnav.c: jumps; each changes the view state only */
void tlnav_search(struct tlview *t, int dir);           /* n (dir 1) / N (dir -1) */
void tlnav_search_done(struct view *v, const char *text);   /* the / prompt */
void tlnav_goto_done(struct view *v, const char *text);     /* the g prompt */
void tlnav_zoom_sel(struct tlview *t);                  /* z */
void tlnav_zoom_step(struct tlview *t);                 /* Z */
void tlnav_lane_step(struct tlview *t, int dir);        /* [ ] */
void tlnav_mark(struct tlview *t);                      /* m */
void tlnav_expand(struct tlview *t);                    /* e: expand/collapse the nesting */
/* the store changed: rebuild the depth indexes of grown lanes */
void tlnav_depth_sync(struct tlview *t);
void tlnav_depth_free(struct tlview *t);

#endif
