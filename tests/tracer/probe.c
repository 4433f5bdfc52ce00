/* probe — perform exactly one syscall and report its result.
 *
 *   probe SYSCALL ARGS...
 *
 * Prints "ok RET" and exits 0, or prints "err ENAME" and exits with the
 * errno (all below 126). The calls go through syscall(2), not libc
 * wrappers, so that the number the filter sees is the one named (glibc's
 * open() is really openat). Idea from bubblewrap's tests/try-syscall.c.
 *
 * Argument forms: DIRFD is "." (AT_FDCWD) or a directory to open; FLAGS is
 * letters r w W(rdwr) c(creat) t(trunc) x(excl) n(nofollow) or a number.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

static char **A;
static int N;

static const char *arg(int i)
{
	if (i >= N) {
		fprintf(stderr, "probe: missing argument %d\n", i + 1);
		exit(125);
	}
	return A[i];
}

static long num(int i)
{
	return strtol(arg(i), NULL, 0);
}

static long oflags(int i)
{
	const char *s = arg(i);
	long f = 0;
	if (s[0] >= '0' && s[0] <= '9')
		return strtol(s, NULL, 0);
	for (; *s; s++) {
		switch (*s) {
		case 'r': break;
		case 'w': f |= O_WRONLY; break;
		case 'W': f |= O_RDWR; break;
		case 'c': f |= O_CREAT; break;
		case 't': f |= O_TRUNC; break;
		case 'x': f |= O_EXCL; break;
		case 'n': f |= O_NOFOLLOW; break;
		default: fprintf(stderr, "probe: bad flag %c\n", *s); exit(125);
		}
	}
	return f;
}

static long dirfd_of(int i)
{
	const char *s = arg(i);
	if (strcmp(s, ".") == 0)
		return AT_FDCWD;
	int fd = open(s, O_PATH | O_DIRECTORY);
	if (fd < 0) {
		perror(s);
		exit(125);
	}
	return fd;
}

static long fd_of(int i)
{
	int fd = open(arg(i), O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		perror(arg(i));
		exit(125);
	}
	return fd;
}

static long sys_open(void) { return syscall(SYS_open, arg(0), oflags(1), 0644); }
static long sys_openat(void) { return syscall(SYS_openat, dirfd_of(0), arg(1), oflags(2), 0644); }
static long sys_creat(void) { return syscall(SYS_creat, arg(0), 0644); }
static long sys_openat2(void)
{
	struct open_how how = { .flags = (uint64_t)oflags(2), .mode = (oflags(2) & O_CREAT) ? 0644 : 0 };
	return syscall(SYS_openat2, dirfd_of(0), arg(1), &how, sizeof(how));
}
static long sys_unlink(void) { return syscall(SYS_unlink, arg(0)); }
static long sys_unlinkat(void) { return syscall(SYS_unlinkat, dirfd_of(0), arg(1), N > 2 ? AT_REMOVEDIR : 0); }
static long sys_rmdir(void) { return syscall(SYS_rmdir, arg(0)); }
static long sys_rename(void) { return syscall(SYS_rename, arg(0), arg(1)); }
static long sys_renameat(void) { return syscall(SYS_renameat, dirfd_of(0), arg(1), dirfd_of(2), arg(3)); }
static long sys_renameat2(void) { return syscall(SYS_renameat2, dirfd_of(0), arg(1), dirfd_of(2), arg(3), 0); }
static long sys_link(void) { return syscall(SYS_link, arg(0), arg(1)); }
static long sys_linkat(void) { return syscall(SYS_linkat, dirfd_of(0), arg(1), dirfd_of(2), arg(3), 0); }
static long sys_symlink(void) { return syscall(SYS_symlink, arg(0), arg(1)); }
static long sys_symlinkat(void) { return syscall(SYS_symlinkat, arg(0), dirfd_of(1), arg(2)); }
static long sys_mkdir(void) { return syscall(SYS_mkdir, arg(0), 0755); }
static long sys_mkdirat(void) { return syscall(SYS_mkdirat, dirfd_of(0), arg(1), 0755); }
static long sys_mknod(void) { return syscall(SYS_mknod, arg(0), S_IFIFO | 0644, 0); }
static long sys_mknodat(void) { return syscall(SYS_mknodat, dirfd_of(0), arg(1), S_IFIFO | 0644, 0); }
static long sys_truncate(void) { return syscall(SYS_truncate, arg(0), 0); }
static long sys_chmod(void) { return syscall(SYS_chmod, arg(0), 0600); }
static long sys_fchmod(void) { return syscall(SYS_fchmod, fd_of(0), 0600); }
static long sys_fchmodat(void) { return syscall(SYS_fchmodat, dirfd_of(0), arg(1), 0600); }
static long sys_fchmodat2(void) { return syscall(SYS_fchmodat2, dirfd_of(0), arg(1), 0600, 0); }
static long sys_chown(void) { return syscall(SYS_chown, arg(0), -1, -1); }
static long sys_lchown(void) { return syscall(SYS_lchown, arg(0), -1, -1); }
static long sys_fchown(void) { return syscall(SYS_fchown, fd_of(0), -1, -1); }
static long sys_fchownat(void) { return syscall(SYS_fchownat, dirfd_of(0), arg(1), -1, -1, 0); }
static long sys_utime(void) { return syscall(SYS_utime, arg(0), NULL); }
static long sys_utimes(void) { return syscall(SYS_utimes, arg(0), NULL); }
static long sys_futimesat(void) { return syscall(SYS_futimesat, dirfd_of(0), arg(1), NULL); }
static long sys_utimensat(void) { return syscall(SYS_utimensat, dirfd_of(0), arg(1), NULL, 0); }
static long sys_futimens(void) { return syscall(SYS_utimensat, fd_of(0), NULL, NULL, 0); }
static long sys_setxattr(void) { return syscall(SYS_setxattr, arg(0), "user.tg", "v", 1, 0); }
static long sys_lsetxattr(void) { return syscall(SYS_lsetxattr, arg(0), "user.tg", "v", 1, 0); }
static long sys_fsetxattr(void) { return syscall(SYS_fsetxattr, fd_of(0), "user.tg", "v", 1, 0); }
static long sys_removexattr(void) { return syscall(SYS_removexattr, arg(0), "user.tg"); }
static long sys_lremovexattr(void) { return syscall(SYS_lremovexattr, arg(0), "user.tg"); }
static long sys_fremovexattr(void) { return syscall(SYS_fremovexattr, fd_of(0), "user.tg"); }

#ifndef SYS_setxattrat
#define SYS_setxattrat 463
#endif
#ifndef SYS_removexattrat
#define SYS_removexattrat 466
#endif
static long sys_setxattrat(void)
{
	struct { uint64_t value; uint32_t size, flags; } a = { (uint64_t)(uintptr_t)"v", 1, 0 };
	return syscall(SYS_setxattrat, dirfd_of(0), arg(1), 0, "user.tg", &a, sizeof(a));
}
static long sys_removexattrat(void) { return syscall(SYS_removexattrat, dirfd_of(0), arg(1), 0, "user.tg"); }

static long sys_execve(void)
{
	char *argv[] = { (char *)arg(0), "probe-arg", NULL };
	return syscall(SYS_execve, arg(0), argv, environ);
}
static long sys_execveat(void)
{
	char *argv[] = { (char *)arg(1), NULL };
	return syscall(SYS_execveat, dirfd_of(0), arg(1), argv, environ, 0);
}
/* execveat(memfd, "", AT_EMPTY_PATH): a program with no name on disk. */
static long sys_execveat_memfd(void)
{
	int src = open(arg(0), O_RDONLY);
	int mfd = (int)syscall(SYS_memfd_create, "probe", 0);
	char buf[65536];
	ssize_t n;
	if (src < 0 || mfd < 0)
		return -1;
	while ((n = read(src, buf, sizeof(buf))) > 0)
		if (write(mfd, buf, (size_t)n) != n)
			return -1;
	char *argv[] = { "memfd-prog", NULL };
	return syscall(SYS_execveat, mfd, "", argv, environ, AT_EMPTY_PATH);
}

static long inet_socket(int type, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)num(1));
	inet_pton(AF_INET, arg(0), &sa->sin_addr);
	return socket(AF_INET, type, 0);
}
static long sys_connect(void)
{
	struct sockaddr_in sa;
	long fd = inet_socket(SOCK_DGRAM, &sa);
	return syscall(SYS_connect, fd, &sa, sizeof(sa));
}
static long sys_sendto(void)
{
	struct sockaddr_in sa;
	long fd = inet_socket(SOCK_DGRAM, &sa);
	return syscall(SYS_sendto, fd, "x", 1, 0, &sa, sizeof(sa));
}
static long sys_sendmsg(void)
{
	struct sockaddr_in sa;
	long fd = inet_socket(SOCK_DGRAM, &sa);
	struct iovec iov = { .iov_base = "x", .iov_len = 1 };
	struct msghdr m = { .msg_name = &sa, .msg_namelen = sizeof(sa), .msg_iov = &iov, .msg_iovlen = 1 };
	return syscall(SYS_sendmsg, fd, &m, 0);
}

static long sys_bind_unix(void)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	snprintf(un.sun_path, sizeof(un.sun_path), "%s", arg(0));
	long fd = socket(AF_UNIX, SOCK_STREAM, 0);
	return syscall(SYS_bind, fd, &un, sizeof(un));
}

/* Read-only work that must never stop the tracee. */
static long sys_readonly(void)
{
	struct stat st;
	char buf[256];
	long fd = syscall(SYS_open, arg(0), O_RDONLY);
	long fd2 = syscall(SYS_openat, AT_FDCWD, arg(0), O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fd2 < 0 || syscall(SYS_newfstatat, AT_FDCWD, arg(0), &st, 0) < 0)
		return -1;
	long n = syscall(SYS_read, fd, buf, sizeof(buf));
	if (n < 0 || syscall(SYS_write, 1, "", 0) < 0)
		return -1;
	return n;
}

static long sys_io_uring_setup(void) { return syscall(SYS_io_uring_setup, 1, NULL); }
static long sys_ptrace(void) { return syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0); }
static long sys_process_vm_writev(void) { return syscall(SYS_process_vm_writev, getpid(), NULL, 0, NULL, 0, 0); }
static long sys_mount(void) { return syscall(SYS_mount, "none", "/mnt", "tmpfs", 0, NULL); }
static long sys_umount2(void) { return syscall(SYS_umount2, "/mnt", 0); }
static long sys_bpf(void) { return syscall(SYS_bpf, 0, NULL, 0); }
static long sys_userfaultfd(void) { return syscall(SYS_userfaultfd, 0); }
static long sys_perf_event_open(void) { return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0); }
static long sys_kexec_load(void) { return syscall(SYS_kexec_load, 0, 0, NULL, 0); }
static long sys_init_module(void) { return syscall(SYS_init_module, NULL, 0, ""); }
static long sys_swapon(void) { return syscall(SYS_swapon, "/nonexistent", 0); }
static long sys_reboot(void) { return syscall(SYS_reboot, 0, 0, 0, NULL); } /* bad magic: EINVAL if not filtered */
static long sys_pivot_root(void) { return syscall(SYS_pivot_root, "/nonexistent", "/nonexistent"); }
static long sys_clone3(void) { return syscall(SYS_clone3, NULL, 0); }
static long sys_tiocsti(void) { char c = 'x'; return syscall(SYS_ioctl, 0, TIOCSTI, &c); }
/* Upper bits set on the 32-bit ioctl cmd must not walk past the rule. */
static long sys_tiocsti_hi(void) { char c = 'x'; return syscall(SYS_ioctl, 0, 0x100000000UL | TIOCSTI, &c); }
static long sys_chattr(void)
{
	int flags = 0;
	long fd = fd_of(0);
	if (ioctl((int)fd, FS_IOC_GETFLAGS, &flags) < 0)
		return -1;
	return syscall(SYS_ioctl, fd, FS_IOC_SETFLAGS, &flags);
}
static long sys_clone_untraced(void)
{
	long r = syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, NULL, NULL, 0);
	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	return r;
}
static long sys_seccomp_listener(void)
{
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, NULL);
}
/* The x32 table: killed by the arch gate (SIGSYS). */
static long sys_x32(void) { return syscall(0x40000000 | SYS_getpid); }
/* The i386 table through int 0x80: mkdir (39 there; 39 is getpid on
 * x86_64) of DIR, so a call that got through leaves a directory behind.
 * int 0x80 passes 32-bit pointers: the path is copied below 4 GiB.
 *
 * Where the kernel refuses int 0x80 (IA-32 emulation off) the CPU fault
 * comes before seccomp and the process dies by SIGSEGV. The default action
 * is restored with the raw syscall first: a sanitizer's SIGSEGV handler
 * (which ignores sigaction() for SIGSEGV) would turn that death into an
 * abort, and the tests compare the bare and the traced death. */
static long sys_int80(void)
{
	struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; } dfl = { SIG_DFL, 0, NULL, 0 };
	if (syscall(SYS_rt_sigaction, SIGSEGV, &dfl, NULL, sizeof(dfl.mask)) < 0)
		return -1;
	const char *dir = arg(0);
	char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (low == MAP_FAILED || strlen(dir) >= 4096)
		return -1;
	strcpy(low, dir);
	long r;
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(39L), "b"((long)low), "c"(0755L) : "memory");
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}
static long sys_pidfd_getfd(void)
{
	long pfd = syscall(SYS_pidfd_open, getppid(), 0);
	if (pfd < 0)
		return pfd;
	return syscall(SYS_pidfd_getfd, pfd, 0, 0);
}
static long sys_getpid(void) { return syscall(SYS_getpid); }

static const struct {
	const char *name;
	long (*fn)(void);
} calls[] = {
	{ "open", sys_open }, { "openat", sys_openat }, { "creat", sys_creat }, { "openat2", sys_openat2 },
	{ "unlink", sys_unlink }, { "unlinkat", sys_unlinkat }, { "rmdir", sys_rmdir },
	{ "rename", sys_rename }, { "renameat", sys_renameat }, { "renameat2", sys_renameat2 },
	{ "link", sys_link }, { "linkat", sys_linkat }, { "symlink", sys_symlink },
	{ "symlinkat", sys_symlinkat }, { "mkdir", sys_mkdir }, { "mkdirat", sys_mkdirat },
	{ "mknod", sys_mknod }, { "mknodat", sys_mknodat }, { "truncate", sys_truncate },
	{ "chmod", sys_chmod }, { "fchmod", sys_fchmod }, { "fchmodat", sys_fchmodat },
	{ "fchmodat2", sys_fchmodat2 }, { "chown", sys_chown }, { "lchown", sys_lchown },
	{ "fchown", sys_fchown }, { "fchownat", sys_fchownat }, { "utime", sys_utime },
	{ "utimes", sys_utimes }, { "futimesat", sys_futimesat }, { "utimensat", sys_utimensat },
	{ "futimens", sys_futimens }, { "setxattr", sys_setxattr }, { "lsetxattr", sys_lsetxattr },
	{ "fsetxattr", sys_fsetxattr }, { "removexattr", sys_removexattr },
	{ "lremovexattr", sys_lremovexattr }, { "fremovexattr", sys_fremovexattr },
	{ "setxattrat", sys_setxattrat }, { "removexattrat", sys_removexattrat },
	{ "execve", sys_execve }, { "execveat", sys_execveat }, { "execveat-memfd", sys_execveat_memfd },
	{ "connect", sys_connect }, { "sendto", sys_sendto }, { "sendmsg", sys_sendmsg },
	{ "bind-unix", sys_bind_unix }, { "readonly", sys_readonly }, { "io_uring_setup", sys_io_uring_setup }, { "ptrace", sys_ptrace },
	{ "process_vm_writev", sys_process_vm_writev }, { "mount", sys_mount }, { "umount2", sys_umount2 },
	{ "bpf", sys_bpf }, { "userfaultfd", sys_userfaultfd }, { "perf_event_open", sys_perf_event_open },
	{ "kexec_load", sys_kexec_load }, { "init_module", sys_init_module }, { "swapon", sys_swapon },
	{ "reboot", sys_reboot }, { "pivot_root", sys_pivot_root }, { "clone3", sys_clone3 },
	{ "chattr", sys_chattr }, { "tiocsti", sys_tiocsti }, { "tiocsti-hi", sys_tiocsti_hi }, { "clone-untraced", sys_clone_untraced },
	{ "seccomp-listener", sys_seccomp_listener }, { "x32", sys_x32 }, { "int80", sys_int80 },
	{ "pidfd_getfd", sys_pidfd_getfd }, { "getpid", sys_getpid },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: probe SYSCALL ARGS...\n");
		return 125;
	}
	A = argv + 2;
	N = argc - 2;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		if (strcmp(calls[i].name, argv[1]) != 0)
			continue;
		errno = 0;
		long r = calls[i].fn();
		if (r < 0) {
			int e = errno;
			printf("err %s\n", strerrorname_np(e) ? strerrorname_np(e) : "?");
			return e > 0 && e < 126 ? e : 125;
		}
		printf("ok %ld\n", r);
		return 0;
	}
	fprintf(stderr, "probe: unknown syscall %s\n", argv[1]);
	return 125;
}
