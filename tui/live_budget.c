/*
 * live_budget.c - FALLBACK stand-ins for the store's memory budget
 * (live_budget.h), compiled only while gtrace/store.h lacks
 * store_set_budget (tui/meson.build).  The budget is remembered, not
 * enforced: the store keeps every event in memory.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "live_budget.h"

static const struct gt_store *budget_store;
static size_t budget_bytes;

int store_set_budget(struct gt_store *s, size_t bytes)
{
	budget_store = s;
	budget_bytes = bytes;
	return 0;
}

size_t store_budget(const struct gt_store *s)
{
	return s == budget_store ? budget_bytes : 0;
}

size_t store_resident_bytes(const struct gt_store *s)
{
	return store_bytes(s);
}

size_t gt_default_memory_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	uint64_t ram = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
	uint64_t b = 1ull << 30;
	if (ram && ram / 4 < b)
		b = ram / 4;
	return (size_t)b;
}

int gt_parse_size(const char *text, size_t *out)
{
	char *end;
	if (!text || !*text || *text == '-')
		return -EINVAL;
	double v = strtod(text, &end);
	if (end == text || !(v >= 0))
		return -EINVAL;
	double mul = 1;
	switch (*end) {
	case 'k': case 'K': mul = 1024.0; end++; break;
	case 'm': case 'M': mul = 1048576.0; end++; break;
	case 'g': case 'G': mul = 1073741824.0; end++; break;
	case 't': case 'T': mul = 1099511627776.0; end++; break;
	default: break;
	}
	if (mul > 1 && (!strcmp(end, "iB") || !strcmp(end, "B")))
		end += strlen(end);
	else if (mul == 1 && !strcmp(end, "B"))
		end++;
	if (*end || v * mul > 1.8e19)
		return -EINVAL;
	*out = (size_t)(v * mul);
	return 0;
}

int live_budget_enforced(void)
{
	return 0;
}
