/*
 * ireport.c - see ireport.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ireport.h"

void ireport_failure(const char *why)
{
	fprintf(stderr, "gtrace capture: process %d cannot be traced: %s\n", (int)getpid(), why);
	const char *v = getenv(IREPORT_ENV);
	if (!v || !*v)
		return;
	char *end;
	errno = 0;
	long fd = strtol(v, &end, 10);
	struct stat st;
	/* only a pipe: never write into whatever else the number may name */
	if (*end || errno || fd < 3 || fd > 65535 || fstat((int)fd, &st) || !S_ISFIFO(st.st_mode))
		return;
	char line[512];
	int n = snprintf(line, sizeof(line), "%d %s\n", (int)getpid(), why);
	if (n > 0 && write((int)fd, line, (size_t)(n < (int)sizeof(line) ? n : (int)sizeof(line) - 1)) < 0) {
		/* the starter is gone: stderr said it */
	}
}
