/*
 * export_writer.h - buffered JSON text writer of the exporter: to a file, a gzip
 * file or memory; JSON string escaping and exact integer / fixed-point
 * number formatting without printf or doubles.
 */
#ifndef GTRACE_EXPW_H
#define GTRACE_EXPW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <zlib.h>
#include "../util/safew.h"

#define EXPORT_WRITER_BUF (256u * 1024u)

struct export_writer {
	FILE *f;
	struct safew sw;          /* the file's creation, committed at close */
	gzFile gz;
	char *mem;                /* memory sink (grown) */
	size_t mem_len, mem_cap;
	char buf[EXPORT_WRITER_BUF];
	size_t n;
	int err;                  /* 0 or negative errno */
};

/* create path through safew (sw_flags: SAFEW_*); 0 or negative errno
 * with "PATH: problem" in err */
int export_writer_open(struct export_writer *w, const char *path, int gzip_level, unsigned sw_flags, char *err,
	      size_t errlen);
void export_writer_open_mem(struct export_writer *w);
/* flush and close; the file is put in place when all went well, removed
 * otherwise; returns the first error (negative errno) */
int export_writer_close(struct export_writer *w);
void export_writer_flush(struct export_writer *w);

static inline void export_writer_put(struct export_writer *w, const char *s, size_t len)
{
	if (w->n + len > EXPORT_WRITER_BUF) {
		export_writer_flush(w);
		if (len > EXPORT_WRITER_BUF) {
			size_t half = len / 2;
			export_writer_put(w, s, half);
			export_writer_put(w, s + half, len - half);
			return;
		}
	}
	for (size_t i = 0; i < len; i++)
		w->buf[w->n + i] = s[i];
	w->n += len;
}

#define export_writer_lit(w, lit) export_writer_put((w), (lit), sizeof(lit) - 1)

void export_writer_str(struct export_writer *w, const char *s);      /* "quoted, escaped" */
void export_writer_i64(struct export_writer *w, int64_t v);
void export_writer_u64(struct export_writer *w, uint64_t v);
void export_writer_us(struct export_writer *w, int64_t ns);          /* ns as us with 3 decimals */
void export_writer_dbl(struct export_writer *w, double v);           /* %.17g, null when not finite */

#endif
