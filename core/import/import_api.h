/*
 * import_api.h - the importers' entry points used by load.c (core/import/).
 * Each fills the store and finishes it; 0 or negative errno with one line
 * in err; warnings (events skipped and why) go to stderr unless quiet.
 */
#ifndef GTRACE_IMPORT_API_H
#define GTRACE_IMPORT_API_H

#include "gtrace/load.h"

/* Kineto / Chrome trace JSON files (.json, .json.gz), one per rank */
int import_files(const char *const *paths, size_t n, const struct gt_load_opts *o,
		 struct gt_store *s, char *err, size_t errlen);
/* every trace file in a directory, one per rank */
int import_dir(const char *dir, const struct gt_load_opts *o, struct gt_store *s,
	       char *err, size_t errlen);
/* Nsight Systems `nsys export --type sqlite` */
int import_nsys(const char *path, const struct gt_load_opts *o, struct gt_store *s,
		char *err, size_t errlen);
/* XPlane profiles (TensorFlow, JAX: HOST.xplane.pb[.gz]), one file per host
 * (rank), in the given order */
int xplane_import_files(const char *const *paths, size_t n, const struct gt_load_opts *o,
			struct gt_store *s, char *err, size_t errlen);
/* a TensorBoard log directory, its plugins/profile or a run folder: the run
 * o->run, else the newest (said on stderr when there are several) */
int xplane_import_dir(const char *dir, const struct gt_load_opts *o, struct gt_store *s,
		      char *err, size_t errlen);
/* 1 when dir is such a directory (holds XPlane files where they are looked for) */
int xplane_dir_probe(const char *dir);
/* a file name ending in .xplane.pb or .xplane.pb.gz */
int xplane_is_name(const char *path);

#endif
