/*
 * expw.h - buffered JSON text writer of the exporter: to a file, a gzip
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

#define EXPW_BUF (256u * 1024u)

struct expw {
	FILE *f;
	struct safew sw;          /* the file's creation, committed at close */
	gzFile gz;
	char *mem;                /* memory sink (grown) */
	size_t mem_len, mem_cap;
	char buf[EXPW_BUF];
	size_t n;
	int err;                  /* 0 or negative errno */
};

/* create path through safew (sw_flags: SAFEW_*); 0 or negative errno
 * with "PATH: problem" in err */
int expw_open(struct expw *w, const char *path, int gzip_level, unsigned sw_flags, char *err,
	      size_t errlen);
void expw_open_mem(struct expw *w);
/* flush and close; the file is put in place when all went well, removed
 * otherwise; returns the first error (negative errno) */
int expw_close(struct expw *w);
void expw_flush(struct expw *w);

static inline void expw_put(struct expw *w, const char *s, size_t len)
{
	if (w->n + len > EXPW_BUF) {
		expw_flush(w);
		if (len > EXPW_BUF) {
			size_t half = len / 2;
			expw_put(w, s, half);
			expw_put(w, s + half, len - half);
			return;
		}
	}
	for (size_t i = 0; i < len; i++)
		w->buf[w->n + i] = s[i];
	w->n += len;
}

#define expw_lit(w, lit) expw_put((w), (lit), sizeof(lit) - 1)

void expw_str(struct expw *w, const char *s);      /* "quoted, escaped" */
void expw_i64(struct expw *w, int64_t v);
void expw_u64(struct expw *w, uint64_t v);
void expw_us(struct expw *w, int64_t ns);          /* ns as us with 3 decimals */
void expw_dbl(struct expw *w, double v);           /* %.17g, null when not finite */

#endif
