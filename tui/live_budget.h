/*
 * live_budget.h - the store's memory budget as the live commands use it.
 * The budget itself is the store's (gtrace/store.h: store_set_budget and
 * friends); until the store has it, LIVE_BUDGET_FALLBACK (set by
 * tui/meson.build when gtrace/store.h lacks store_set_budget) declares a
 * stand-in (live_budget.c) that records the budget without enforcing it.
 */
#ifndef GTRACE_TUI_LIVE_BUDGET_H
#define GTRACE_TUI_LIVE_BUDGET_H

#include <stddef.h>
#include "gtrace/store.h"

#ifdef LIVE_BUDGET_FALLBACK
/* FALLBACK (until gtrace/store.h has them): the budget is recorded, not
 * enforced; resident bytes are store_bytes() */
int store_set_budget(struct gt_store *s, size_t bytes);
size_t store_budget(const struct gt_store *s);
size_t store_resident_bytes(const struct gt_store *s);
size_t gt_default_memory_budget(void);
int gt_parse_size(const char *text, size_t *out);
#endif

/* 1 when the store enforces its budget (0 with the fallback) */
int live_budget_enforced(void);

#endif
