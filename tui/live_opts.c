/*
 * live_opts.c - --memory, --ring and the capture file of the live commands
 * (tui/live_opts.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "live_sess.h"
#include "live_opts.h"
#include "live_rec.h"

int live_opts_arg(struct live_opts *o, const char *cmd, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	int mem = !strcmp(a, "--memory"), ring = !strcmp(a, "--ring");
	if (!mem && !ring)
		return 0;
	if (*i + 1 >= argc)
		return cmd_usage_error(cmd, "%s needs a value", a), -2;
	const char *v = argv[++*i];
	if (mem) {
		size_t b;
		if (gt_parse_size(v, &b) < 0 || (b && b < (1u << 20)))
			return cmd_usage_error(cmd, "--memory: '%s' is not 0 (no bound) or a size of at "
					       "least 1M for a live capture (e.g. 256M, 2G)", v), -2;
		o->memory = b;
		o->memory_set = 1;
		return 1;
	}
	char *end;
	strtod(v, &end);
	if (end != v && !*end)
		return cmd_usage_error(cmd, "--ring takes a duration (e.g. 10m, 1h), not '%s'; the "
				       "shared-memory ring's size in records is --ring-size", v), -2;
	if (live_parse_duration(v, &o->ring_ns) < 0)
		return cmd_usage_error(cmd, "--ring: '%s' is not a duration from 1ms to 366d "
				       "(e.g. 90s, 10m, 1h30m)", v), -2;
	return 1;
}

int live_opts_start(struct live_sess *ss, const struct live_opts *o, char *err, size_t errlen)
{
	size_t budget = o->memory_set ? o->memory : gt_default_memory_budget();
	int rc = gt_store_set_budget(ss->s, budget);
	if (rc < 0) {      /* the store stays unbounded: the capture goes on */
		const char *t = getenv("TMPDIR");
		fprintf(stderr, "gtrace: warning: --memory: the memory budget's cache file in %s: %s; "
			"the store holds every event\n", t && *t ? t : "/var/tmp", strerror(-rc));
		gt_store_set_budget(ss->s, 0);   /* the status line shows no budget not kept */
	}
	ss->rec = calloc(1, sizeof(*ss->rec));
	if (!ss->rec) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = live_rec_open(ss->rec, ss->s, o->record, o->force, o->ring_ns, err, errlen);
	if (rc < 0) {
		live_rec_abort(ss->rec);
		free(ss->rec);
		ss->rec = NULL;
	}
	return rc;
}

int live_opts_finish(struct live_sess *ss, const char *cmd)
{
	if (!ss->rec)
		return 0;
	char err[768], rec[PATH_MAX];
	snprintf(rec, sizeof(rec), "%s", ss->rec->record);
	int nkept = ss->rec->nkept;
	char (*kept)[PATH_MAX] = malloc(sizeof(ss->rec->kept));
	if (kept)
		memcpy(kept, ss->rec->kept, sizeof(ss->rec->kept));
	int rc = live_rec_close(ss->rec, ss->s, err, sizeof(err));
	free(ss->rec);
	ss->rec = NULL;
	if (rc < 0) {
		free(kept);
		cmd_error("%s", err);
		return 1;
	}
	for (int i = 0; kept && i < nkept; i++)
		fprintf(stderr, "gtrace %s: kept the capture as %s\n", cmd, kept[i]);
	free(kept);
	uint64_t disc = gt_store_dropped(ss->s, NULL);   /* the ring's cut, the last at close */
	if (rec[0] && disc)
		fprintf(stderr, "gtrace %s: recorded %llu events to %s (%llu older ones discarded "
			"by --ring)\n", cmd, (unsigned long long)(ss->events - disc), rec,
			(unsigned long long)disc);
	else if (rec[0])
		fprintf(stderr, "gtrace %s: recorded %llu events to %s\n", cmd,
			(unsigned long long)ss->events, rec);
	return 0;
}

void live_opts_abort(struct live_sess *ss)
{
	if (!ss->rec)
		return;
	char rec[PATH_MAX];
	snprintf(rec, sizeof(rec), "%s", ss->rec->ring_ns || ss->rec->stream ? "" : ss->rec->record);
	live_rec_abort(ss->rec);
	if (rec[0])
		unlink(rec);
	free(ss->rec);
	ss->rec = NULL;
}
