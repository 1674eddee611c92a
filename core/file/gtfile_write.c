/*
 * gtfile_write.c - the .gtrace writer: header, chunk framing (zstd + CRC-32),
 * incremental table chunks, event chunks, and the final index and end marker.
 *
 * The writer remembers how much of each store table it has written (strings,
 * lanes and their names, kconf, nccl, devices, ranks, drops, metadata), so
 * every flush writes only what is new and a live capture can be written as it
 * arrives.  Events are queued and written a chunk at a time, grouped by lane
 * (arrival order kept within a lane).  Table payloads are in gtfile_tables.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "gtfile_priv.h"
#include "gtfile_tables.h"
#include "gtfile_summary.h"
#include "gtrace_config.h"
#include "../util/safew.h"

struct chunk_ref {
	uint64_t off;
	uint32_t type, events;
};

struct gt_file_writer {
	FILE *f;
	struct safew sw;              /* how the file was created; committed at close */
	uint64_t off;                 /* bytes written so far */
	int err;                      /* first write error (negative errno) */
	int level;
	size_t chunk_events;
	ZSTD_CCtx *zc;
	struct gtfile_tabstate tab;   /* what of the store's tables is written */
	struct gt_event *q, *tmp;     /* queued events, scratch for grouping */
	size_t nq;
	uint64_t *lane_events;        /* events written per lane (index) */
	size_t n_lane_events;
	struct chunk_ref *chunks;
	size_t n_chunks, cap_chunks;
	uint64_t events;
	int64_t t_min, t_max;
	int no_summary;               /* GT_FILE_W_NO_SUMMARY */
	struct gtfile_buf raw, comp;
};

int gtfile_buf_reserve(struct gtfile_buf *b, size_t more)
{
	if (b->cap - b->n >= more)
		return 0;
	size_t nc = b->cap ? b->cap : 4096;
	while (nc - b->n < more)
		nc *= 2;
	unsigned char *np = realloc(b->p, nc);
	if (!np)
		return -ENOMEM;
	b->p = np;
	b->cap = nc;
	return 0;
}

unsigned char *gtfile_buf_add(struct gtfile_buf *b, const void *p, size_t n)
{
	if (gtfile_buf_reserve(b, n))
		return NULL;
	unsigned char *d = b->p + b->n;
	if (p)
		memcpy(d, p, n);
	else
		memset(d, 0, n);
	b->n += n;
	return d;
}

void gtfile_buf_free(struct gtfile_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static void wr(struct gt_file_writer *w, const void *p, size_t n)
{
	if (w->err)
		return;
	if (n && fwrite(p, 1, n, w->f) != n)
		w->err = errno ? -errno : -EIO;
	w->off += n;
}

/* frame and write one chunk from w->raw, compressed when it helps and
 * zstd is set; 0 or negative errno */
static int write_chunk(struct gt_file_writer *w, uint32_t type, uint32_t events, int zstd)
{
	const unsigned char *pay = w->raw.p;
	size_t raw = w->raw.n, stored = raw;
	uint32_t flags = 0;
	if (raw > GTFILE_MAX_CHUNK_BYTES)
		return w->err ? w->err : -E2BIG;
	if (zstd && raw >= 64 && type != GTFILE_CH_END) {
		size_t bound = ZSTD_compressBound(raw);
		w->comp.n = 0;
		if (gtfile_buf_reserve(&w->comp, bound))
			return -ENOMEM;
		size_t c = ZSTD_compressCCtx(w->zc, w->comp.p, bound, w->raw.p, raw, w->level);
		if (!ZSTD_isError(c) && c < raw) {
			pay = w->comp.p;
			stored = c;
			flags |= GTFILE_CHUNK_ZSTD;
		}
	}
	unsigned char h[GTFILE_CHUNK_HDR];
	gtfile_put32(h, type);
	gtfile_put32(h + 4, flags);
	gtfile_put32(h + 8, (uint32_t)raw);
	gtfile_put32(h + 12, (uint32_t)stored);
	uLong crc = crc32(0, h, 16);
	crc = crc32(crc, pay, (uInt)stored);
	gtfile_put32(h + 16, (uint32_t)crc);
	gtfile_put32(h + 20, (uint32_t)crc32(0, h, 20));
	if (type != GTFILE_CH_END) {
		if (w->n_chunks == w->cap_chunks) {
			size_t nc = w->cap_chunks ? w->cap_chunks * 2 : 64;
			struct chunk_ref *n = realloc(w->chunks, nc * sizeof(*n));
			if (!n)
				return -ENOMEM;
			w->chunks = n;
			w->cap_chunks = nc;
		}
		w->chunks[w->n_chunks++] = (struct chunk_ref){ w->off, type, events };
	}
	wr(w, h, sizeof(h));
	wr(w, pay, stored);
	w->raw.n = 0;
	return w->err;
}

int gtfile_writer_chunk(struct gt_file_writer *w, uint32_t type, uint32_t events)
{
	return write_chunk(w, type, events, 1);
}

/* the reader allows GTFILE_MAX_EVENTS_PER_BYTE events per byte of file
 * (plus 4096): after events that compressed below that, pad the file so
 * that what we write our reader reads.  0 or negative errno */
static int pad_to_limit(struct gt_file_writer *w)
{
	if (w->events <= 4096)
		return 0;
	uint64_t need = (w->events - 4096 + GTFILE_MAX_EVENTS_PER_BYTE - 1) /
			GTFILE_MAX_EVENTS_PER_BYTE;
	if (need <= w->off)
		return 0;
	size_t pad = (size_t)(need - w->off);
	w->raw.n = 0;
	if (gtfile_buf_reserve(&w->raw, pad))
		return -ENOMEM;
	memset(w->raw.p, 0, pad);
	w->raw.n = pad;
	return write_chunk(w, GTFILE_CH_PAD, 0, 0);
}

struct gtfile_buf *gtfile_writer_raw(struct gt_file_writer *w)
{
	return &w->raw;
}

uint64_t gtfile_writer_offset(const struct gt_file_writer *w)
{
	return w->off;
}

/* the writer on a file created by safew with flags sw_flags, or on a dup
 * of fd when fd >= 0 (path then only names it in messages) */
static struct gt_file_writer *writer_open(const char *path, int fd, const struct gt_file_writer_opts *o,
					 unsigned sw_flags, char *err, size_t errlen)
{
	struct gt_file_writer *w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	w->level = o && o->zstd_level ? o->zstd_level : 1;
	w->chunk_events = o && o->chunk_events ? o->chunk_events : GTFILE_DEF_CHUNK_EVENTS;
	if (w->chunk_events > GTFILE_MAX_CHUNK_EVENTS)
		w->chunk_events = GTFILE_MAX_CHUNK_EVENTS;
	w->t_min = INT64_MAX;
	w->t_max = INT64_MIN;
	w->zc = ZSTD_createCCtx();
	w->q = malloc(w->chunk_events * sizeof(*w->q));
	w->tmp = malloc(w->chunk_events * sizeof(*w->tmp));
	if (!w->zc || !w->q || !w->tmp || gtfile_tab_init(&w->tab)) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	if (o && (o->open_flags & GT_FILE_W_KEEP))
		sw_flags |= SAFEW_KEEP;
	w->no_summary = o && (o->open_flags & GT_FILE_W_NO_SUMMARY);
	w->sw.fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;
	if (fd >= 0 && w->sw.fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (fd < 0 && safew_open(&w->sw, path, sw_flags, err, errlen) < 0)
		goto fail;
	w->f = fdopen(w->sw.fd, "wb");
	if (!w->f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(w->sw.fd);
		safew_abort(&w->sw);
		goto fail;
	}
	setvbuf(w->f, NULL, _IOFBF, 1 << 20);
	unsigned char h[GTFILE_HDR_BYTES] = { 0 };
	memcpy(h, GT_FILE_MAGIC, 8);
	gtfile_put16(h + 8, GT_FILE_VERSION_MAJOR);
	gtfile_put16(h + 10, GT_FILE_VERSION_MINOR);
	gtfile_put32(h + 12, GTFILE_HDR_BYTES);
	gtfile_put32(h + 16, o ? o->flags : 0);
	snprintf((char *)h + 24, 32, "%s", GTRACE_VERSION);
	gtfile_put32(h + 60, (uint32_t)crc32(0, h, 60));
	wr(w, h, sizeof(h));
	if (w->err || fflush(w->f)) {
		snprintf(err, errlen, "%s: %s", path, strerror(w->err ? -w->err : errno));
		fclose(w->f);
		safew_abort(&w->sw);
		goto fail;
	}
	return w;
fail:
	w->f = NULL;
	gt_file_writer_abort(w);
	return NULL;
}

struct gt_file_writer *gt_file_writer_open(const char *path, const struct gt_file_writer_opts *o,
					 char *err, size_t errlen)
{
	return writer_open(path, -1, o, SAFEW_INPLACE, err, errlen);
}

struct gt_file_writer *gt_file_writer_open_fd(int fd, const char *name,
					    const struct gt_file_writer_opts *o, char *err, size_t errlen)
{
	return writer_open(name, fd, o, 0, err, errlen);
}

/* write the event groups as one chunk (tables must be synced); 0 or -errno */
static int write_events(struct gt_file_writer *w, const struct gtfile_group *g, size_t ng,
			size_t n)
{
	for (size_t j = 0; j < ng; j++) {
		w->lane_events[g[j].lane] += g[j].n;
		for (size_t i = 0; i < g[j].n; i++) {
			int64_t st = g[j].ev[i].start_ns, en = gt_event_end(&g[j].ev[i]);
			w->t_min = st < w->t_min ? st : w->t_min;
			w->t_max = en > w->t_max ? en : w->t_max;
		}
	}
	w->events += n;
	w->raw.n = 0;
	int rc = gtfile_events_encode(g, ng, n, &w->raw);
	if (!rc)
		rc = gtfile_writer_chunk(w, GTFILE_CH_EVENTS, (uint32_t)n);
	return rc ? rc : pad_to_limit(w);
}

/* bring the tables up to date with s and grow the per-lane counters */
static int wsync(struct gt_file_writer *w, const struct gt_store *s)
{
	int rc = gtfile_tab_sync(w, &w->tab, s);
	if (rc)
		return rc;
	size_t nl = gt_store_lane_count(s);
	if (nl > w->n_lane_events) {
		uint64_t *n = realloc(w->lane_events, nl * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + w->n_lane_events, 0, (nl - w->n_lane_events) * sizeof(*n));
		w->lane_events = n;
		w->n_lane_events = nl;
	}
	return 0;
}

/* write the queue as one chunk, grouped by lane (stable counting sort) */
static int emit_queue(struct gt_file_writer *w, const struct gt_store *s)
{
	if (!w->nq)
		return 0;
	int rc = wsync(w, s);
	if (rc)
		return rc;
	size_t nl = w->n_lane_events;
	uint32_t *cnt = calloc(nl + 1, sizeof(*cnt));
	struct gtfile_group *g = malloc((w->nq < nl ? w->nq : nl) * sizeof(*g) + sizeof(*g));
	if (!cnt || !g) {
		free(cnt);
		free(g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < w->nq; i++)
		cnt[w->q[i].lane + 1]++;
	size_t ng = 0;
	for (size_t l = 0; l < nl; l++) {
		if (cnt[l + 1])
			g[ng++] = (struct gtfile_group){ (uint32_t)l, cnt[l + 1], w->tmp + cnt[l] };
		cnt[l + 1] += cnt[l];
	}
	for (size_t i = 0; i < w->nq; i++)
		w->tmp[cnt[w->q[i].lane]++] = w->q[i];
	rc = write_events(w, g, ng, w->nq);
	w->nq = 0;
	free(cnt);
	free(g);
	return rc;
}

int gt_file_writer_add(struct gt_file_writer *w, const struct gt_store *s,
		      const struct gt_event *ev, size_t n)
{
	size_t nl = gt_store_lane_count(s), ns = gt_store_str_count(s);
	for (size_t i = 0; i < n; i++)
		if (ev[i].lane >= nl || ev[i].name >= ns)
			return -EINVAL;
	while (n) {
		size_t k = w->chunk_events - w->nq;
		k = k < n ? k : n;
		memcpy(w->q + w->nq, ev, k * sizeof(*ev));
		w->nq += k;
		ev += k;
		n -= k;
		if (w->nq == w->chunk_events) {
			int rc = emit_queue(w, s);
			if (rc)
				return rc;
		}
	}
	return w->err;
}

int gt_file_writer_flush(struct gt_file_writer *w, const struct gt_store *s)
{
	int rc = wsync(w, s);
	if (!rc)
		rc = emit_queue(w, s);
	if (!rc)
		rc = gtfile_tab_sync_tail(w, &w->tab, s);
	if (!rc && fflush(w->f))
		rc = -errno;
	if (!rc && !w->err) {
		/* a recording appears at its name once it opens (header and
		 * complete chunks): a kill before leaves no file that does not */
		char e[256];
		rc = safew_place(&w->sw, e, sizeof(e));
	}
	return rc ? rc : w->err;
}

static int write_index(struct gt_file_writer *w)
{
	size_t bytes = 40 + w->n_lane_events * 8 + w->n_chunks * 16;
	w->raw.n = 0;
	unsigned char *p = gtfile_buf_add(&w->raw, NULL, bytes);
	if (!p)
		return -ENOMEM;
	gtfile_put64(p, w->events);
	gtfile_put64(p + 8, (uint64_t)(w->events ? w->t_min : 0));
	gtfile_put64(p + 16, (uint64_t)(w->events ? w->t_max : 0));
	gtfile_put32(p + 24, (uint32_t)w->n_lane_events);
	gtfile_put32(p + 28, (uint32_t)w->n_chunks);
	p += 40;
	for (size_t i = 0; i < w->n_lane_events; i++, p += 8)
		gtfile_put64(p, w->lane_events[i]);
	for (size_t i = 0; i < w->n_chunks; i++, p += 16) {
		gtfile_put64(p, w->chunks[i].off);
		gtfile_put32(p + 8, w->chunks[i].type);
		gtfile_put32(p + 12, w->chunks[i].events);
	}
	uint64_t at = w->off;
	int rc = gtfile_writer_chunk(w, GTFILE_CH_INDEX, 0);
	if (rc)
		return rc;
	p = gtfile_buf_add(&w->raw, NULL, 16);
	gtfile_put64(p, at);
	gtfile_put64(p + 8, w->events);
	return gtfile_writer_chunk(w, GTFILE_CH_END, 0);
}

const char *gt_file_writer_strerror(int rc)
{
	if (rc == -EEXIST)
		return "the file appeared while being written; not replaced without --force";
	return strerror(rc < 0 ? -rc : rc);
}

int gt_file_writer_close(struct gt_file_writer *w, const struct gt_store *s, char *err,
			size_t errlen)
{
	int rc = s ? gt_file_writer_flush(w, s) : 0;   /* without the store queued events are dropped */
	if (!rc && s && !w->no_summary)
		rc = gtfile_summary_write(w, s);
	if (!rc)
		rc = write_index(w);
	if (fclose(w->f) && !rc)
		rc = -errno;
	w->f = NULL;
	if (rc) {
		snprintf(err, errlen, "writing the capture: %s", strerror(-rc));
		/* a temporary file goes; a recording stays, open up to its
		 * last complete chunk */
		if (w->sw.tmp)
			safew_abort(&w->sw);
	} else {
		char e2[256];
		rc = safew_commit(&w->sw, e2, sizeof(e2));
		if (rc == -EEXIST)
			snprintf(err, errlen, "%s", gt_file_writer_strerror(rc));
		else if (rc)
			snprintf(err, errlen, "putting the file in place: %s", strerror(-rc));
	}
	gt_file_writer_abort(w);
	return rc;
}

void gt_file_writer_abort(struct gt_file_writer *w)
{
	if (!w)
		return;
	if (w->f)
		fclose(w->f);
	if (w->sw.tmp)
		safew_abort(&w->sw);       /* no half-written file under a temporary name */
	free(w->sw.path);
	ZSTD_freeCCtx(w->zc);
	gtfile_tab_done(&w->tab);
	free(w->q);
	free(w->tmp);
	free(w->lane_events);
	free(w->chunks);
	gtfile_buf_free(&w->raw);
	gtfile_buf_free(&w->comp);
	free(w);
}

int gt_file_write_store(const struct gt_store *s, const char *path, char *err, size_t errlen)
{
	return gt_file_write_store_opts(s, path, NULL, err, errlen);
}

int gt_file_write_store_opts(const struct gt_store *s, const char *path,
			    const struct gt_file_writer_opts *o, char *err, size_t errlen)
{
	struct gt_file_writer *w = writer_open(path, -1, o, 0, err, errlen);
	if (!w)
		return -EIO;
	int rc = wsync(w, s);
	struct gtfile_group g[64];
	size_t ng = 0, n = 0;
	for (size_t l = 0; l < gt_store_lane_count(s) && !rc; l++) {
		const struct gt_lane *ln = gt_store_lane_at(s, (uint32_t)l);
		for (size_t pos = 0; pos < ln->n && !rc;) {
			size_t k = ln->n - pos, room = w->chunk_events - n;
			k = k < room ? k : room;
			gt_store_read_tick(s, ln, pos, pos + k);   /* under a budget: RSS stays in it */
			g[ng++] = (struct gtfile_group){ (uint32_t)l, (uint32_t)k, ln->ev + pos };
			n += k;
			pos += k;
			if (n == w->chunk_events || ng == 64) {
				rc = write_events(w, g, ng, n);
				ng = n = 0;
			}
		}
	}
	if (!rc && n)
		rc = write_events(w, g, ng, n);
	if (rc) {
		snprintf(err, errlen, "%s: writing the capture: %s", path, strerror(-rc));
		gt_file_writer_abort(w);
		return rc;
	}
	char e2[256];
	rc = gt_file_writer_close(w, s, e2, sizeof(e2));
	if (rc)
		snprintf(err, errlen, "%s: %s", path, e2);
	return rc;
}
