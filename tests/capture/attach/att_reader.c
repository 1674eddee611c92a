/*
 * att_reader.c - an attach target blocked in read(): prints "ready", reads
 * one line from stdin (a pipe the test holds), prints "got LINE" and exits
 * 3.  A read that fails (EINTR leaking out of an injection) prints the
 * error and exits 4.  With the argument "alarm", a SIGALRM (SA_RESTART)
 * every millisecond arrives all along; at the end it prints "alarms ok"
 * when its handler ran.
 *   att_reader [alarm]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

int main(int argc, char **argv)
{
	char buf[256];
	int alarm_mode = argc > 1 && !strcmp(argv[1], "alarm");
	if (alarm_mode) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alarm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
		setitimer(ITIMER_REAL, &it, NULL);
	}
	printf("ready\n");
	fflush(stdout);
	ssize_t n = read(0, buf, sizeof(buf) - 1);
	if (n < 0) {
		printf("read failed: %s\n", strerror(errno));
		return 4;
	}
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	printf("got %s\n", buf);
	if (alarm_mode) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };
		setitimer(ITIMER_REAL, &off, NULL);
		printf("alarms %s\n", alarms > 0 ? "ok" : "none");
	}
	return 3;
}
