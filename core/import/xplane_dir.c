/*
 * xplane_dir.c - TensorBoard profile directories: LOGDIR/plugins/profile/
 * RUN/HOST.xplane.pb.  Accepts LOGDIR, LOGDIR/plugins/profile or a run
 * folder; a run is a subfolder that holds at least one XPlane file; the
 * newest run is the one modified last (ties: the greater name).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "xplane.h"

/* the XPlane files of dir, sorted by name (paths owned by the caller);
 * 0 or -ENOMEM, -errno when dir cannot be read */
static int list_files(const char *dir, char ***out, size_t *n)
{
	DIR *d = opendir(dir);
	*out = NULL;
	*n = 0;
	if (!d)
		return -errno;
	size_t cap = 0;
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || !xplane_is_name(de->d_name))
			continue;
		size_t len = strlen(dir) + strlen(de->d_name) + 2;
		char *p = malloc(len);
		if (!p) {
			rc = -ENOMEM;
			break;
		}
		snprintf(p, len, "%s/%s", dir, de->d_name);
		struct stat st;
		if (stat(p, &st) || !S_ISREG(st.st_mode)) {
			free(p);
			continue;
		}
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 8;
			char **nv = realloc(*out, nc * sizeof(*nv));
			if (!nv) {
				free(p);
				rc = -ENOMEM;
				break;
			}
			*out = nv;
			cap = nc;
		}
		(*out)[(*n)++] = p;
	}
	closedir(d);
	if (rc) {
		xplane_dir_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

static int has_files(const char *dir)
{
	char **v;
	size_t n;
	if (list_files(dir, &v, &n))
		return 0;
	xplane_dir_free(v, n);
	return n > 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

void xplane_dir_free(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

/* the profile folder whose subfolders are runs: DIR/plugins/profile or DIR */
static void profile_dir(const char *dir, char *out, size_t len)
{
	struct stat st;
	snprintf(out, len, "%s/plugins/profile", dir);
	if (stat(out, &st) || !S_ISDIR(st.st_mode))
		snprintf(out, len, "%s", dir);
}

/* the runs of pdir: best (newest or named) into runname, count into *nruns;
 * 1 when one was found */
static int find_run(const char *pdir, const char *want, char *runname, size_t runlen, size_t *nruns,
		    char *names, size_t nameslen)
{
	DIR *d = opendir(pdir);
	int found = 0;
	struct timespec best = { 0, 0 };
	size_t w = 0;
	*nruns = 0;
	if (names && nameslen)
		names[0] = '\0';
	if (!d)
		return 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char p[4096];
		struct stat st;
		snprintf(p, sizeof(p), "%s/%s", pdir, de->d_name);
		if (stat(p, &st) || !S_ISDIR(st.st_mode) || !has_files(p))
			continue;
		(*nruns)++;
		if (names && w < nameslen)
			w += (size_t)snprintf(names + w, nameslen - w, "%s%s", w ? ", " : "", de->d_name);
		if (want) {
			if (!strcmp(want, de->d_name)) {
				snprintf(runname, runlen, "%s", de->d_name);
				found = 1;
			}
			continue;
		}
		struct timespec t = st.st_mtim;
		int newer = !found || t.tv_sec > best.tv_sec ||
			    (t.tv_sec == best.tv_sec && t.tv_nsec > best.tv_nsec) ||
			    (t.tv_sec == best.tv_sec && t.tv_nsec == best.tv_nsec &&
			     strverscmp(de->d_name, runname) > 0);
		if (newer) {
			best = t;
			snprintf(runname, runlen, "%s", de->d_name);
			found = 1;
		}
	}
	closedir(d);
	return found;
}

int xplane_dir_probe(const char *dir)
{
	char pdir[4096], run[256];
	size_t nruns;
	if (has_files(dir))
		return 1;
	profile_dir(dir, pdir, sizeof(pdir));
	return find_run(pdir, NULL, run, sizeof(run), &nruns, NULL, 0);
}

int xplane_dir_files(const char *dir, const char *run, char ***paths, size_t *n,
		     char *runname, size_t runlen, size_t *nruns, char *err, size_t errlen)
{
	char pdir[4096], rdir[4096 + 256], names[512];
	*paths = NULL;
	*n = 0;
	*nruns = 1;
	const char *b = strrchr(dir, '/');
	snprintf(runname, runlen, "%s", b && b[1] ? b + 1 : dir);
	if (!has_files(dir)) {
		profile_dir(dir, pdir, sizeof(pdir));
		if (!find_run(pdir, run, runname, runlen, nruns, names, sizeof(names))) {
			if (run && *nruns)
				snprintf(err, errlen, "%s: no run '%s' (runs: %s)", dir, run, names);
			else
				snprintf(err, errlen, "%s: no XPlane profile runs (RUN/HOST.xplane.pb) here", dir);
			return -ENOENT;
		}
		snprintf(rdir, sizeof(rdir), "%s/%s", pdir, runname);
		dir = rdir;
	}
	int rc = list_files(dir, paths, n);
	if (rc) {
		snprintf(err, errlen, "%s: %s", dir, strerror(-rc));
		return rc;
	}
	if (!*n) {
		snprintf(err, errlen, "%s: no XPlane files (*.xplane.pb) in this run", dir);
		return -ENOENT;
	}
	qsort(*paths, *n, sizeof(**paths), name_cmp);
	return 0;
}
