/* unix-bind: create a new file in the outside directory without any call
 * the tracer traps: bind() a unix socket at an outside path (the kernel
 * makes a socket inode there, like mknod). Also binds through a workspace
 * symlink to the outside directory. Breach when either socket file
 * appears (the runner's fingerprint sees it too). */
#include <sys/socket.h>
#include <sys/un.h>
#include "../esc.h"

static bool bind_at(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	int r = bind(s, (struct sockaddr *)&sun, sizeof(sun));
	esc_log("bind(%s) -> %s", path, r == 0 ? "ok" : strerror(errno));
	return r == 0;
}

int main(void)
{
	esc_start("unix-bind");
	bool made = bind_at(esc_out("sock"));
	if (chdir(esc_env("ESC_WS")) == 0 && symlink(esc_env("ESC_OUT"), "outlink") == 0)
		made = bind_at("outlink/sock2") || made;
	struct stat st;
	if (lstat(esc_out("sock"), &st) == 0 || lstat(esc_out("sock2"), &st) == 0)
		made = true;
	return made ? ESC_BREACH : ESC_HELD;
}
