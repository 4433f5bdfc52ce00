/* fd-ioctl: change an outside file's inode flags through a read-only fd
 * (the open does not trap): FS_IOC_SETFLAGS with FS_NODUMP_FL (also under
 * its 32-bit number FS_IOC32_SETFLAGS), and FS_IOC_FSSETXATTR with the same
 * flag. Only the owner or CAP_FOWNER is
 * needed, not write access; the same call could set FS_IMMUTABLE_FL or
 * FS_APPEND_FL (not used here: they would make the arena's own cleanup
 * fail). Breach when the file's flags change. */
#include <linux/fs.h>
#include <sys/ioctl.h>
#include "../esc.h"

static long flags_of(int fd)
{
	int f = 0;
	return ioctl(fd, FS_IOC_GETFLAGS, &f) < 0 ? -errno : f;
}

int main(void)
{
	esc_start("fd-ioctl");
	int fd = open(esc_out("victim"), O_RDONLY);
	if (fd < 0)
		return 3;
	long before = flags_of(fd);
	if (before < 0) {
		esc_log("n/a: FS_IOC_GETFLAGS: %s", strerror((int)-before));
		return ESC_HELD;
	}
	int f = (int)before | FS_NODUMP_FL;
	esc_log("FS_IOC32_SETFLAGS(+nodump) -> %s",
	        ioctl(fd, _IOW('f', 2, int), &f) == 0 ? "ok" : strerror(errno));
	esc_log("FS_IOC_SETFLAGS(+nodump) -> %s", ioctl(fd, FS_IOC_SETFLAGS, &f) == 0 ? "ok" : strerror(errno));
	struct fsxattr fsx;
	if (ioctl(fd, FS_IOC_FSGETXATTR, &fsx) == 0) {
		fsx.fsx_xflags |= FS_XFLAG_NODUMP;
		esc_log("FS_IOC_FSSETXATTR(+nodump) -> %s",
		        ioctl(fd, FS_IOC_FSSETXATTR, &fsx) == 0 ? "ok" : strerror(errno));
	}
	long after = flags_of(fd);
	esc_log("flags 0x%lx -> 0x%lx", before, after);
	if (after != before) {
		esc_log("BREACH: changed an outside file's inode flags through a read-only fd");
		return ESC_BREACH;
	}
	return ESC_HELD;
}
