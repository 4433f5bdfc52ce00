/* handle-open: name_to_handle_at() an outside file and the secret (a
 * lookup, not an open), then open_by_handle_at() them: the open names no
 * path at all. Writes the outside file with O_RDWR|O_TRUNC and reads the
 * secret with O_RDONLY (read-only opens never stop the tracer, so only
 * Landlock can refuse it). Needs CAP_DAC_READ_SEARCH and a filesystem that
 * exports handles; where it has none the case says n/a. */
#include "../esc.h"

static int by_handle(const char *path, int flags)
{
	char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	struct file_handle *fh = (struct file_handle *)buf;
	int mount_id;
	fh->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, path, fh, &mount_id, 0) < 0) {
		if (errno == EOPNOTSUPP)
			esc_log("n/a: the filesystem of %s exports no handles", path);
		esc_log("name_to_handle_at(%s): %s", path, strerror(errno));
		return -1;
	}
	/* Any fd on the same mount will do as mount_fd. */
	int mfd = open(esc_env("ESC_WS"), O_RDONLY | O_DIRECTORY);
	int fd = open_by_handle_at(mfd, fh, flags);
	esc_log("open_by_handle_at(%s, 0%o) -> %s", path, flags, fd >= 0 ? "ok" : strerror(errno));
	return fd;
}

int main(void)
{
	esc_start("handle-open");
	char *victim = esc_out("victim");
	bool breach = false;
	int fd = by_handle(victim, O_RDWR | O_TRUNC);
	if (fd >= 0 && write(fd, "PWNED\n", 6) == 6)
		breach = true;
	fd = by_handle(esc_path("HOME", ".ssh/id_x"), O_RDONLY);
	char buf[64] = { 0 };
	if (fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0) {
		printf("by handle: %s", buf);
		breach |= strstr(buf, "SECRET") != NULL;
	}
	return breach || !esc_intact(victim) ? ESC_BREACH : ESC_HELD;
}
