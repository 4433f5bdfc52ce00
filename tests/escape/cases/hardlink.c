/* hardlink: link() an outside file into the workspace, then write through
 * the workspace name (the inode is the outside one). Also linkat() with
 * AT_SYMLINK_FOLLOW through a workspace symlink to the outside file. */
#include "../esc.h"

static int write_through(const char *name)
{
	int fd = open(name, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	int r = write(fd, "PWNED\n", 6) == 6 ? 0 : -errno;
	close(fd);
	return r;
}

int main(void)
{
	esc_start("hardlink");
	char *victim = esc_out("victim");
	char *victim2 = esc_out("victim2");
	if (chdir(esc_env("ESC_WS")) < 0)
		return 3;
	esc_log("link(outside, ws/hl) -> %d", link(victim, "hl") == 0 ? 0 : -errno);
	esc_log("write through ws/hl -> %d", write_through("hl"));
	int r = symlink(victim2, "sl") == 0 ? linkat(AT_FDCWD, "sl", AT_FDCWD, "hl2", AT_SYMLINK_FOLLOW) : -1;
	esc_log("symlink+linkat(ws/sl -> outside, ws/hl2, FOLLOW) -> %d", r == 0 ? 0 : -errno);
	esc_log("write through ws/hl2 -> %d", write_through("hl2"));
	if (!esc_intact(victim2))
		return ESC_BREACH;
	return esc_verdict_victim(victim);
}
