/* fuzz_path.c — libFuzzer target for core/base/path.c.
 *
 * The first byte picks flags, the rest is split at the first NUL into two
 * strings (a path and a base/home). The lexical functions must agree with
 * each other (normalize is idempotent, join of an absolute path ignores the
 * base, a normalised path is under "/"), and tg_path_resolve() on our own
 * process must never crash or return a relative or non-normalised path.
 * Resolution only lstat()s and readlink()s: safe on any input.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_lexical(const char *a, const char *b)
{
	char *n = tg_path_normalize(a);
	if (n) {
		char *n2 = tg_path_normalize(n);
		if (!n2 || strcmp(n, n2) != 0 || !tg_path_is_under(n, "/"))
			abort();
		free(n2);
	}
	char *j = tg_path_join(b, a);
	if (j && a[0] == '/' && (!n || strcmp(j, n) != 0))
		abort();
	if (j && b && b[0] == '/' && a[0] != '/' && !strstr(a, "..")) {
		char *nb = tg_path_normalize(b);
		if (nb && !tg_path_is_under(j, nb))
			abort();
		free(nb);
	}
	free(j);
	free(n);
	free(tg_path_expand_home(a, b));
}

static void check_resolve(const char *p, uint8_t flags)
{
	char *out = NULL;
	int dirfd = (flags & 4) ? open("/", O_PATH | O_DIRECTORY) : AT_FDCWD;
	int r = tg_path_resolve(getpid(), dirfd, p, flags & 1, flags & 2, &out);
	if (r == 0) {
		if (!out)
			abort();
		/* A path, or a non-path fd target as the kernel prints it. */
		if (out[0] == '/') {
			char *n = tg_path_normalize(out);
			if (!n || (strcmp(n, out) != 0 && !strstr(out, " (deleted)")))
				abort();
			free(n);
		}
		free(out);
	} else if (r > 0 || out) {
		abort();
	}
	if (dirfd >= 0)
		close(dirfd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';
	buf[size] = '\0';
	const char *a = buf;
	const char *b = buf + strlen(buf) + 1 <= buf + size - 1 ? buf + strlen(buf) + 1 : NULL;
	check_lexical(a, b);
	check_resolve(a, data[0]);
	free(buf);
	return 0;
}
