/*
 * load.c - open any input into a store: detects the format from the path and
 * the first bytes and hands over to the reader or importer for it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "gtrace/gtfile.h"
#include "gtrace/gtjob.h"
#include "gtrace/load.h"
#include "import_api.h"
#include "loadlim.h"

enum gt_format gt_load_detect(const char *path, char *err, size_t errlen)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return GT_FMT_UNKNOWN;
	}
	if (S_ISDIR(st.st_mode))
		return xplane_dir_probe(path) ? GT_FMT_XPLANE : GT_FMT_DIRECTORY;
	if (!S_ISREG(st.st_mode)) {
		/* a FIFO would block the open forever, a device never ends */
		snprintf(err, errlen, "%s: not a regular file (a pipe or device); save the trace to a file first",
			 path);
		return GT_FMT_UNKNOWN;
	}
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return GT_FMT_UNKNOWN;
	}
	unsigned char b[64] = { 0 };
	size_t n = fread(b, 1, sizeof(b), f);
	fclose(f);
	if (n == 0) {
		snprintf(err, errlen, "%s: empty file", path);
		return GT_FMT_UNKNOWN;
	}
	if (gt_file_sniff(b, n))
		return GT_FMT_GTRACE;
	if (xplane_is_name(path))
		return GT_FMT_XPLANE;
	if (n >= 16 && !memcmp(b, "SQLite format 3", 16))
		return GT_FMT_NSYS_SQLITE;
	if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return GT_FMT_KINETO_JSON;
	for (size_t i = n >= 3 && !memcmp(b, "\xef\xbb\xbf", 3) ? 3 : 0; i < n; i++) {
		if (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n')
			continue;
		if (b[i] == '{' || b[i] == '[')
			return GT_FMT_KINETO_JSON;
		break;
	}
	snprintf(err, errlen, "%s: not a gtrace capture, trace JSON, nsys SQLite or XPlane (.xplane.pb) file", path);
	return GT_FMT_UNKNOWN;
}

int gt_load(const char *const *paths, size_t n, const struct gt_load_opts *o,
	    struct gt_store **out, char *err, size_t errlen)
{
	struct gt_load_opts def = { 0 };
	if (!o)
		o = &def;
	*out = NULL;
	if (n == 0) {
		snprintf(err, errlen, "no input given");
		return -EINVAL;
	}
	struct gt_store *s = gt_store_new();
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	int rc = 0, keep_warning = 0;
	if (o->memory_bytes && (rc = gt_store_set_budget(s, o->memory_bytes)) != 0 &&
	    (o->flags & GT_LOAD_MEMORY_SOFT)) {
		gt_store_set_budget(s, 0);
		rc = 0;
	} else if (rc) {
		snprintf(err, errlen, "memory budget: cache file in %s: %s",
			 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp",
			 strerror(-rc));
		gt_store_free(s);
		return rc;
	}
	/* lanes per input file, events per input byte (loadlim.h) */
	struct loadlim lim;
	if ((rc = loadlim_get(&lim, err, errlen))) {
		gt_store_free(s);
		return rc;
	}
	loadlim_apply(&lim, s, paths, n, 1);
	if (n > 1) {
		/* only trace JSON files merge as ranks; say so instead of "not JSON" */
		static const char *const what[] = { [GT_FMT_GTRACE] = "a .gtrace capture",
			[GT_FMT_NSYS_SQLITE] = "an nsys SQLite export", [GT_FMT_DIRECTORY] = "a directory",
			[GT_FMT_XPLANE] = "an XPlane profile" };
		/* every path is checked first: a missing or unreadable one is named
		   before any "cannot be merged" complaint about another */
		size_t ng = 0;
		for (size_t i = 0; i < n; i++) {
			enum gt_format f = gt_load_detect(paths[i], err, errlen);
			if (f == GT_FMT_UNKNOWN) {
				gt_store_free(s);
				return -EINVAL;
			}
			/* several .gtrace files: the nodes of one job (gtjob.h) */
			ng += f == GT_FMT_GTRACE;
		}
		/* the same file twice (a shell glob and a name, a link) would
		   become two ranks of one run, silently */
		for (size_t i = 0; i < n; i++) {
			struct stat a;
			if (stat(paths[i], &a))
				continue;
			for (size_t j = 0; j < i; j++) {
				struct stat b;
				if (!stat(paths[j], &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
					snprintf(err, errlen, "%s: the same file as %s, given twice",
						 paths[i], paths[j]);
					gt_store_free(s);
					return -EINVAL;
				}
			}
		}
		if (ng == n) {
			char warn[512];
			/* the .gtrace reader has its own events-per-byte rule */
			gt_store_limits_set(s, (size_t)(lim.max_lanes < SIZE_MAX ? lim.max_lanes : SIZE_MAX), 0);
			rc = gt_job_load_files(paths, n, s, 0, warn, sizeof(warn), err, errlen);
			if (!rc && warn[0]) {
				snprintf(err, errlen, "%s", warn);
				keep_warning = (o->flags & GT_LOAD_QUIET) != 0;
				if (!keep_warning)
					fprintf(stderr, "gtrace: warning: %s\n", err);
			}
			goto merged;
		}
		err[0] = 0;
		/* several XPlane host files: ranks of one run */
		size_t nx = 0;
		for (size_t i = 0; i < n; i++)
			nx += xplane_is_name(paths[i]);
		for (size_t i = 0; i < n && !rc; i++) {
			enum gt_format f = gt_load_detect(paths[i], err, errlen);
			if (f == GT_FMT_UNKNOWN)
				rc = -EINVAL;
			else if (nx == n && f == GT_FMT_XPLANE)
				continue;
			else if (f != GT_FMT_KINETO_JSON) {
				snprintf(err, errlen, "%s: is %s; only trace JSON files can be merged (XPlane files only with each other), open it on its own",
					 paths[i], f < sizeof(what) / sizeof(what[0]) && what[f] ? what[f] : "not JSON");
				rc = -EINVAL;
			}
		}
		if (!rc)
			rc = nx == n ? xplane_import_files(paths, n, o, s, err, errlen) :
				       import_files(paths, n, o, s, err, errlen);
merged:;
	} else {
		switch (gt_load_detect(paths[0], err, errlen)) {
		case GT_FMT_GTRACE:
			/* its reader has its own events-per-byte rule */
			gt_store_limits_set(s, (size_t)(lim.max_lanes < SIZE_MAX ? lim.max_lanes : SIZE_MAX), 0);
			rc = gt_file_read_progress(paths[0], s, NULL, o->progress_bytes, err, errlen);
			keep_warning = (o->flags & GT_LOAD_QUIET) != 0;
			if (rc == 0 && err[0] && !(o->flags & GT_LOAD_QUIET))
				fprintf(stderr, "gtrace: warning: %s\n", err);
			break;
		case GT_FMT_KINETO_JSON:
			rc = import_files(paths, 1, o, s, err, errlen);
			break;
		case GT_FMT_DIRECTORY:
			rc = import_dir(paths[0], o, s, err, errlen);
			break;
		case GT_FMT_NSYS_SQLITE:
			rc = import_nsys(paths[0], o, s, err, errlen);
			break;
		case GT_FMT_XPLANE: {
			struct stat st;
			rc = !stat(paths[0], &st) && S_ISDIR(st.st_mode) ?
			     xplane_import_dir(paths[0], o, s, err, errlen) :
			     xplane_import_files(paths, 1, o, s, err, errlen);
			break;
		}
		default:
			rc = -EINVAL;
		}
	}
	/* a limit that refused a lane or an event, whatever the importer made
	 * of the refusal (most say "out of memory"), is named as such */
	if (gt_store_limit_hit(s)) {
		char name[512];
		snprintf(name, sizeof(name), n > 1 ? "%s (and %zu more inputs)" : "%s", paths[0], n - 1);
		rc = loadlim_check(&lim, s, name, err, errlen);
	}
	if (rc) {
		gt_store_free(s);
		return rc;
	}
	gt_store_limits_set(s, 0, 0);
	/* a warning stays in err only for a caller that asked for quiet (it prints
	   it itself); otherwise it went to stderr above */
	if (!keep_warning)
		err[0] = '\0';
	*out = s;
	return 0;
}
