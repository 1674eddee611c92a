/*
 * json_tok.h - the JSON scanning primitives of the trace importer: whitespace,
 * strings (raw spans, unescaped on demand), numbers as fixed-point integers
 * (never through a double), and skipping any value without building it.
 *
 * Every scanner works on a window [p, e) of a larger stream and answers
 * JT_OK (done, *pp moved past the token), JT_MORE (the window ended inside
 * the token: refill and retry from the token's start) or JT_BAD (not JSON).
 */
#ifndef GTRACE_JTOK_H
#define GTRACE_JTOK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { JT_OK = 0, JT_MORE = 1, JT_BAD = 2 };

/* first non-whitespace byte at or after p, or e */
static inline const char *json_tok_ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	return p;
}

/* string at *pp (which is '"'): raw span without quotes in *s and *len,
 * *esc = 1 when it holds backslash escapes */
static inline int json_tok_str(const char **pp, const char *e, const char **s, size_t *len, int *esc)
{
	const char *q = *pp + 1;
	int has = 0;
	for (;;) {
		/* short strings (keys, most values): a plain loop beats memchr */
		const char *lim = e - q > 24 ? q + 24 : e;
		while (q < lim && *q != '"' && *q != '\\')
			q++;
		if (q >= e)
			return JT_MORE;
		if (q < lim) {
			if (*q == '\\') {
				has = 1;
				q += 2;
				continue;
			}
			*s = *pp + 1;
			*len = (size_t)(q - *s);
			*esc = has;
			*pp = q + 1;
			return JT_OK;
		}
		const char *qq = memchr(q, '"', (size_t)(e - q));
		if (!qq)
			return JT_MORE;
		const char *bs = memchr(q, '\\', (size_t)(qq - q));
		if (!bs) {
			*s = *pp + 1;
			*len = (size_t)(qq - *s);
			*esc = has;
			*pp = qq + 1;
			return JT_OK;
		}
		has = 1;
		q = bs + 2;
	}
}

/* number at *pp as round(value * 10^scale) in *out; JT_BAD also on overflow */
int json_tok_fixed(const char **pp, const char *e, int scale, int64_t *out);

/* skip one value of any type at *pp (iterative: any nesting depth) */
int json_tok_skip(const char **pp, const char *e);

/* unescape a raw string span into dst (room for len bytes); returns length */
size_t json_tok_unescape(const char *s, size_t len, char *dst);

#endif
