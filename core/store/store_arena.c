/*
 * store_arena.c - the cache file behind a budgeted store.
 *
 * One unlinked file in $TMPDIR (default /var/tmp) is mapped MAP_SHARED over
 * a large reserved virtual range; blocks are handed out from its start by a
 * bump pointer, page-aligned, each with a 64-byte header (block bytes, user
 * bytes) before its data.  Disk space is taken with fallocate when a block
 * is made (a full disk is then -ENOSPC, never a SIGBUS on first touch) and
 * given back with a punched hole when it is freed; the last block grows in
 * place.  A trimmer thread samples the process's resident pages of the
 * cache file's kind (/proc/self/status: RssFile, or RssShmem when $TMPDIR
 * is a tmpfs; not statm's shared field, which also counts shared memory
 * such as a live capture's ring) every trim_ms and, when the arena's
 * share passes what
 * the budget allows, drops slices of the arena from the page tables
 * (MADV_DONTNEED) from a clock hand on until it is under three quarters of
 * it: dirty pages stay in the page cache and are written to the
 * file by the kernel, and the next touch maps them back (the page cache is
 * the LRU).  Readers never see a difference: results stay exact.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include "store_priv.h"
#include "../util/spill.h"

#define ARENA_HDR 64u
#define ARENA_MAGIC 0x6172656e61677472ull  /* "rtgarena" */
#define ARENA_RESERVE ((size_t)1 << 43)     /* 8 TiB of address space (file offsets stay under
					       ext4's 16 TiB), halved until it maps */
#define ARENA_ROOM 8                        /* address range per block: 8 x its size (room_for) */
#define ARENA_GROWN_MIN ((size_t)1 << 20)   /* a grown array of 1 MiB or more ... */
#define ARENA_GROWN_ROOM ((size_t)64 << 30) /* ... gets up to 64 GiB of room (room_for) */
#define ARENA_TAKE_AHEAD ((size_t)4 << 20) /* disk taken ahead of an array grown in place */
#define ARENA_HOLES 64                      /* released blocks waiting for the thread's punch */
#define ARENA_AHEAD_Q 64                    /* ranges waiting to be mapped ahead of a writer */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

struct arena_hdr {
	uint64_t magic;
	uint64_t blk_bytes;    /* whole block, header included, page multiple */
	uint64_t user_bytes;   /* what the caller asked for */
	uint64_t room_bytes;   /* address range (and file range) kept for the block to grow
				  into, >= blk_bytes: sparse past blk_bytes until it grows */
};

struct store_arena {
	int fd;
	int status_fd;                /* /proc/self/status */
	const char *field;            /* its line counting the cache file's pages */
	unsigned char *base;
	size_t reserve;
	size_t page;
	_Atomic size_t used;          /* bump: bytes of the file handed out */
	_Atomic size_t live_bytes;    /* user bytes of live blocks */
	_Atomic size_t allow;         /* arena resident bytes allowed before a trim */
	size_t base_shared;           /* resident file pages of the process at creation, bytes */
	unsigned trim_ms;
	_Atomic uint64_t trims;
	size_t since_check;           /* bytes handed out since the last synchronous check */
	_Atomic size_t cursor;        /* the clock hand: where the next trim starts */
	_Atomic int64_t read_ns;      /* CLOCK_MONOTONIC of a reader's last check (store_arena_check_read) */
	pthread_mutex_t trim_mu;      /* one trim at a time (writer and thread) */
	pthread_t thr;
	int thr_on;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	struct { size_t off, n; } holes[ARENA_HOLES];   /* released, punched by the thread (mu) */
	int n_holes;
	_Atomic uint64_t deferred;    /* blocks whose hole the thread punched */
	struct { unsigned char *p; size_t n; } ahead[ARENA_AHEAD_Q];  /* to map ahead (mu) */
	int n_ahead;
	_Atomic int no_populate;      /* MADV_POPULATE_WRITE refused (old kernel): hints ignored */
	_Atomic uint64_t populated;   /* bytes the thread mapped ahead of writers */
	_Atomic uint64_t pop_calls;   /* ranges it mapped */
	_Atomic int disk_err;         /* errno of the last disk space refused (take) */
	unsigned slow_us;             /* GTRACE_STORE_SLOW_US: a slow disk, for tests */
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static size_t page_round(const struct store_arena *a, size_t n)
{
	return (n + a->page - 1) / a->page * a->page;
}

/* resident bytes of the process of the cache file's kind (the status
 * line named by a->field: RssFile or RssShmem) */
static size_t shared_bytes(struct store_arena *a)
{
	char buf[4096];
	ssize_t n = pread(a->status_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *f = strstr(buf, a->field);
	unsigned long kb = 0;
	if (!f || sscanf(f + strlen(a->field), " %lu", &kb) != 1)
		return 0;
	return (size_t)kb * 1024;
}

size_t store_arena_resident(struct store_arena *a)
{
	size_t sh = shared_bytes(a);
	size_t r = sh > a->base_shared ? sh - a->base_shared : 0;
	size_t u = atomic_load(&a->used);
	return r < u ? r : u;
}

void store_arena_trim(struct store_arena *a)
{
	size_t u = atomic_load(&a->used);
	if (u) {
		madvise(a->base, u, MADV_DONTNEED);
		atomic_fetch_add(&a->trims, 1);
	}
}

/* over the allowance: drop slices of the arena (an eighth of the
 * allowance, 4 MiB at least) from the clock hand on, until the resident
 * share is under three quarters of the allowance, the hand went round
 * once, or ARENA_CHECK_NS passed (the next check goes on from there: a
 * round of a big arena takes seconds on a virtual machine, a TLB shootdown
 * a slice, and would hold the readers' checks and the thread's hard bound
 * meanwhile); what was touched since the hand last passed stays mapped
 * longer */
#define ARENA_CHECK_NS 10000000
int store_arena_check(struct store_arena *a)
{
	size_t allow = atomic_load(&a->allow);
	if (store_arena_resident(a) <= allow)
		return 0;
	pthread_mutex_lock(&a->trim_mu);
	size_t u = atomic_load(&a->used), slice = page_round(a, allow / 8);
	if (slice < ((size_t)4 << 20))
		slice = (size_t)4 << 20;
	size_t hand = atomic_load(&a->cursor), done = 0;
	int64_t until = now_ns() + ARENA_CHECK_NS;
	while (done < u && now_ns() < until) {
		if (hand >= u)
			hand = 0;
		/* the room behind blocks is a hole of the file (64 GiB for a
		 * grown array): the hand skips holes (SEEK_DATA) instead of
		 * walking them a slice at a time */
		off_t d = lseek(a->fd, (off_t)hand, SEEK_DATA);
		size_t next = d < 0 || (size_t)d > u ? u : (size_t)d;
		done += next - hand;
		hand = next;
		if (hand >= u)
			continue;
		off_t e = lseek(a->fd, (off_t)hand, SEEK_HOLE);
		size_t end = e < 0 || (size_t)e > u ? u : (size_t)e;
		if (end <= hand)
			end = hand + a->page;
		size_t n = end - hand < slice ? end - hand : slice;
		madvise(a->base + hand, n, MADV_DONTNEED);
		hand += n;
		done += n;
		if (store_arena_resident(a) <= allow / 4 * 3)
			break;
	}
	atomic_store(&a->cursor, hand);
	atomic_fetch_add(&a->trims, 1);
	pthread_mutex_unlock(&a->trim_mu);
	return 1;
}

/* a reader's check (gt_store_read_tick): over the allowance, the pages of
 * what the reader read since its last check leave the page tables (a scan
 * drops its own past: no walk of the clock hand through the file to reach
 * them, no drop of what other threads are reading).  The rest (the index,
 * other threads' reads) is the trimmer thread's; if the arena is still
 * half its allowance over (that thread late on a loaded machine, or held
 * still while readers check), the whole arena leaves the page tables in
 * one call: a hard bound that does not wait for that thread.  What is
 * needed again comes back from the page cache (a minor fault a page) */
int store_arena_check_read(struct store_arena *a, const struct store_range *r, int n)
{
	atomic_store(&a->read_ns, now_ns());
	size_t allow = atomic_load(&a->allow);
	if (store_arena_resident(a) <= allow)
		return 0;
	pthread_mutex_lock(&a->trim_mu);
	uintptr_t lo = (uintptr_t)a->base, hi = lo + atomic_load(&a->used), pg = a->page - 1;
	for (int i = 0; i < n; i++) {
		uintptr_t b = r[i].from & ~pg, e = (r[i].to + pg) & ~pg;
		b = b < lo ? lo : b;
		e = e > hi ? hi : e;
		if (b < e)
			madvise((void *)b, e - b, MADV_DONTNEED);
	}
	size_t over = allow / 2 > STORE_READ_CHECK_MIN ? allow / 2 : STORE_READ_CHECK_MIN;
	if (store_arena_resident(a) > allow + over)
		store_arena_trim(a);
	else
		atomic_fetch_add(&a->trims, 1);
	pthread_mutex_unlock(&a->trim_mu);
	return 1;
}

static void give(struct store_arena *a, size_t off, size_t n);

/* punch the holes of released blocks queued for the thread (with mu held
 * on entry and exit; the punches themselves run without it) */
static void punch_holes(struct store_arena *a)
{
	while (a->n_holes && !a->stop) {
		size_t off = a->holes[a->n_holes - 1].off, n = a->holes[a->n_holes - 1].n;
		a->n_holes--;
		pthread_mutex_unlock(&a->mu);
		give(a, off, n);
		atomic_fetch_add(&a->deferred, 1);
		pthread_mutex_lock(&a->mu);
	}
}

/* map the ranges writers asked for (store_arena_ahead) writable, with
 * their pages, so that the writer's stores fault no more (mu held on entry
 * and exit) */
static void populate_ahead(struct store_arena *a)
{
	while (a->n_ahead && !a->stop) {
		unsigned char *p = a->ahead[a->n_ahead - 1].p;
		size_t n = a->ahead[a->n_ahead - 1].n;
		a->n_ahead--;
		pthread_mutex_unlock(&a->mu);
		if (a->slow_us)
			usleep(a->slow_us);
		if (madvise(p, n, MADV_POPULATE_WRITE) == 0) {
			atomic_fetch_add(&a->populated, n);
			atomic_fetch_add(&a->pop_calls, 1);
		}
		else if (errno == EINVAL)
			atomic_store(&a->no_populate, 1);
		pthread_mutex_lock(&a->mu);
	}
}

void store_arena_ahead(struct store_arena *a, void *p, size_t n)
{
	if (!a->thr_on || atomic_load(&a->no_populate) || !n)
		return;
	uintptr_t pg = (uintptr_t)a->page - 1;
	unsigned char *b = (unsigned char *)(((uintptr_t)p + pg) & ~pg);
	unsigned char *e = (unsigned char *)(((uintptr_t)p + n) & ~pg);
	if (e <= b)
		return;
	pthread_mutex_lock(&a->mu);
	if (a->n_ahead < ARENA_AHEAD_Q) {
		a->ahead[a->n_ahead].p = b;
		a->ahead[a->n_ahead++].n = (size_t)(e - b);
		pthread_cond_signal(&a->cv);
	}
	pthread_mutex_unlock(&a->mu);
}

uint64_t store_arena_populated(const struct store_arena *a)
{
	return a ? atomic_load(&a->populated) : 0;
}

uint64_t store_arena_populated_calls(const struct store_arena *a)
{
	return a ? atomic_load(&a->pop_calls) : 0;
}

/* the readers' hard bound, kept by the thread too: a reader checks only
 * at its next tick, and one that announced a long run (a lane whole) maps
 * it all before then; over half the allowance over, the whole arena
 * leaves the page tables */
static void hard_bound(struct store_arena *a)
{
	size_t allow = atomic_load(&a->allow);
	size_t over = allow / 2 > STORE_READ_CHECK_MIN ? allow / 2 : STORE_READ_CHECK_MIN;
	if (allow == SIZE_MAX || store_arena_resident(a) <= allow + over)
		return;
	pthread_mutex_lock(&a->trim_mu);
	if (store_arena_resident(a) > allow + over)
		store_arena_trim(a);
	pthread_mutex_unlock(&a->trim_mu);
}

static void *trimmer(void *arg)
{
	struct store_arena *a = arg;
	int more = 0;      /* the last check stopped on its time, still over */
	pthread_mutex_lock(&a->mu);
	while (!a->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (long)a->trim_ms * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (!a->n_holes && !a->n_ahead && !more)
			pthread_cond_timedwait(&a->cv, &a->mu, &ts);
		if (a->stop)
			break;
		populate_ahead(a);
		punch_holes(a);
		pthread_mutex_unlock(&a->mu);
		/* while a reader checks for itself (a scan), its drops and hard
		 * bound keep the arena in; the clock hand's walk would only
		 * take a core from it (the hard bound is kept here first in
		 * any case: the clock hand's round of a big arena takes long) */
		hard_bound(a);
		more = 0;
		if (now_ns() - atomic_load(&a->read_ns) > 2 * (int64_t)a->trim_ms * 1000000 &&
		    store_arena_check(a))   /* over: the next turn goes on at once */
			more = store_arena_resident(a) > atomic_load(&a->allow) / 4 * 3;
		pthread_mutex_lock(&a->mu);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

int store_arena_probe(void)
{
	int fd = spill_tmpfile();
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int store_arena_new(size_t allow, struct store_arena **out)
{
	struct store_arena *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->page = (size_t)sysconf(_SC_PAGESIZE);
	a->status_fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	int rc = spill_tmpfile();
	if (rc < 0)
		goto err;
	a->fd = rc;
	struct statfs fs;
	a->field = fstatfs(a->fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC ? "RssShmem:" : "RssFile:";
	for (a->reserve = ARENA_RESERVE; a->reserve >= ((size_t)1 << 30); a->reserve /= 2) {
		void *p = mmap(NULL, a->reserve, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
			       a->fd, 0);
		if (p != MAP_FAILED) {
			a->base = p;
			break;
		}
	}
	if (!a->base) {
		rc = -ENOMEM;
		close(a->fd);
		goto err;
	}
	const char *ms = getenv("GTRACE_STORE_TRIM_MS");
	a->trim_ms = ms && atoi(ms) > 0 ? (unsigned)atoi(ms) : 10;
	const char *slow = getenv("GTRACE_STORE_SLOW_US");
	a->slow_us = slow && atoi(slow) > 0 ? (unsigned)atoi(slow) : 0;
	atomic_store(&a->allow, allow);
	a->base_shared = a->status_fd >= 0 ? shared_bytes(a) : 0;
	pthread_mutex_init(&a->mu, NULL);
	pthread_mutex_init(&a->trim_mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (a->status_fd >= 0 && pthread_create(&a->thr, NULL, trimmer, a) == 0)
		a->thr_on = 1;
	*out = a;
	return 0;
err:
	if (a->status_fd >= 0)
		close(a->status_fd);
	free(a);
	return rc;
}

void store_arena_free(struct store_arena *a)
{
	if (!a)
		return;
	if (a->thr_on) {
		pthread_mutex_lock(&a->mu);
		a->stop = 1;
		pthread_cond_signal(&a->cv);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->thr, NULL);
	}
	pthread_mutex_destroy(&a->mu);
	pthread_mutex_destroy(&a->trim_mu);
	pthread_cond_destroy(&a->cv);
	munmap(a->base, a->reserve);
	close(a->fd);
	if (a->status_fd >= 0)
		close(a->status_fd);
	free(a);
}

int store_arena_owns(const struct store_arena *a, const void *p)
{
	const unsigned char *c = p;
	return a && c >= a->base && c < a->base + a->reserve;
}

int store_arena_write(struct store_arena *a, void *dst, const void *src, size_t n)
{
	off_t at = (off_t)((unsigned char *)dst - a->base);
	for (size_t done = 0; done < n;) {
		ssize_t w = pwrite(a->fd, (const char *)src + done, n - done, at + (off_t)done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		done += (size_t)w;
	}
	return 0;
}

void store_arena_set_allow(struct store_arena *a, size_t allow)
{
	atomic_store(&a->allow, allow);
}

size_t store_arena_allow(const struct store_arena *a)
{
	return atomic_load(&a->allow);
}

size_t store_arena_live(const struct store_arena *a)
{
	return a ? atomic_load(&a->live_bytes) : 0;
}

uint64_t store_arena_trims(const struct store_arena *a)
{
	return a ? atomic_load(&a->trims) : 0;
}

/* take disk space for [off, off + n) of the file (grows it); every eighth
 * of the allowance (at least 1 MiB) handed out, the writer checks the budget
 * itself: a build does not wait for the trimmer thread's turn */
static int take(struct store_arena *a, size_t off, size_t n)
{
	a->since_check += n;
	size_t step = atomic_load(&a->allow) / 8;
	if (a->since_check >= (step > ((size_t)1 << 20) ? step : ((size_t)1 << 20))) {
		a->since_check = 0;
		store_arena_check(a);
	}
	if (off + n > a->reserve)
		return -ENOMEM;
	if (fallocate(a->fd, 0, (off_t)off, (off_t)n) == 0)
		return 0;
	int e = errno;
	if (e == EOPNOTSUPP) {
		off_t end = (off_t)(off + n);
		e = lseek(a->fd, 0, SEEK_END) < end && ftruncate(a->fd, end) != 0 ? errno : 0;
	}
	if (e)
		atomic_store(&a->disk_err, e);
	return -e;
}

int store_arena_fd(const struct store_arena *a)
{
	return a->fd;
}

int store_arena_disk_err(const struct store_arena *a)
{
	return a ? atomic_load(&a->disk_err) : 0;
}

static void give(struct store_arena *a, size_t off, size_t n)
{
	if (!n)
		return;
	if (a->slow_us)
		usleep(a->slow_us);
	fallocate(a->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)n);
}

static struct arena_hdr *hdr_of(const struct store_arena *a, void *p)
{
	(void)a;
	return (struct arena_hdr *)((unsigned char *)p - ARENA_HDR);
}

/* the address range kept for a block of blk bytes: ARENA_ROOM times it,
 * so that an array grown by x1.5 steps (gt_store_add) or by chunks
 * (gt_store_reserve) grows in place, without a copy and without punching the
 * old block's hole, until it passes ARENA_ROOM times its first size; the
 * range past blk is a hole of the file (no disk, no page) until it grows.
 * A grown array (grown: its contents came from a smaller block) of
 * ARENA_GROWN_MIN or more gets 1/128 of what is left, up to
 * ARENA_GROWN_ROOM, while more than a quarter of the reservation is left: a
 * live lane appended to for hours then never moves (a move copies an array
 * that may have left memory: seconds of page faults on the appending thread,
 * issue 16).  Only blk when the reserved address space would run short. */
static size_t room_for(const struct store_arena *a, size_t off, size_t blk, int grown)
{
	size_t left = a->reserve > off ? a->reserve - off : 0;
	if (blk > left / ARENA_ROOM / 4)
		return blk;
	size_t room = blk * ARENA_ROOM;
	if (grown && blk >= ARENA_GROWN_MIN && left > a->reserve / 4) {
		size_t big = left / 128 < ARENA_GROWN_ROOM ? left / 128 : ARENA_GROWN_ROOM;
		big = big / a->page * a->page;
		room = big > room ? big : room;
	}
	return room;
}

static void *alloc_room(struct store_arena *a, size_t n, int grown)
{
	size_t blk = page_round(a, n + ARENA_HDR);
	size_t off = atomic_load(&a->used);
	size_t room = room_for(a, off, blk, grown);
	if (take(a, off, blk))
		return NULL;
	atomic_store(&a->used, off + room);
	struct arena_hdr *h = (struct arena_hdr *)(a->base + off);
	h->magic = ARENA_MAGIC;
	h->blk_bytes = blk;
	h->user_bytes = n;
	h->room_bytes = room;
	atomic_fetch_add(&a->live_bytes, n);
	return a->base + off + ARENA_HDR;
}

void *store_arena_alloc_grown(struct store_arena *a, size_t n)
{
	return alloc_room(a, n, 1);
}

void *store_arena_alloc(struct store_arena *a, size_t n)
{
	return alloc_room(a, n, 0);
}

void store_arena_cold(struct store_arena *a)
{
	size_t u = atomic_load(&a->used);
	madvise(a->base, u, MADV_DONTNEED);
	fdatasync(a->fd);
	posix_fadvise(a->fd, 0, (off_t)u, POSIX_FADV_DONTNEED);
}

size_t store_arena_incore(struct store_arena *a)
{
	size_t u = atomic_load(&a->used), np = (u + a->page - 1) / a->page, n = 0;
	unsigned char v[4096];
	for (size_t p = 0; p < np; p += sizeof(v)) {
		size_t k = np - p < sizeof(v) ? np - p : sizeof(v);
		if (mincore(a->base + p * a->page, k * a->page, v))
			return SIZE_MAX;
		for (size_t i = 0; i < k; i++)
			n += v[i] & 1;
	}
	return n;
}

size_t store_arena_size(const struct store_arena *a, void *p)
{
	return (size_t)hdr_of(a, p)->user_bytes;
}

void store_arena_release(struct store_arena *a, void *p)
{
	if (!p)
		return;
	struct arena_hdr *h = hdr_of(a, p);
	size_t off = (size_t)((unsigned char *)h - a->base), blk = (size_t)h->blk_bytes;
	size_t room = (size_t)h->room_bytes;
	atomic_fetch_sub(&a->live_bytes, (size_t)h->user_bytes);
	h->magic = 0;
	/* the hole is punched by the thread (on a file system mounted with
	 * discard a punch waits for the device: tens of ms a MiB); the range is
	 * then never handed out again, as the bump pointer stays */
	if (a->thr_on) {
		pthread_mutex_lock(&a->mu);
		int queued = a->n_holes < ARENA_HOLES;
		if (queued) {
			a->holes[a->n_holes].off = off;
			a->holes[a->n_holes++].n = blk;
			pthread_cond_signal(&a->cv);
		}
		pthread_mutex_unlock(&a->mu);
		if (queued)
			return;
	}
	give(a, off, blk);
	/* the last block: the bump pointer comes back */
	if (off + room == atomic_load(&a->used))
		atomic_store(&a->used, off);
}

uint64_t store_arena_deferred(const struct store_arena *a)
{
	return a ? atomic_load(&a->deferred) : 0;
}

void *store_arena_realloc(struct store_arena *a, void *p, size_t n)
{
	if (!p)
		return store_arena_alloc(a, n);
	struct arena_hdr *h = hdr_of(a, p);
	size_t off = (size_t)((unsigned char *)h - a->base), blk = (size_t)h->blk_bytes;
	size_t need = page_round(a, n + ARENA_HDR);
	size_t old = (size_t)h->user_bytes;
	if (need <= blk) {
		/* fits: a shrink gives back whole pages past the end (a growth
		 * into disk space taken ahead keeps it) */
		if (n < old && need < blk) {
			give(a, off + need, blk - need);
			h->blk_bytes = need;
		}
		h->user_bytes = n;
		atomic_fetch_add(&a->live_bytes, n);
		atomic_fetch_sub(&a->live_bytes, old);
		return p;
	}
	size_t room = (size_t)h->room_bytes;
	int last = off + room == atomic_load(&a->used);
	if (need <= room || last) {
		/* grows in place: into its room, or (the last block) past it.
		 * Disk space is taken ahead, the block's size again up to 4 MiB
		 * (within the room): an array grown by a few pages at a time
		 * (the lane index at every gt_store_finish of a live capture)
		 * calls fallocate, which waits on the file system's journal,
		 * about log2 times, not at every step */
		size_t tb = need;
		if (need <= room) {
			size_t extra = blk < ARENA_TAKE_AHEAD ? blk : ARENA_TAKE_AHEAD;
			tb = need + extra < room ? need + extra : room;
		}
		/* a full disk first refuses the take-ahead, not the need */
		if (take(a, off + blk, tb - blk) && (tb == need ||
						     take(a, off + blk, (tb = need) - blk)))
			return NULL;
		if (tb > room) {
			room = room_for(a, off, tb, 1);
			h->room_bytes = room;
			atomic_store(&a->used, off + room);
		}
		h->blk_bytes = tb;
		h->user_bytes = n;
		atomic_fetch_add(&a->live_bytes, n);
		atomic_fetch_sub(&a->live_bytes, old);
		return p;
	}
	void *q = alloc_room(a, n, 1);
	if (!q)
		return NULL;
	memcpy(q, p, old < n ? old : n);
	store_arena_release(a, p);
	return q;
}
