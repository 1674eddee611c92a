/*
 * pages.c - the viewer's pages in tab order.  Everything that lists the
 * pages derives from this table: the number keys (keys.c), the tab bar and
 * its mouse clicks (status.c, ui.c), the help line (pages_help) and the
 * views the app creates (ui_app_new).  A page is a hand-written view
 * (make) or a report shown as a table page in one line:
 *     { "NVTX", NULL, "nvtx" },
 */
#include <stdio.h>
#include <string.h>
#include "view.h"

const struct page_def pages_table[] = {
	{ "Trace", trace_view_new, NULL },
	{ "Kernels", kernels_view_new, NULL },
	{ "Pipeline", pipeline_view_new, NULL },
	{ "Overview", overview_view_new, NULL },
	{ "Operators", operators_view_new, NULL },
	{ "Memory", memory_view_new, NULL },
};
const size_t pages_count = sizeof(pages_table) / sizeof(pages_table[0]);
_Static_assert(sizeof(pages_table) / sizeof(pages_table[0]) <= PAGES_MAX,
	       "more pages than number keys");

const char *pages_help(void)
{
	static char line[256];
	if (line[0])
		return line;
	int k = snprintf(line, sizeof(line), "1-%zu Tab S-Tab  switch view (", pages_count);
	for (size_t i = 0; i < pages_count && k > 0 && (size_t)k < sizeof(line); i++) {
		char low[32];
		size_t n = 0;
		for (const char *p = pages_table[i].name; *p && n + 1 < sizeof(low); p++)
			low[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
		low[n] = 0;
		k += snprintf(line + k, sizeof(line) - (size_t)k, "%s%s", i ? ", " : "", low);
	}
	if (k > 0 && (size_t)k < sizeof(line))
		snprintf(line + k, sizeof(line) - (size_t)k, ")");
	return line;
}
