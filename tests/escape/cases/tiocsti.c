/* tiocsti: push characters into a terminal's input queue with TIOCSTI, and
 * try TIOCLINUX (console selection paste), on the controlling tty: a child
 * starts a session whose controlling tty is a pty it opens itself (TIOCSTI
 * on a tty that is not one's own needs CAP_SYS_ADMIN), and the case also
 * tries /dev/tty, the terminal txguard was started from, when there is one. Injected
 * input is typed into whatever reads the terminal after txguard returns.
 * Breach when an ioctl succeeds; on the own pty the injected line is read
 * back as proof ("#\n": the pty is in canonical mode). */
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "../esc.h"

static bool inject(int fd, const char *what)
{
	char c = '#', nl = '\n';
	if (ioctl(fd, TIOCSTI, &c) == 0) {
		ioctl(fd, TIOCSTI, &nl);
		esc_log("TIOCSTI on %s worked", what);
		return true;
	}
	esc_log("TIOCSTI on %s: %s", what, strerror(errno));
	/* The kernel takes cmd as an unsigned int: garbage in the upper half of
	 * the register must not walk past a filter comparing all 64 bits. */
	if (syscall(__NR_ioctl, fd, (unsigned long)TIOCSTI | (1UL << 32), &c) == 0) {
		ioctl(fd, TIOCSTI, &nl);
		esc_log("TIOCSTI with high bits set on %s worked", what);
		return true;
	}
	esc_log("TIOCSTI with high bits set on %s: %s", what, strerror(errno));
	char sel[2] = { 2 /* TIOCL_SETSEL */, 0 };
	if (ioctl(fd, TIOCLINUX, sel) == 0) {
		esc_log("TIOCLINUX on %s worked", what);
		return true;
	}
	esc_log("TIOCLINUX on %s: %s", what, strerror(errno));
	return false;
}

int main(void)
{
	esc_start("tiocsti");
	bool breach = false;
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0)
		return 3;
	/* /dev/tty first: after setsid() the child has another one. */
	int tty = open("/dev/tty", O_RDWR | O_NOCTTY);
	pid_t pid = fork();
	if (pid == 0) {
		int s = setsid() < 0 ? -1 : open(ptsname(m), O_RDWR);
		if (s < 0 || !inject(s, "own controlling pty"))
			_exit(1);
		char c = 0;
		struct pollfd p = { s, POLLIN, 0 };
		if (poll(&p, 1, 500) == 1 && read(s, &c, 1) == 1 && c == '#')
			esc_log("read the injected input back from the pty");
		_exit(0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	breach = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (tty >= 0 && inject(tty, "/dev/tty"))
		breach = true;
	return breach ? ESC_BREACH : ESC_HELD;
}
