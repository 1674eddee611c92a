/* impcheck.c - helpers of the import tests (impcheck.h) */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "gtrace/load.h"
#include "impcheck.h"
#include "../testdata.h"

const char *tpath(const char *rel)
{
	td_need(rel);
	return td_path(rel);
}

struct gt_store *tload(const char *rel)
{
	const char *p = tpath(rel);
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	struct gt_store *s = NULL;
	char err[512] = "";
	int rc = gt_load(&p, 1, &o, &s, err, sizeof(err));
	cr_assert_eq(rc, 0, "load %s: %s", p, err);
	return s;
}

static int cmpu32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

void kfacts_of(const struct gt_store *s, struct kfacts *f)
{
	memset(f, 0, sizeof(*f));
	size_t cap = 1024, n = 0;
	uint32_t *names = malloc(cap * sizeof(*names));
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		size_t k0 = f->kernels;
		for (size_t j = 0; j < l->n; j++) {
			const struct gt_event *e = &l->ev[j];
			if (e->kind != GT_EV_KERNEL)
				continue;
			f->kernels++;
			f->dur_ns += e->dur_ns;
			f->nccl += (e->flags & GT_EVF_NCCL) != 0;
			if (n == cap)
				names = realloc(names, (cap *= 2) * sizeof(*names));
			names[n++] = e->name;
		}
		f->gpu_lanes += f->kernels > k0;
	}
	qsort(names, n, sizeof(*names), cmpu32);
	for (size_t i = 0; i < n; i++)
		f->names += i == 0 || names[i] != names[i - 1];
	free(names);
}

size_t count_kind(const struct gt_store *s, int kind)
{
	size_t c = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		for (size_t j = 0; j < l->n; j++)
			c += l->ev[j].kind == kind;
	}
	return c;
}

int impcheck_cli(char *out, size_t outlen, const char *fmt, ...)
{
	const char *b = getenv("GTRACE_BUILD");
	char args[2048], cmd[2304];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "%s/tui/gtrace %s 2>&1", b ? b : "build", args);
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	size_t n = fread(out, 1, outlen - 1, p);
	out[n] = 0;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
