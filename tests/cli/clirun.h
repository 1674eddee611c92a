/*
 * clirun.h - running a command line from a cli test: its stdout captured
 * into a malloc'ed string, its exit status returned.  Test code: failures
 * to start the command abort the test through Criterion.
 */
#ifndef GTRACE_TESTS_CLIRUN_H
#define GTRACE_TESTS_CLIRUN_H

/* run the shell command line CMD, its stdout into *out (malloc'ed, the
 * caller frees); its exit status, -1 when it did not exit normally */
int clirun_capture(const char *cmd, char **out);

/* run `$GTRACE_BUILD/tui/gtrace ARGS REDIR` (REDIR: a shell redirection
 * such as "2>&1" or "2>/dev/null"), stdout into *out; its exit status */
int clirun_gtrace(const char *args, const char *redir, char **out);

#endif
