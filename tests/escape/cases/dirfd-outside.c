/* dirfd-outside: open the outside directory read-only (no trap), then use
 * it as the dirfd of unlinkat("victim") and openat("victim2",
 * O_WRONLY|O_TRUNC): relative names that never mention the outside path. */
#include "../esc.h"

int main(void)
{
	esc_start("dirfd-outside");
	char *victim = esc_out("victim");
	char *victim2 = esc_out("victim2");
	int dfd = open(esc_env("ESC_OUT"), O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return 3;
	esc_log("unlinkat(outdir, victim) -> %d", unlinkat(dfd, "victim", 0) == 0 ? 0 : -errno);
	esc_log("openat(outdir, victim2, O_TRUNC) -> %d", openat(dfd, "victim2", O_WRONLY | O_TRUNC));
	if (!esc_intact(victim2))
		return ESC_BREACH;
	return esc_verdict_victim(victim);
}
