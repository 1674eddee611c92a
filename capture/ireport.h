/*
 * ireport.h - the injection library telling why it cannot be traced.  A
 * library that cannot listen on its control socket (socket() failing, no
 * fds left, EACCES, ...) is invisible to every viewer: it says so on the
 * process's stderr and, when `gtrace run` / `gtrace record -- CMD` started
 * the process, on the status pipe they passed in GTRACE_STATUS_FD, so that
 * they report it instead of "exited without initializing CUDA".
 */
#ifndef GTRACE_IREPORT_H
#define GTRACE_IREPORT_H

/* the environment variable naming the status pipe's fd */
#define IREPORT_ENV "GTRACE_STATUS_FD"

/* report that this process cannot be traced: why (one line, no newline) */
void ireport_failure(const char *why);

#endif
