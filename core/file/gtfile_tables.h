/*
 * gtfile_tables.h - table chunks of the .gtrace file (strings, lanes, kconf,
 * nccl, devices, ranks, drops, metadata): the writer's incremental state and
 * encoders, and the reader's decoders.  Private to core/file/.
 */
#ifndef GTRACE_GTFILE_TABLES_H
#define GTRACE_GTFILE_TABLES_H

#include "gtfile_priv.h"

/* how much of a store's tables a writer has written */
struct gtfile_tabstate {
	size_t n_str, n_lanes, n_kconf, n_nccl;
	uint32_t *lane_name, *lane_sort;   /* as written, per lane */
	size_t cap_lanes;
	struct gtfile_buf devs, ranks, drops, meta;   /* last payload written */
};

int gtfile_tab_init(struct gtfile_tabstate *t);
void gtfile_tab_done(struct gtfile_tabstate *t);
/* write strings, lanes, kconf, nccl, devices, ranks added or changed since
 * the last call; 0 or negative errno */
int gtfile_tab_sync(struct gt_file_writer *w, struct gtfile_tabstate *t, const struct gt_store *s);
/* write drops and metadata when they changed; 0 or negative errno */
int gtfile_tab_sync_tail(struct gt_file_writer *w, struct gtfile_tabstate *t,
			 const struct gt_store *s);

/* the writer's payload buffer and chunk framing (gtfile_write.c) */
struct gtfile_buf *gtfile_writer_raw(struct gt_file_writer *w);
int gtfile_writer_chunk(struct gt_file_writer *w, uint32_t type, uint32_t events);
/* bytes written so far: the offset of the next chunk */
uint64_t gtfile_writer_offset(const struct gt_file_writer *w);

/* apply a table chunk's payload to the store being read; 0 or negative
 * errno with the reason in why */
int gtfile_tab_read(uint32_t type, const unsigned char *p, size_t len, struct gt_store *s,
		    char *why, size_t whylen);

#endif
