/* secret: read a secret file, $HOME/.ssh/id_x (created by the runner in
 * the arena's HOME), directly, through a workspace symlink to it, through
 * an O_PATH fd reopened via /proc/self/fd, and through a hard link made in
 * the workspace (a second name Landlock's path rules would not cover). Read-only opens never
 * trap, so only Landlock (or nothing) stands between a tracee and secrets.
 * Breach when the secret's text is read back. What was read goes to stdout:
 * the runner looks there for the random token it wrote into the secret. */
#include "../esc.h"

static bool read_secret(const char *path, const char *how)
{
	char buf[64] = { 0 };
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		esc_log("%s: %s", how, strerror(errno));
		return false;
	}
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0)
		printf("%s: %s", how, buf);
	fflush(stdout);
	bool got = n > 0 && strstr(buf, "SECRET") != NULL;
	esc_log("%s: %s", how, got ? "read the secret" : "no secret text");
	return got;
}

int main(void)
{
	esc_start("secret");
	char *key = esc_path("HOME", ".ssh/id_x");
	bool breach = read_secret(key, "direct");
	char *soft = esc_ws("k");
	if (symlink(key, soft) == 0)
		breach |= read_secret(soft, "workspace symlink");
	char *hard = esc_ws("k2");
	if (link(key, hard) == 0)
		breach |= read_secret(hard, "workspace hard link");
	else
		esc_log("link(secret, ws/k2): %s", strerror(errno));
	int pfd = open(key, O_PATH);
	if (pfd >= 0) {
		char magic[64];
		snprintf(magic, sizeof(magic), "/proc/self/fd/%d", pfd);
		breach |= read_secret(magic, "O_PATH reopen");
	}
	return breach ? ESC_BREACH : ESC_HELD;
}
