/*
 * export_writer.c - buffered JSON text writer of the exporter (export_writer.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "export_writer.h"
#include "../util/utf8.h"

int export_writer_open(struct export_writer *w, const char *path, int gzip_level, unsigned sw_flags, char *err,
	      size_t errlen)
{
	memset(w, 0, offsetof(struct export_writer, buf));
	w->n = 0;
	w->err = 0;
	int rc = safew_open(&w->sw, path, sw_flags, err, errlen);
	if (rc)
		return rc;
	size_t l = strlen(path);
	if (l > 3 && !strcmp(path + l - 3, ".gz")) {
		char mode[8];
		snprintf(mode, sizeof(mode), "wb%d", gzip_level >= 1 && gzip_level <= 9 ? gzip_level : 6);
		w->gz = gzdopen(w->sw.fd, mode);
		if (!w->gz)
			goto fail;
		gzbuffer(w->gz, 1u << 18);
		return 0;
	}
	w->f = fdopen(w->sw.fd, "wb");
	if (w->f)
		return 0;
fail:
	rc = errno ? -errno : -ENOMEM;
	snprintf(err, errlen, "%s: %s", path, strerror(-rc));
	close(w->sw.fd);
	safew_abort(&w->sw);
	return rc;
}

/* the error of a failed gzip write: the system's (ENOSPC) when there is one */
static int gz_err(gzFile gz)
{
	int zerr;
	gzerror(gz, &zerr);
	return zerr == Z_ERRNO && errno ? -errno : -EIO;
}

void export_writer_open_mem(struct export_writer *w)
{
	memset(w, 0, offsetof(struct export_writer, buf));
	w->n = 0;
	w->err = 0;
}

void export_writer_flush(struct export_writer *w)
{
	if (!w->n || w->err) {
		w->n = 0;
		return;
	}
	if (w->gz) {
		if (gzwrite(w->gz, w->buf, (unsigned)w->n) != (int)w->n)
			w->err = gz_err(w->gz);
	} else if (w->f) {
		if (fwrite(w->buf, 1, w->n, w->f) != w->n)
			w->err = errno ? -errno : -EIO;
	} else {
		if (w->mem_len + w->n > w->mem_cap) {
			size_t nc = w->mem_cap ? w->mem_cap : EXPORT_WRITER_BUF;
			while (nc < w->mem_len + w->n)
				nc *= 2;
			char *nm = realloc(w->mem, nc);
			if (!nm) {
				w->err = -ENOMEM;
				w->n = 0;
				return;
			}
			w->mem = nm;
			w->mem_cap = nc;
		}
		memcpy(w->mem + w->mem_len, w->buf, w->n);
		w->mem_len += w->n;
	}
	w->n = 0;
}

int export_writer_close(struct export_writer *w)
{
	export_writer_flush(w);
	int file = w->gz || w->f;
	if (w->gz) {
		errno = 0;
		int zc = gzclose(w->gz);
		if (zc != Z_OK && !w->err)
			w->err = zc == Z_ERRNO && errno ? -errno : -EIO;
	}
	if (w->f && fclose(w->f) && !w->err)
		w->err = -errno;
	w->gz = NULL;
	w->f = NULL;
	if (file) {
		char e[256];
		if (w->err)
			safew_abort(&w->sw);        /* no truncated output stays */
		else
			w->err = safew_commit(&w->sw, e, sizeof(e));
	}
	return w->err;
}

/* a JSON string; bytes that are not valid UTF-8 (raw bytes, CESU surrogates
 * decoded from lone \ud800 escapes) become U+FFFD so strict parsers accept it */
void export_writer_str(struct export_writer *w, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	export_writer_lit(w, "\"");
	const char *run = s;
	for (;; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x80) {
			int n = utf8_seq_len((const unsigned char *)s);
			if (n) {
				s += n - 1;
				continue;
			}
			export_writer_put(w, run, (size_t)(s - run));
			export_writer_lit(w, "\\ufffd");
			run = s + 1;
			continue;
		}
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		export_writer_put(w, run, (size_t)(s - run));
		if (!c)
			break;
		char e[6] = { '\\', (char)c, 0, 0, 0, 0 };
		size_t el = 2;
		if (c == '\n')
			e[1] = 'n';
		else if (c == '\t')
			e[1] = 't';
		else if (c == '\r')
			e[1] = 'r';
		else if (c < 0x20) {
			e[1] = 'u';
			e[2] = '0';
			e[3] = '0';
			e[4] = hex[c >> 4];
			e[5] = hex[c & 15];
			el = 6;
		}
		export_writer_put(w, e, el);
		run = s + 1;
	}
	export_writer_lit(w, "\"");
}

void export_writer_u64(struct export_writer *w, uint64_t v)
{
	char b[24];
	int i = 24;
	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	export_writer_put(w, b + i, (size_t)(24 - i));
}

void export_writer_i64(struct export_writer *w, int64_t v)
{
	if (v < 0) {
		export_writer_lit(w, "-");
		export_writer_u64(w, (uint64_t)0 - (uint64_t)v);
	} else {
		export_writer_u64(w, (uint64_t)v);
	}
}

void export_writer_us(struct export_writer *w, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	if (ns < 0)
		export_writer_lit(w, "-");
	export_writer_u64(w, a / 1000);
	unsigned r = (unsigned)(a % 1000);
	char f[4] = { '.', (char)('0' + r / 100), (char)('0' + r / 10 % 10), (char)('0' + r % 10) };
	export_writer_put(w, f, 4);
}

void export_writer_dbl(struct export_writer *w, double v)
{
	if (!isfinite(v)) {
		export_writer_lit(w, "null");
		return;
	}
	char b[40];
	int n = snprintf(b, sizeof(b), "%.17g", v);
	export_writer_put(w, b, (size_t)n);
}
