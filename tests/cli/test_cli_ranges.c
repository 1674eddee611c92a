/*
 * test_cli_ranges.c - every number on the command line is range-checked:
 * values that parsed but made no sense ran unthrottled (--rate 1e-300),
 * ended at once (--seconds 1e308: undefined double -> int64) or were
 * taken for an unknown option (run --record without a value).  Each must
 * be a usage error (exit 2) with one line naming the option, at once.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* run gtrace argv (killed after 5 s); exit status, stderr into err */
static int run(char *const *argv, char *err, size_t errlen)
{
	char exe[1024], ef[] = "/tmp/gtrace-ranges-XXXXXX";
	snprintf(exe, sizeof(exe), "%s/tui/gtrace", getenv("GTRACE_BUILD"));
	int fd = mkstemp(ef);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd, 2);
		int dn = open("/dev/null", O_RDWR);
		dup2(dn, 0);
		dup2(dn, 1);
		alarm(5);
		execv(exe, argv);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	ssize_t n = pread(fd, err, errlen - 1, 0);
	err[n > 0 ? n : 0] = 0;
	close(fd);
	unlink(ef);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void usage_error(char *const *argv, const char *names)
{
	char err[1024];
	int rc = run(argv, err, sizeof(err));
	cr_assert_eq(rc, 2, "gtrace %s %s %s: exit %d (%s)", argv[1], argv[2],
		     argv[3] ? argv[3] : "", rc, err);
	cr_assert(strstr(err, names), "%s", err);
	cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
}

Test(cli_ranges, sim_live_numbers)
{
	char *rate[] = { "gtrace", "sim", "--live", "--rate", "1e-300", NULL };
	usage_error(rate, "--rate");
	char *rate_hi[] = { "gtrace", "sim", "--live", "--rate", "1e300", NULL };
	usage_error(rate_hi, "--rate");
	char *secs[] = { "gtrace", "sim", "--live", "--seconds", "1e308", NULL };
	usage_error(secs, "--seconds");
	char *steps[] = { "gtrace", "sim", "--live", "--steps", "1e300", NULL };
	usage_error(steps, "--steps");
	char *seed[] = { "gtrace", "sim", "--live", "--seed", "1e300", NULL };
	usage_error(seed, "--seed");
	char *linger[] = { "gtrace", "sim", "--live", "--linger", "inf", NULL };
	usage_error(linger, "--linger");
}

Test(cli_ranges, record_and_run)
{
	char *dur[] = { "gtrace", "record", "-o", "/tmp/gtrace-ranges-x.gtrace", "--duration",
			"1e308", "--pid", "1", NULL };
	usage_error(dur, "--duration");
	char *ring[] = { "gtrace", "record", "-o", "/tmp/gtrace-ranges-x.gtrace", "--ring-size",
			 "99999999999999999999", "--pid", "1", NULL };
	usage_error(ring, "--ring-size");
	char *dur_ring[] = { "gtrace", "record", "-o", "/tmp/gtrace-ranges-x.gtrace", "--ring",
			     "1e308s", "--pid", "1", NULL };
	usage_error(dur_ring, "--ring");
	char *mem[] = { "gtrace", "run", "--memory", "1e30G", "--", "true", NULL };
	usage_error(mem, "--memory");
	char *rec[] = { "gtrace", "run", "--record", NULL };
	usage_error(rec, "--record needs a file name");
	char *rec2[] = { "gtrace", "run", "--record", "--", "true", NULL };
	usage_error(rec2, "--record needs a file name");
}
