/*
 * lanes.h - the trace view's rows: lanes grouped rank -> GPU -> streams and
 * rank -> host process -> threads, with fold state (no curses).
 *
 * `all` holds every row in display order; a group row's subtree is
 * all[i + 1 .. end).  `vis` lists the indices of rows not hidden by a folded
 * ancestor.  Rows are rebuilt when the store gains lanes; fold state is kept.
 * An expanded lane row is followed by its LROW_DEPTH rows (depth 0, 1, ...).
 */
#ifndef GTRACE_TUI_LANES_H
#define GTRACE_TUI_LANES_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/store.h"

enum lanes_kind { LROW_RANK = 0, LROW_GPU, LROW_HOST, LROW_LANE,
		  LROW_DEPTH  /* one nesting depth of the lane row above it (expanded lane) */ };

/* what runs on a GPU stream */
enum lanes_role { LROLE_NONE = 0, LROLE_COMPUTE, LROLE_COPY, LROLE_NCCL, LROLE_MIXED };

struct lanes_row {
	uint8_t kind;          /* enum lanes_kind */
	uint8_t depth;         /* indentation level */
	uint8_t folded;        /* group rows */
	uint8_t role;          /* enum lanes_role, lane rows on GPUs */
	uint8_t ndepth;        /* lane rows: depth rows shown below it (0 = collapsed) */
	uint8_t level;         /* LROW_DEPTH: the nesting depth it shows */
	int32_t rank, device;
	int64_t pid;
	uint32_t lane;         /* LROW_LANE, LROW_DEPTH: lane id */
	uint32_t end;          /* group rows: one past the subtree in `all` */
	char label[48];
	char short_label[24];  /* for narrow label columns */
};

struct lanes {
	struct lanes_row *all;
	size_t nall;
	uint32_t *vis;
	size_t nvis;
	size_t nlanes_seen;    /* store lanes when built */
};

/* (re)build rows from the store, keeping fold state by key; 0 or -ENOMEM */
int lanes_build(struct lanes *L, const struct gt_store *s);
void lanes_done(struct lanes *L);
/* recompute `vis` after a fold change */
void lanes_update_vis(struct lanes *L);
/* show n depth rows below the row of `lane` (0 collapses it); the rows
 * shift, so indices into `all` change; 0 or -ENOMEM */
int lanes_set_depth(struct lanes *L, uint32_t lane, int n);
/* fold or unfold the group at visible row v (no-op on lane rows) */
void lanes_toggle(struct lanes *L, size_t v);
/* fold (1) or unfold (0) every group */
void lanes_fold_all(struct lanes *L, int folded);
/* visible row showing `lane`, unfolding its ancestors; SIZE_MAX if absent */
size_t lanes_find(struct lanes *L, uint32_t lane);
/* role of a GPU lane from a sample of its events */
enum lanes_role lanes_role_of(const struct gt_lane *l);
const char *lanes_role_name(enum lanes_role r);

#endif
