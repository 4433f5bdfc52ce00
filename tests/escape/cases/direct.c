/* direct: the baseline. Plain unlink of an outside file and a plain
 * open(O_WRONLY|O_TRUNC) of another. If this breaches, the battery policy
 * or the path rules are not in force at all, and every other "held" means
 * little. */
#include "../esc.h"

int main(void)
{
	esc_start("direct");
	char *victim = esc_out("victim");
	char *victim2 = esc_out("victim2");
	esc_log("unlink -> %d", unlink(victim) == 0 ? 0 : -errno);
	esc_log("open(O_TRUNC) -> %d", open(victim2, O_WRONLY | O_TRUNC));
	if (!esc_intact(victim2))
		return ESC_BREACH;
	return esc_verdict_victim(victim);
}
