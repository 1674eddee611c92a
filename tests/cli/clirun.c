/*
 * clirun.c - the cli tests' one way to run a command and read its stdout
 * (popen into an open_memstream buffer).
 */
#include "clirun.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

int clirun_capture(const char *cmd, char **out)
{
	FILE *p = popen(cmd, "r");
	cr_assert(p, "cannot run %s", cmd);
	size_t len = 0;
	FILE *m = open_memstream(out, &len);
	cr_assert(m);
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		fwrite(buf, 1, n, m);
	fclose(m);
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int clirun_gtrace(const char *args, const char *redir, char **out)
{
	const char *b = getenv("GTRACE_BUILD");
	cr_assert_not_null(b, "GTRACE_BUILD not set");
	char *cmd = NULL;
	cr_assert(asprintf(&cmd, "'%s/tui/gtrace' %s %s", b, args, redir) > 0);
	int rc = clirun_capture(cmd, out);
	free(cmd);
	return rc;
}
