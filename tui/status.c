/*
 * status.c - the tab line (top) and the status line (bottom): source,
 * events, time span, dropped records, the current range, messages.
 */
#include <stdio.h>
#include <string.h>
#include "term.h"
#include "view.h"

int status_tab_w(int cols)
{
	int w = cols / (int)pages_count;
	return w > 16 ? 16 : w;   /* the key hint keeps room on wide lines */
}

void status_tabs(struct app *a, struct lrect r)
{
	term_fill(r, theme_attr(TH_TAB));
	int w = status_tab_w(r.w);
	for (int i = 0; i < a->nviews; i++)
		term_printf(r.y, r.x + i * w, w, theme_attr(i == a->cur ? TH_TAB_ON : TH_TAB),
			    " %d %s%*s", i + 1, pages_table[i].name, w, "");
	/* the key hint, where it does not cover the last tab's name */
	const char *k = "? help  q quit ";
	int last_end = (a->nviews - 1) * w + 3 + (int)strlen(pages_table[a->nviews - 1].name) + 1;
	if (r.w - (int)strlen(k) >= last_end) {
		term_put(r.y, r.x + r.w - (int)strlen(k), (int)strlen(k), theme_attr(TH_TAB), k);
	}
}

/* the last resort when even the short line is too long for w columns:
 * every field whole or not at all, kept by weight (the range, a non-zero
 * drop count, the source's state, the cursor), shown in their usual order;
 * the source's state ("live: 1 proc recording, 5k ev/s, ...") keeps as
 * many of its comma-separated parts as fit */
static void fit_fields(const struct app *a, const char *name, const char *dropped, int w,
		       char *line, size_t len)
{
	char range[sizeof(a->range) + 16] = "", cursor[sizeof(a->cursor) + 8] = "",
	     src[sizeof(a->src_status) + 8] = "";
	if (a->range[0])
		snprintf(range, sizeof(range), " | %s%s", a->range,
			 a->paused ? " paused" : a->follow ? " follow" : "");
	if (a->cursor[0])
		snprintf(cursor, sizeof(cursor), " | %s", a->cursor);
	int room = w - 1 - (int)strlen(name);
	int use_range = range[0] && (int)strlen(range) <= room;
	room -= use_range ? (int)strlen(range) : 0;
	int use_drop = dropped[0] && (int)strlen(dropped) <= room;
	room -= use_drop ? (int)strlen(dropped) : 0;
	if (a->src_status[0] && room > 3) {
		/* whole parts of the state: cut before the first ", " that
		 * overflows, never inside (...) (it left "(512 collectives") */
		int k = snprintf(src, sizeof(src), " | %s", a->src_status);
		if (k > room) {
			char *last = NULL;
			int depth = 0;
			for (char *c = src; *c && c - src <= room; c++) {
				depth += *c == '(' ? 1 : *c == ')' && depth > 0 ? -1 : 0;
				if (!depth && c[0] == ',' && c[1] == ' ')
					last = c;
			}
			if (last)
				*last = 0;
			else
				src[0] = 0;
		}
		room -= (int)strlen(src);
	}
	int use_cursor = cursor[0] && (int)strlen(cursor) <= room;
	snprintf(line, len, " %s%s%s%s%s", name, use_drop ? dropped : "", src, use_range ? range : "",
		 use_cursor ? cursor : "");
}

void status_draw(struct app *a, struct lrect r)
{
	const struct gt_store *s = a->store;
	const struct gt_drops *d = gt_store_drops((struct gt_store *)s);
	uint64_t drop = gt_store_drops_lost(d);
	char span[32] = "-", n[32];
	size_t ne = gt_store_event_count(s);
	if (ne)
		layout_fmt_dur(gt_store_t_max(s) - gt_store_t_min(s), span, sizeof(span));
	if (ne >= 10000000)
		snprintf(n, sizeof(n), "%.1fM", (double)ne / 1e6);
	else if (ne >= 10000)
		snprintf(n, sizeof(n), "%.0fk", (double)ne / 1e3);
	else
		snprintf(n, sizeof(n), "%zu", ne);
	char line[512];
	const char *name = a->src->name ? a->src->name : "";
	/* a message takes precedence: it gets its whole length, the fixed
	   fields what is left */
	int mw = a->msg[0] ? (int)strlen(a->msg) + 3 : 0;
	if (mw > r.w)
		mw = r.w;
	/* the fields, whole or not at all: when the line does not fit, the
	 * source loses its directory, then the event count, the span and a zero
	 * drop count go, in that order; the range and a capture state stay */
	char dropped[40], evs[48], spans[40];
	snprintf(dropped, sizeof(dropped), " | dropped %llu", (unsigned long long)drop);
	snprintf(evs, sizeof(evs), " | %s ev", n);
	snprintf(spans, sizeof(spans), " | %s", span);
	const char *base = strrchr(name, '/');
	/* a directory given as "dir/" keeps its name */
	while (base && base > name && !base[1]) {
		const char *p = base - 1;
		while (p > name && *p != '/')
			p--;
		base = *p == '/' ? p : NULL;
	}
	const char *shortname = base && base[1] ? base + 1 : name;
	int keep_ev = 1, keep_span = 1, keep_drop = 1;
	for (int pass = 0; pass < 5; pass++) {
		const char *nm = pass == 0 ? name : shortname;
		keep_ev = pass < 2;
		keep_span = pass < 3;
		keep_drop = pass < 4 || drop;
		int k = snprintf(line, sizeof(line), " %s%s%s%s", nm, keep_ev ? evs : "",
				 keep_span ? spans : "", keep_drop ? dropped : "");
		if (a->src_status[0] && k > 0 && (size_t)k < sizeof(line))
			k += snprintf(line + k, sizeof(line) - (size_t)k, " | %s", a->src_status);
		/* paused is said on every page, and never with follow */
		if (a->range[0] && k > 0 && (size_t)k < sizeof(line))
			k += snprintf(line + k, sizeof(line) - (size_t)k, " | %s%s", a->range,
				      a->paused ? " paused" : a->follow ? " follow" : "");
		if (a->cursor[0] && k > 0 && (size_t)k < sizeof(line))
			k += snprintf(line + k, sizeof(line) - (size_t)k, " | %s", a->cursor);
		if (k <= r.w - mw)
			break;
	}
	if ((int)strlen(line) > r.w - mw)
		fit_fields(a, shortname, drop ? dropped : "", r.w - mw, line, sizeof(line));
	term_fill(r, theme_attr(TH_STATUS));
	attr_t at = theme_attr(TH_STATUS);
	if (drop)
		at |= A_BOLD;
	if (a->msg[0]) {
		term_put(r.y, r.x, r.w - mw, at, line);
		term_printf(r.y, r.x + r.w - mw, mw, theme_attr(TH_SELECT), " | %s", a->msg);
	} else {
		term_put(r.y, r.x, r.w, at, line);
	}
}
