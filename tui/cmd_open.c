/*
 * cmd_open.c - 'gtrace open PATH...': load any input (progress on stderr
 * while loading) and run the viewer on it.
 */
#include <stdio.h>
#include <string.h>
#include "gtrace/load.h"
#include "cmd.h"
#include "ui.h"

/* the --help text */
static void usage(FILE *f)
{
	fprintf(f, "usage: gtrace open PATH...\n\n"
		   "Open a .gtrace capture, a Kineto/Chrome trace JSON (.json or .json.gz), an nsys\n"
		   "SQLite export or a directory of per-rank trace files in the terminal viewer.\n"
		   "Press ? in the viewer for its keys; docs/viewer.md describes them.\n");
}

int cmd_open(int argc, char **argv)
{
	if (argc >= 2 && cmd_is_help(argv[1])) {
		usage(stdout);
		return 0;
	}
	int first = 1;
	if (argc > 1 && !strcmp(argv[1], "--"))
		first = 2;
	else if (argc > 1 && argv[1][0] == '-' && argv[1][1])
		return cmd_usage_error("open", "unknown option '%s'", argv[1]);
	if (argc <= first)
		return cmd_usage_error("open", "no PATH given");
	struct gt_load_opts lo = { .flags = GT_LOAD_PROGRESS };
	struct gt_store *s = NULL;
	char err[512];
	int rc = gt_load((const char *const *)argv + first, (size_t)(argc - first), &lo, &s, err,
			 sizeof(err));
	if (rc) {
		fprintf(stderr, "gtrace: %s\n", err);
		return 1;
	}
	char name[256];
	if (argc - first == 1)
		snprintf(name, sizeof(name), "%s", argv[first]);
	else
		snprintf(name, sizeof(name), "%s (+%d more)", argv[first], argc - first - 1);
	struct ui_source src = { .name = name, .store = s };
	rc = ui_run(&src);
	store_free(s);
	return rc;
}
