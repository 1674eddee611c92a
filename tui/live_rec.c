/*
 * live_rec.c - the capture file of a live session (tui/live_rec.h):
 * streaming writer, temporary file, flight-recorder segments, W.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gtrace/gtfile.h"
#include "live_rec.h"

static const char *tmp_root(void)
{
	const char *t = getenv("TMPDIR");
	return t && *t ? t : "/tmp";
}

/* what errors name: the file, or stdout for a stream (`record -o -`) */
static const char *rec_name(const struct live_rec *r)
{
	return r->stream ? "stdout" : r->path;
}

/* a first flush: the file holds complete chunks (opens, with no events)
 * from the start; 0 or -EIO with err */
static int first_flush(struct live_rec *r, struct gt_store *s, char *err, size_t errlen)
{
	int rc = gt_file_writer_flush(r->w, s);
	if (rc < 0)
		snprintf(err, errlen, "%s: %s", rec_name(r), gt_file_writer_strerror(rc));
	return rc < 0 ? -EIO : 0;
}

static int seg_open(struct live_rec *r, struct gt_store *s, char *err, size_t errlen)
{
	r->seq++;
	snprintf(r->path, sizeof(r->path), "%.*s/seg-%06u.gtrace", PATH_MAX - 32, r->dir, r->seq);
	/* no summary: it would be built from the store, not the segment's
	   events (a segment opened on its own is read whole) */
	struct gt_file_writer_opts wo = { .open_flags = GT_FILE_W_KEEP | GT_FILE_W_NO_SUMMARY };
	r->w = gt_file_writer_open(r->path, &wo, err, errlen);
	r->cur_events = 0;
	r->cur_t0 = INT64_MAX;
	r->cur_t1 = INT64_MIN;
	return r->w ? first_flush(r, s, err, errlen) : -EIO;
}

int live_rec_open(struct live_rec *r, struct gt_store *s, const char *record, int force,
		  int64_t ring_ns, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->ring_ns = ring_ns;
	r->force = force;
	r->t_max = INT64_MIN;
	if (record)
		snprintf(r->record, sizeof(r->record), "%s", record);
	if (record && !strcmp(record, "-")) {
		/* a stream on stdout: nothing created, kept or removed */
		if (ring_ns) {
			snprintf(err, errlen, "--ring needs -o FILE: a stream on stdout cannot drop "
				 "its past");
			return -EINVAL;
		}
		struct gt_file_writer_opts wo = { 0 };
		r->w = gt_file_writer_open_fd(1, "stdout", &wo, err, errlen);
		r->stream = 1;
		return r->w ? first_flush(r, s, err, errlen) : -EIO;
	}
	if (record && !ring_ns) {
		/* the recording itself, written in place */
		snprintf(r->path, sizeof(r->path), "%s", record);
		struct gt_file_writer_opts wo = { .open_flags = force ? 0 : GT_FILE_W_KEEP };
		r->w = gt_file_writer_open(record, &wo, err, errlen);
		return r->w ? first_flush(r, s, err, errlen) : -EIO;
	}
	struct stat st;
	if (record && !force && lstat(record, &st) == 0) {
		snprintf(err, errlen, "%s exists; not replaced without --force", record);
		return -EEXIST;
	}
	/* a private directory: beside the recording (segments of a ring, on
	 * its file system), else under $TMPDIR */
	if (record)
		snprintf(r->dir, sizeof(r->dir), "%.*s.ring-XXXXXX", PATH_MAX - 16, record);
	else
		snprintf(r->dir, sizeof(r->dir), "%.*s/gtrace-live-XXXXXX", PATH_MAX - 32, tmp_root());
	if (!mkdtemp(r->dir)) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", r->dir, strerror(e));
		r->dir[0] = 0;
		return -e;
	}
	if (ring_ns)
		return seg_open(r, s, err, errlen);
	snprintf(r->path, sizeof(r->path), "%.*s/capture.gtrace", PATH_MAX - 32, r->dir);
	struct gt_file_writer_opts wo = { .open_flags = GT_FILE_W_KEEP };
	r->w = gt_file_writer_open(r->path, &wo, err, errlen);
	if (!r->w) {
		rmdir(r->dir);
		r->dir[0] = 0;
		return -EIO;
	}
	return first_flush(r, s, err, errlen);
}

static uint64_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* close the current segment, keep it, open the next; 0 or negative errno */
static int rotate(struct live_rec *r, struct gt_store *s)
{
	char err[256];
	int rc = gt_file_writer_close(r->w, s, err, sizeof(err));
	r->w = NULL;
	if (rc < 0)
		return rc;
	if (r->nseg == r->capseg) {
		size_t nc = r->capseg ? r->capseg * 2 : 16;
		struct live_seg *n = realloc(r->seg, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		r->seg = n;
		r->capseg = nc;
	}
	struct live_seg *g = &r->seg[r->nseg++];
	snprintf(g->path, sizeof(g->path), "%s", r->path);
	g->events = r->cur_events;
	g->t0 = r->cur_t0;
	g->t1 = r->cur_t1;
	g->bytes = file_size(r->path);
	r->written_bytes += g->bytes;
	return seg_open(r, s, err, sizeof(err));
}

/* remove the segments wholly older than the window; never the newest */
static void discard(struct live_rec *r)
{
	size_t k = 0;
	while (k < r->nseg && r->seg[k].t1 < r->t_max - r->ring_ns) {
		struct live_seg *g = &r->seg[k];
		unlink(g->path);
		r->disc_events += g->events;
		r->disc_segs++;
		r->written_bytes -= g->bytes < r->written_bytes ? g->bytes : r->written_bytes;
		k++;
	}
	if (k) {
		memmove(r->seg, r->seg + k, (r->nseg - k) * sizeof(*r->seg));
		r->nseg -= k;
	}
}

int live_rec_add(struct live_rec *r, struct gt_store *s, const struct gt_event *ev, size_t n)
{
	if (!r->w)
		return -EIO;
	int rc = gt_file_writer_add(r->w, s, ev, n);
	if (rc)
		return rc;
	r->events += n;
	if (!r->ring_ns)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int64_t a = ev[i].start_ns, b = gt_event_end(&ev[i]);
		r->cur_t0 = a < r->cur_t0 ? a : r->cur_t0;
		r->cur_t1 = b > r->cur_t1 ? b : r->cur_t1;
		r->t_max = b > r->t_max ? b : r->t_max;
	}
	r->cur_events += n;
	int64_t seg_ns = r->ring_ns / 8 > 0 ? r->ring_ns / 8 : 1;
	if (r->cur_t1 - r->cur_t0 >= seg_ns || r->cur_events >= LIVE_REC_SEG_EVENTS) {
		rc = rotate(r, s);
		if (rc)
			return rc;
	}
	discard(r);
	return 0;
}

int live_rec_flush(struct live_rec *r, struct gt_store *s)
{
	return r->w ? gt_file_writer_flush(r->w, s) : -EIO;
}

uint64_t live_rec_bytes(const struct live_rec *r)
{
	return r->written_bytes + (r->path[0] ? file_size(r->path) : 0);
}

void live_fmt_count(double v, char *buf, size_t len)
{
	if (v >= 1e6)
		snprintf(buf, len, "%.1fM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%.0fk", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
}

void live_fmt_bytes(uint64_t v, char *buf, size_t len)
{
	if (v >= (1ull << 30))
		snprintf(buf, len, "%.1fG", (double)v / (double)(1ull << 30));
	else if (v >= (1ull << 20))
		snprintf(buf, len, "%.1fM", (double)v / (double)(1ull << 20));
	else if (v >= 1024)
		snprintf(buf, len, "%.0fk", (double)v / 1024.0);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

/* "1h 2m", "5m 3s", "2.5s" */
static void fmt_span(int64_t ns, char *buf, size_t len)
{
	double s = (double)ns / 1e9;
	if (s >= 3600)
		snprintf(buf, len, "%dh %dm", (int)(s / 3600), (int)(s / 60) % 60);
	else if (s >= 60)
		snprintf(buf, len, "%dm %ds", (int)(s / 60), (int)s % 60);
	else
		snprintf(buf, len, "%.1fs", s);
}

void live_rec_status(const struct live_rec *r, const struct gt_store *s, char *file, size_t flen,
		     char *ring, size_t rlen)
{
	char b[32];
	live_fmt_bytes(live_rec_bytes(r), b, sizeof(b));
	snprintf(file, flen, ", file %s", b);
	ring[0] = 0;
	if (!r->ring_ns)
		return;
	/* what the store cut: what the viewer no longer has and the file at
	   the end will not hold (the segments on disk hold at most that) */
	char w[32], e[32] = "0", sp[32] = "0s";
	fmt_span(r->ring_ns, w, sizeof(w));
	int64_t last;
	uint64_t disc = gt_store_dropped(s, &last);
	if (disc) {
		live_fmt_count((double)disc, e, sizeof(e));
		fmt_span(last - gt_store_t_origin(s), sp, sizeof(sp));
	}
	snprintf(ring, rlen, ", ring %s: %s ev discarded (%s)", w, e, sp);
}

static void ring_meta(struct live_rec *r, struct gt_store *s);

int live_rec_ring_cut(const struct live_rec *r, struct gt_store *s)
{
	if (!r->ring_ns || !gt_store_event_count(s))
		return 0;
	return gt_store_drop_before(s, gt_store_t_max(s) - r->ring_ns, 0, NULL);
}

/* the ring's file: the store cut to the window (every event starting in
 * the last ring_ns before the newest end; a counter's value at its start)
 * written whole, its summary with it; 0 or negative errno with err */
static int ring_write(struct live_rec *r, struct gt_store *s, const char *out, unsigned open_flags,
		      char *err, size_t errlen)
{
	err[0] = 0;
	if (live_rec_ring_cut(r, s) < 0) {
		snprintf(err, errlen, "%s: out of memory", out);
		return -ENOMEM;
	}
	ring_meta(r, s);
	struct gt_file_writer_opts wo = { .open_flags = open_flags };
	return gt_file_write_store_opts(s, out, &wo, err, errlen);
}

/* copy src to dst, created exclusively (never through a link); 0 or
 * negative errno */
static int copy_file(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0) {
		int e = errno;
		close(in);
		return -e;
	}
	char buf[1 << 16];
	ssize_t n;
	int rc = 0;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			rc = errno ? -errno : -EIO;
			break;
		}
	if (n < 0)
		rc = -errno;
	close(in);
	if (close(out) && !rc)
		rc = -errno;
	if (rc)
		unlink(dst);
	return rc;
}

int live_rec_keep(struct live_rec *r, struct gt_store *s, const char *name, char *msg, size_t len)
{
	if (!name || !*name) {
		snprintf(msg, len, "not saved: no name given");
		return -EINVAL;
	}
	if (r->stream) {
		snprintf(msg, len, "not saved: the capture is a stream on stdout");
		return -EINVAL;
	}
	if (r->nkept == LIVE_REC_KEEP_MAX) {
		snprintf(msg, len, "not saved: %d names kept already", LIVE_REC_KEEP_MAX);
		return -ENOSPC;
	}
	struct stat st;
	if (lstat(name, &st) == 0) {
		snprintf(msg, len, "%s exists; not replaced (give another name)", name);
		return -EEXIST;
	}
	int rc = live_rec_flush(r, s);
	int copy = 0;
	char err[512] = "";
	if (rc < 0) {
		snprintf(msg, len, "%s: %s", rec_name(r), gt_file_writer_strerror(rc));
		return rc;
	}
	if (r->ring_ns) {
		copy = 1;
		rc = ring_write(r, s, name, GT_FILE_W_KEEP, err, sizeof(err));
	} else if (link(r->path, name) < 0) {
		rc = -errno;
		if (rc == -EXDEV || rc == -EPERM) {
			copy = 1;
			rc = copy_file(r->path, name);
		}
	}
	if (rc < 0) {
		if (err[0])
			snprintf(msg, len, "%s", err);
		else
			snprintf(msg, len, "%s: %s", name, strerror(-rc));
		return rc;
	}
	snprintf(r->kept[r->nkept], PATH_MAX, "%s", name);
	r->kept_copy[r->nkept++] = copy;
	char full[PATH_MAX];
	if (!realpath(name, full))
		snprintf(full, sizeof(full), "%s", name);
	char what[64] = "the whole capture";
	if (r->ring_ns) {
		char w[32];
		fmt_span(r->ring_ns, w, sizeof(w));
		snprintf(what, sizeof(what), "the ring's last %s", w);
	}
	snprintf(msg, len, "saved %s, %llu events so far (%s at exit)", full,
		 (unsigned long long)(r->ring_ns ? gt_store_event_count(s) : r->events), what);
	return 0;
}

/* what the ring discarded, from the store: events cut, from the capture's
 * first start to the latest start of one */
static void ring_meta(struct live_rec *r, struct gt_store *s)
{
	char v[64];
	int64_t last;
	uint64_t disc = gt_store_dropped(s, &last);
	snprintf(v, sizeof(v), "%lld", (long long)r->ring_ns);
	gt_store_meta_set(s, "ring_window_ns", v);
	snprintf(v, sizeof(v), "%llu", (unsigned long long)disc);
	gt_store_meta_set(s, "ring_discarded_events", v);
	if (disc) {
		snprintf(v, sizeof(v), "%lld", (long long)gt_store_t_origin(s));
		gt_store_meta_set(s, "ring_discarded_from_ns", v);
		snprintf(v, sizeof(v), "%lld", (long long)last);
		gt_store_meta_set(s, "ring_discarded_to_ns", v);
	}
}

static void remove_dir(struct live_rec *r)
{
	for (size_t i = 0; i < r->nseg; i++)
		unlink(r->seg[i].path);
	if (r->path[0] && r->dir[0] && !strncmp(r->path, r->dir, strlen(r->dir)))
		unlink(r->path);
	if (r->dir[0])
		rmdir(r->dir);
	r->dir[0] = 0;
}

int live_rec_close(struct live_rec *r, struct gt_store *s, char *err, size_t errlen)
{
	int rc = 0;
	char final[PATH_MAX + 16];
	err[0] = 0;
	if (r->ring_ns) {
		/* the window into one file: the recording, or a temporary one
		 * the kept names are copies of */
		if (r->record[0])
			snprintf(final, sizeof(final), "%s", r->record);
		else
			snprintf(final, sizeof(final), "%s/capture.gtrace", r->dir);
		if (r->record[0] || r->nkept) {
			if (r->w)
				rc = gt_file_writer_flush(r->w, s);
			if (!rc)
				rc = ring_write(r, s, final, r->force ? 0 : GT_FILE_W_KEEP, err, errlen);
			else
				snprintf(err, errlen, "%s: %s", rec_name(r), gt_file_writer_strerror(rc));
		}
		if (r->w)
			gt_file_writer_abort(r->w);
		r->w = NULL;
	} else {
		snprintf(final, sizeof(final), "%s", r->path);
		char e2[256];
		rc = gt_file_writer_close(r->w, s, e2, sizeof(e2));
		r->w = NULL;
		if (rc < 0)
			snprintf(err, errlen, "%s: %s", rec_name(r), e2);
	}
	/* kept names: links are complete already; copies are made again */
	for (int i = 0; i < r->nkept && !rc; i++) {
		if (!r->kept_copy[i])
			continue;
		unlink(r->kept[i]);
		rc = copy_file(final, r->kept[i]);
		if (rc < 0)
			snprintf(err, errlen, "%s: %s", r->kept[i], strerror(-rc));
	}
	if (r->ring_ns && !r->record[0])
		unlink(final);
	remove_dir(r);
	free(r->seg);
	r->seg = NULL;
	r->nseg = 0;
	return rc;
}

void live_rec_abort(struct live_rec *r)
{
	if (r->w)
		gt_file_writer_abort(r->w);
	r->w = NULL;
	remove_dir(r);
	free(r->seg);
	r->seg = NULL;
	r->nseg = 0;
}

int live_parse_duration(const char *text, int64_t *ns)
{
	static const struct { const char *u; double ns; } units[] = {
		{ "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 }, { "d", 86400e9 },
	};
	const char *p = text;
	double total = 0;
	int parts = 0;
	while (p && *p) {
		char *end;
		double v = strtod(p, &end);
		if (end == p || v < 0 || v != v)
			return -EINVAL;
		size_t k = 0, best = 0;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t l = strlen(units[i].u);
			if (!strncmp(end, units[i].u, l) && l > best) {
				best = l;
				k = i;
			}
		}
		if (!best)
			return -EINVAL;       /* a bare number or an unknown unit */
		total += v * units[k].ns;
		p = end + best;
		parts++;
	}
	if (!parts || total < 1e6 || total > 366 * 86400e9)
		return -EINVAL;
	*ns = (int64_t)total;
	return 0;
}
