/*
 * ring.c - the SPSC record ring of gtrace/ring.h: creation in a memfd,
 * producer pushes that never block (a full ring counts the loss and
 * returns), consumer peeks that validate what the other process wrote.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gtrace/ring.h"

_Static_assert(GT_RING_SEALS == (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW), "GT_RING_SEALS");

size_t gt_ring_bytes(uint64_t capacity)
{
	return GT_RING_HDR_BYTES + (size_t)capacity * GT_RING_REC_BYTES;
}

static uint64_t round_pow2(uint64_t n)
{
	uint64_t c = 64;
	while (c < n && c < (1ull << 40))
		c <<= 1;
	return c;
}

void gt_ring_init_mem(struct gt_ring *r, void *mem, uint64_t capacity, int64_t pid)
{
	memset(r, 0, sizeof(*r));
	struct gt_ring_hdr *h = mem;
	memset(h, 0, GT_RING_HDR_BYTES);
	h->magic = GT_RING_MAGIC;
	h->version = GT_RING_VERSION;
	h->hdr_bytes = GT_RING_HDR_BYTES;
	h->rec_bytes = GT_RING_REC_BYTES;
	h->capacity = capacity;
	h->pid = pid;
	atomic_store(&h->state, GT_RING_ST_RUNNING);
	r->hdr = h;
	r->rec = (struct gt_ring_rec *)((char *)mem + GT_RING_HDR_BYTES);
	r->mask = capacity - 1;
}

int gt_ring_create(struct gt_ring *r, uint64_t capacity, int64_t pid)
{
	capacity = round_pow2(capacity);
	size_t bytes = gt_ring_bytes(capacity);
	int fd = memfd_create("gtrace-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)bytes) < 0)
		goto err;
	/* the size is fixed for good: a consumer's mapping can never lose
	 * pages under it (SIGBUS), whoever else holds the fd */
	if (fcntl(fd, F_ADD_SEALS, GT_RING_SEALS) < 0)
		goto err;
	void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		goto err;
	gt_ring_init_mem(r, mem, capacity, pid);
	r->map_bytes = bytes;
	return fd;
err:;
	int e = -errno;
	close(fd);
	return e;
}

int gt_ring_map(struct gt_ring *r, int fd, char *err, size_t errlen)
{
	struct stat st;
	memset(r, 0, sizeof(*r));
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)GT_RING_HDR_BYTES) {
		snprintf(err, errlen, "capture ring: too small");
		return -EINVAL;
	}
	int seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || (seals & GT_RING_SEALS) != GT_RING_SEALS) {
		snprintf(err, errlen, "capture ring: memfd is not sealed against resizing "
			 "(seals %#x); refusing to map it", seals < 0 ? 0 : (unsigned)seals);
		return -EPERM;
	}
	size_t bytes = (size_t)st.st_size;
	void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		int e = -errno;
		snprintf(err, errlen, "capture ring: mmap: %s", strerror(errno));
		return e;
	}
	struct gt_ring_hdr *h = mem;
	uint64_t cap = h->capacity;
	if (h->magic != GT_RING_MAGIC || h->version != GT_RING_VERSION ||
	    h->hdr_bytes != GT_RING_HDR_BYTES || h->rec_bytes != GT_RING_REC_BYTES ||
	    cap < 64 || (cap & (cap - 1)) || gt_ring_bytes(cap) > bytes) {
		snprintf(err, errlen, "capture ring: bad header (magic %08x version %u)",
			 h->magic, h->version);
		munmap(mem, bytes);
		return -EPROTO;
	}
	r->hdr = h;
	r->rec = (struct gt_ring_rec *)((char *)mem + GT_RING_HDR_BYTES);
	r->mask = cap - 1;
	r->map_bytes = bytes;
	r->c_tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	r->c_head_cache = r->c_tail;
	return 0;
}

void gt_ring_unmap(struct gt_ring *r)
{
	if (r->hdr && r->map_bytes)
		munmap(r->hdr, r->map_bytes);
	memset(r, 0, sizeof(*r));
}

int gt_ring_reserve(struct gt_ring *r, uint32_t n)
{
	uint64_t cap = r->mask + 1;
	if (n > cap)
		return -ENOSPC;
	if (r->p_head + n - r->p_tail_cache > cap) {
		r->p_tail_cache = atomic_load_explicit(&r->hdr->tail, memory_order_acquire);
		if (r->p_head + n - r->p_tail_cache > cap)
			return -ENOSPC;
	}
	return 0;
}

int gt_ring_push_event(struct gt_ring *r, const struct gt_event *e)
{
	if (gt_ring_reserve(r, 1) < 0) {
		atomic_fetch_add_explicit(&r->hdr->ring_overflow, 1, memory_order_relaxed);
		return -ENOSPC;
	}
	struct gt_ring_rec *m = gt_ring_slot(r, 0);
	m->type = GT_RING_REC_EVENT;
	m->nrec = 1;
	m->len = 0;
	m->u.ev = *e;
	gt_ring_commit(r, 1);
	atomic_fetch_add_explicit(&r->hdr->events_published, 1, memory_order_relaxed);
	return 0;
}

int gt_ring_push_rec(struct gt_ring *r, const struct gt_ring_rec *m)
{
	if (gt_ring_reserve(r, 1) < 0) {
		atomic_fetch_add_explicit(&r->hdr->msgs_overflow, 1, memory_order_relaxed);
		return -ENOSPC;
	}
	struct gt_ring_rec *d = gt_ring_slot(r, 0);
	*d = *m;
	d->nrec = 1;
	gt_ring_commit(r, 1);
	return 0;
}

int gt_ring_push_str(struct gt_ring *r, uint32_t id, const char *text, size_t len)
{
	if (len > 65535u * GT_RING_REC_BYTES)
		len = 65535u * GT_RING_REC_BYTES;    /* absurdly long names are cut */
	uint32_t n = 1;
	if (len > GT_RING_STR_FIRST_BYTES)
		n += (uint32_t)((len - GT_RING_STR_FIRST_BYTES + GT_RING_REC_BYTES - 1) / GT_RING_REC_BYTES);
	if (gt_ring_reserve(r, n) < 0) {
		atomic_fetch_add_explicit(&r->hdr->msgs_overflow, 1, memory_order_relaxed);
		return -ENOSPC;
	}
	struct gt_ring_rec *m = gt_ring_slot(r, 0);
	m->type = GT_RING_REC_STR;
	m->nrec = (uint16_t)n;
	m->len = (uint32_t)len;
	m->u.str.id = id;
	size_t k = len < GT_RING_STR_FIRST_BYTES ? len : GT_RING_STR_FIRST_BYTES;
	memcpy(m->u.str.text, text, k);
	for (uint32_t i = 1; k < len; i++) {
		size_t c = len - k < GT_RING_REC_BYTES ? len - k : GT_RING_REC_BYTES;
		memcpy(gt_ring_slot(r, i), text + k, c);
		k += c;
	}
	gt_ring_commit(r, n);
	return 0;
}

void gt_ring_set_state(struct gt_ring *r, enum gt_ring_state st, const char *reason)
{
	if (reason) {
		snprintf(r->hdr->reason, sizeof(r->hdr->reason), "%s", reason);
	}
	atomic_store_explicit(&r->hdr->state, st, memory_order_release);
}

uint64_t gt_ring_readable(struct gt_ring *r)
{
	if (r->corrupt)
		return 0;
	uint64_t head = atomic_load_explicit(&r->hdr->head, memory_order_acquire);
	uint64_t avail = head - r->c_tail;
	if (avail > r->mask + 1) {
		/* more than the ring holds (or head behind tail): the producer
		 * wrote nonsense; never cache it, read nothing more */
		r->corrupt = 1;
		r->bad_head = head;
		return 0;
	}
	r->c_head_cache = head;
	return avail;
}

static const struct gt_ring_rec ring_bad_rec = { .type = GT_RING_REC_NONE, .nrec = 1 };

const struct gt_ring_rec *gt_ring_peek(struct gt_ring *r, uint32_t *nrec)
{
	uint64_t avail = r->c_head_cache - r->c_tail;
	if (r->corrupt) {
		*nrec = 0;
		return NULL;
	}
	if (avail == 0) {
		avail = gt_ring_readable(r);
		if (avail == 0) {
			*nrec = 0;
			return NULL;
		}
	}
	const struct gt_ring_rec *m = &r->rec[r->c_tail & r->mask];
	uint32_t n = m->nrec;
	int ok = m->type > GT_RING_REC_NONE && m->type < GT_RING_REC_TYPE_COUNT && n >= 1;
	if (ok && m->type == GT_RING_REC_STR) {
		/* in 64 bits: a len near 2^32 wrapped to a one-record string
		 * (and a 4 GiB allocation by the reader of its text) */
		uint64_t need = 1, len = m->len;
		if (len > GT_RING_STR_FIRST_BYTES)
			need += (len - GT_RING_STR_FIRST_BYTES + GT_RING_REC_BYTES - 1) / GT_RING_REC_BYTES;
		ok = need == n && len <= 65535ull * GT_RING_REC_BYTES;
	} else if (ok) {
		ok = n == 1;
	}
	if (!ok) {
		*nrec = 1;
		return &ring_bad_rec;
	}
	if (n > avail) {
		if (n > gt_ring_readable(r)) {
			*nrec = 0;   /* cannot happen with a sane producer: commits whole messages */
			return NULL;
		}
	}
	*nrec = n;
	return m;
}

size_t gt_ring_str_text(const struct gt_ring *r, char *buf, size_t cap)
{
	const struct gt_ring_rec *m = &r->rec[r->c_tail & r->mask];
	size_t len = m->len;
	if (cap == 0)
		return 0;
	if (len > cap - 1)
		len = cap - 1;
	size_t k = len < GT_RING_STR_FIRST_BYTES ? len : GT_RING_STR_FIRST_BYTES;
	memcpy(buf, m->u.str.text, k);
	for (uint64_t i = 1; k < len; i++) {
		size_t c = len - k < GT_RING_REC_BYTES ? len - k : GT_RING_REC_BYTES;
		memcpy(buf + k, &r->rec[(r->c_tail + i) & r->mask], c);
		k += c;
	}
	buf[len] = 0;
	return len;
}

void gt_ring_release(struct gt_ring *r, uint32_t n)
{
	r->c_tail += n;
	atomic_store_explicit(&r->hdr->tail, r->c_tail, memory_order_release);
}
