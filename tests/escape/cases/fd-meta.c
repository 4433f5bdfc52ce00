/* fd-meta: on a read-only fd of an outside file (the open does not trap),
 * change its metadata: fchmod(0777), fchown(1234:1234), fsetxattr
 * user.esc, futimens. None of these needs write access to the file. The
 * proof is the mode/owner/mtime fingerprint the runner takes. */
#include <sys/xattr.h>
#include "../esc.h"

int main(void)
{
	esc_start("fd-meta");
	char *victim = esc_out("victim");
	int fd = open(victim, O_RDONLY);
	if (fd < 0)
		return 3;
	struct stat before, after;
	fstat(fd, &before);
	int changed = 0;
	if (fchmod(fd, 0777) == 0)
		changed++;
	else
		esc_log("fchmod: %s", strerror(errno));
	if (fchown(fd, 1234, 1234) == 0)
		changed++;
	else
		esc_log("fchown: %s", strerror(errno));
	if (fsetxattr(fd, "user.esc", "x", 1, 0) == 0)
		changed++;
	else
		esc_log("fsetxattr: %s", strerror(errno));
	struct timespec ts[2] = { { 1, 0 }, { 1, 0 } };
	if (futimens(fd, ts) == 0)
		changed++;
	else
		esc_log("futimens: %s", strerror(errno));
	fstat(fd, &after);
	esc_log("%d of 4 metadata changes went through", changed);
	bool same = before.st_mode == after.st_mode && before.st_uid == after.st_uid &&
	            before.st_gid == after.st_gid && before.st_mtim.tv_sec == after.st_mtim.tv_sec;
	return changed == 0 && same ? ESC_HELD : ESC_BREACH;
}
