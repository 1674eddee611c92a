/*
 * lsum_page.h - paged levels of the per-lane summary (lsum_page.c): private
 * to core/store.
 */
#ifndef GTRACE_LSUM_PAGE_H
#define GTRACE_LSUM_PAGE_H

#include "gtrace/lsum.h"

/* 1 when level k of m is paged */
int lsum_page_level(const struct gt_lsum *m, int k);
/* lock m's pager (it must have one) and gather lane's entries of paged
 * level k with bucket numbers in [ia0, ia1] into its scratch: *e, *n.
 * 0, or a negative errno (a page failed to load).  The caller unlocks with
 * lsum_page_unlock whatever this returned. */
int lsum_page_gather(struct gt_lsum *m, uint32_t lane, int k, int64_t ia0, int64_t ia1,
		     const struct gt_lsum_ent **e, size_t *n);
void lsum_page_unlock(struct gt_lsum *m);
/* free the pager (pages, scratch) and call its done */
void lsum_page_free(struct gt_lsum *m);

#endif
