/*
 * att_reader.c - an attach target blocked in read(): prints "ready", reads
 * one line from stdin (a pipe the test holds), prints "got LINE" and exits
 * 3.  A read that fails (EINTR leaking out of an injection) prints the
 * error and exits 4.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char buf[256];
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
	return 3;
}
