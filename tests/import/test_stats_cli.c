/*
 * test_stats_cli.c - the MANIFEST.md facts through the command line, as the
 * issue asks: `gtrace stats FILE --report kernels --format csv`, summing
 * the Instances and Total Time (ns) columns and counting rows (one per
 * distinct kernel name) and NCCL rows.
 */
#include <criterion/criterion.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "impcheck.h"

/* split one CSV line (RFC 4180 quotes) into at most max fields, in place */
static int csv_split(char *line, char **f, int max)
{
	int n = 0;
	char *p = line, *o;
	while (n < max) {
		f[n++] = o = p;
		if (*p == '"') {
			p++;
			for (;;) {
				if (!*p)
					break;
				if (*p == '"' && p[1] == '"') {
					*o++ = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					*o++ = *p++;
				}
			}
		} else {
			while (*p && *p != ',' && *p != '\n')
				*o++ = *p++;
		}
		if (*p != ',') {
			*o = 0;
			break;
		}
		p++;
		*o = 0;
	}
	return n;
}

static void check(const char *rel, long rows, long inst, long long total_ns, long nccl)
{
	const char *b = getenv("GTRACE_BUILD");
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "%s/tui/gtrace stats %s --report kernels --format csv 2>/dev/null",
		 b ? b : "build", tpath(rel));
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	static char line[1 << 16];
	char *f[32];
	int ci = -1, ct = -1, cn = -1;
	long r = 0, ins = 0, nc = 0;
	long long tot = 0;
	regex_t re;
	regcomp(&re, "^nccl|ncclKernel|ncclDevKernel", REG_EXTENDED | REG_NOSUB);
	if (fgets(line, sizeof(line), p)) {
		int n = csv_split(line, f, 32);
		for (int i = 0; i < n; i++) {
			if (!strcmp(f[i], "Instances"))
				ci = i;
			else if (!strcmp(f[i], "Total Time (ns)"))
				ct = i;
			else if (!strcmp(f[i], "Name"))
				cn = i;
		}
	}
	cr_assert(ci >= 0 && ct >= 0 && cn >= 0, "no kernels CSV header from: %s", cmd);
	while (fgets(line, sizeof(line), p)) {
		int n = csv_split(line, f, 32);
		if (n <= cn)
			continue;
		r++;
		long k = atol(f[ci]);
		ins += k;
		tot += atoll(f[ct]);
		if (regexec(&re, f[cn], 0, NULL, 0) == 0)
			nc += k;
	}
	regfree(&re);
	int st = pclose(p);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed", cmd);
	cr_expect_eq(r, rows, "%s: %ld rows", rel, r);
	cr_expect_eq(ins, inst, "%s: %ld kernels", rel, ins);
	cr_expect_eq(tot, total_ns, "%s: %lld ns", rel, tot);
	cr_expect_eq(nc, nccl, "%s: %ld NCCL", rel, nc);
}

/* MANIFEST.md facts table: kernels, distinct names, summed dur, NCCL kernels */
Test(stats_cli, manifest_facts)
{
	check("kineto/resnet50_num_workers_0.pt.trace.json.gz", 67, 8772, 591532000LL, 0);
	check("hta/trace_filter/sampled_rank-0.json.gz", 194, 1154, 606519000LL, 10);
	check("hta/nccl_data.json.gz", 70, 2700, 162532340LL, 21);
	check("tracelens/h100_qwen_inference.json.gz", 26, 1465, 45432698LL, 0);
}
