/*
 * loadlim.c - the limits gt_load puts on a store filled from untrusted input
 * (loadlim.h): lanes per input file and events per byte of input, values no
 * real trace comes near, so that a small hostile file cannot make gtrace
 * allocate gigabytes (1 M distinct pid/tid in 84 MB of JSON took 3.1 GB).
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "loadlim.h"

/* the input bytes and files under one path (a directory's regular files
 * and links to regular files); nftw has no user pointer, so one walk at a
 * time */
static uint64_t walk_bytes, walk_files;

static int walk_one(const char *p, const struct stat *st, int type, struct FTW *f)
{
	(void)f;
	struct stat t;
	/* a link to a trace file counts as the file (rank directories are
	 * often links); links to directories are not walked */
	if (type == FTW_SL && !stat(p, &t) && S_ISREG(t.st_mode))
		st = &t;
	else if (type != FTW_F)
		return 0;
	if (S_ISREG(st->st_mode)) {
		walk_bytes += (uint64_t)st->st_size;
		walk_files++;
	}
	return walk_files > 1000000 ? 1 : 0;     /* enough to bound anything */
}

/* a positive number from the environment variable name, def when unset;
 * -1 with the problem in err when set but not a number in 1..2^62 */
static int64_t env_num(const char *name, int64_t def, char *err, size_t errlen)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return def;
	char *end;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	if (*end || errno || n < 1 || n > (INT64_C(1) << 62)) {
		snprintf(err, errlen, "%s='%s': not a number from 1 to 2^62", name, v);
		return -1;
	}
	return n;
}

int loadlim_get(struct loadlim *l, char *err, size_t errlen)
{
	int64_t lanes = env_num(LOADLIM_ENV_LANES, LOADLIM_DEF_LANES, err, errlen);
	if (lanes < 0)
		return -EINVAL;
	int64_t epb = env_num(LOADLIM_ENV_EPB, LOADLIM_DEF_EPB, err, errlen);
	if (epb < 0)
		return -EINVAL;
	l->lanes_per_file = (uint64_t)lanes;
	l->events_per_byte = (uint64_t)epb;
	return 0;
}

void loadlim_apply(struct loadlim *l, struct gt_store *s, const char *const *paths, size_t n,
		   int events_too)
{
	walk_bytes = walk_files = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(paths[i], &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			nftw(paths[i], walk_one, 16, FTW_PHYS);
		} else {
			walk_bytes += (uint64_t)st.st_size;
			walk_files++;
		}
	}
	l->bytes = walk_bytes;
	l->files = walk_files ? walk_files : 1;
	/* saturating: the products of a raised limit must not wrap */
	l->max_lanes = l->lanes_per_file > UINT64_MAX / l->files ? UINT64_MAX :
		       l->lanes_per_file * l->files;
	l->max_events = l->events_per_byte > (UINT64_MAX - LOADLIM_SLACK) / (l->bytes ? l->bytes : 1) ?
			UINT64_MAX : l->events_per_byte * l->bytes + LOADLIM_SLACK;
	gt_store_limits_set(s, l->max_lanes > SIZE_MAX ? SIZE_MAX : (size_t)l->max_lanes,
			 events_too ? l->max_events : 0);
}

int loadlim_check(const struct loadlim *l, const struct gt_store *s, const char *name,
		  char *err, size_t errlen)
{
	switch (gt_store_limit_hit(s)) {
	case GT_STORE_LIM_LANES:
		snprintf(err, errlen, "%s: more than %" PRIu64 " lanes (threads, streams) for %" PRIu64
			 " input file%s, a limit real traces never reach; raise it with --max-lanes N or "
			 LOADLIM_ENV_LANES " (lanes per input file)", name, l->max_lanes, l->files,
			 l->files == 1 ? "" : "s");
		return -E2BIG;
	case GT_STORE_LIM_EVENTS:
		snprintf(err, errlen, "%s: more than %" PRIu64 " events for %" PRIu64 " bytes of input "
			 "(%" PRIu64 " per byte), a limit real traces never reach; raise it with "
			 "--max-events-per-byte N or " LOADLIM_ENV_EPB, name, l->max_events, l->bytes,
			 l->events_per_byte);
		return -E2BIG;
	}
	return 0;
}
