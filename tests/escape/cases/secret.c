/* secret: read a secret file, $HOME/.ssh/id_x (created by the runner in
 * the arena's HOME), directly, through a workspace symlink to it, and
 * through an O_PATH fd reopened via /proc/self/fd. Read-only opens never
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
	char *link = esc_ws("k");
	if (symlink(key, link) == 0)
		breach |= read_secret(link, "workspace symlink");
	int pfd = open(key, O_PATH);
	if (pfd >= 0) {
		char magic[64];
		snprintf(magic, sizeof(magic), "/proc/self/fd/%d", pfd);
		breach |= read_secret(magic, "O_PATH reopen");
	}
	return breach ? ESC_BREACH : ESC_HELD;
}
