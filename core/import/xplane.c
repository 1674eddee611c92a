/*
 * xplane.c - the XPlane importer's entry points (core/import/import_api.h,
 * gtrace/import.h): host files of one run, a TensorBoard log directory, a
 * memory buffer.  Each file is read whole (plain or gzip, through kineto_read),
 * mapped by xplane_map.c under its rank (the files' order) and the store is
 * finished once.  Each host's clock is its own: the files share one axis
 * only as far as the hosts' clocks agree (TensorFlow writes them so).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "import_api.h"
#include "gtrace/import.h"
#include "kineto_read.h"
#include "xplane.h"

#define XP_DMG_LEN 160

int xplane_is_name(const char *path)
{
	size_t l = strlen(path);
	return (l >= 10 && !strcmp(path + l - 10, ".xplane.pb")) ||
	       (l >= 13 && !strcmp(path + l - 13, ".xplane.pb.gz"));
}

/* the whole decompressed content of r into *buf (damaged gzip: what came
 * before the damage, and dmg says what happened, else dmg is ""); 0 or
 * negative errno */
static int slurp(struct kineto_read *r, const char *name, size_t hint, unsigned char **buf, size_t *len,
		 char *dmg, char *err, size_t errlen)
{
	size_t cap = hint > 4096 ? hint : 4096, n = 0;
	unsigned char *b = malloc(cap);
	if (!b)
		goto oom;
	for (;;) {
		if (cap - n < 65536) {
			unsigned char *nb = realloc(b, cap * 2);
			if (!nb)
				goto oom;
			b = nb;
			cap *= 2;
		}
		ssize_t got = kineto_read_read(r, (char *)b + n, cap - n);
		if (got < 0) {
			snprintf(err, errlen, "%s: %s", name, r->msg[0] ? r->msg : "read error");
			free(b);
			return -EIO;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	dmg[0] = '\0';
	kineto_read_damage(r, dmg, XP_DMG_LEN);
	*buf = b;
	*len = n;
	return 0;
oom:
	free(b);
	snprintf(err, errlen, "%s: out of memory", name);
	return -ENOMEM;
}

/* a file's bytes: a plain file mapped (*mapped = 1), gzip inflated into a
 * buffer; 0 or negative errno with one line in err */
static int read_file(const char *path, void **buf, size_t *len, int *mapped, char *dmg,
		     char *err, size_t errlen)
{
	dmg[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	unsigned char magic[2] = { 0, 0 };
	*mapped = 0;
	if (fd < 0 || fstat(fd, &sb)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -ENOENT;
	}
	ssize_t got = pread(fd, magic, 2, 0);
	if (got == 2 && magic[0] != 0x1f && magic[1] != 0x8b && sb.st_size > 0) {
		void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			close(fd);
			madvise(p, (size_t)sb.st_size, MADV_SEQUENTIAL);
			*buf = p;
			*len = (size_t)sb.st_size;
			*mapped = 1;
			return 0;
		}
	}
	close(fd);
	struct kineto_read r;
	int rc = kineto_read_open(&r, path, 1, err, errlen);
	if (rc)
		return rc;
	unsigned char *b = NULL;
	rc = slurp(&r, path, (size_t)sb.st_size + 1, &b, len, dmg, err, errlen);
	kineto_read_close(&r);
	*buf = b;
	return rc;
}

/* after the mapping of a damaged gzip input (dmg not ""): an error in the
 * importers' shared words when nothing could be read (rc), else a warning
 * that the events read were kept; rc or 0 */
static int damaged(const char *name, const char *dmg, int rc, const struct xplane_stats *st,
		   const struct gt_load_opts *o, char *err, size_t errlen)
{
	if (!dmg[0] || (rc && rc != -EINVAL))
		return rc;
	if (rc) {
		snprintf(err, errlen, "%s: %s; no events kept (an XPlane profile is one protobuf "
			 "message: it cannot be read in part)", name, dmg);
		return -EINVAL;
	}
	if (!(o->flags & GT_LOAD_QUIET))
		fprintf(stderr, "gtrace: warning: %s: %s; kept the %" PRIu64 " events before it\n",
			name, dmg, st->events);
	return 0;
}

static void warn(const char *name, const struct xplane_stats *st, const struct gt_load_opts *o,
		 struct gt_store *s)
{
	gt_store_drops(s)->import_skipped += st->skipped;
	if ((o->flags & GT_LOAD_QUIET) || !st->skipped)
		return;
	fprintf(stderr, "gtrace: warning: %s: skipped %" PRIu64 " events with impossible times\n",
		name, st->skipped);
}

static int finish(struct gt_store *s, const char *src, char *err, size_t errlen)
{
	if (gt_store_meta_set(s, "format", "xplane") || gt_store_meta_set(s, "source", src) ||
	    gt_store_finish(s)) {
		snprintf(err, errlen, "%s: out of memory", src);
		return -ENOMEM;
	}
	return 0;
}

int xplane_import_files(const char *const *paths, size_t n, const struct gt_load_opts *o,
			struct gt_store *s, char *err, size_t errlen)
{
	struct gt_load_opts def = { 0 };
	if (!o)
		o = &def;
	err[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		void *buf = NULL;
		size_t len = 0;
		int mapped = 0;
		char dmg[XP_DMG_LEN];
		int rc = read_file(paths[i], &buf, &len, &mapped, dmg, err, errlen);
		if (rc)
			return rc;
		struct xplane_stats st;
		rc = xplane_map_space(buf, len, mapped, paths[i], (int32_t)i, n > 1 ? (int32_t)n : -1, s,
				      &st, err, errlen);
		if ((rc = damaged(paths[i], dmg, rc, &st, o, err, errlen)))
			return rc;
		warn(paths[i], &st, o, s);
	}
	return finish(s, n ? paths[0] : "", err, errlen);
}

int xplane_import_dir(const char *dir, const struct gt_load_opts *o, struct gt_store *s,
		      char *err, size_t errlen)
{
	char **paths = NULL, run[256];
	size_t n = 0, nruns = 0;
	int rc = xplane_dir_files(dir, o ? o->run : NULL, &paths, &n, run, sizeof(run), &nruns, err,
				  errlen);
	if (rc)
		return rc;
	if (!(o && (o->flags & GT_LOAD_QUIET)) && nruns > 1) {
		if (o && o->run)
			fprintf(stderr, "gtrace: %s: run %s (one of %zu runs, chosen with --run)\n", dir,
				run, nruns);
		else
			fprintf(stderr, "gtrace: %s: run %s (the newest of %zu runs; --run NAME opens "
				"another)\n", dir, run, nruns);
	}
	rc = xplane_import_files((const char *const *)paths, n, o, s, err, errlen);
	if (!rc && (gt_store_meta_set(s, "source", dir) || gt_store_meta_set(s, "xplane.run", run))) {
		snprintf(err, errlen, "%s: out of memory", dir);
		rc = -ENOMEM;
	}
	xplane_dir_free(paths, n);
	return rc;
}

int gt_xplane_import_mem(const char *name, const void *buf, size_t len,
		      const struct gt_load_opts *o, struct gt_store *s, char *err, size_t errlen)
{
	struct gt_load_opts def = { 0 };
	struct kineto_read r;
	unsigned char *b = NULL;
	size_t n = 0;
	if (!o)
		o = &def;
	err[0] = '\0';
	if (kineto_read_open_mem(&r, buf, len)) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	char dmg[XP_DMG_LEN];
	int rc = slurp(&r, name, len, &b, &n, dmg, err, errlen);
	kineto_read_close(&r);
	if (rc)
		return rc;
	struct xplane_stats st;
	rc = xplane_map_space(b, n, 0, name, 0, -1, s, &st, err, errlen);
	if ((rc = damaged(name, dmg, rc, &st, o, err, errlen)))
		return rc;
	warn(name, &st, o, s);
	return finish(s, name, err, errlen);
}
