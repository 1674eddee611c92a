/*
 * ctl_names.c - the names a traced process may listen on (gtrace/ctl.h):
 * "@gtrace-<pid>", or when another process holds that name (a squatter),
 * "@gtrace-<pid>-<16 random hex digits>", which nobody can take before
 * the process binds it.  Clients find the second form in /proc/net/unix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/ctl.h"

size_t gt_ctl_addr_name(void *p, const char *name)
{
	struct sockaddr_un *a = p;
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	int n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "%s", name);
	if (n > (int)sizeof(a->sun_path) - 2)
		n = (int)sizeof(a->sun_path) - 2;
	return offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n;
}

void gt_ctl_alt_name(pid_t pid, char *name, size_t len)
{
	uint64_t r = 0;
	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		r = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() << 32;
	}
	snprintf(name, len, GT_CTL_SOCK_PREFIX "%d-%016llx", (int)pid, (unsigned long long)r);
}

size_t gt_ctl_alt_names(pid_t pid, char (*names)[GT_CTL_NAME_MAX], size_t max)
{
	FILE *f = fopen("/proc/net/unix", "r");
	if (!f)
		return 0;
	char want[48], line[512];
	int wl = snprintf(want, sizeof(want), "@" GT_CTL_SOCK_PREFIX "%d-", (int)pid);
	size_t n = 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, want);
		unsigned long flags = 0;
		if (!p || sscanf(line, "%*s %*s %*s %lx", &flags) != 1 || !(flags & 0x10000))
			continue;             /* not a listening socket */
		size_t l = strcspn(p + 1, " \n");
		if (l >= GT_CTL_NAME_MAX || l <= (size_t)wl - 1)
			continue;
		memcpy(names[n], p + 1, l);
		names[n][l] = 0;
		n++;
	}
	fclose(f);
	return n;
}
