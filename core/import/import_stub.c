/* import_stub.c - placeholders until the importers land (delete then) */
#include <errno.h>
#include <stdio.h>
#include "../file/import_api.h"

int import_files(const char *const *paths, size_t n, const struct gt_load_opts *o,
		 struct gt_store *s, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: trace JSON import is not built yet", n ? paths[0] : "?");
	return -ENOSYS;
}

int import_dir(const char *dir, const struct gt_load_opts *o, struct gt_store *s,
	       char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: directory import is not built yet", dir);
	return -ENOSYS;
}

int import_nsys(const char *path, const struct gt_load_opts *o, struct gt_store *s,
		char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: nsys import is not built yet", path);
	return -ENOSYS;
}
