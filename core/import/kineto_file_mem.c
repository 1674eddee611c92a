/*
 * kineto_file_mem.c - Kineto "[memory]" instants (the PyTorch profiler's allocator
 * records, args Bytes, Device Type, Device Id, and in newer traces Addr,
 * Total Allocated, Total Reserved) kept as GT_EVF_MEMORY instants: arg =
 * Bytes, aux = the CUDA ordinal or GT_MEM_HOST.  Total Allocated / Total
 * Reserved become counter samples (kineto_file.c); Addr is not kept
 * (docs/import.md).
 */
#include <stdlib.h>
#include <string.h>
#include "kineto.h"

/* the numeric arg `key` of ev as int64; 1 when present */
static int num_arg(const struct kev *ev, const char *key, int64_t *out)
{
	size_t kl = strlen(key);
	for (uint32_t i = 0; i < ev->n_num; i++) {
		if (ev->num_key[i].len != kl || memcmp(ev->num_key[i].s, key, kl))
			continue;
		char buf[40];
		size_t n = ev->num_val[i].len < sizeof(buf) - 1 ? ev->num_val[i].len : sizeof(buf) - 1;
		memcpy(buf, ev->num_val[i].s, n);
		buf[n] = 0;
		char *end;
		long long v = strtoll(buf, &end, 10);
		if (end == buf || *end)
			return 0;       /* fractional or malformed: not an allocator record */
		*out = v;
		return 1;
	}
	return 0;
}

void kineto_file_mem(const struct kev *ev, struct gt_event *g)
{
	static const char nm[] = "[memory]";
	int64_t bytes, type = -1, dev = -1;
	if (!ev->name.s || ev->name.len != sizeof(nm) - 1 || memcmp(ev->name.s, nm, sizeof(nm) - 1))
		return;
	if (ev->have & KA_BYTES)
		bytes = ev->bytes;
	else if (!num_arg(ev, "Bytes", &bytes))
		return;
	num_arg(ev, "Device Type", &type);
	num_arg(ev, "Device Id", &dev);
	g->flags |= GT_EVF_MEMORY;
	memcpy(&g->arg, &bytes, sizeof(bytes));
	g->aux = type == 1 && dev >= 0 && dev < (int64_t)GT_MEM_HOST ? (uint32_t)dev : GT_MEM_HOST;
}

int kineto_file_mem_total(const struct kev *ev, int which, int64_t *out)
{
	return num_arg(ev, which ? "Total Reserved" : "Total Allocated", out) && *out >= 0;
}

void kineto_file_mem_counter(const struct kev *ev, struct gt_event *g)
{
	static const char cat[] = "gtrace_memory_total";
	if (!ev->cat.s || ev->cat.len != sizeof(cat) - 1 || memcmp(ev->cat.s, cat, sizeof(cat) - 1))
		return;
	char nm[64];
	size_t n = ev->name.len < sizeof(nm) - 1 ? ev->name.len : sizeof(nm) - 1;
	memcpy(nm, ev->name.s ? ev->name.s : "", n);
	nm[n] = 0;
	int sub = !strncmp(nm, "Total Allocated (", 17) ? 0 :
		  !strncmp(nm, "Total Reserved (", 16) ? 1 : -1;
	if (sub < 0)
		return;
	const char *d = strchr(nm, '(') + 1;
	char *end;
	unsigned long dev = GT_MEM_HOST;
	if (strncmp(d, "CPU)", 4)) {
		if (strncmp(d, "GPU ", 4))
			return;
		dev = strtoul(d + 4, &end, 10);
		if (end == d + 4 || strcmp(end, ")") || dev >= GT_MEM_HOST)
			return;
	}
	g->flags |= GT_EVF_MEMORY;
	g->sub = (uint8_t)sub;
	g->aux = (uint32_t)dev;
}
