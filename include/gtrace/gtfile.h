/*
 * gtrace/gtfile.h - the native capture file (.gtrace): writer and reader.
 *
 * Layout (docs/file-format.md has the byte-level description): a fixed
 * header (magic "GTRACE\r\n", format version, writer version, flags), then
 * self-describing chunks, each with a type, raw and compressed lengths and a
 * CRC-32, its payload compressed with zstd: string table, lane, device, rank,
 * kernel-configuration and NCCL tables (incremental: each table chunk carries
 * the entries added since the previous one), event chunks, drop counters,
 * metadata, and an index chunk at the end for fast open.  A file cut off
 * mid-write opens up to its last complete chunk, with a warning.
 *
 * Ids in event chunks are the writing store's ids; the reader recreates the
 * same string, lane, kconf and nccl ids in an empty store.
 */
#ifndef GTRACE_GTFILE_H
#define GTRACE_GTFILE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "gtrace/store.h"

#define GT_FILE_MAGIC "GTRACE\r\n"
#define GT_FILE_VERSION_MAJOR 1
#define GT_FILE_VERSION_MINOR 1

struct gt_file_writer;

struct gt_file_writer_opts {
	unsigned flags;
	int zstd_level;          /* 0 = default (fast) */
	size_t chunk_events;     /* events per event chunk, 0 = default */
	unsigned open_flags;     /* GTFILE_W_* */
};

/* open_flags: refuse to replace an existing file (-EEXIST, "... exists;
 * not replaced without --force"); the CLI sets it unless --force */
#define GT_FILE_W_KEEP 0x1u
/* open_flags: write no per-lane summary at close (a file whose events are
 * not the store's: a --ring segment; it is then read whole) */
#define GT_FILE_W_NO_SUMMARY 0x2u

/* Whatever the flags, a file is never written through a symbolic link nor
 * into a file someone else created: both write a fresh temporary file
 * beside path and rename it into place.  gt_file_writer_open's file is
 * renamed at its first flush, when it holds its header and complete
 * chunks, and written at path from then on (a recording is visible as it
 * is written and opens after a crash at any moment: killed before, it
 * leaves only the temporary ".NAME.XXXXXX"); gt_file_write_store's at the
 * end (no partial file on error). */

/* create path (see above); NULL on error with "PATH: problem" in err */
struct gt_file_writer *gt_file_writer_open(const char *path, const struct gt_file_writer_opts *o,
					 char *err, size_t errlen);
/* the same on an open descriptor (a pipe: `gtrace record -o -`), which is
 * duplicated (the caller keeps fd); nothing is ever created, replaced or
 * removed; name is used in messages */
struct gt_file_writer *gt_file_writer_open_fd(int fd, const char *name,
					    const struct gt_file_writer_opts *o, char *err, size_t errlen);
/* queue events whose ids refer to store s; writes full chunks as they fill
 * (and the new table entries they need before them); 0 or negative errno */
int gt_file_writer_add(struct gt_file_writer *w, const struct gt_store *s,
		      const struct gt_event *ev, size_t n);
/* write what is queued: after this the file opens with everything so far.
 * The first flush puts a recording at its name: -EEXIST when a file
 * appeared there meanwhile (kept: not replaced without --force) */
int gt_file_writer_flush(struct gt_file_writer *w, const struct gt_store *s);
/* the problem an error of gt_file_writer_flush or _close names, without
 * the path (callers prefix it): -EEXIST says the file appeared while being
 * written, any other its strerror */
const char *gt_file_writer_strerror(int rc);
/* flush, write drops, metadata and the index chunk, close; frees w.  On
 * error err holds the problem without the path (callers prefix it) */
int gt_file_writer_close(struct gt_file_writer *w, const struct gt_store *s, char *err, size_t errlen);
/* close without the final chunks, leaving the file as written so far
 * (tests of cut-off files; callers that want no file unlink it; a file
 * never flushed was never placed: nothing is left); frees w */
void gt_file_writer_abort(struct gt_file_writer *w);

/* write a finished store in one go */
int gt_file_write_store(const struct gt_store *s, const char *path, char *err, size_t errlen);
/* the same with writer options (compression level, events per chunk) */
int gt_file_write_store_opts(const struct gt_store *s, const char *path,
			    const struct gt_file_writer_opts *o, char *err, size_t errlen);

/* the store's metadata key a cut-off file's reading sets: "cut off after N
 * events (file ends mid-chunk at byte B; ...)", as its warning says */
#define GT_META_CUT_OFF "file.cut_off"

struct gt_file_info {
	uint32_t version_major, version_minor;
	char writer_version[32];
	int truncated;           /* file was cut off; opened up to last complete chunk */
	uint64_t chunks;
	uint64_t events;
};

/* read a .gtrace file into an empty store and finish it.  0 on success;
 * negative on error with one line in err naming the file and the problem.
 * A truncated file succeeds with info->truncated set and a warning in err. */
int gt_file_read(const char *path, struct gt_store *s, struct gt_file_info *info,
		char *err, size_t errlen);
/* the same, storing the count of bytes walked so far in *progress (when not
 * NULL) after each chunk, for a loading line drawn by another thread */
int gt_file_read_progress(const char *path, struct gt_store *s, struct gt_file_info *info,
			 _Atomic uint64_t *progress, char *err, size_t errlen);
/* the tables, the per-lane summary and the index of a complete file, not
 * its events (their chunks are skipped unread): a store with every lane
 * and string, no events, the summary attached (gtrace/lsum.h) and the span
 * of the events set, for a first frame while the events load elsewhere.
 * info->events is the file's event count.  -ENOENT (with a reason) when
 * the file has no index (cut off) or no summary (format 1.0): read it
 * whole; other errors as gt_file_read */
int gt_file_read_head(const char *path, struct gt_store *s, struct gt_file_info *info, char *err,
		     size_t errlen);
/* the same from memory (the fuzzer's entry); name is used in messages */
int gt_file_read_mem(const void *buf, size_t len, const char *name, struct gt_store *s,
		    struct gt_file_info *info, char *err, size_t errlen);
/* 1 when the first bytes are a .gtrace header */
int gt_file_sniff(const void *buf, size_t len);

#endif
