/*
 * pinj_maps.c - reading /proc/PID/maps for injection (gtrace/pinj.h): the
 * lowest-offset mapping of a library by base name (its load address), and
 * whether a process maps a CUDA driver.  A line is
 * "start-end perms offset major:minor inode path".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "gtrace/pinj.h"

/* parse one maps line into m; 1 when it names a file */
static int parse_line(const char *line, struct gt_pinj_map *m)
{
	unsigned long long s, e, off, ino;
	unsigned maj, min;
	char perms[8];
	int pos = 0;
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perms, &off, &maj, &min,
		   &ino, &pos) < 7 || pos <= 0)
		return 0;
	const char *path = line + pos;
	if (path[0] != '/')
		return 0;
	m->start = s;
	m->end = e;
	m->offset = off;
	m->dev_major = maj;
	m->dev_minor = min;
	m->ino = ino;
	snprintf(m->perms, sizeof(m->perms), "%.4s", perms);
	snprintf(m->path, sizeof(m->path), "%s", path);
	m->path[strcspn(m->path, "\n")] = 0;
	return 1;
}

/* 1 when the base name of path starts with base */
static int base_is(const char *path, const char *base)
{
	const char *slash = strrchr(path, '/');
	const char *b = slash ? slash + 1 : path;
	return !strncmp(b, base, strlen(base));
}

int gt_pinj_maps_find(pid_t pid, const char *base, struct gt_pinj_map *out)
{
	char path[64], line[1024];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	int found = 0;
	struct gt_pinj_map m;
	while (fgets(line, sizeof(line), f)) {
		if (!parse_line(line, &m) || !base_is(m.path, base))
			continue;
		if (!found || m.offset < out->offset || (m.offset == out->offset && m.start < out->start)) {
			*out = m;
			found = 1;
		}
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}

int gt_pinj_maps_uses_cuda(pid_t pid)
{
	struct gt_pinj_map m;
	int rc = gt_pinj_maps_find(pid, "libcuda.so", &m);
	if (rc == -ENOENT)
		return 0;
	return rc < 0 ? rc : 1;
}
