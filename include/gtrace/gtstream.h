/*
 * gtrace/gtstream.h - reading a .gtrace stream as it arrives: a pipe, a
 * socket, an SSH channel carrying `gtrace record -o -`.  The bytes are the
 * file format of docs/file-format.md read front to back without seeking:
 * each chunk is decoded into the stream's own store as soon as its last
 * byte is in; the index and END chunks close the stream.
 *
 * Ids in the stream's store are the writer's (as gt_file_read recreates
 * them); gtjob.h merges several streams into one store.  The caller may
 * empty the stream store's lanes (lane->n = 0) after taking their events:
 * a stream appends to its lanes and never finishes its store.
 */
#ifndef GTRACE_GTSTREAM_H
#define GTRACE_GTSTREAM_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/store.h"

struct gt_stream;

enum gt_stream_state {
	GT_STREAM_RECEIVING = 0,  /* header or chunks still to come */
	GT_STREAM_COMPLETE,       /* the END chunk arrived */
	GT_STREAM_CUT,            /* closed before its END chunk (gt_stream_close) */
	GT_STREAM_ERROR           /* bad bytes: nothing more is read */
};

struct gt_stream_info {
	enum gt_stream_state state;
	uint64_t bytes;          /* bytes received */
	uint64_t done_bytes;     /* bytes of the header and complete chunks */
	uint64_t chunks;         /* complete chunks decoded */
	uint64_t events;         /* events decoded */
	uint32_t version_major, version_minor;
	char writer_version[32];
};

/* a stream decoding into s (empty, owned by the caller); name is used in
 * messages; NULL when out of memory */
struct gt_stream *gt_stream_new(const char *name, struct gt_store *s);
void gt_stream_free(struct gt_stream *st);
/* take n more bytes: every chunk they complete is decoded into the store
 * (an incomplete one is kept for the next call).  Returns the events
 * decoded by this call, or a negative errno with one line "NAME: problem"
 * in err (garbage, a newer format, a checksum, data after the end); after
 * an error the stream is in GT_STREAM_ERROR and takes nothing more */
long gt_stream_feed(struct gt_stream *st, const void *buf, size_t n, char *err, size_t errlen);
/* the sender closed: a stream without its END chunk becomes GT_STREAM_CUT
 * and err says what was kept ("NAME: cut off after N events (stream
 * closed mid-chunk at byte B; last complete chunk ends at byte C)"),
 * returns 1; 0 when complete; negative errno with err when nothing valid
 * ever arrived (empty, cut inside the header) */
int gt_stream_close(struct gt_stream *st, char *err, size_t errlen);
void gt_stream_info(const struct gt_stream *st, struct gt_stream_info *out);

#endif
