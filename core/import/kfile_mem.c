/*
 * kfile_mem.c - Kineto "[memory]" instants (the PyTorch profiler's allocator
 * records, args Bytes, Device Type, Device Id, and in newer traces Addr,
 * Total Allocated, Total Reserved) kept as GT_EVF_MEMORY instants: arg =
 * Bytes, aux = the CUDA ordinal or GT_MEM_HOST.  The other args are not
 * kept (docs/import.md).
 */
#include <stdlib.h>
#include <string.h>
#include "kimport.h"

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

void kfile_mem(const struct kev *ev, struct gt_event *g)
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
