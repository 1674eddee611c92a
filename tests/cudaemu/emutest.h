/*
 * emutest.h - what every emulator test file needs: the build directory and
 * the environment that puts the emulated libcuda.so.1 / libcupti.so.13
 * first, and a child run with its output in a log.
 */
#ifndef EMUTEST_H
#define EMUTEST_H
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* build (cap bytes) from $GTRACE_BUILD; with libpath, LD_LIBRARY_PATH to
 * the emulated libraries; no autostart left from the caller */
static inline void emutest_env(char *build, size_t cap, int libpath)
{
	snprintf(build, cap, "%s", getenv("GTRACE_BUILD"));
	if (libpath) {
		char lp[1200];
		snprintf(lp, sizeof(lp), "%s/tests/cudaemu", build);
		setenv("LD_LIBRARY_PATH", lp, 1);   /* the emulated libcuda.so.1 and libcupti.so.13 */
	}
	unsetenv("GTRACE_AUTOSTART");
}

/* argv started with stdout+stderr to log; with die_with_us, killed when
 * the test dies (no stray gtrace after a timeout); its pid */
static inline pid_t emutest_spawn(const char *log, char *const argv[], int die_with_us)
{
	pid_t p = fork();
	if (p == 0) {
		if (die_with_us)
			prctl(PR_SET_PDEATHSIG, SIGKILL);
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	return p;
}

/* p's exit status (128 + signal when killed) */
static inline int emutest_wait(pid_t p)
{
	int st;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
#endif
