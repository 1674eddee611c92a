/*
 * kineto_read.h - the importer's byte source: a plain file, a gzip file (inflated
 * by a second thread that runs ahead of the parser) or a memory buffer.
 * Delivers the decompressed text in pieces of any size.
 */
#ifndef GTRACE_KREAD_H
#define GTRACE_KREAD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zlib.h>

#define KINETO_READ_NQ 4
#define KINETO_READ_CHUNK (1u << 20)

struct kineto_read {
	int fd;
	int gz;                       /* 1: gzip input */
	const unsigned char *mem;     /* memory source (not owned) */
	size_t mem_len, mem_pos;
	z_stream z;
	int z_init;
	unsigned char *zin;           /* compressed input buffer */
	/* inflate thread pipeline: a ring of filled chunks */
	int threaded;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *q[KINETO_READ_NQ];
	size_t qlen[KINETO_READ_NQ];
	size_t qhead, qcount, qoff;
	int done;                     /* producer finished (eof or error) */
	int stop;                     /* consumer asks the producer to end */
	int truncated;                /* gzip stream ended early */
	int damage;                   /* KINETO_READ_DMG_*: why the gzip data ended */
	uint64_t damage_at;           /* compressed byte where it was found */
	int failed;                   /* read or data error: msg says what */
	char msg[128];
	uint64_t in_pos;              /* compressed bytes consumed */
	uint64_t in_total;            /* input size when known, else 0 */
	uint64_t out_total;           /* decompressed bytes delivered */
};

/* damaged gzip input: the data inflated before the damage is delivered,
 * then the end (0), never an error; the damage is in r->damage */
enum { KINETO_READ_DMG_NONE, KINETO_READ_DMG_TRUNC, KINETO_READ_DMG_DATA, KINETO_READ_DMG_CHECK };

/* the one wording of a gzip damage for every importer ("gzip data damaged
 * near byte N of M (invalid deflate data)", ...) into buf; NULL when none */
const char *kineto_read_damage(const struct kineto_read *r, char *buf, size_t len);

/* read and drop the rest of the input; 1 when it ends in a gzip damage */
int kineto_read_drain(struct kineto_read *r);

/* open a file; gzip is inflated by a second thread when threads > 1, or when
 * threads == 0 and a core is free (load average below the core count) */
int kineto_read_open(struct kineto_read *r, const char *path, int threads, char *err, size_t errlen);
/* read from memory (plain or gzip), no thread */
int kineto_read_open_mem(struct kineto_read *r, const void *buf, size_t len);
/* up to cap bytes of text into dst: count, 0 at the end, -1 on error (r->msg) */
ssize_t kineto_read_read(struct kineto_read *r, char *dst, size_t cap);
void kineto_read_close(struct kineto_read *r);

#endif
