/* restore-symlink: turn the rollback itself into the weapon. Change
 * workspace files under sub/ (their pre-images get journaled: sub/victim
 * rewritten, sub/other deleted), then remove sub/ and put a symlink
 * sub -> the outside directory in its place, and fail (exit 1). A restore
 * that writes the pre-images back "into sub/" without noticing that sub is
 * now a symlink writes them outside. The runner fingerprints the outside
 * directory after the rollback and checks that sub/ came back as a
 * directory with its original files. */
#include "../esc.h"

int main(void)
{
	esc_start("restore-symlink");
	if (esc_tracer_pid() == 0)
		esc_log("n/a: this attacks txguard's rollback; natively there is none");
	if (chdir(esc_env("ESC_WS")) < 0)
		return 3;
	esc_log("rewrite sub/victim -> %d", esc_write_file("sub/victim", "CHANGED\n", O_TRUNC));
	esc_log("unlink sub/other -> %d", unlink("sub/other") == 0 ? 0 : -errno);
	esc_log("unlink sub/victim -> %d", unlink("sub/victim") == 0 ? 0 : -errno);
	esc_log("rmdir sub -> %d", rmdir("sub") == 0 ? 0 : -errno);
	esc_log("symlink sub -> outside -> %d", symlink(esc_env("ESC_OUT"), "sub") == 0 ? 0 : -errno);
	/* A failing command: txguard must roll back. */
	return ESC_HELD;
}
