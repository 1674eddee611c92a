/*
 * xplane.h - private to core/import: the XPlane importer (TensorFlow, JAX,
 * PyTorch/XLA profiles, `HOST.xplane.pb`, optionally gzip'ed).
 *
 * xplane.c reads a file whole (kineto_read: plain or gzip) and hands the bytes to
 * xplane_map.c, which unpacks them with the protoc-c code generated from
 * xplane.proto one level at a time (space -> packed planes -> packed lines
 * -> one line's events -> one event with its stats still packed, each in
 * an arena that is reset after it) and maps planes, lines and events into
 * the store under one rank; xplane_memo.c unpacks each distinct stat of a
 * plane once.
 * xplane_dir.c finds the run (host files) in a TensorBoard log directory.
 */
#ifndef GTRACE_XPLANE_H
#define GTRACE_XPLANE_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/load.h"
#include "gtrace/store.h"

/* counts of one file's mapping (for warnings and tests) */
struct xplane_stats {
	uint64_t events;          /* events added to the store */
	uint64_t skipped;         /* events with impossible times (negative, overflow) */
	uint64_t aggregated;      /* events without a time (num_occurrences), not kept */
	uint64_t planes, lines;
};

/* map one serialized XSpace (buf, len: malloc'ed, or mmap'ed when mapped;
 * taken over and released as soon as its planes are unpacked) into s under `rank` (world = ranks of
 * the run, -1 unknown); name is used in messages and as the rank's source.
 * 0, -EINVAL (damaged / not an XSpace) or -ENOMEM with "NAME: problem" in
 * err.  The store is not finished. */
int xplane_map_space(void *buf, size_t len, int mapped, const char *name, int32_t rank,
		     int32_t world, struct gt_store *s, struct xplane_stats *st,
		     char *err, size_t errlen);

/* a file name of the format: ends in .xplane.pb or .xplane.pb.gz */
int xplane_is_name(const char *path);

/* a directory that holds XPlane files: the directory itself (a run
 * folder), LOGDIR/plugins/profile/RUN or PROFILEDIR/RUN.  1 when it does */
int xplane_dir_probe(const char *dir);

/* the host files of the chosen run of dir (run NULL: the newest, by the
 * run folder's modification time, then name), sorted by name; *runname
 * and *nruns say which of how many.  0 or negative errno with one line in
 * err.  Free with xplane_dir_free. */
int xplane_dir_files(const char *dir, const char *run, char ***paths, size_t *n,
		     char *runname, size_t runlen, size_t *nruns, char *err, size_t errlen);
void xplane_dir_free(char **paths, size_t n);

#endif
