/*
 * kineto_read.c - the importer's byte source (kineto_read.h).  Gzip is inflated with
 * zlib's streaming API (concatenated members allowed); for files a second
 * thread inflates into a ring of KINETO_READ_NQ chunks while the parser works.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kineto_read.h"

#define ZIN_BYTES (256u * 1024u)

static ssize_t raw_read(struct kineto_read *r, unsigned char *dst, size_t cap)
{
	if (r->mem) {
		size_t n = r->mem_len - r->mem_pos;
		if (n > cap)
			n = cap;
		memcpy(dst, r->mem + r->mem_pos, n);
		r->mem_pos += n;
		return (ssize_t)n;
	}
	for (;;) {
		ssize_t n = read(r->fd, dst, cap);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			snprintf(r->msg, sizeof(r->msg), "read error: %s", strerror(errno));
		return n;
	}
}

/* inflate up to cap bytes; 0 at the end of the stream */
static ssize_t gz_read(struct kineto_read *r, char *dst, size_t cap)
{
	z_stream *z = &r->z;
	if (r->damage)
		return 0;               /* the end was at the damage */
	z->next_out = (unsigned char *)dst;
	z->avail_out = (uInt)cap;
	while (z->avail_out > 0) {
		if (z->avail_in == 0) {
			ssize_t n = raw_read(r, r->zin, ZIN_BYTES);
			if (n < 0)
				return -1;
			if (n == 0) {
				if (r->z_init == 1) {  /* inside a member */
					r->truncated = 1;
					r->damage = KINETO_READ_DMG_TRUNC;
					r->damage_at = r->in_pos;
				}
				break;
			}
			z->next_in = r->zin;
			z->avail_in = (uInt)n;
		}
		if (r->z_init == 2) {
			/* between members: only another gzip member may follow */
			if (z->next_in[0] != 0x1f) {
				z->avail_in = 0;
				break;
			}
			inflateReset(z);
			r->z_init = 1;
		}
		uInt before = z->avail_in;
		int rc = inflate(z, Z_NO_FLUSH);
		__atomic_add_fetch(&r->in_pos, (uint64_t)(before - z->avail_in), __ATOMIC_RELAXED);
		if (rc == Z_STREAM_END) {
			r->z_init = 2;
			continue;
		}
		if (rc == Z_BUF_ERROR && z->avail_in == 0)
			continue;
		if (rc == Z_MEM_ERROR) {
			snprintf(r->msg, sizeof(r->msg), "out of memory");
			return -1;
		}
		if (rc != Z_OK) {
			/* what was inflated before the damage is delivered; then the end */
			r->damage = z->msg && (strstr(z->msg, "data check") || strstr(z->msg, "length check")) ? KINETO_READ_DMG_CHECK : KINETO_READ_DMG_DATA;
			r->damage_at = r->in_pos;
			break;
		}
	}
	return (ssize_t)(cap - z->avail_out);
}

static ssize_t direct_read(struct kineto_read *r, char *dst, size_t cap)
{
	if (r->gz)
		return gz_read(r, dst, cap);
	ssize_t n = raw_read(r, (unsigned char *)dst, cap);
	if (n > 0)
		__atomic_add_fetch(&r->in_pos, (uint64_t)n, __ATOMIC_RELAXED);
	return n;
}

static void *producer(void *arg)
{
	struct kineto_read *r = arg;
	for (;;) {
		pthread_mutex_lock(&r->mu);
		while (r->qcount == KINETO_READ_NQ && !r->stop)
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->stop) {
			pthread_mutex_unlock(&r->mu);
			return NULL;
		}
		size_t slot = (r->qhead + r->qcount) % KINETO_READ_NQ;
		pthread_mutex_unlock(&r->mu);
		ssize_t n = gz_read(r, r->q[slot], KINETO_READ_CHUNK);
		pthread_mutex_lock(&r->mu);
		if (n > 0) {
			r->qlen[slot] = (size_t)n;
			r->qcount++;
		} else {
			r->failed = n < 0;
			r->done = 1;
		}
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		if (n <= 0)
			return NULL;
	}
}

static int setup_gz(struct kineto_read *r)
{
	memset(&r->z, 0, sizeof(r->z));
	if (inflateInit2(&r->z, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	r->z_init = 1;
	r->zin = malloc(ZIN_BYTES);
	return r->zin ? 0 : -ENOMEM;
}

const char *kineto_read_damage(const struct kineto_read *r, char *buf, size_t len)
{
	unsigned long long at = r->damage_at, of = r->in_total;
	switch (r->damage) {
	case KINETO_READ_DMG_TRUNC:
		snprintf(buf, len, "gzip data ends early (truncated at byte %llu)", at);
		return buf;
	case KINETO_READ_DMG_DATA:
		snprintf(buf, len, "gzip data damaged near byte %llu of %llu (invalid deflate data)", at, of);
		return buf;
	case KINETO_READ_DMG_CHECK:
		snprintf(buf, len, "gzip check failed at byte %llu of %llu (the CRC or length trailer "
			 "does not match the data)", at, of);
		return buf;
	}
	return NULL;
}

int kineto_read_drain(struct kineto_read *r)
{
	char *tmp = malloc(1u << 16);
	if (!tmp)
		return r->damage != 0;
	while (kineto_read_read(r, tmp, 1u << 16) > 0) {
	}
	free(tmp);
	return r->damage != 0;
}

int kineto_read_open(struct kineto_read *r, const char *path, int threads, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	/* O_NONBLOCK: opening a FIFO without a writer must not hang; refused below */
	r->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (r->fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(r->fd, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			snprintf(err, errlen, "%s: %s", path, S_ISDIR(st.st_mode) ? "is a directory" :
				 "not a regular file (a pipe or device); save the trace to a file first");
			close(r->fd);
			r->fd = -1;
			return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		}
		r->in_total = (uint64_t)st.st_size;
	}
	unsigned char m[2] = { 0 };
	ssize_t n = pread(r->fd, m, 2, 0);
	r->gz = n == 2 && m[0] == 0x1f && m[1] == 0x8b;
	if (!r->gz)
		return 0;
	if (setup_gz(r)) {
		snprintf(err, errlen, "%s: out of memory", path);
		kineto_read_close(r);
		return -ENOMEM;
	}
	if (threads == 1)
		return 0;
	if (threads == 0) {
		/* automatic: a second thread only pays off when a core is free */
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		double load = 0;
		if (ncpu < 2 || (getloadavg(&load, 1) == 1 && load > (double)ncpu - 0.5))
			return 0;
	}
	for (int i = 0; i < KINETO_READ_NQ; i++)
		if (!(r->q[i] = malloc(KINETO_READ_CHUNK))) {
			snprintf(err, errlen, "%s: out of memory", path);
			kineto_read_close(r);
			return -ENOMEM;
		}
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	if (pthread_create(&r->th, NULL, producer, r) == 0)
		r->threaded = 1;
	return 0;
}

int kineto_read_open_mem(struct kineto_read *r, const void *buf, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->mem = buf ? buf : (const void *)"";
	r->mem_len = len;
	r->in_total = len;
	r->gz = len >= 2 && r->mem[0] == 0x1f && r->mem[1] == 0x8b;
	if (r->gz && setup_gz(r))
		return -ENOMEM;
	return 0;
}

ssize_t kineto_read_read(struct kineto_read *r, char *dst, size_t cap)
{
	ssize_t n;
	if (!r->threaded) {
		n = direct_read(r, dst, cap);
	} else {
		pthread_mutex_lock(&r->mu);
		while (r->qcount == 0 && !r->done)
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->qcount == 0) {
			n = r->failed ? -1 : 0;
		} else {
			size_t h = r->qhead, left = r->qlen[h] - r->qoff;
			size_t k = left < cap ? left : cap;
			pthread_mutex_unlock(&r->mu);
			memcpy(dst, r->q[h] + r->qoff, k);
			pthread_mutex_lock(&r->mu);
			r->qoff += k;
			if (r->qoff == r->qlen[h]) {
				r->qoff = 0;
				r->qhead = (h + 1) % KINETO_READ_NQ;
				r->qcount--;
				pthread_cond_broadcast(&r->cv);
			}
			n = (ssize_t)k;
		}
		pthread_mutex_unlock(&r->mu);
	}
	if (n > 0)
		r->out_total += (uint64_t)n;
	return n;
}

void kineto_read_close(struct kineto_read *r)
{
	if (r->threaded) {
		pthread_mutex_lock(&r->mu);
		r->stop = 1;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->th, NULL);
		pthread_mutex_destroy(&r->mu);
		pthread_cond_destroy(&r->cv);
		r->threaded = 0;
	}
	for (int i = 0; i < KINETO_READ_NQ; i++) {
		free(r->q[i]);
		r->q[i] = NULL;
	}
	if (r->z_init)
		inflateEnd(&r->z);
	r->z_init = 0;
	free(r->zin);
	r->zin = NULL;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}
