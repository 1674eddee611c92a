/*
 * convmark.h - the NVTX ranges a converter holds open: CUPTI writes a
 * range as a START and an END marker record with the same id, and ranges
 * nest to any depth (more than 4096 deep in real models), so the open ones
 * are kept in a growing open-addressing table keyed by marker id (linear
 * probing, backward-shift deletion), bounded at CONVMARK_MAX entries.
 */
#ifndef GTRACE_CAPTURE_CONVMARK_H
#define GTRACE_CAPTURE_CONVMARK_H

#include <stddef.h>
#include <stdint.h>

#define CONVMARK_MAX (1u << 20)   /* open ranges kept at most */

struct convmark_ent {
	uint32_t id;             /* CUPTI marker id, 0 = free slot */
	uint32_t name;           /* interned name */
	int64_t start_ns;        /* CUPTI time of the START record */
	uint32_t tid;
	uint32_t pad;
};

struct convmark {
	struct convmark_ent *t;  /* cap slots, cap a power of two (or 0) */
	size_t cap, n;
};

/* free the table (an all-zero struct convmark is an empty table) */
void convmark_done(struct convmark *m);
/* open range e (e->id > 0); 0, 1 when e->id was open already (replaced:
 * the older range is lost), -ENOSPC at CONVMARK_MAX, -ENOMEM */
int convmark_put(struct convmark *m, const struct convmark_ent *e);
/* close range id: 1 with *out filled and the entry removed, 0 when id is
 * not open */
int convmark_take(struct convmark *m, uint32_t id, struct convmark_ent *out);

#endif
