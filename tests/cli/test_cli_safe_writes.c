/*
 * test_cli_safe_writes.c - the files gtrace writes, attacked from another
 * uid (run as root: the attacker steps drop to `nobody`, as the capture
 * tests' other-uid test does).  In a world-writable sticky directory like
 * /tmp, the attacker plants a symlink to a root-only file, or pre-creates
 * the output; gtrace must neither write through the link nor into the
 * attacker's file, must not replace an existing file without --force, and
 * must leave no partial file when a write fails (RLIMIT_FSIZE stands in
 * for a full disk: the same write(2) failure path, EFBIG for ENOSPC).
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64], victim[64], input[128], errf[256];
static uid_t nob_uid;
static gid_t nob_gid;

static void setup(void)
{
	if (getuid() != 0)
		cr_skip_test("needs root to act as another user");
	struct passwd *pw = getpwnam("nobody");
	if (!pw)
		cr_skip_test("no user 'nobody'");
	nob_uid = pw->pw_uid;
	nob_gid = pw->pw_gid;
	snprintf(dir, sizeof(dir), "/tmp/gtrace-sw-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	chmod(dir, 01777);              /* like /tmp: anyone may create, sticky */
	snprintf(victim, sizeof(victim), "/tmp/gtrace-sw-victim-XXXXXX");
	int fd = mkstemp(victim);       /* root's, mode 0600 */
	cr_assert_eq(write(fd, "SECRET", 6), 6);
	close(fd);
	snprintf(errf, sizeof(errf), "%s.err", dir);
}

static void teardown(void)
{
	if (!dir[0])
		return;
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s' '%s'", dir, victim, errf);
	if (system(cmd)) {
	}
}

TestSuite(safe_writes, .init = setup, .fini = teardown);

/* run gtrace with args (NULL-terminated after "gtrace"); stderr to errf;
 * fsize > 0 limits the file size (SIGXFSZ ignored: writes fail EFBIG) */
static int gtrace_run(long fsize, char *const *args)
{
	char exe[1024];
	snprintf(exe, sizeof(exe), "%s/tui/gtrace", getenv("GTRACE_BUILD"));
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 2);
		int dn = open("/dev/null", O_RDWR);
		dup2(dn, 0);
		dup2(dn, 1);
		if (fsize > 0) {
			signal(SIGXFSZ, SIG_IGN);
			struct rlimit rl = { (rlim_t)fsize, (rlim_t)fsize };
			setrlimit(RLIMIT_FSIZE, &rl);
		}
		execv(exe, args);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *slurp(const char *path)
{
	static char buf[4096];
	buf[0] = 0;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return buf;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
	return buf;
}

/* as nobody: symlink at path -> target, or (target NULL) a file of its own */
static void attacker_plants(const char *path, const char *target)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (setgid(nob_gid) < 0 || setuid(nob_uid) < 0)
			_exit(5);
		if (target)
			_exit(symlink(target, path) < 0 ? 6 : 0);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
		_exit(fd < 0 || write(fd, "ATTACKER", 8) != 8 ? 7 : 0);
	}
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "attacker could not plant %s", path);
}

static void make_input(void)
{
	snprintf(input, sizeof(input), "%s/in.gtrace", dir);
	char *a[] = { "gtrace", "sim", "-o", input, "--gpus", "1", "--steps", "3", NULL };
	cr_assert_eq(gtrace_run(0, a), 0, "sim: %s", slurp(errf));
}

static void assert_victim_intact(void)
{
	cr_assert_str_eq(slurp(victim), "SECRET", "gtrace wrote through the attacker's symlink");
	struct stat st;
	cr_assert_eq(stat(victim, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600);
}

/* path is now root's own regular file, not the attacker's link or inode */
static void assert_ours(const char *path, ino_t not_ino)
{
	struct stat st;
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert(S_ISREG(st.st_mode), "%s is not a regular file", path);
	cr_assert_eq(st.st_uid, 0);
	cr_assert_neq(st.st_ino, not_ino, "written into the attacker's file");
	cr_assert_eq(st.st_mode & 0022, 0, "group/world writable output");
}

Test(safe_writes, export_symlink_refused_then_replaced)
{
	make_input();
	char out[128];
	snprintf(out, sizeof(out), "%s/out.json", dir);
	attacker_plants(out, victim);
	char *a[] = { "gtrace", "export", input, "-o", out, NULL };
	cr_assert_eq(gtrace_run(0, a), 1);
	cr_assert(strstr(slurp(errf), "exists; not replaced without --force"), "%s", slurp(errf));
	assert_victim_intact();
	char *f[] = { "gtrace", "export", input, "-o", out, "--force", NULL };
	cr_assert_eq(gtrace_run(0, f), 0, "%s", slurp(errf));
	assert_victim_intact();
	assert_ours(out, 0);
	cr_assert_eq(slurp(out)[0], '{');
}

Test(safe_writes, export_precreated_file_not_written_into)
{
	make_input();
	char out[128];
	snprintf(out, sizeof(out), "%s/out.json.gz", dir);
	attacker_plants(out, NULL);
	struct stat st;
	cr_assert_eq(stat(out, &st), 0);
	int keep = open(out, O_RDONLY);   /* what the attacker can still read */
	char *a[] = { "gtrace", "export", input, "-o", out, NULL };
	cr_assert_eq(gtrace_run(0, a), 1);
	cr_assert_str_eq(slurp(out), "ATTACKER");
	char *f[] = { "gtrace", "export", input, "-o", out, "--force", NULL };
	cr_assert_eq(gtrace_run(0, f), 0, "%s", slurp(errf));
	assert_ours(out, st.st_ino);
	char b[16] = "";
	cr_assert_eq(pread(keep, b, 8, 0), 8);
	cr_assert_eq(memcmp(b, "ATTACKER", 8), 0, "the attacker's file got the capture");
	close(keep);
}

Test(safe_writes, record_symlink_refused_then_replaced, .timeout = 60)
{
	char out[128];
	snprintf(out, sizeof(out), "%s/rec.gtrace", dir);
	attacker_plants(out, victim);
	char *a[] = { "gtrace", "record", "-q", "-o", out, "--", "/bin/true", NULL };
	cr_assert_eq(gtrace_run(0, a), 1);
	cr_assert(strstr(slurp(errf), "exists; not replaced without --force"), "%s", slurp(errf));
	assert_victim_intact();
	char *f[] = { "gtrace", "record", "-q", "--force", "-o", out, "--", "/bin/true", NULL };
	cr_assert_eq(gtrace_run(0, f), 0, "%s", slurp(errf));
	assert_victim_intact();
	assert_ours(out, 0);
}

/* sim refuses an existing name like the others; with --force it replaces
 * the name, never the link's target */
Test(safe_writes, sim_symlink_refused_then_replaced)
{
	char out[128];
	snprintf(out, sizeof(out), "%s/sim.gtrace", dir);
	attacker_plants(out, victim);
	char *a[] = { "gtrace", "sim", "-o", out, "--gpus", "1", "--steps", "2", NULL };
	cr_assert_eq(gtrace_run(0, a), 1);
	cr_assert(strstr(slurp(errf), "exists; not replaced without --force"), "%s", slurp(errf));
	assert_victim_intact();
	char *f[] = { "gtrace", "sim", "-o", out, "--gpus", "1", "--steps", "2", "--force", NULL };
	cr_assert_eq(gtrace_run(0, f), 0, "%s", slurp(errf));
	assert_victim_intact();
	assert_ours(out, 0);
}

/* diff -o DIR and stats -o DIR: each table file through the safe writer */
Test(safe_writes, diff_and_stats_dir_symlink_refused_then_replaced)
{
	make_input();
	char out[128], file[192];
	snprintf(out, sizeof(out), "%s/tables", dir);
	cr_assert_eq(mkdir(out, 0755), 0);
	chmod(out, 01777);
	snprintf(file, sizeof(file), "%s/diff_breakdown.csv", out);
	attacker_plants(file, victim);
	char *a[] = { "gtrace", "diff", input, input, "--format", "csv", "-o", out, NULL };
	cr_assert_eq(gtrace_run(0, a), 1);
	cr_assert(strstr(slurp(errf), "exists; not replaced without --force"), "%s", slurp(errf));
	assert_victim_intact();
	char *f[] = { "gtrace", "diff", input, input, "--format", "csv", "-o", out, "--force", NULL };
	cr_assert_eq(gtrace_run(0, f), 0, "%s", slurp(errf));
	assert_victim_intact();
	assert_ours(file, 0);
	snprintf(file, sizeof(file), "%s/kernels.csv", out);
	attacker_plants(file, NULL);
	struct stat st;
	cr_assert_eq(stat(file, &st), 0);
	char *s1[] = { "gtrace", "stats", input, "--report", "kernels", "--format", "csv", "-o", out, NULL };
	cr_assert_eq(gtrace_run(0, s1), 1);
	cr_assert_str_eq(slurp(file), "ATTACKER");
	char *s2[] = { "gtrace", "stats", input, "--report", "kernels", "--format", "csv", "-o", out,
		       "--force", NULL };
	cr_assert_eq(gtrace_run(0, s2), 0, "%s", slurp(errf));
	assert_ours(file, st.st_ino);
	/* a directory link another user planted is not followed */
	char ln[128];
	snprintf(ln, sizeof(ln), "%s/linkdir", dir);
	attacker_plants(ln, "/tmp");
	char *s3[] = { "gtrace", "stats", input, "--report", "kernels", "--format", "csv", "-o", ln, NULL };
	cr_assert_eq(gtrace_run(0, s3), 1);
	cr_assert(strstr(slurp(errf), "symbolic link of another user"), "%s", slurp(errf));
}

/* no file, and no temporary file, is left by a failed write */
static void assert_nothing_left(const char *name)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "ls -A '%s' | grep -q '%s'", dir, name);
	cr_assert_neq(system(cmd), 0, "a partial %s (or its temporary file) remains", name);
}

Test(safe_writes, failed_writes_leave_no_file, .timeout = 60)
{
	make_input();
	char out[128];
	snprintf(out, sizeof(out), "%s/big.json", dir);
	char *a[] = { "gtrace", "export", input, "-o", out, NULL };
	cr_assert_eq(gtrace_run(8192, a), 1);
	cr_assert(strstr(slurp(errf), "File too large"), "%s", slurp(errf));
	assert_nothing_left("big.json");
	/* .gz output names the system's error too (was "Input/output error") */
	snprintf(out, sizeof(out), "%s/big.json.gz", dir);
	char *g[] = { "gtrace", "export", input, "-o", out, "--gzip-level", "1", NULL };
	cr_assert_eq(gtrace_run(1024, g), 1);
	cr_assert(strstr(slurp(errf), "File too large"), "%s", slurp(errf));
	assert_nothing_left("big.json.gz");
	/* sim -o left a 0-byte file */
	snprintf(out, sizeof(out), "%s/s.gtrace", dir);
	char *s[] = { "gtrace", "sim", "-o", out, "--gpus", "2", "--steps", "50", NULL };
	cr_assert_eq(gtrace_run(4096, s), 1);
	assert_nothing_left("s.gtrace");
}
