/*
 * kernels_view.h - the kernel statistics page's state, shared by kernels_view.c (the
 * report tables) and kernels_view_inst.c (instances of one row + histogram).
 */
#ifndef GTRACE_TUI_KVIEW_H
#define GTRACE_TUI_KVIEW_H

#include <regex.h>
#include "view.h"
#include "demangle.h"

#define KERNELS_VIEW_NTABS 3

struct kernels_view {
	struct view v;
	int tab;                   /* 0 kernels, 1 memory, 2 nccl */
	int gpu;                   /* device ordinal, -1 = all */
	const struct gt_report *rep;   /* the tab's report */
	struct gt_report_out out;
	struct gt_table *tb;       /* out.tables[0] */
	size_t *rows, nrows;       /* rows passing the filter */
	struct tables_state st;
	regex_t re;
	int has_re;
	char filter[128];
	char err[160];
	/* instances of the selected row */
	int inst_open;
	int inst_by_time;
	char inst_title[256];
	char inst_key[1024];       /* the row's key (drill_key): found again live */
	struct gt_ref *inst;
	size_t ninst;
	size_t inst_top, inst_sel;
	int64_t inst_total_ns, inst_min_ns, inst_max_ns;
	/* duration histogram: KERNELS_VIEW_HIST log-spaced bins over [min, max] */
	uint64_t hist[16];
	int64_t hist_edge_ns[17];
	int nhist;
};

void kernels_view_inst_open(struct kernels_view *k);
/* the store changed under an open list: load it again in place, the same
 * event staying selected when it is still there */
void kernels_view_inst_refresh(struct kernels_view *k);
void kernels_view_inst_draw(struct kernels_view *k, struct lrect r);
int kernels_view_inst_key(struct kernels_view *k, int ch);

#endif
