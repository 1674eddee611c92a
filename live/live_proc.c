/*
 * live_proc.c - finding traced processes: listening @gtrace-PID sockets in
 * /proc/net/unix, and the parent chain of a pid from /proc/PID/stat.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/ctl.h"
#include "live.h"

size_t live_list_pids(pid_t *pids, size_t max)
{
	FILE *f = fopen("/proc/net/unix", "r");
	if (!f)
		return 0;
	char line[512];
	size_t n = 0;
	const char *pfx = "@" GT_CTL_SOCK_PREFIX;
	size_t pl = strlen(pfx);
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, pfx);
		if (!p)
			continue;
		/* a listening socket: state 01 (SS_UNCONNECTED) with flag __SO_ACCEPTCON */
		unsigned long flags = 0;
		if (sscanf(line, "%*s %*s %*s %lx", &flags) != 1 || !(flags & 0x10000))
			continue;
		char *end;
		long pid = strtol(p + pl, &end, 10);
		/* "@gtrace-PID", or the fallback "@gtrace-PID-RANDOM" */
		if (pid <= 0 || (*end != '\n' && *end != 0 && *end != ' ' && *end != '-'))
			continue;
		int dup = 0;
		for (size_t i = 0; i < n && i < max; i++)
			dup |= pids[i] == (pid_t)pid;
		if (dup)
			continue;
		if (n < max)
			pids[n] = (pid_t)pid;
		n++;
	}
	fclose(f);
	return n;
}

static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *rp = strrchr(buf, ')');      /* comm may hold spaces and parens */
	int ppid;
	if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

int live_is_descendant(pid_t pid, pid_t ancestor)
{
	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		if (pid == ancestor)
			return 1;
		pid = parent_of(pid);
	}
	return 0;
}
