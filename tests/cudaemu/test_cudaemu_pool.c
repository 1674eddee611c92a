/*
 * test_cudaemu_pool.c - the emulator's stream-ordered allocator pools
 * (cudaemu.h CUDAEMU_POOL_*) against the stand-in trainer's truth
 * (`--pools K`: P lines), read by a minimal CUPTI client
 * (cudaemu_pooldump.c, injected as a capture would be) that enables
 * CUPTI_ACTIVITY_KIND_MEMORY_POOL and MEMORY2 and dumps the records through
 * the CUDA 13 header's structs:
 *
 * - every pool create / trim / destroy of the truth is one MemoryPool3
 *   record (same correlation id, operation, local type, device, time,
 *   address, size, threshold, utilized bytes), every allocation from / free
 *   to a pool one Memory4 record whose memoryPoolConfig gives the pool's
 *   address, size and utilized bytes then, and there are no others;
 * - Total Reserved per device, by the rule nsys pool tables follow in
 *   gtrace (import_nsys_pool.c: per device the sum of its local pools'
 *   latest sizes, destroyed 0, in time order, the pool table's record first
 *   at equal times), summed here from the records, equals the same sum
 *   over the truth's lines after every line, and the planted pattern shows:
 *   pools grow past their utilized bytes in 2 MiB pieces, trims shrink them,
 *   everything ends at 0.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cupti_activity.h>
#include "cudaemu.h"
#include "emutest.h"
#include "truth.h"

static char build[1024];

static void setup(void)
{
	emutest_env(build, sizeof(build), 1);
	unsetenv("CUDAEMU_SHUFFLE");
}

TestSuite(cudaemu_pool, .init = setup, .timeout = 120);

/* one dumped record (R: pool table, M: allocation from / free to a pool) */
struct rec {
	char what;
	int op, type;
	unsigned dev, corr;
	unsigned long long ts, addr, size, thr, used, bytes;
	int used_by;   /* matched to a truth line */
};

/* run the trainer with the dump client injected; its truth in tsv, the
 * records in *r (n of them) */
static void run(const char *tsv, const char *dumpf, const char *pools, struct rec **r, size_t *n)
{
	char trainer[1200], lib[1200];
	snprintf(trainer, sizeof(trainer), "%s/tests/cudaemu/cudaemu_trainer", build);
	snprintf(lib, sizeof(lib), "%s/tests/cudaemu/libcudaemu_pooldump.so", build);
	pid_t p = fork();
	if (p == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int fd = open("emu_pool.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("CUDA_INJECTION64_PATH", lib, 1);
		setenv("CUDAEMU_POOLDUMP", dumpf, 1);
		char *argv[] = { trainer, "--out", (char *)tsv, "--threads", "3", "--work", "120",
				 "--pools", (char *)pools, NULL };
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	waitpid(p, &st, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "trainer failed (see emu_pool.log)");
	FILE *f = fopen(dumpf, "r");
	cr_assert_not_null(f, "no dump %s", dumpf);
	char line[512];
	size_t cap = 0;
	*r = NULL;
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			*r = realloc(*r, cap * sizeof(**r));
			cr_assert_not_null(*r);
		}
		struct rec *x = &(*r)[*n];
		memset(x, 0, sizeof(*x));
		unsigned long long keep, pid, async;
		int k;
		if (line[0] == 'R')
			k = sscanf(line, "R\t%d\t%d\t%u\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%u\t%llu",
				   &x->op, &x->type, &x->dev, &x->ts, &x->addr, &x->size, &x->thr, &x->used,
				   &keep, &x->corr, &pid) == 11;
		else
			k = sscanf(line, "M\t%d\t%u\t%llu\t%llu\t%d\t%llu\t%llu\t%llu\t%llu\t%u\t%llu",
				   &x->op, &x->dev, &x->ts, &x->bytes, &x->type, &x->addr, &x->size,
				   &x->thr, &x->used, &x->corr, &async) == 11;
		cr_assert(k, "bad dump line %s", line);
		x->what = line[0];
		(*n)++;
	}
	fclose(f);
}

/* the MemoryPool3 operation of a truth op (1 create, 4 trim, 5 destroy), 0 for
 * the allocation / free ops */
static int pool_table_op(int op)
{
	return op == 1 ? CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED
	       : op == 4 ? CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED
	       : op == 5 ? CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED : 0;
}

Test(cudaemu_pool, records_carry_the_drivers_pools)
{
	struct rec *r;
	size_t n;
	run("emu_pool.tsv", "emu_pool.dump", "4", &r, &n);
	struct truth t;
	char err[512];
	cr_assert_eq(truth_read("emu_pool.tsv", &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_gt(t.n_p, 3 * 30u, "planted pool calls: %zu", t.n_p);
	size_t matched = 0, trims = 0;
	for (size_t i = 0; i < t.n_p; i++) {
		const struct truth_p *p = &t.p[i];
		int pt = pool_table_op(p->op);
		struct rec *x = NULL;
		for (size_t k = 0; k < n && !x; k++)
			if (r[k].corr == p->corr)
				x = &r[k];
		cr_assert_not_null(x, "P line %zu (corr %u, op %d) has no record", i, p->corr, p->op);
		cr_assert_eq(x->used_by, 0, "record of corr %u matched twice", p->corr);
		x->used_by = 1;
		matched++;
		cr_assert_eq(x->dev, (unsigned)p->device);
		cr_assert_eq(x->ts, p->ts, "corr %u: record at %llu, truth %llu", p->corr, x->ts, p->ts);
		cr_assert_eq(x->addr, p->pool);
		cr_assert_eq(x->size, p->size, "corr %u op %d: size %llu, truth %llu", p->corr, p->op,
			     x->size, p->size);
		cr_assert_eq(x->used, p->used);
		cr_assert_eq(x->type, CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL);
		cr_assert_geq(x->thr, 4ull << 20);   /* (4 + thread) MiB; one per pool: below */
		if (pt) {
			cr_assert_eq(x->what, 'R', "corr %u op %d should be a MEMORY_POOL record", p->corr, p->op);
			cr_assert_eq(x->op, pt);
			trims += p->op == 4;
		} else {
			cr_assert_eq(x->what, 'M', "corr %u op %d should be a MEMORY2 record", p->corr, p->op);
			cr_assert_eq(x->op, p->op == 2 ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
						       : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE);
		}
		/* the driver's rule: a pool's size is whole grains and holds its bytes */
		cr_assert_eq(p->size % CUDAEMU_POOL_GRAIN, 0);
		cr_assert_geq(p->size, p->used);
	}
	for (size_t k = 0; k < n; k++)
		cr_assert(r[k].used_by || (r[k].what == 'M' && r[k].type == 0),
			  "record of corr %u is not in the truth", r[k].corr);
	cr_assert_eq(matched, t.n_p);
	cr_assert_geq(trims, 3 * 8u);
	/* one threshold per pool, the same on all its records */
	for (size_t k = 0; k < n; k++)
		for (size_t j = 0; j < k; j++)
			if (r[j].addr == r[k].addr && r[j].type && r[k].type)
				cr_assert_eq(r[j].thr, r[k].thr);
	truth_free(&t);
	free(r);
}

/* per device the reserved bytes after every row in (time, pool table
 * first) order: pools' latest sizes summed, destroyed 0 */
struct row {
	unsigned long long ts, addr, size;
	int dev, table, destroyed;
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return y->table - x->table;
}

/* the reserved sum after each row of rows (sorted here) in out[i], the
 * device's peak in peak[dev] */
static void reserved(struct row *rows, size_t n, unsigned long long *out, unsigned long long *peak)
{
	qsort(rows, n, sizeof(*rows), row_cmp);
	struct { unsigned long long addr, size; } pool[CUDAEMU_MAX_POOLS];
	size_t np = 0;
	unsigned long long sum[CUDAEMU_MAX_DEVICES] = { 0 };
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		while (k < np && pool[k].addr != rows[i].addr)
			k++;
		if (k == np) {
			cr_assert_lt(np, (size_t)CUDAEMU_MAX_POOLS);
			pool[np].addr = rows[i].addr;
			pool[np++].size = 0;
		}
		unsigned long long s = rows[i].destroyed ? 0 : rows[i].size;
		sum[rows[i].dev] = sum[rows[i].dev] - pool[k].size + s;
		pool[k].size = s;
		out[i] = sum[rows[i].dev];
		if (out[i] > peak[rows[i].dev])
			peak[rows[i].dev] = out[i];
	}
}

Test(cudaemu_pool, total_reserved_by_the_pool_rule_equals_the_truths)
{
	struct rec *r;
	size_t n;
	run("emu_pool_resv.tsv", "emu_pool_resv.dump", "3", &r, &n);
	struct truth t;
	char err[512];
	cr_assert_eq(truth_read("emu_pool_resv.tsv", &t, err, sizeof(err)), 0, "%s", err);
	struct row *a = calloc(n + 1, sizeof(*a)), *b = calloc(t.n_p + 1, sizeof(*b));
	unsigned long long *ra = calloc(n + 1, sizeof(*ra)), *rb = calloc(t.n_p + 1, sizeof(*rb));
	unsigned long long pa[CUDAEMU_MAX_DEVICES] = { 0 }, pb[CUDAEMU_MAX_DEVICES] = { 0 };
	cr_assert(a && b && ra && rb);
	size_t na = 0;
	for (size_t k = 0; k < n; k++) {
		if (r[k].type != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL)
			continue;        /* not from a pool / imported: not counted */
		a[na++] = (struct row){ r[k].ts, r[k].addr, r[k].size, (int)r[k].dev, r[k].what == 'R',
					r[k].what == 'R' &&
					r[k].op == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED };
	}
	for (size_t i = 0; i < t.n_p; i++) {
		const struct truth_p *p = &t.p[i];
		b[i] = (struct row){ p->ts, p->pool, p->size, p->device, pool_table_op(p->op) != 0,
				     p->op == 5 };
	}
	cr_assert_eq(na, t.n_p);
	reserved(a, na, ra, pa);
	reserved(b, t.n_p, rb, pb);
	int grew = 0, shrank = 0;
	unsigned long long last[CUDAEMU_MAX_DEVICES] = { 0 };
	for (size_t i = 0; i < na; i++) {
		cr_assert_eq(a[i].ts, b[i].ts);
		cr_assert_eq(a[i].dev, b[i].dev);
		cr_assert_eq(ra[i], rb[i], "row %zu (t %llu, GPU %d): reserved %llu, truth %llu", i,
			     a[i].ts, a[i].dev, ra[i], rb[i]);
		grew |= ra[i] > last[a[i].dev];
		shrank |= ra[i] < last[a[i].dev] && !a[i].destroyed;
		last[a[i].dev] = ra[i];
	}
	for (int d = 0; d < CUDAEMU_MAX_DEVICES; d++) {
		cr_assert_eq(pa[d], pb[d], "GPU %d: peak %llu, truth %llu", d, pa[d], pb[d]);
		cr_assert_eq(last[d], 0, "GPU %d ends at %llu reserved", d, last[d]);
	}
	cr_assert(grew && shrank, "the planted pattern grows and trims");
	cr_assert_geq(pa[0], 2 * CUDAEMU_POOL_GRAIN);
	free(a);
	free(b);
	free(ra);
	free(rb);
	truth_free(&t);
	free(r);
}

Test(cudaemu_pool, no_pools_without_the_option)
{
	struct rec *r;
	size_t n;
	run("emu_pool_none.tsv", "emu_pool_none.dump", "0", &r, &n);
	struct truth t;
	char err[512];
	cr_assert_eq(truth_read("emu_pool_none.tsv", &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.n_p, 0);
	cr_assert_eq(n, 0, "%zu pool / memory records without --pools", n);
	truth_free(&t);
	free(r);
}
