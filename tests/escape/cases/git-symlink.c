/* git-symlink: replace the workspace's .git directory by a symlink to an
 * outside directory, then write .git/config through it (and create
 * .git/hooks-file). Tools trust .git; the write lands outside. */
#include "../esc.h"

int main(void)
{
	esc_start("git-symlink");
	char *config = esc_out("gitdir/config");
	if (chdir(esc_env("ESC_WS")) < 0)
		return 3;
	esc_log("rename .git -> .git.old -> %d", rename(".git", ".git.old") == 0 ? 0 : -errno);
	esc_log("symlink .git -> outside -> %d", symlink(esc_out("gitdir"), ".git") == 0 ? 0 : -errno);
	esc_log("write .git/config -> %d", esc_write_file(".git/config", "PWNED\n", O_TRUNC));
	esc_log("create .git/new -> %d", esc_write_file(".git/new", "PWNED\n", O_TRUNC));
	if (access(esc_out("gitdir/new"), F_OK) == 0) {
		esc_log("BREACH: created a file in the outside gitdir");
		return ESC_BREACH;
	}
	return esc_verdict_victim(config);
}
