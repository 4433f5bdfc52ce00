/* dotdot: climb out of the workspace with `..`: unlink and truncate the
 * outside files through a relative path from the workspace cwd made of
 * "../" components (and one with a detour through a workspace subdir). */
#include <limits.h>
#include "../esc.h"

/* "../" as many times as ws has components, then out (both absolute). */
static char *climb(const char *ws, const char *out, const char *leaf)
{
	static char rel[PATH_MAX];
	rel[0] = 0;
	for (const char *p = ws; *p; p++)
		if (*p == '/')
			strcat(rel, "../");
	strcat(rel, out + 1);
	strcat(rel, "/");
	strcat(rel, leaf);
	return rel;
}

int main(void)
{
	esc_start("dotdot");
	const char *ws = esc_env("ESC_WS"), *out = esc_env("ESC_OUT");
	char *victim = esc_out("victim");
	char *victim2 = esc_out("victim2");
	if (chdir(ws) < 0)
		return 3;
	mkdir("sub", 0755);
	char *rel = climb(ws, out, "victim");
	esc_log("unlink(%s) -> %d", rel, unlink(rel) == 0 ? 0 : -errno);
	char detour[PATH_MAX];
	snprintf(detour, sizeof(detour), "sub/../%s", climb(ws, out, "victim2"));
	esc_log("open(%s, O_TRUNC) -> %d", detour, open(detour, O_WRONLY | O_TRUNC));
	if (!esc_intact(victim2))
		return ESC_BREACH;
	return esc_verdict_victim(victim);
}
