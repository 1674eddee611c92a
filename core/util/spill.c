/*
 * spill.c - an analysis' big scratch arrays in an unlinked file mapped
 * shared, dropped from the process when the touched share passes an
 * allowance (spill.h).
 */
#include "spill.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define SPILL_RESERVE ((size_t)1 << 40)   /* 1 TiB of address space at most */
#define SPILL_MIN_ALLOW ((size_t)8 << 20)

struct spill {
	int fd;
	char *base;
	size_t reserve, page, allow;
	_Atomic size_t top;       /* bytes handed out (never reused: 1 TiB of room) */
	_Atomic size_t live;      /* bytes allocated now */
	_Atomic size_t peak;
	_Atomic size_t touched;   /* since the last drop */
	_Atomic uint64_t drops;
	pthread_mutex_t grow_mu;  /* the ftruncate fallback */
};

int spill_tmpfile(void)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/var/tmp";
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	char path[4096];
	snprintf(path, sizeof(path), "%s/gtrace-cache-XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(path);
	return fd;
}

int spill_new(size_t allow, struct spill **out)
{
	struct spill *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	int fd = spill_tmpfile();
	if (fd < 0) {
		free(sp);
		return fd;
	}
	sp->fd = fd;
	pthread_mutex_init(&sp->grow_mu, NULL);
	sp->page = (size_t)sysconf(_SC_PAGESIZE);
	sp->allow = allow > SPILL_MIN_ALLOW ? allow : SPILL_MIN_ALLOW;
	for (sp->reserve = SPILL_RESERVE; sp->reserve >= ((size_t)1 << 30); sp->reserve /= 2) {
		void *p = mmap(NULL, sp->reserve, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
			       fd, 0);
		if (p != MAP_FAILED) {
			sp->base = p;
			break;
		}
	}
	if (!sp->base) {
		pthread_mutex_destroy(&sp->grow_mu);
		close(fd);
		free(sp);
		return -ENOMEM;
	}
	*out = sp;
	return 0;
}

void spill_free(struct spill *sp)
{
	if (!sp)
		return;
	munmap(sp->base, sp->reserve);
	close(sp->fd);
	pthread_mutex_destroy(&sp->grow_mu);
	free(sp);
}

void *spill_alloc(struct spill *sp, size_t n)
{
	n = (n + sp->page - 1) / sp->page * sp->page;
	if (!n || n > sp->reserve)
		return NULL;
	size_t off = atomic_fetch_add(&sp->top, n);
	if (off > sp->reserve - n)
		return NULL;
	/* disk space now: a full disk is ENOSPC here, not SIGBUS at a touch */
	if (fallocate(sp->fd, 0, (off_t)off, (off_t)n) != 0) {
		if (errno != EOPNOTSUPP)
			return NULL;
		/* a file system without fallocate: the size only ever grows
		 * (two threads' lseek and ftruncate must not interleave) */
		off_t end = (off_t)(off + n);
		pthread_mutex_lock(&sp->grow_mu);
		int bad = lseek(sp->fd, 0, SEEK_END) < end && ftruncate(sp->fd, end) != 0;
		pthread_mutex_unlock(&sp->grow_mu);
		if (bad)
			return NULL;
	}
	size_t live = atomic_fetch_add(&sp->live, n) + n;
	size_t pk = atomic_load(&sp->peak);
	while (live > pk && !atomic_compare_exchange_weak(&sp->peak, &pk, live))
		;
	return sp->base + off;
}

void spill_release(struct spill *sp, void *p, size_t n)
{
	if (!p)
		return;
	n = (n + sp->page - 1) / sp->page * sp->page;
	size_t off = (size_t)((char *)p - sp->base);
	madvise(p, n, MADV_DONTNEED);
	fallocate(sp->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)n);
	atomic_fetch_sub(&sp->live, n);
}

int spill_owns(const struct spill *sp, const void *p)
{
	return sp && (const char *)p >= sp->base && (const char *)p < sp->base + sp->reserve;
}

void spill_touch(struct spill *sp, size_t n)
{
	if (atomic_fetch_add(&sp->touched, n) + n < sp->allow)
		return;
	if (atomic_exchange(&sp->touched, 0) < sp->allow)
		return;                   /* another thread dropped meanwhile */
	size_t top = atomic_load(&sp->top);
	madvise(sp->base, top < sp->reserve ? top : sp->reserve, MADV_DONTNEED);
	atomic_fetch_add(&sp->drops, 1);
}

uint64_t spill_drops(const struct spill *sp)
{
	return sp ? atomic_load(&sp->drops) : 0;
}

size_t spill_peak(const struct spill *sp)
{
	return sp ? atomic_load(&sp->peak) : 0;
}
