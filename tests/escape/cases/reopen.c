/* reopen MODE: open an outside file read-only (MODE rdonly) or with O_PATH
 * (MODE opath) — neither can write, so neither traps — then reopen it
 * through /proc/self/fd/N (and /proc/PID/fd/N) with O_WRONLY|O_TRUNC and
 * write. The reopen names a /proc magic link, not the outside path. */
#include "../esc.h"

static int reopen_write(const char *magic)
{
	int fd = open(magic, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	int r = write(fd, "PWNED\n", 6) == 6 ? 0 : -errno;
	close(fd);
	return r;
}

int main(int argc, char **argv)
{
	bool opath = argc > 1 && strcmp(argv[1], "opath") == 0;
	esc_start(opath ? "reopen-opath" : "reopen-rdonly");
	char *victim = esc_out("victim");
	char *victim2 = esc_out("victim2");
	int fd = open(victim, opath ? O_PATH : O_RDONLY);
	int fd2 = open(victim2, opath ? O_PATH : O_RDONLY);
	if (fd < 0 || fd2 < 0)
		return 3;
	char magic[64];
	snprintf(magic, sizeof(magic), "/proc/self/fd/%d", fd);
	esc_log("reopen %s O_WRONLY -> %d", magic, reopen_write(magic));
	snprintf(magic, sizeof(magic), "/proc/%d/fd/%d", getpid(), fd2);
	esc_log("reopen %s O_WRONLY -> %d", magic, reopen_write(magic));
	if (!esc_intact(victim2))
		return ESC_BREACH;
	return esc_verdict_victim(victim);
}
