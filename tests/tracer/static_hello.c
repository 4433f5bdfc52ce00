/* A static binary: no dynamic loader, its own raw syscalls. It writes a
 * file (a trapped open) and exits with the code given as argv[2]. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc > 1) {
		int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, "hello\n", 6) != 6)
			return 2;
		close(fd);
	}
	printf("hello from a static binary\n");
	return argc > 2 ? atoi(argv[2]) : 0;
}
