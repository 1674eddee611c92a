/*
 * test_truncate_read.c - a mapped input file truncated by another process
 * while gtrace reads it (issue 11): it was SIGBUS, the process killed.
 * Now one line, "FILE: the file shrank while it was read ...", exit 1.
 * The guard itself (core/util/mapguard.c) is tested directly on a
 * mapping shrunk under it; the .gtrace reader and the XPlane importer
 * through the binary: this process watches /proc/PID/maps for the file
 * and truncates it the moment gtrace has it mapped.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../../core/util/mapguard.h"

Test(truncate_read, guard_reads_zeros_and_reports)
{
	char path[] = "/tmp/gtrace_mg_XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = 8 * pg;
	unsigned char *buf = malloc(len);
	memset(buf, 0xab, len);
	cr_assert_eq(write(fd, buf, len), (ssize_t)len);
	const volatile unsigned char *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	cr_assert_neq((void *)m, MAP_FAILED);
	int g = mapguard_begin((const void *)m, len);
	cr_assert_geq(g, 0);
	cr_assert_eq(m[pg * 5], 0xab);
	cr_assert_eq(ftruncate(fd, (off_t)pg), 0);        /* pages 1..7 are gone */
	cr_expect_eq(m[0], 0xab);                         /* still in the file */
	cr_expect_eq(m[pg * 5 + 17], 0);                  /* SIGBUS before: zeros now */
	cr_expect_eq(m[len - 1], 0);
	cr_expect_eq(mapguard_end(g), 1);
	/* a guard that saw nothing says so */
	int g2 = mapguard_begin((const void *)m, pg);
	cr_expect_eq(m[1], 0xab);
	cr_expect_eq(mapguard_end(g2), 0);
	munmap((void *)m, len);
	close(fd);
	unlink(path);
	free(buf);
}

static char out[4096];

/* gtrace stats FILE, truncated to 4 KB by us once gtrace has it mapped;
 * 1 when the truncation came while it was mapped.  *rc: the exit status
 * (128 + signal when killed); out: its stderr */
static int run_truncated(const char *file, int *rc)
{
	const char *b = getenv("GTRACE_BUILD");
	char exe[1024], errf[] = "/tmp/gtrace_mg_err_XXXXXX";
	snprintf(exe, sizeof(exe), "%s/tui/gtrace", b ? b : "build");
	int efd = mkstemp(errf);
	cr_assert(efd >= 0);
	pid_t pid = fork();
	if (pid == 0) {
		int dn = open("/dev/null", O_WRONLY);
		dup2(dn, 1);
		dup2(efd, 2);
		execl(exe, "gtrace", "stats", file, "--report", "kernels", (char *)NULL);
		_exit(127);
	}
	char maps[64];
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	int hit = 0, st;
	static char mb[1 << 16];
	while (waitpid(pid, &st, WNOHANG) == 0) {
		int mf = open(maps, O_RDONLY);
		ssize_t n = mf >= 0 ? read(mf, mb, sizeof(mb) - 1) : -1;
		if (mf >= 0)
			close(mf);
		mb[n > 0 ? n : 0] = 0;
		if (n > 0 && strstr(mb, file)) {
			cr_assert_eq(truncate(file, 4096), 0);
			hit = 1;
			waitpid(pid, &st, 0);
			break;
		}
	}
	*rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	ssize_t n = pread(efd, out, sizeof(out) - 1, 0);
	out[n > 0 ? n : 0] = 0;
	close(efd);
	unlink(errf);
	return hit;
}

static void copy_file(const char *from, const char *to)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	cr_assert_eq(system(cmd), 0);
}

/* up to tries runs until a truncation lands while the file is mapped and
 * is named; every run ends in one line or success, never a signal (on a
 * loaded machine many tries land after the read is over, hence many) */
static void attack(const char *orig, const char *work, int tries)
{
	int named = 0;
	for (int t = 0; t < tries && named < 1; t++) {
		copy_file(orig, work);
		int rc, hit = run_truncated(work, &rc);
		cr_expect(rc == 0 || rc == 1, "try %d: exit %d (killed?): %s", t, rc, out);
		if (rc == 1)
			cr_expect_eq(strchr(out, '\n'), strrchr(out, '\n'), "one line: %s", out);
		if (hit && strstr(out, "the file shrank while it was read")) {
			cr_expect(strstr(out, work), "%s", out);
			named++;
		}
	}
	cr_expect_geq(named, 1, "no truncation landed while the file was mapped in %d tries", tries);
}

Test(truncate_read, gtrace_capture, .timeout = 180)
{
	const char *b = getenv("GTRACE_BUILD");
	char cmd[1024], orig[] = "/tmp/gtrace_mg_o_XXXXXX.gtrace", work[] = "/tmp/gtrace_mg_w_XXXXXX.gtrace";
	close(mkstemps(orig, 7));
	close(mkstemps(work, 7));
	snprintf(cmd, sizeof(cmd), "%s/tui/gtrace sim --force -o '%s' --events 3M --gpus 2 2>/dev/null",
		 b ? b : "build", orig);
	cr_assert_eq(system(cmd), 0);
	attack(orig, work, 30);
	unlink(orig);
	unlink(work);
}

static size_t varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	do {
		p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

Test(truncate_read, xplane_profile, .timeout = 180)
{
	/* XSpace { planes { name "/host:CPU", lines { id 1, events x N } } }:
	 * each event { metadata_id 1, offset_ps, duration_ps } (24 MB) */
	enum { N = 2000000 };
	size_t cap = (size_t)N * 16 + 64, ll = 0;
	uint8_t *line = malloc(cap), ev[32];
	line[ll++] = 0x08;
	line[ll++] = 0x01;
	for (int i = 0; i < N; i++) {
		size_t e = 0;
		ev[e++] = 0x08;
		ev[e++] = 0x01;
		ev[e++] = 0x10;
		e += varint(ev + e, (uint64_t)i * 1000000);
		ev[e++] = 0x18;
		e += varint(ev + e, 500000);
		line[ll++] = 0x22;
		ll += varint(line + ll, e);
		memcpy(line + ll, ev, e);
		ll += e;
	}
	uint8_t hdr[64], lh[16];
	size_t h = 0, lhn = varint(lh, ll);
	hdr[h++] = 0x0a;
	h += varint(hdr + h, 11 + 1 + lhn + ll);
	hdr[h++] = 0x12;
	hdr[h++] = 9;
	memcpy(hdr + h, "/host:CPU", 9);
	h += 9;
	hdr[h++] = 0x1a;
	memcpy(hdr + h, lh, lhn);
	h += lhn;
	char orig[] = "/tmp/gtrace_mg_o_XXXXXX.xplane.pb", work[] = "/tmp/gtrace_mg_w_XXXXXX.xplane.pb";
	int fd = mkstemps(orig, 10);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, hdr, h), (ssize_t)h);
	cr_assert_eq(write(fd, line, ll), (ssize_t)ll);
	close(fd);
	free(line);
	close(mkstemps(work, 10));
	attack(orig, work, 30);
	unlink(orig);
	unlink(work);
}
