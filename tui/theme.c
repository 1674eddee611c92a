/*
 * theme.c - the colour scheme by meaning and the glyphs of the trace cells.
 * Three palettes: 256 colours, 8 colours, and mono (attributes and ASCII
 * glyphs only, so categories stay distinguishable on a vt100).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include "term.h"

struct term_caps term_caps;

static attr_t attrs[TH_ROLE_COUNT];

/* fg colour per role for 8 and 256 colours; bg -1 = terminal default */
static const struct { short fg8, fg256, bg; attr_t extra, mono; } scheme[TH_ROLE_COUNT] = {
	[TH_NORMAL] = { -1, -1, -1, 0, 0 },
	[TH_COMPUTE] = { COLOR_GREEN, 41, -1, 0, 0 },
	[TH_NCCL] = { COLOR_MAGENTA, 170, -1, 0, 0 },
	[TH_H2D] = { COLOR_CYAN, 45, -1, 0, 0 },
	[TH_D2H] = { COLOR_YELLOW, 214, -1, 0, 0 },
	[TH_D2D] = { COLOR_BLUE, 69, -1, 0, 0 },
	[TH_MEMSET] = { COLOR_WHITE, 250, -1, 0, 0 },
	[TH_SYNC] = { COLOR_RED, 196, -1, 0, 0 },
	[TH_API] = { COLOR_YELLOW, 186, -1, A_DIM, 0 },
	[TH_RANGE] = { COLOR_BLUE, 111, -1, 0, 0 },
	[TH_STEP] = { COLOR_WHITE, 255, -1, A_BOLD, A_BOLD },
	[TH_TITLE] = { COLOR_CYAN, 81, -1, A_BOLD, A_BOLD },
	[TH_TAB] = { COLOR_WHITE, 250, COLOR_BLUE, 0, 0 },
	[TH_TAB_ON] = { COLOR_BLACK, 16, COLOR_CYAN, A_BOLD, A_REVERSE },
	[TH_STATUS] = { COLOR_BLACK, 16, COLOR_WHITE, 0, A_REVERSE },
	[TH_HEADER] = { COLOR_YELLOW, 229, -1, A_BOLD, A_BOLD | A_UNDERLINE },
	[TH_SELECT] = { COLOR_BLACK, 16, COLOR_YELLOW, 0, A_REVERSE },
	[TH_CURSOR] = { COLOR_WHITE, 231, -1, A_BOLD | A_REVERSE, A_REVERSE },
	[TH_MARK] = { COLOR_WHITE, 231, COLOR_BLUE, 0, A_UNDERLINE },
	[TH_DIM] = { COLOR_WHITE, 244, -1, A_DIM, A_DIM },
	[TH_WARN] = { COLOR_RED, 203, -1, A_BOLD, A_BOLD },
	[TH_GOOD] = { COLOR_GREEN, 120, -1, 0, 0 },
	[TH_GROUP] = { COLOR_CYAN, 117, -1, A_BOLD, A_BOLD },
};

void theme_init(void)
{
	term_caps.colors = 0;
	if (has_colors() && start_color() == OK) {
		use_default_colors();
		term_caps.colors = COLORS >= 256 ? 256 : (COLORS >= 8 ? 8 : 0);
	}
	for (int r = 0; r < TH_ROLE_COUNT; r++) {
		if (!term_caps.colors) {
			attrs[r] = scheme[r].mono;
			continue;
		}
		short fg = term_caps.colors == 256 ? scheme[r].fg256 : scheme[r].fg8;
		short bg = scheme[r].bg;
		if (term_caps.colors == 256 && bg >= 0) {
			static const short map[8] = { 16, 160, 34, 178, 25, 127, 37, 252 };
			bg = map[bg];
		}
		if (r == TH_NORMAL) {
			attrs[r] = 0;
			continue;
		}
		init_pair((short)r, fg, bg);
		attrs[r] = COLOR_PAIR(r) | scheme[r].extra;
	}
}

attr_t theme_attr(enum theme_role r)
{
	return (unsigned)r < TH_ROLE_COUNT ? attrs[r] : 0;
}

enum theme_role theme_cat(const struct gt_event *e)
{
	switch (e->kind) {
	case GT_EV_KERNEL:
		return (e->flags & GT_EVF_NCCL) ? TH_NCCL : TH_COMPUTE;
	case GT_EV_MEMCPY:
		if (e->sub == GT_COPY_H2D)
			return TH_H2D;
		if (e->sub == GT_COPY_D2H)
			return TH_D2H;
		return TH_D2D;
	case GT_EV_MEMSET:
		return TH_MEMSET;
	case GT_EV_SYNC:
		return TH_SYNC;
	case GT_EV_RUNTIME:
	case GT_EV_DRIVER:
		return TH_API;
	case GT_EV_STEP:
		return TH_STEP;
	default:
		return TH_RANGE;
	}
}

const char *theme_cat_name(enum theme_role r)
{
	static const char *names[TH_CAT_END] = {
		[TH_COMPUTE] = "compute", [TH_NCCL] = "NCCL", [TH_H2D] = "H2D",
		[TH_D2H] = "D2H", [TH_D2D] = "D2D/P2P", [TH_MEMSET] = "memset",
		[TH_SYNC] = "sync", [TH_API] = "API", [TH_RANGE] = "host range",
		[TH_STEP] = "step",
	};
	return (unsigned)r < TH_CAT_END && names[r] ? names[r] : "";
}

const char *theme_cell(enum theme_role r, int e)
{
	static const char *blocks[9] = { " ", "\u2581", "\u2582", "\u2583", "\u2584",
					 "\u2585", "\u2586", "\u2587", "\u2588" };
	static const char *mono[TH_CAT_END] = {
		[TH_COMPUTE] = "#", [TH_NCCL] = "%", [TH_H2D] = ">", [TH_D2H] = "<",
		[TH_D2D] = "=", [TH_MEMSET] = "~", [TH_SYNC] = "!", [TH_API] = "-",
		[TH_RANGE] = ":", [TH_STEP] = "|",
	};
	if (e <= 0)
		return " ";
	if (e > 8)
		e = 8;
	if (!term_caps.colors) {
		if (e <= 2)
			return ".";
		return (unsigned)r < TH_CAT_END && mono[r] ? mono[r] : "#";
	}
	if (term_caps.utf8)
		return blocks[e];
	return e <= 2 ? "_" : (e <= 5 ? "=" : "#");
}

void term_glyph(int y, int x, const char *g)
{
	static struct { const char *g; cchar_t c; } cache[64];
	static int n;
	if (!((unsigned char)g[0] & 0x80)) {
		mvaddch(y, x, (chtype)(unsigned char)g[0]);
		return;
	}
	for (int i = 0; i < n; i++)
		if (cache[i].g == g) {
			mvadd_wch(y, x, &cache[i].c);
			return;
		}
	wchar_t wc[2] = { L'?', 0 };
	mbstate_t st;
	memset(&st, 0, sizeof(st));
	if (mbrtowc(&wc[0], g, strlen(g), &st) == (size_t)-1)
		wc[0] = L'?';
	cchar_t c;
	setcchar(&c, wc, A_NORMAL, 0, NULL);
	if (n < 64) {
		cache[n].g = g;
		cache[n++].c = c;
	}
	mvadd_wch(y, x, &c);
}

void term_put(int y, int x, int w, attr_t a, const char *s)
{
	if (w <= 0 || y < 0 || x < 0)
		return;
	int maxx = getmaxx(stdscr);
	if (x + w > maxx)
		w = maxx - x;
	char buf[1024];
	int n = 0, cells = 0;
	mbstate_t st;
	memset(&st, 0, sizeof(st));
	/* whole characters by their cell width (wcwidth: CJK takes 2), never
	 * more than w cells; bytes that do not decode show as '?' */
	while (*s && n < (int)sizeof(buf) - 5) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x80 && term_caps.utf8) {
			wchar_t wc;
			size_t k = mbrtowc(&wc, s, MB_CUR_MAX, &st);
			if (k != (size_t)-1 && k != (size_t)-2 && k > 0 && k <= 4) {
				int cw = wcwidth(wc);
				if (cw < 0) {
					if (cells + 1 > w)
						break;
					buf[n++] = '?';
					cells++;
				} else {
					if (cells + cw > w)
						break;
					memcpy(buf + n, s, k);
					n += (int)k;
					cells += cw;
				}
				s += k;
				continue;
			}
			memset(&st, 0, sizeof(st));
		}
		if (cells + 1 > w)
			break;
		buf[n++] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
		cells++;
		s++;
	}
	buf[n] = 0;
	attrset(a);
	mvaddnstr(y, x, buf, n);
	attrset(A_NORMAL);
}

void term_printf(int y, int x, int w, attr_t a, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	term_put(y, x, w, a, buf);
}

void term_fill(struct lrect r, attr_t a)
{
	attrset(a);
	for (int y = r.y; y < r.y + r.h; y++)
		mvhline(y, r.x, ' ', r.w);
	attrset(A_NORMAL);
}

void term_hbar(int y, int x, int w, attr_t a, int64_t len8)
{
	static const char *part[8] = { "", "\u258f", "\u258e", "\u258d", "\u258c",
				       "\u258b", "\u258a", "\u2589" };
	if (len8 < 0)
		len8 = 0;
	int full = (int)(len8 / 8), rem = (int)(len8 % 8);
	attrset(a);
	move(y, x);
	const char *fullg = term_caps.utf8 && term_caps.colors ? "\u2588" : "#";
	int i = 0;
	for (; i < full && i < w; i++)
		term_glyph(y, x + i, fullg);
	if (rem && full < w)
		term_glyph(y, x + i, term_caps.utf8 && term_caps.colors ? part[rem] : (rem >= 4 ? "#" : "."));
	attrset(A_NORMAL);
}

const char *term_spark(double v)
{
	static const char *u[8] = { "\u2581", "\u2582", "\u2583", "\u2584",
				    "\u2585", "\u2586", "\u2587", "\u2588" };
	static const char *a[8] = { "_", "_", ".", "-", "-", "=", "#", "#" };
	int i = (int)(v * 8);
	if (i < 0)
		i = 0;
	if (i > 7)
		i = 7;
	return term_caps.utf8 ? u[i] : a[i];
}
