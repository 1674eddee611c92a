/*
 * safew.c - safe creation of output files (safew.h): temporary file in
 * the target's directory, renamed into place; never a symlink followed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "safew.h"

static void strings_free(struct safew *w)
{
	free(w->path);
	free(w->tmp);
	w->path = w->tmp = NULL;
}

/* "DIR/.BASE.XXXXXX" beside path; malloc'd or NULL */
static char *tmp_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
	size_t n = strlen(path) + 16;
	char *t = malloc(n);
	if (t)
		snprintf(t, n, "%.*s.%s.XXXXXX", (int)dl, path, slash ? slash + 1 : path);
	return t;
}

/* the process umask, read without changing it for good */
static mode_t cur_umask(void)
{
	mode_t m = umask(022);
	umask(m);
	return m;
}

/* a device or pipe to write into as it is (/dev/null, /dev/stdout, a
 * FIFO): never replaced by a regular file.  Symlinks to one are followed
 * only under /dev/ and /proc/, where no user plants them. */
static int is_special(const char *path, const struct stat *lst)
{
	struct stat st;
	if (S_ISCHR(lst->st_mode) || S_ISFIFO(lst->st_mode))
		return 1;
	if (!S_ISLNK(lst->st_mode) || stat(path, &st) < 0)
		return 0;
	return (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) &&
	       (!strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6));
}

int safew_open(struct safew *w, const char *path, unsigned flags, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->flags = flags;
	struct stat st;
	int e;
	if (lstat(path, &st) == 0 && is_special(path, &st)) {
		w->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (w->fd < 0) {
			e = errno;
			snprintf(err, errlen, "%s: %s", path, strerror(e));
			return -e;
		}
		return 0;        /* no path, no tmp: commit and abort leave it alone */
	}
	if (lstat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "%s: is a directory", path);
			return -EISDIR;
		}
		if (flags & SAFEW_KEEP) {
			snprintf(err, errlen, "%s: %s exists; not replaced without --force", path,
				 S_ISLNK(st.st_mode) ? "a symbolic link" : "file");
			return -EEXIST;
		}
	}
	w->path = strdup(path);
	if (!w->path)
		goto oom;
	w->tmp = tmp_name(path);
	if (!w->tmp)
		goto oom;
	w->fd = mkostemp(w->tmp, O_CLOEXEC);
	if (w->fd < 0)
		goto sys;
	if (fchmod(w->fd, 0666 & ~cur_umask()) < 0) {
		e = errno;
		close(w->fd);
		unlink(w->tmp);
		w->fd = -1;
		errno = e;
		goto sys;
	}
	return 0;
sys:
	e = errno;
	if (e == EEXIST || e == ELOOP)
		snprintf(err, errlen, "%s: appeared while being created; not replaced", path);
	else
		snprintf(err, errlen, "%s: %s", path, strerror(e));
	strings_free(w);
	return e == ELOOP ? -EEXIST : -e;
oom:
	snprintf(err, errlen, "%s: out of memory", path);
	strings_free(w);
	return -ENOMEM;
}

/* rename the temporary file to the target (with SAFEW_KEEP never over
 * an existing one); 0 or negative errno with err, the temporary file
 * removed */
static int put_in_place(struct safew *w, char *err, size_t errlen)
{
	int rc = 0;
	if (!(w->flags & SAFEW_KEEP)) {
		if (rename(w->tmp, w->path) < 0)
			rc = -errno;
	} else if (renameat2(AT_FDCWD, w->tmp, AT_FDCWD, w->path, RENAME_NOREPLACE) < 0) {
		rc = -errno;
		if (rc == -EINVAL || rc == -ENOSYS) {
			/* a file system without RENAME_NOREPLACE: link never replaces */
			rc = link(w->tmp, w->path) < 0 ? -errno : 0;
			if (!rc)
				unlink(w->tmp);
		}
	}
	if (rc) {
		if (rc == -EEXIST)
			snprintf(err, errlen, "%s: appeared while being written; not replaced "
				 "without --force", w->path);
		else
			snprintf(err, errlen, "%s: %s", w->path, strerror(-rc));
		unlink(w->tmp);
	}
	return rc;
}

int safew_place(struct safew *w, char *err, size_t errlen)
{
	if (!w->tmp || !(w->flags & SAFEW_INPLACE))
		return 0;
	int rc = put_in_place(w, err, errlen);
	free(w->tmp);
	w->tmp = NULL;
	return rc;
}

int safew_commit(struct safew *w, char *err, size_t errlen)
{
	int rc = w->tmp ? put_in_place(w, err, errlen) : 0;
	strings_free(w);
	return rc;
}

void safew_abort(struct safew *w)
{
	if (w->tmp)
		unlink(w->tmp);
	else if (w->path)
		unlink(w->path);
	strings_free(w);
}
