/*
 * live_save.c - where the viewer's W saves a live capture: a file named by
 * the time in the current directory, said by its full path (the status
 * line's "saved gtrace-N.gtrace" left the user guessing which directory).
 */
#include <limits.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "live_sess.h"

void live_save_path(char *out, size_t len)
{
	char cwd[PATH_MAX];
	long t = (long)time(NULL);
	if (getcwd(cwd, sizeof(cwd)))
		snprintf(out, len, "%s%sgtrace-%ld.gtrace", cwd, cwd[1] ? "/" : "", t);
	else
		snprintf(out, len, "gtrace-%ld.gtrace", t);
}
