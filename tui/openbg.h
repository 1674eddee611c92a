/*
 * openbg.h - `gtrace open` of a big .gtrace: first frame from the file's
 * summary, events loaded on a thread and swapped in (openbg.c).
 */
#ifndef GTRACE_TUI_OPENBG_H
#define GTRACE_TUI_OPENBG_H

#include <stddef.h>
#include "ui.h"

struct openbg;

/* when path is a complete .gtrace with a summary of at least 32 MB
 * (GTRACE_OPEN_BG_MIN_MB overrides): read its head, start the
 * loader (memory: SIZE_MAX = the default budget, 0 = none), fill src's
 * store, ctx, poll and status; 1 then (*out to pass to openbg_done after
 * ui_run; src->store is the caller's to free), else 0 and nothing set
 * (load it whole).  GTRACE_OPEN_WHOLE=1 in the environment turns it off */
int openbg_try(const char *path, size_t memory, struct ui_source *src, struct openbg **out);
/* after ui_run: free what is left (a loader still running is left to the
 * process exit) */
void openbg_done(struct openbg *b);

#endif
