/* tmpfile-link: make an unnamed file with O_TMPFILE in the workspace
 * (allowed), write it, then give it a name in the outside directory with
 * linkat(fd, "", AT_EMPTY_PATH) and with linkat("/proc/self/fd/N",
 * AT_SYMLINK_FOLLOW): a create outside that is a link, not an open. */
#include "../esc.h"

int main(void)
{
	esc_start("tmpfile-link");
	int fd = open(esc_env("ESC_WS"), O_TMPFILE | O_WRONLY, 0644);
	if (fd < 0) {
		esc_log("O_TMPFILE in the workspace: %s", strerror(errno));
		return ESC_HELD;
	}
	if (write(fd, "PLANTED\n", 8) != 8)
		return 3;
	int r = linkat(fd, "", AT_FDCWD, esc_out("planted"), AT_EMPTY_PATH);
	esc_log("linkat(fd, \"\", outside/planted, AT_EMPTY_PATH) -> %s", r == 0 ? "ok" : strerror(errno));
	char magic[64];
	snprintf(magic, sizeof(magic), "/proc/self/fd/%d", fd);
	r = linkat(AT_FDCWD, magic, AT_FDCWD, esc_out("planted2"), AT_SYMLINK_FOLLOW);
	esc_log("linkat(/proc/self/fd/N, outside/planted2, FOLLOW) -> %s", r == 0 ? "ok" : strerror(errno));
	struct stat st;
	if (lstat(esc_out("planted"), &st) == 0 || lstat(esc_out("planted2"), &st) == 0)
		return ESC_BREACH;
	return ESC_HELD;
}
