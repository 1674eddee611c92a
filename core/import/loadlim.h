/*
 * loadlim.h - limits on what one load may put in a store (gt_load):
 * lanes per input file and events per byte of input (files as stored on
 * disk, a directory's regular files summed), with a slack for small files.
 * Defaults that no real trace reaches; raised by the environment variables
 * below (the CLI's --max-lanes and --max-events-per-byte set them).
 */
#ifndef GTRACE_LOADLIM_H
#define GTRACE_LOADLIM_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/store.h"

#define LOADLIM_ENV_LANES "GTRACE_MAX_LANES"
#define LOADLIM_ENV_EPB   "GTRACE_MAX_EVENTS_PER_BYTE"
#define LOADLIM_DEF_LANES 100000      /* lanes per input file */
#define LOADLIM_DEF_EPB   32          /* events per byte of input (as .gtrace's reader) */
#define LOADLIM_SLACK     (UINT64_C(1) << 16)   /* events any input may hold */

struct loadlim {
	uint64_t lanes_per_file, events_per_byte;   /* the limits asked for */
	uint64_t bytes, files;                      /* the inputs measured */
	uint64_t max_lanes, max_events;             /* what the store allows */
};

/* the limits from the environment (or the defaults); 0, or -EINVAL with
 * "VAR='value': ..." in err */
int loadlim_get(struct loadlim *l, char *err, size_t errlen);
/* measure paths and set the store's limits (events only when events_too:
 * the .gtrace reader has its own events-per-byte rule) */
void loadlim_apply(struct loadlim *l, struct gt_store *s, const char *const *paths, size_t n,
		   int events_too);
/* 0 when no limit refused anything, else -E2BIG with "NAME: more than N
 * lanes ..." (or events) in err */
int loadlim_check(const struct loadlim *l, const struct gt_store *s, const char *name,
		  char *err, size_t errlen);

#endif
