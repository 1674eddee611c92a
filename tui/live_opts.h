/*
 * live_opts.h - the options every live command shares (run, attach, demo,
 * record): where the capture goes (--record FILE / -o FILE, --force), how
 * much of it the store holds in memory (--memory SIZE) and the flight
 * recorder's window (--ring DURATION).
 */
#ifndef GTRACE_TUI_LIVE_OPTS_H
#define GTRACE_TUI_LIVE_OPTS_H

#include <stddef.h>
#include <stdint.h>

struct live_sess;

struct live_opts {
	const char *record;      /* --record FILE, NULL = a temporary capture file */
	int force;               /* --force: replace FILE */
	size_t memory;           /* --memory SIZE (0 = unbounded) */
	int memory_set;          /* --memory given; else gt_default_memory_budget() */
	int64_t ring_ns;         /* --ring DURATION; 0 = keep everything */
};

/* the help lines of --memory and --ring (for each command's usage) */
#define LIVE_OPTS_HELP \
	"  --memory SIZE   events held in memory at most (e.g. 256M, 2G; 0 = no bound; default:\n" \
	"                  1G or a quarter of RAM, whichever is smaller)\n" \
	"  --ring DURATION flight recorder: keep only the last DURATION (e.g. 10m, 1h) on disk\n" \
	"                  too; what is discarded is counted in the status and the file\n"

/* argv[*i] for cmd: 1 when it was --memory or --ring (its value consumed,
 * *i on the value), 0 when it is not one of them, -2 after printing a
 * usage error (the command returns 2) */
int live_opts_arg(struct live_opts *o, const char *cmd, int argc, char **argv, int *i);
/* set the store's budget (a failure is a warning on stderr: the store
 * stays unbounded) and open the capture file (ss->rec, allocated); 0 or
 * negative errno with one line in err */
int live_opts_start(struct live_sess *ss, const struct live_opts *o, char *err, size_t errlen);
/* close the capture file (complete, temporary files removed); prints
 * "gtrace CMD: recorded N events to FILE" with --record, the error
 * otherwise; 0 or 1 (error) */
int live_opts_finish(struct live_sess *ss, const char *cmd);
/* on a failed start of the command: remove the capture file (a --record
 * FILE too: nothing was recorded) */
void live_opts_abort(struct live_sess *ss);

#endif
