/* esc-listen LOG ADDR PORT UNIXPATH DGRAMPATH: the runner's witness for the
 * network cases. Listens on TCP and UDP ADDR:PORT (a loopback address, and
 * only ever inside the arena's own network namespace), on a unix stream
 * socket at UNIXPATH and a unix datagram socket at DGRAMPATH, and appends
 * one line to LOG for every
 * connection or datagram that arrives. Prints "ready" once bound. Runs
 * outside txguard, until the runner kills it. A line in LOG is the proof
 * that a denied connection got through, whatever the case's exit code. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int bound(int domain, int type, const struct sockaddr *sa, socklen_t len)
{
	int s = socket(domain, type | SOCK_CLOEXEC, 0);
	int one = 1;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (s < 0 || bind(s, sa, len) < 0 || (type == SOCK_STREAM && listen(s, 16) < 0)) {
		perror("esc-listen: bind");
		exit(1);
	}
	return s;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fputs("usage: esc-listen LOG ADDR PORT UNIXPATH DGRAMPATH\n", stderr);
		return 2;
	}
	FILE *log = fopen(argv[1], "a");
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[3])) };
	struct sockaddr_un sun = { .sun_family = AF_UNIX }, dun = { .sun_family = AF_UNIX };
	if (!log || inet_pton(AF_INET, argv[2], &sin.sin_addr) != 1)
		return 2;
	setvbuf(log, NULL, _IOLBF, 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", argv[4]);
	snprintf(dun.sun_path, sizeof(dun.sun_path), "%s", argv[5]);
	unlink(sun.sun_path);
	unlink(dun.sun_path);
	struct pollfd p[4] = {
		{ bound(AF_INET, SOCK_STREAM, (struct sockaddr *)&sin, sizeof(sin)), POLLIN, 0 },
		{ bound(AF_INET, SOCK_DGRAM, (struct sockaddr *)&sin, sizeof(sin)), POLLIN, 0 },
		{ bound(AF_UNIX, SOCK_STREAM, (struct sockaddr *)&sun, sizeof(sun)), POLLIN, 0 },
		{ bound(AF_UNIX, SOCK_DGRAM, (struct sockaddr *)&dun, sizeof(dun)), POLLIN, 0 },
	};
	static const char *what[4] = { "tcp", "udp", "unix", "unix-dgram" };
	puts("ready");
	fflush(stdout);
	for (;;) {
		if (poll(p, 4, -1) < 0)
			continue;
		for (int i = 0; i < 4; i++) {
			if (!(p[i].revents & POLLIN))
				continue;
			char buf[256];
			if (i == 1 || i == 3) {
				ssize_t n = recv(p[i].fd, buf, sizeof(buf) - 1, 0);
				buf[n > 0 ? n : 0] = 0;
				fprintf(log, "%s %s\n", what[i], buf);
				continue;
			}
			int c = accept(p[i].fd, NULL, NULL);
			fprintf(log, "%s connection\n", what[i]);
			if (c >= 0)
				close(c);
		}
	}
}
