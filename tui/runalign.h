/*
 * runalign.h - align the starts of separate runs opened together
 * (runalign.c); no curses.
 */
#ifndef GTRACE_TUI_RUNALIGN_H
#define GTRACE_TUI_RUNALIGN_H

#include <stddef.h>
#include "gtrace/store.h"

/* when the store holds separate runs (import.mixed_runs), move each rank so
 * that its first step (or, when a rank has none, its first event) starts
 * with the earliest one's; note gets "runs aligned at their first step"
 * (or "" when nothing moved).  0, or -1 when out of memory. */
int runalign_starts(struct gt_store *s, char *note, size_t len);

#endif
