/* mount-games: in a private mount namespace (unshare CLONE_NEWNS, then
 * everything made MS_PRIVATE so nothing propagates back), bind-mount the
 * outside directory onto a workspace directory and write through it: the
 * path says "workspace", the inode is outside. Tried with mount(MS_BIND),
 * then with open_tree(OPEN_TREE_CLONE)+move_mount, then inside a new user
 * namespace. Also tries setns() into PID 1's mount namespace. */
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include "../esc.h"

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif

static int bind_classic(const char *out)
{
	return mount(out, "m", NULL, MS_BIND, NULL) == 0 ? 0 : -errno;
}

static int bind_new_api(const char *out)
{
	long t = syscall(__NR_open_tree, AT_FDCWD, out, OPEN_TREE_CLONE | O_CLOEXEC);
	if (t < 0)
		return -errno;
	long r = syscall(__NR_move_mount, (int)t, "", AT_FDCWD, "m", MOVE_MOUNT_F_EMPTY_PATH);
	return r == 0 ? 0 : -errno;
}

static bool try_private_ns(int flags)
{
	if (unshare(flags) < 0) {
		esc_log("unshare(0x%x): %s", flags, strerror(errno));
		return false;
	}
	/* Without this a bind mount under a shared mount would propagate to
	 * the arena's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		esc_log("make-rprivate: %s", strerror(errno));
		return false;
	}
	return true;
}

int main(void)
{
	esc_start("mount-games");
	const char *out = esc_env("ESC_OUT");
	char *victim = esc_out("victim");
	if (chdir(esc_env("ESC_WS")) < 0)
		return 3;
	mkdir("m", 0755);
	int nsfd = open("/proc/1/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (nsfd >= 0 && setns(nsfd, CLONE_NEWNS) == 0)
		esc_log("setns(pid 1 mnt) worked");
	if (!try_private_ns(CLONE_NEWNS) && !try_private_ns(CLONE_NEWUSER | CLONE_NEWNS))
		return esc_verdict_victim(victim);
	if (chdir(esc_env("ESC_WS")) < 0)
		return 3;
	int r = bind_classic(out);
	esc_log("mount(MS_BIND outside -> ws/m) -> %d", r);
	if (r < 0) {
		r = bind_new_api(out);
		esc_log("open_tree+move_mount(outside -> ws/m) -> %d", r);
	}
	esc_log("write ws/m/victim -> %d", esc_write_file("m/victim", "PWNED\n", O_TRUNC));
	return esc_verdict_victim(victim);
}
