/*
 * layout.c - screen rectangles and the time -> column map (no curses;
 * tests/tui/test_layout.c checks every function here).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "layout.h"

void layout_screen(int cols, int rows, struct layout_screen *o)
{
	memset(o, 0, sizeof(*o));
	if (cols < 1 || rows < 1)
		return;
	if (rows < 3) {
		o->body = (struct lrect){ 0, 0, cols, rows };
		return;
	}
	o->tabs = (struct lrect){ 0, 0, cols, 1 };
	o->body = (struct lrect){ 0, 1, cols, rows - 2 };
	o->status = (struct lrect){ 0, rows - 1, cols, 1 };
}

void layout_trace(struct lrect a, struct layout_trace *o)
{
	memset(o, 0, sizeof(*o));
	if (a.w < 2 || a.h < 1)
		return;
	int label_w = a.w / 5;
	if (label_w > 28)
		label_w = 28;
	if (label_w < 4)
		label_w = a.w >= 12 ? 4 : 0;
	int h = a.h, y = a.y;
	int detail_h = 0, legend_h = 0, steps_h = 0, ruler_h = 0;
	if (h >= 3)
		ruler_h = 1;
	if (h >= 12)
		steps_h = 1;
	if (h >= 10)
		legend_h = 1;
	if (h >= 16)
		detail_h = h >= 30 ? 7 : 5;
	else if (h >= 8)
		detail_h = 2;
	int cx = a.x + label_w, cw = a.w - label_w;
	o->ruler = (struct lrect){ cx, y, cw, ruler_h };
	y += ruler_h;
	o->steps = (struct lrect){ cx, y, cw, steps_h };
	y += steps_h;
	int lanes_h = h - ruler_h - steps_h - legend_h - detail_h;
	o->labels = (struct lrect){ a.x, y, label_w, lanes_h };
	o->cells = (struct lrect){ cx, y, cw, lanes_h };
	y += lanes_h;
	o->legend = (struct lrect){ a.x, y, a.w, legend_h };
	y += legend_h;
	o->detail = (struct lrect){ a.x, y, a.w, detail_h };
}

void layout_tmap_fit(struct layout_tmap *m, int64_t t0, int64_t t1, int cols)
{
	if (cols < 1)
		cols = 1;
	if (t1 <= t0)
		t1 = t0 + 1;
	m->cols = cols;
	m->t0_ns = t0;
	m->ns_per_col = (t1 - t0 + cols - 1) / cols;
	if (m->ns_per_col < 1)
		m->ns_per_col = 1;
}

long layout_t2col(const struct layout_tmap *m, int64_t t)
{
	int64_t d = t - m->t0_ns;
	if (d >= 0)
		return (long)(d / m->ns_per_col);
	return -(long)((-d + m->ns_per_col - 1) / m->ns_per_col);
}

int64_t layout_col2t(const struct layout_tmap *m, long c)
{
	return m->t0_ns + (int64_t)c * m->ns_per_col;
}

void layout_tmap_zoom(struct layout_tmap *m, int col, int64_t num, int64_t den,
		      int64_t max_npc)
{
	if (num <= 0 || den <= 0)
		return;
	/* the column's start: the cursor's time as the status line shows it and
	 * `g` sets it (its middle drifted by a quarter of a column a zoom) */
	int64_t fixed = layout_col2t(m, col);
	__int128 n = (__int128)m->ns_per_col * num / den;
	if (num < den && n >= m->ns_per_col)
		n = m->ns_per_col - 1;
	if (num > den && n <= m->ns_per_col)
		n = m->ns_per_col + 1;
	if (max_npc < 1)
		max_npc = 1;
	if (n > max_npc)
		n = max_npc;
	if (n < 1)
		n = 1;
	m->ns_per_col = (int64_t)n;
	m->t0_ns = fixed - (int64_t)col * m->ns_per_col;
}

void layout_tmap_pan(struct layout_tmap *m, long dcols)
{
	m->t0_ns += (int64_t)dcols * m->ns_per_col;
}

void layout_tmap_clamp(struct layout_tmap *m, int64_t lo, int64_t hi)
{
	int64_t span = (int64_t)m->cols * m->ns_per_col;
	int64_t keep = span / 4;
	if (m->t0_ns > hi - keep)
		m->t0_ns = hi - keep;
	if (m->t0_ns + span < lo + keep)
		m->t0_ns = lo + keep - span;
}

void layout_tmap_resize(struct layout_tmap *m, int cols)
{
	m->cols = cols < 1 ? 1 : cols;
}

void layout_tmap_rescale(struct layout_tmap *m, int cols)
{
	int64_t span = (int64_t)m->cols * m->ns_per_col;
	m->cols = cols < 1 ? 1 : cols;
	m->ns_per_col = (span + m->cols - 1) / m->cols;
	if (m->ns_per_col < 1)
		m->ns_per_col = 1;
}

int64_t layout_tick_ns(const struct layout_tmap *m, int min_cols)
{
	int64_t want = m->ns_per_col * (min_cols < 1 ? 1 : min_cols);
	for (int64_t p = 1; p <= INT64_MAX / 10; p *= 10) {
		static const int mul[] = { 1, 2, 5 };
		for (int i = 0; i < 3; i++)
			if (p * mul[i] >= want)
				return p * mul[i];
	}
	return INT64_MAX / 10;
}

char *layout_fmt_time(int64_t t, int64_t scale, char *buf, size_t len)
{
	static const struct { int64_t ns; const char *u; } units[] = {
		{ 1000000000, "s" }, { 1000000, "ms" }, { 1000, "us" }, { 1, "ns" }
	};
	if (scale < 1)
		scale = 1;
	int i = 0;
	while (i < 3 && units[i].ns >= scale * 5)
		i++;
	/* five or more integer digits ("499400us") read badly: a larger unit
	   with up to three decimals ("499.4ms") */
	int64_t at = t < 0 ? -t : t;
	while (i > 0 && at / units[i].ns >= 10000 && scale % (units[i - 1].ns / 1000) == 0)
		i--;
	int64_t u = units[i].ns;
	int dec = 0, maxdec = units[i].ns / scale >= 100 ? 3 : 2;
	int64_t q = u;
	while (dec < maxdec && q > 1 && scale % q != 0) {
		q /= 10;
		dec++;
	}
	snprintf(buf, len, "%.*f%s", dec, (double)t / (double)u, units[i].u);
	return buf;
}

char *layout_fmt_dur(int64_t ns, char *buf, size_t len)
{
	const char *sign = ns < 0 ? "-" : "";
	double v = ns < 0 ? -(double)ns : (double)ns;
	const char *u = "ns";
	if (v >= 1e9) {
		v /= 1e9;
		u = "s";
	} else if (v >= 1e6) {
		v /= 1e6;
		u = "ms";
	} else if (v >= 1e3) {
		v /= 1e3;
		u = "us";
	}
	if (!strcmp(u, "ns") || v >= 100 || (!strcmp(u, "s") && v >= 1000))
		snprintf(buf, len, "%s%.0f%s", sign, v, u);
	else if (v >= 10)
		snprintf(buf, len, "%s%.1f%s", sign, v, u);
	else
		snprintf(buf, len, "%s%.2f%s", sign, v, u);
	return buf;
}

char *layout_fmt_rel(int64_t ns, char *buf, size_t len)
{
	char d[32];
	layout_fmt_dur(ns, d, sizeof(d));
	snprintf(buf, len, "%s%s", ns < 0 ? "" : "+", d);
	return buf;
}

char *layout_fmt_ts(int64_t ns, char *buf, size_t len)
{
	if (ns < 1000000000 && ns > -1000000000)
		snprintf(buf, len, "%.3fms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.6fs", (double)ns / 1e9);
	return buf;
}

int layout_parse_time(const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno)
		return -EINVAL;
	while (*end == ' ')
		end++;
	double mul = 1;
	if (!strcmp(end, "ns") || (!*end && v == 0))   /* a unit is needed but for 0 */
		mul = 1;
	else if (!strcmp(end, "us"))
		mul = 1e3;
	else if (!strcmp(end, "ms"))
		mul = 1e6;
	else if (!strcmp(end, "s"))
		mul = 1e9;
	else
		return -EINVAL;
	v *= mul;
	if (v > 9e18 || v < -9e18)
		return -EINVAL;
	*out = (int64_t)(v + (v >= 0 ? 0.5 : -0.5));
	return 0;
}

int layout_eighths(int64_t busy, int64_t npc, uint32_t count)
{
	if (npc < 1)
		npc = 1;
	if (busy <= 0)
		return count > 0 ? 1 : 0;
	if (busy >= npc)
		return 8;
	int e = (int)((busy * 8 + npc / 2) / npc);
	return e < 1 ? 1 : e;
}

/* code points in s (UTF-8 continuation bytes do not count) */
static int cps(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* the byte offset of code point i of s (strlen when past the end) */
static size_t cp_off(const char *s, int i)
{
	size_t b = 0;
	for (int n = 0; s[b]; b++) {
		if (((unsigned char)s[b] & 0xC0) != 0x80 && n++ == i)
			return b;
	}
	return b;
}

char *layout_ellipsize(const char *s, int w, int utf8, char *out, size_t len)
{
	if (!len)
		return out;
	int n = cps(s);
	if (n <= w || w < 1) {
		snprintf(out, len, "%.*s", w < 1 ? 0 : (int)strlen(s), s);
		return out;
	}
	const char *dots = utf8 ? "\u2026" : "~";
	int head = (w - 1) * 2 / 5, tail = w - 1 - head;
	size_t hb = cp_off(s, head), tb = cp_off(s, n - tail);
	snprintf(out, len, "%.*s%s%s", (int)hb, s, dots, s + tb);
	return out;
}
