/*
 * opview.h - the Operators page's state, shared by opview.c (the "ops"
 * report table: sort, filter) and opview_calls.c (the calls of one
 * operator, and the GPU work one call launched).
 *
 * The calls list holds refs into the store; a live update may move them,
 * so the open list is rebuilt by operator name on every recompute and the
 * selection follows the same event (lane key and start time).
 */
#ifndef GTRACE_TUI_OPVIEW_H
#define GTRACE_TUI_OPVIEW_H

#include <regex.h>
#include "view.h"

struct opview {
	struct view v;
	const struct gt_report *rep;   /* the "ops" report */
	struct gt_report_out out;
	struct gt_table *tb;       /* out.tables[0] */
	size_t *rows, nrows;       /* rows passing the filter */
	struct tables_state st;
	regex_t re;
	int has_re;
	char filter[128];
	char err[160];
	/* 0 table, 1 calls of calls_name, 2 GPU work of one call */
	int mode;
	int calls_by_time;         /* calls ordered by start, else longest first */
	char calls_name[256];
	char calls_key[1024];      /* the row's key (drill_key): found again live */
	struct gt_ref *calls;
	size_t ncalls, top, sel;
	int64_t calls_total_ns;
	/* mode 2: the GPU work launched inside the call calls[sel] */
	struct gt_ref *work;
	size_t nwork, wtop, wsel;
	int64_t work_total_ns;
};

/* list the calls of the selected table row (mode 1) */
void opview_calls_open(struct opview *o);
/* the store changed under an open list: rebuild it, the same event kept selected */
void opview_calls_refresh(struct opview *o);
void opview_calls_draw(struct opview *o, struct lrect r);
int opview_calls_key(struct opview *o, int ch);
void opview_calls_free(struct opview *o);

#endif
