/*
 * gtfile_summary.h - summary chunks of the .gtrace file (per-lane summary,
 * gtrace/lsum.h).  Private to core/file/.
 */
#ifndef GTRACE_GTFILE_SUMMARY_H
#define GTRACE_GTFILE_SUMMARY_H

#include "gtfile_priv.h"
#include "gtrace/lsum.h"

#define GTFILE_SUMMARY_ENTRY_BYTES 32u
/* paged levels (GTFILE_CH_SUMPAGES): a level of at least this many entries
 * is written as pages of one slab of GTFILE_SUMPAGE_SLAB buckets x a run of
 * lanes, about GTFILE_SUMPAGE_ENTRIES entries each; the pages chunk lists
 * them, GTFILE_SUMPAGE_BYTES an entry */
#define GTFILE_SUMMARY_PAGE_MIN 262144u
#define GTFILE_SUMPAGE_ENTRIES 32768u
#define GTFILE_SUMPAGE_SLAB 512u
#define GTFILE_SUMPAGE_BYTES 32u

/* build the summary of s's events and write it as summary chunks (nothing
 * for an empty store); 0 or negative errno */
int gtfile_summary_write(struct gt_file_writer *w, const struct gt_store *s);

/* add a summary chunk's payload to *m (created at the first chunk with the
 * store's lane count so far); 0, -ENOMEM, or -EINVAL with the reason in why */
int gtfile_summary_read(const unsigned char *p, size_t len, const struct gt_store *s,
			struct gt_lsum **m, char *why, size_t whylen);

#endif
