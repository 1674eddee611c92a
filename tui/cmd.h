/*
 * cmd.h - the gtrace subcommands.  Each lives in tui/cmd_<name>.c and
 * returns the process exit status: 0 success, 1 error (one line on stderr
 * naming the file and the problem), 2 usage error.
 */
#ifndef GTRACE_CMD_H
#define GTRACE_CMD_H

#include <stdint.h>

int cmd_demo(int argc, char **argv);
int cmd_open(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_diff(int argc, char **argv);

/* "gtrace: " + message on stderr */
void cmd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* usage error: message plus "try 'gtrace CMD --help'"; returns 2 */
int cmd_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 1 when argv[i] is -h or --help */
int cmd_is_help(const char *arg);
/* "97.5M", "4096", "2G" -> bytes (k/K, M, G, T: powers of 1024, optional B);
 * 0, or -1 when malformed (sign, hex, inf, a fraction of a byte), zero or absurd */
int cmd_parse_bytes(const char *s, uint64_t *out);
/* a bandwidth in GB/s, 0.001 to 1e6; 0 or -1 */
int cmd_parse_gbps(const char *s, double *out);

#endif
