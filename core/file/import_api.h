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

#endif
