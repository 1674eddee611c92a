/* gtfile_stub.c - placeholders until the .gtrace reader/writer land (delete then) */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "gtrace/gtfile.h"

int gtfile_sniff(const void *buf, size_t len)
{
	return len >= 8 && !memcmp(buf, GTFILE_MAGIC, 8);
}

int gtfile_read(const char *path, struct gt_store *s, struct gtfile_info *info,
		char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: .gtrace reader is not built yet", path);
	return -ENOSYS;
}

int gtfile_write_store(const struct gt_store *s, const char *path, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: .gtrace writer is not built yet", path);
	return -ENOSYS;
}
