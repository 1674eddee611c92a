/*
 * safew.h - creating the files gtrace writes without trusting the
 * directory they go to.  Nothing is written through a symbolic link and
 * nothing another user created is written into: by default the data goes
 * to a fresh temporary file beside the target (mkostemp: O_EXCL, 0600,
 * then the umask's mode) renamed into place at commit, so a failed write
 * leaves no partial file.  An existing target is replaced as a name (a
 * symlink is replaced, never followed; a file another user made is
 * replaced, never written into), or with SAFEW_KEEP not at all.
 * SAFEW_INPLACE is for a recording that must open after a crash: the
 * temporary file is put in place early, by safew_place once it holds
 * what makes it open (its header and first complete chunk), and written
 * at the target from then on; a kill before that leaves only the
 * temporary file, never a target that does not open.  A character
 * device or FIFO (/dev/null, /dev/stdout, a pipe) is written into as it
 * is, never replaced; symlinks to one are followed only under /dev/ and
 * /proc/.
 */
#ifndef GTRACE_SAFEW_H
#define GTRACE_SAFEW_H

#include <stddef.h>

#define SAFEW_KEEP    0x1u     /* never replace an existing target (-EEXIST) */
#define SAFEW_INPLACE 0x2u     /* write at the target, created exclusively */

struct safew {
	int fd;                  /* the open file; the caller closes it (fclose/gzclose) */
	unsigned flags;
	char *path;              /* target (copied) */
	char *tmp;               /* temporary file; NULL once placed (SAFEW_INPLACE) */
};

/* create the file for path; 0 with w->fd, or negative errno with
 * "PATH: problem" in err (-EEXIST with SAFEW_KEEP: "... exists; not
 * replaced without --force") */
int safew_open(struct safew *w, const char *path, unsigned flags, char *err, size_t errlen);
/* SAFEW_INPLACE: put the file, still open, at its target (as a commit
 * does: with SAFEW_KEEP never over an existing one); later calls and other
 * modes do nothing.  0 or negative errno with err (the file is removed) */
int safew_place(struct safew *w, char *err, size_t errlen);
/* after the caller closed w->fd without error: put the file in place
 * (rename; with SAFEW_KEEP a rename that never replaces); frees w's
 * strings.  0 or negative errno with "PATH: problem" in err */
int safew_commit(struct safew *w, char *err, size_t errlen);
/* remove what was created (the temporary file, or a placed target);
 * frees w's strings.  The caller closes w->fd (before or after). */
void safew_abort(struct safew *w);

#endif
