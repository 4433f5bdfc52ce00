/* rename-roundtrip: rename an outside file into the workspace, rewrite it
 * there (a workspace write), and rename it back out. Either leg alone
 * changes the outside directory. */
#include "../esc.h"

int main(void)
{
	esc_start("rename-roundtrip");
	char *victim = esc_out("victim");
	if (chdir(esc_env("ESC_WS")) < 0)
		return 3;
	esc_log("rename(outside -> ws/v) -> %d", rename(victim, "v") == 0 ? 0 : -errno);
	esc_log("rewrite ws/v -> %d", esc_write_file("v", "PWNED\n", O_TRUNC));
	esc_log("rename(ws/v -> outside) -> %d", rename("v", victim) == 0 ? 0 : -errno);
	return esc_verdict_victim(victim);
}
