/*
 * live_rec.h - the capture file of a live session: every event is written
 * once, as it arrives, to a .gtrace file (a temporary one in a private
 * directory, removed at exit, unless --record FILE), flushed once a second
 * so that a gtrace killed at any moment leaves a file that opens up to its
 * last complete chunk.
 *
 * Flight recorder (--ring DURATION): the capture is written as segment
 * files (complete .gtrace files, each about DURATION/8 of trace or
 * LIVE_REC_SEG_EVENTS events), the oldest removed once everything in it is
 * more than DURATION older than the newest event; what was removed is
 * counted (events, trace time range), shown in the status and written to
 * the final file's metadata.  At exit (and on W) the segments kept are
 * merged into one capture file.
 *
 * The user keeps a temporary capture with the viewer's W (live_rec_keep):
 * a hard link to the file being written (complete at exit), a copy when
 * the name is on another file system, a merge of the segments with --ring.
 */
#ifndef GTRACE_TUI_LIVE_REC_H
#define GTRACE_TUI_LIVE_REC_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include "gtrace/store.h"

#define LIVE_REC_SEG_EVENTS (4u << 20)   /* a segment rotates at this many events */
#define LIVE_REC_KEEP_MAX 8             /* names kept with W */

struct gt_file_writer;

/* one closed segment of a ring */
struct live_seg {
	char path[PATH_MAX];
	uint64_t events;
	int64_t t0, t1;          /* trace time range of its events */
	uint64_t bytes;
};

struct live_rec {
	char dir[PATH_MAX];      /* private directory (temporary file or segments), '' = none */
	char path[PATH_MAX];     /* the file being written */
	char record[PATH_MAX];   /* --record FILE, '' = temporary */
	int force;               /* replace an existing --record FILE */
	int stream;              /* record "-": a stream on stdout (no file) */
	struct gt_file_writer *w;
	uint64_t events;         /* events written, discarded ones included */
	uint64_t written_bytes;  /* bytes of the segments closed (ring) */
	/* ring (ring_ns > 0) */
	int64_t ring_ns;
	struct live_seg *seg;    /* closed segments kept, oldest first */
	size_t nseg, capseg;
	unsigned seq;            /* number of the current segment */
	uint64_t cur_events;
	int64_t cur_t0, cur_t1;
	int64_t t_max;           /* newest event end seen */
	uint64_t disc_events, disc_segs;   /* segments removed (the store counts what the ring cut) */
	/* names kept with W: copy (1) or hard link (0) */
	char kept[LIVE_REC_KEEP_MAX][PATH_MAX];
	int kept_copy[LIVE_REC_KEEP_MAX];
	int nkept;
};

/* start writing the capture of s: to record (when not NULL; refused when
 * it exists unless force; "-" is a stream on stdout) or to a temporary file; ring_ns > 0 makes it a
 * flight recorder.  The file holds complete chunks from the start (it
 * opens, empty, whenever gtrace is killed).  0, or negative errno with
 * "PATH: problem" in err */
int live_rec_open(struct live_rec *r, struct gt_store *s, const char *record, int force,
		  int64_t ring_ns, char *err, size_t errlen);
/* write events whose ids refer to s (rotating and discarding segments of a
 * ring); 0 or negative errno */
int live_rec_add(struct live_rec *r, struct gt_store *s, const struct gt_event *ev, size_t n);
/* write what is queued: the file opens with everything so far */
int live_rec_flush(struct live_rec *r, struct gt_store *s);
/* bytes on disk now (segments kept and the file being written) */
uint64_t live_rec_bytes(const struct live_rec *r);
/* ", file 12.3M" into file and, with a ring, ", ring 10m: 1.2M ev discarded
 * (5m 0s)" into ring (else ""): what the store s cut, from the capture's
 * start to the latest start cut */
void live_rec_status(const struct live_rec *r, const struct gt_store *s, char *file, size_t flen,
		     char *ring, size_t rlen);
/* with a ring: cut the store s to the window exactly (every event starting
 * in the last ring_ns before the newest end), as the file at exit holds it
 * (a closing line then says what the file will hold); 0 or -ENOMEM */
int live_rec_ring_cut(const struct live_rec *r, struct gt_store *s);
/* W: keep the capture as name (never replacing a file); with a ring, the
 * store is cut to the window first (a viewer's references move: ui.c
 * ui_data_changed); 0 or negative errno, a one-line message either way */
int live_rec_keep(struct live_rec *r, struct gt_store *s, const char *name, char *msg, size_t len);
/* finish: the --record file and every kept name complete (index, drops,
 * metadata; with a ring the store cut to the window and written whole,
 * the ring's metadata with it), the temporary files removed.  0 or negative errno with the problem in err; frees r's buffers */
int live_rec_close(struct live_rec *r, struct gt_store *s, char *err, size_t errlen);
/* give up: remove what is temporary (and an empty --record file) */
void live_rec_abort(struct live_rec *r);

/* "10m", "1h", "90s", "1h30m", "500ms" -> ns; 0 or -EINVAL (a bare
 * number is -EINVAL: it is no duration) */
int live_parse_duration(const char *text, int64_t *ns);
/* "1.2M", "340k", "12" of a count (events, a rate) */
void live_fmt_count(double v, char *buf, size_t len);
/* "1.2G", "340M", "12k" of a byte count */
void live_fmt_bytes(uint64_t v, char *buf, size_t len);

#endif
