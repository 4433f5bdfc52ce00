/* path-meta: change an outside file by path without writing its content:
 * chmod, chown, lchown, utimensat, setxattr, truncate, chmod through the
 * magic link /proc/self/fd/N of a read-only fd, mkfifo, and
 * openat2(O_WRONLY|O_TRUNC) and creat(), whose flags BPF cannot see
 * (openat2 keeps them in memory) or that imply them (creat). Landlock has
 * no right for mode, owner, times or xattrs: only the tracer holds those. */
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include "../esc.h"

static void try(const char *what, int r)
{
	esc_log("%s -> %s", what, r == 0 ? "ok" : strerror(errno));
}

int main(void)
{
	esc_start("path-meta");
	char *victim = esc_out("victim");
	char *victim2 = esc_out("victim2");
	char *config = esc_out("gitdir/config");
	struct stat before, after;
	if (stat(victim, &before) < 0)
		return 3;
	try("chmod 0777", chmod(victim, 0777));
	try("chown 1234:1234", chown(victim, 1234, 1234));
	try("lchown 1234:1234", lchown(victim, 1234, 1234));
	struct timespec ts[2] = { { 1, 0 }, { 1, 0 } };
	try("utimensat", utimensat(AT_FDCWD, victim, ts, 0));
	try("setxattr user.esc", setxattr(victim, "user.esc", "x", 1, 0));
	try("truncate victim2", truncate(victim2, 0));
	int rfd = open(victim, O_RDONLY);
	char magic[64];
	snprintf(magic, sizeof(magic), "/proc/self/fd/%d", rfd);
	try("chmod /proc/self/fd/N 0700", chmod(magic, 0700));
	try("mkfifo outside/fifo", mkfifo(esc_out("fifo"), 0644));
	struct open_how how = { .flags = O_WRONLY | O_TRUNC };
	long fd = syscall(__NR_openat2, AT_FDCWD, config, &how, sizeof(how));
	try("openat2(O_TRUNC) gitdir/config", fd >= 0 ? 0 : -1);
	fd = creat(esc_out("created"), 0644);
	try("creat outside/created", fd >= 0 ? 0 : -1);
	if (stat(victim, &after) < 0)
		return ESC_BREACH;
	bool same = before.st_mode == after.st_mode && before.st_uid == after.st_uid &&
	            before.st_gid == after.st_gid && before.st_mtim.tv_sec == after.st_mtim.tv_sec;
	struct stat st;
	if (!same || !esc_intact(victim2) || !esc_intact(config) || lstat(esc_out("created"), &st) == 0 ||
	    lstat(esc_out("fifo"), &st) == 0)
		return ESC_BREACH;
	return ESC_HELD;
}
