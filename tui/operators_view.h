/*
 * operators_view.h - the Operators page's state, shared by operators_view.c (the "ops"
 * report table: sort, filter) and operators_view_calls.c (the calls of one
 * operator, and the GPU work one call launched).
 *
 * g cycles the table's grouping (the plugin's: by name, name + input
 * shapes, name + call stack); Enter on a grouped row lists the calls of
 * that name with that key.  c compares two runs opened together (ranks 0
 * and 1 of the store, `gtrace open A B`): the operator, then the kernel
 * delta table of `gtrace diff`, the step breakdown (average step, then
 * each aligned step side by side) and both overviews' verdicts
 * (operators_view_cmp.c); Enter on a delta row lists the instances in both
 * runs, on a step the trace view over that step of both.
 *
 * Every list of calls or instances comes from the report's drill-down hook
 * (drill.c, the one path of the table pages): the "ops" report's for the
 * operator tables (by name, name + shapes, name + stack) and for the
 * operator delta table, the "kernels" report's for the kernel delta table,
 * once per run (the scope's rank) in compare mode.
 *
 * The calls list holds refs into the store; a live update may move them,
 * so the open list is rebuilt on every recompute from the row found again
 * by its key (drill_row) and the selection follows the same event (lane key
 * and start time).
 */
#ifndef GTRACE_TUI_OPVIEW_H
#define GTRACE_TUI_OPVIEW_H

#include <regex.h>
#include "gtrace/diff.h"
#include "view.h"

#define OPV_CMP_N 6                /* compare pages + off */

struct operators_view {
	struct view v;
	struct gt_report_out out;
	struct gt_table *tb;       /* out.tables[0] */
	size_t *rows, nrows;       /* rows passing the filter */
	struct tables_state st;
	regex_t re;
	int has_re;
	char filter[128];
	char err[160];
	int group;                 /* enum gt_ops_group: rows per name, + shapes, + stack */
	/* compare mode (c): 0 off, 1 operators, 2 kernels, 3 the average step's
	   breakdown, 4 the aligned steps side by side, 5 the overviews' verdicts,
	   of rank cmp_ra (baseline) vs cmp_rb (experiment): the `gtrace diff`
	   tables; the lists then hold both ranks' instances (kernels:
	   calls_kernels) */
	int cmp;
	int32_t cmp_ra, cmp_rb;
	struct gt_diff_steps steps;    /* pages 3 and 4: the aligned steps (windows) */
	int has_steps;
	int calls_kernels;         /* the list holds kernels of calls_name, not CPU ops */
	size_t calls_n_ra, calls_n_rb;   /* instances of cmp_ra / cmp_rb in the list */
	/* 0 table, 1 calls of calls_name, 2 GPU work of one call */
	int mode;
	int calls_keyed;           /* grouped: the row is (name, shapes / stack) */
	int calls_by_time;         /* calls ordered by start, else longest first */
	char calls_name[256];
	char calls_row[1024];      /* the listed row's key (drill_key), found again after a recompute */
	struct gt_ref *calls;
	size_t ncalls, top, sel;
	int64_t calls_total_ns;
	/* mode 2: the GPU work launched inside the call calls[sel] */
	struct gt_ref *work;
	size_t nwork, wtop, wsel;
	int64_t work_total_ns;
};

/* list the calls of the selected table row (mode 1) */
void operators_view_calls_open(struct operators_view *o);
/* the store changed under an open list: rebuild it, the same event kept selected */
void operators_view_calls_refresh(struct operators_view *o);
void operators_view_calls_draw(struct operators_view *o, struct lrect r);
int operators_view_calls_key(struct operators_view *o, int ch);
void operators_view_calls_free(struct operators_view *o);

/* operators_view_cmp.c: the compare pages */
/* page cmp's name ("steps side by side"; "" for 0) */
const char *operators_view_cmp_name(int cmp);
/* the two lowest ranks of the store into cmp_ra / cmp_rb; 0 when fewer than two */
int operators_view_cmp_ranks(struct operators_view *o);
/* page o->cmp's tables into o->out (empty before); the index of the table
 * shown, or -1 with o->err set */
long operators_view_cmp_compute(struct operators_view *o);
/* 1 when row `row` of o->tb belongs on page o->cmp (pages 3 and 4 split
 * diff_breakdown by its Row column) */
int operators_view_cmp_keep(const struct operators_view *o, size_t row);
/* Enter on the selected row of pages 3-5: a step of page 4 opens the trace
 * view over that step of both runs; else a message */
void operators_view_cmp_enter(struct operators_view *o);
/* drop the aligned steps */
void operators_view_cmp_free(struct operators_view *o);

#endif
