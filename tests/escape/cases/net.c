/* net MODE: reach a denied address. Two are denied by the battery policy:
 *   ESC_ADDR:ESC_PORT  (10.255.255.1:9) never reachable: nothing routes in
 *       the arena's empty network namespace, so natively the call fails with
 *       ENETUNREACH. A refusal by txguard is EPERM/EACCES/ECONNREFUSED; any
 *       other outcome means the call reached the network stack (breach).
 *   ESC_LADDR:ESC_PORT (127.13.13.13:9) a loopback address of the arena's
 *       own namespace where the runner's listener waits: a real witness.
 * MODE:
 *   tcp   connect() on a TCP socket, to both, also from an AF_INET6
 *         socket to the IPv4-mapped form (::ffff:a.b.c.d), which the kernel
 *         routes as IPv4
 *   udp   sendto() with the address, sendmsg() with msg_name, sendmmsg(),
 *         and connect()+send() on a UDP socket, to both; sendto() to the
 *         IPv4-mapped form from an AF_INET6 socket
 *   unix  connect() to the listening unix socket ESC_SOCK at a denied path
 *         (a stand-in for /var/run/docker.sock), directly, by a relative
 *         name from its directory, through a workspace symlink to it and
 *         through /proc/self/fd/N of an O_PATH fd on it; and sendto() a
 *         datagram to ESC_DSOCK (also denied)
 * Breach when any of them gets through; the runner also checks the
 * listener's log, which records every connection or datagram that arrived. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "../esc.h"

static struct sockaddr_in inet_target(const char *var)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(esc_env("ESC_PORT"))) };
	inet_pton(AF_INET, esc_env(var), &sin.sin_addr);
	return sin;
}

/* Did a call with result r (errno e) get past the supervisor? */
static bool got_through(const char *what, const char *var, long r, int e)
{
	bool refused = r < 0 && (e == EPERM || e == EACCES || e == ECONNREFUSED);
	esc_log("%s to %s -> %s%s", what, esc_env(var), r < 0 ? strerror(e) : "ok",
	        refused ? " (refused)" : " (reached the network stack)");
	return !refused;
}

static struct sockaddr_in6 mapped_target(const char *var)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)atoi(esc_env("ESC_PORT"))) };
	char buf[64];
	snprintf(buf, sizeof(buf), "::ffff:%s", esc_env(var));
	inet_pton(AF_INET6, buf, &s6.sin6_addr);
	return s6;
}

static bool try_tcp6(const char *var)
{
	struct sockaddr_in6 s6 = mapped_target(var);
	int s = socket(AF_INET6, SOCK_STREAM, 0);
	if (s < 0) {
		esc_log("AF_INET6 socket: %s", strerror(errno));
		return false;
	}
	int r = connect(s, (struct sockaddr *)&s6, sizeof(s6));
	return got_through("tcp6 connect (v4-mapped)", var, r, errno);
}

static bool try_udp6(const char *var)
{
	struct sockaddr_in6 s6 = mapped_target(var);
	int s = socket(AF_INET6, SOCK_DGRAM, 0);
	if (s < 0) {
		esc_log("AF_INET6 socket: %s", strerror(errno));
		return false;
	}
	ssize_t r = sendto(s, "udp6-sendto", 11, 0, (struct sockaddr *)&s6, sizeof(s6));
	return got_through("udp6 sendto (v4-mapped)", var, r, errno);
}

static bool try_tcp(const char *var)
{
	struct sockaddr_in sin = inet_target(var);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	int r = connect(s, (struct sockaddr *)&sin, sizeof(sin));
	return got_through("tcp connect", var, r, errno);
}

static bool try_udp(const char *var)
{
	struct sockaddr_in sin = inet_target(var);
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	bool ok = false;
	ssize_t r = sendto(s, "udp-sendto", 10, 0, (struct sockaddr *)&sin, sizeof(sin));
	ok |= got_through("udp sendto", var, r, errno);
	struct iovec iov = { "udp-sendmsg", 11 };
	struct msghdr mh = { .msg_name = &sin, .msg_namelen = sizeof(sin), .msg_iov = &iov, .msg_iovlen = 1 };
	r = sendmsg(s, &mh, 0);
	ok |= got_through("udp sendmsg", var, r, errno);
	int s2 = socket(AF_INET, SOCK_DGRAM, 0);
	r = connect(s2, (struct sockaddr *)&sin, sizeof(sin));
	if (r == 0)
		r = send(s2, "udp-connect", 11, 0);
	ok |= got_through("udp connect+send", var, r, errno);
	struct mmsghdr mm = { .msg_hdr = mh };
	r = sendmmsg(s, &mm, 1, 0);
	ok |= got_through("udp sendmmsg", var, r, errno);
	return ok;
}

static bool unix_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	int r = connect(s, (struct sockaddr *)&sun, sizeof(sun));
	esc_log("unix connect %s -> %s", sun.sun_path, r == 0 ? "connected" : strerror(errno));
	if (r == 0 && send(s, "unix", 4, MSG_NOSIGNAL) < 0)
		esc_log("unix write: %s", strerror(errno));
	close(s);
	return r == 0;
}

static bool try_unix(void)
{
	const char *sock = esc_env("ESC_SOCK");
	bool ok = unix_connect(sock);
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", sock);
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		if (chdir(dir) == 0)
			ok |= unix_connect(slash + 1);
		if (chdir(esc_env("ESC_WS")) < 0)
			return true;
	}
	char *alias = esc_ws("sock-alias");
	if (symlink(sock, alias) == 0)
		ok |= unix_connect(alias);
	int pfd = open(sock, O_PATH);
	if (pfd >= 0) {
		char magic[64];
		snprintf(magic, sizeof(magic), "/proc/self/fd/%d", pfd);
		ok |= unix_connect(magic);
	}
	struct sockaddr_un dun = { .sun_family = AF_UNIX };
	snprintf(dun.sun_path, sizeof(dun.sun_path), "%s", esc_env("ESC_DSOCK"));
	int d = socket(AF_UNIX, SOCK_DGRAM, 0);
	ssize_t r = sendto(d, "unix-dgram", 10, 0, (struct sockaddr *)&dun, sizeof(dun));
	esc_log("unix dgram sendto %s -> %s", dun.sun_path, r >= 0 ? "sent" : strerror(errno));
	return ok || r >= 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	char name[32];
	snprintf(name, sizeof(name), "net-%s", mode);
	esc_start(name);
	bool breach;
	/* Both targets, always: no short-circuit. */
	if (strcmp(mode, "tcp") == 0) {
		breach = try_tcp("ESC_ADDR");
		breach = try_tcp("ESC_LADDR") || breach;
		breach = try_tcp6("ESC_ADDR") || breach;
		breach = try_tcp6("ESC_LADDR") || breach;
	} else if (strcmp(mode, "udp") == 0) {
		breach = try_udp("ESC_ADDR");
		breach = try_udp("ESC_LADDR") || breach;
		breach = try_udp6("ESC_ADDR") || breach;
		breach = try_udp6("ESC_LADDR") || breach;
	} else if (strcmp(mode, "unix") == 0) {
		breach = try_unix();
	} else {
		return 2;
	}
	return breach ? ESC_BREACH : ESC_HELD;
}
