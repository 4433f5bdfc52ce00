/* leaked-fds: look for file descriptors the tracee did not open and did
 * not get from the runner (which gives only 0, 1 and 2): txguard's own
 * files leaked without O_CLOEXEC, e.g. its journal, its --log or --report
 * file, its signalfd. Write garbage to every regular file among them that
 * is open for writing. Breach when any such fd is writable. Natively the
 * runner leaks no writable file, so there is nothing to attack (n/a). */
#include <dirent.h>
#include <limits.h>
#include "../esc.h"

int main(void)
{
	esc_start("leaked-fds");
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return 3;
	int mine = dirfd(d), leaked = 0, writable = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] == '.' || fd <= 2 || fd == mine)
			continue;
		char link[64], target[PATH_MAX] = "";
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		int fl = fcntl(fd, F_GETFL);
		struct stat st;
		leaked++;
		esc_log("fd %d -> %s (flags 0%o)", fd, target, fl);
		if (fl >= 0 && (fl & O_ACCMODE) != O_RDONLY && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			writable++;
			if (pwrite(fd, "GARBAGE-FROM-A-TRACEE\n", 22, st.st_size) == 22)
				esc_log("BREACH: wrote into the leaked %s", target);
		}
	}
	closedir(d);
	if (writable == 0)
		esc_log("n/a: no writable regular file beyond fds 0-2 to attack");
	esc_log("%d leaked fds, %d writable regular files", leaked, writable);
	return writable ? ESC_BREACH : ESC_HELD;
}
