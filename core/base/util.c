/* util.c — allocation, I/O, time and parsing helpers (see util.h). */
#include "util.h"

#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "op.h"

char *tg_strdup(const char *s)
{
	char *r = strdup(s);
	if (!r)
		errno = ENOMEM;
	return r;
}

char *tg_strndup(const char *s, size_t n)
{
	char *r = strndup(s, n);
	if (!r)
		errno = ENOMEM;
	return r;
}

char *tg_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *r = NULL;
	va_start(ap, fmt);
	if (vasprintf(&r, fmt, ap) < 0)
		r = NULL;
	va_end(ap);
	if (!r)
		errno = ENOMEM;
	return r;
}

size_t tg_strv_len(char *const *strv)
{
	size_t n = 0;
	while (strv && strv[n])
		n++;
	return n;
}

void tg_strv_free(char **strv)
{
	for (size_t i = 0; strv && strv[i]; i++)
		free(strv[i]);
	free(strv);
}

char **tg_strv_dup(char *const *strv)
{
	size_t n = tg_strv_len(strv);
	char **r = calloc(n + 1, sizeof(*r));
	if (!r)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		r[i] = tg_strdup(strv[i]);
		if (!r[i]) {
			tg_strv_free(r);
			errno = ENOMEM;
			return NULL;
		}
	}
	return r;
}

/* n pointers + NULL, then the bytes: one block. */
static char **pack_alloc(size_t n, size_t bytes)
{
	if (n > (SIZE_MAX - bytes) / sizeof(char *) - 1) {
		errno = ENOMEM;
		return NULL;
	}
	char **r = malloc((n + 1) * sizeof(char *) + bytes);
	if (!r)
		errno = ENOMEM;
	return r;
}

char **tg_strv_pack(char *const *strv, size_t n)
{
	size_t bytes = 0;
	for (size_t i = 0; i < n; i++)
		bytes += strlen(strv[i]) + 1;
	char **r = pack_alloc(n, bytes);
	if (!r)
		return NULL;
	char *p = (char *)(r + n + 1);
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(strv[i]) + 1;
		r[i] = memcpy(p, strv[i], l);
		p += l;
	}
	r[n] = NULL;
	return r;
}

char **tg_strv_pack_nul(const char *buf, size_t len, size_t n)
{
	char **r = pack_alloc(n, len);
	if (!r)
		return NULL;
	char *p = memcpy(r + n + 1, buf, len);
	for (size_t i = 0, off = 0; i < n; i++) {
		r[i] = p + off;
		off += strnlen(p + off, len - off) + 1;
	}
	r[n] = NULL;
	return r;
}

int tg_strv_push(char ***strv, const char *s)
{
	size_t n = tg_strv_len(*strv);
	char *copy = tg_strdup(s);
	if (!copy)
		return -ENOMEM;
	char **r = realloc(*strv, (n + 2) * sizeof(*r));
	if (!r) {
		free(copy);
		return -ENOMEM;
	}
	r[n] = copy;
	r[n + 1] = NULL;
	*strv = r;
	return 0;
}

void *tg_grow(void *v, size_t n, size_t *cap, size_t elem, size_t first)
{
	if (n < *cap)
		return v;
	size_t want = *cap ? *cap * 2 : first;
	if (want <= n || (elem && want > SIZE_MAX / elem)) {
		errno = ENOMEM;
		return NULL;
	}
	void *nv = realloc(v, want * elem);
	if (nv)
		*cap = want;
	return nv;
}

int tg_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}


int tg_read_file(const char *path, char **out, size_t *len, size_t max)
{
	return tg_read_file_at(AT_FDCWD, path, 0, out, len, max);
}

int tg_read_file_at(int dirfd, const char *path, int flags, char **out, size_t *len, size_t max)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	/* A regular file is read in one go (its size, plus one byte to see the
	 * end); /proc files say 0 and grow the buffer as they are read. */
	struct stat st;
	size_t cap = 4096, n = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		if ((uint64_t)st.st_size > max)
			return -EFBIG;
		cap = (size_t)st.st_size + 1;
	}
	_cleanup_free_ char *buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			if (cap >= max)
				return -EFBIG;
			cap *= 2;
			char *nb = realloc(buf, cap + 1);
			if (!nb)
				return -ENOMEM;
			buf = nb;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = steal_pointer(&buf);
	if (len)
		*len = n;
	return 0;
}

/* How many lines of /proc/PID/cgroup ("ID:CONTROLLERS:PATH") are the
 * unified hierarchy's ("0::PATH"), or systemd's named v1 one; *path and
 * *len point at the last one's path. */
static int cgroup_lines(const char *text, bool unified, const char **path, size_t *len)
{
	static const char sd[] = "name=systemd";
	int found = 0;
	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		const char *end = nl ? nl : l + strlen(l);
		const char *c1 = memchr(l, ':', (size_t)(end - l));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
		bool hit = false;
		if (c2 && unified)
			hit = c1 == l + 1 && l[0] == '0' && c2 == c1 + 1;
		else if (c2)
			hit = (size_t)(c2 - c1 - 1) == strlen(sd) && memcmp(c1 + 1, sd, strlen(sd)) == 0;
		if (hit) {
			found++;
			*path = c2 + 1;
			*len = (size_t)(end - c2 - 1);
		}
		if (!nl)
			break;
		l = nl + 1;
	}
	return found;
}

int tg_cgroup_from_text(const char *text, char *out, size_t size)
{
	const char *p = NULL;
	size_t len = 0;
	if (size)
		out[0] = '\0';
	/* v2 and hybrid machines: the unified line; v1-only: systemd's. */
	int n = cgroup_lines(text, true, &p, &len);
	if (n == 0)
		n = cgroup_lines(text, false, &p, &len);
	if (n != 1 || len == 0 || len >= size || p[0] != '/')
		return -ENOENT;
	memcpy(out, p, len);
	out[len] = '\0';
	return 0;
}

int tg_read_proc_cgroup(pid_t pid, char *out, size_t size)
{
	char path[64];
	_cleanup_free_ char *buf = NULL;
	if (size)
		out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	int r = tg_read_file(path, &buf, NULL, 1 << 16);
	return r < 0 ? r : tg_cgroup_from_text(buf, out, size);
}

uint64_t tg_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t tg_wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool leap_year(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* The proleptic Gregorian calendar counted in 400-year eras of 146,097
 * days, each year starting on March 1st so that a leap day ends it (the
 * civil_from_days method of H. Hinnant's "chrono-Compatible Low-Level Date
 * Algorithms"). */
void tg_utc(int64_t secs, struct tm *tm)
{
	int64_t days = secs / 86400, rem = secs % 86400;
	if (rem < 0)
		rem += 86400, days--;
	*tm = (struct tm){ .tm_hour = (int)(rem / 3600), .tm_min = (int)(rem / 60 % 60), .tm_sec = (int)(rem % 60) };
	/* 1970-01-01 was a Thursday. */
	tm->tm_wday = (int)(((days + 4) % 7 + 7) % 7);
	int64_t z = days + 719468; /* days since 0000-03-01 */
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;                                        /* [0, 146096] */
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;   /* [0, 399] */
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                 /* [0, 365], from March 1st */
	int64_t mp = (5 * doy + 2) / 153;                                      /* [0, 11], March = 0 */
	int64_t year = yoe + era * 400 + (mp >= 10);
	tm->tm_mday = (int)(doy - (153 * mp + 2) / 5 + 1);
	tm->tm_mon = (int)(mp < 10 ? mp + 2 : mp - 10);
	tm->tm_year = (int)(year - 1900);
	/* January and February close the March-based year. */
	tm->tm_yday = (int)(mp >= 10 ? doy - 306 : doy + 59 + leap_year(year));
}

void tg_rfc3339(char buf[static 32], uint64_t wall_ns)
{
	struct tm tm;
	tg_utc((int64_t)(wall_ns / 1000000000ull), &tm);
	/* uint64_t nanoseconds end in 2554: the remainders only tell the
	 * compiler the widths. */
	snprintf(buf, 32, "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ", (unsigned)(tm.tm_year + 1900) % 10000u,
	         (unsigned)(tm.tm_mon + 1) % 100u, (unsigned)tm.tm_mday % 100u, (unsigned)tm.tm_hour % 100u,
	         (unsigned)tm.tm_min % 100u, (unsigned)tm.tm_sec % 100u, (unsigned)((wall_ns / 1000000ull) % 1000));
}

static int parse_scaled(const char *s, const char *const *units, const double *scale, size_t nunits, double *out)
{
	if (!s || !*s)
		return -EINVAL;
	char *end = NULL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0 || !isfinite(v))
		return -EINVAL;
	for (size_t i = 0; i < nunits; i++) {
		if (strcmp(end, units[i]) == 0) {
			*out = v * scale[i];
			return 0;
		}
	}
	return -EINVAL;
}

int tg_parse_duration_ms(const char *s, uint64_t *out_ms)
{
	static const char *const units[] = { "", "ms", "s", "m", "h" };
	static const double scale[] = { 1000, 1, 1000, 60000, 3600000 };
	double v;
	int r = parse_scaled(s, units, scale, TG_ARRAY_SIZE(units), &v);
	if (r < 0 || v > 1e15)
		return -EINVAL;
	*out_ms = (uint64_t)v;
	return 0;
}

int tg_parse_size(const char *s, uint64_t *out)
{
	static const char *const units[] = { "", "B", "K", "KiB", "M", "MiB", "G", "GiB" };
	static const double scale[] = { 1, 1, 1024, 1024, 1048576, 1048576, 1073741824.0, 1073741824.0 };
	double v;
	int r = parse_scaled(s, units, scale, TG_ARRAY_SIZE(units), &v);
	if (r < 0 || v > 1e18)
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

#define E(x) { x, #x }
static const struct {
	int err;
	const char *name;
} errno_names[] = {
	E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG),
	E(ENOEXEC), E(EBADF), E(ECHILD), E(EAGAIN), E(ENOMEM), E(EACCES),
	E(EFAULT), E(EBUSY), E(EEXIST), E(EXDEV), E(ENODEV), E(ENOTDIR),
	E(EISDIR), E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY), E(ETXTBSY),
	E(EFBIG), E(ENOSPC), E(ESPIPE), E(EROFS), E(EMLINK), E(EPIPE),
	E(ENAMETOOLONG), E(ENOSYS), E(ENOTEMPTY), E(ELOOP), E(EDQUOT),
	E(ENOTSUP), E(EOPNOTSUPP), E(EAFNOSUPPORT), E(EADDRNOTAVAIL),
	E(ENETUNREACH), E(EHOSTUNREACH), E(ECONNREFUSED), E(ETIMEDOUT),
	E(ECANCELED), E(EPROTONOSUPPORT), E(ENOTSOCK), E(EDESTADDRREQ),
};
#undef E

int tg_errno_from_name(const char *name)
{
	for (size_t i = 0; i < TG_ARRAY_SIZE(errno_names); i++)
		if (strcmp(errno_names[i].name, name) == 0)
			return errno_names[i].err;
	return -1;
}

const char *tg_errno_name(int err)
{
	for (size_t i = 0; i < TG_ARRAY_SIZE(errno_names); i++)
		if (errno_names[i].err == err)
			return errno_names[i].name;
	return NULL;
}

void tg_op_clear(struct tg_op *op)
{
	if (!op)
		return;
	free(op->path);
	free(op->path2);
	free(op->target);
	free(op->xattr_name);
	free(op->argv); /* packed: tg_strv_pack */
	tg_strv_free(op->via);
	memset(op, 0, sizeof(*op));
}

const char *tg_op_kind_name(enum tg_op_kind kind)
{
	static const char *const names[] = {
		[TG_OP_NONE] = "none", [TG_OP_EXEC] = "exec", [TG_OP_OPEN] = "open",
		[TG_OP_UNLINK] = "unlink", [TG_OP_RMDIR] = "rmdir", [TG_OP_RENAME] = "rename",
		[TG_OP_LINK] = "link", [TG_OP_SYMLINK] = "symlink", [TG_OP_MKDIR] = "mkdir",
		[TG_OP_MKNOD] = "mknod", [TG_OP_TRUNCATE] = "truncate", [TG_OP_CHMOD] = "chmod",
		[TG_OP_CHOWN] = "chown", [TG_OP_UTIMES] = "utimes", [TG_OP_XATTR] = "xattr",
		[TG_OP_CONNECT] = "connect", [TG_OP_SENDTO] = "sendto", [TG_OP_SYSCALL] = "syscall",
		[TG_OP_PROCESS] = "process",
	};
	if ((size_t)kind < TG_ARRAY_SIZE(names) && names[kind])
		return names[kind];
	return "unknown";
}

void tg_proc_victim_read(pid_t pid, struct tg_proc_victim *v)
{
	char path[64];
	_cleanup_free_ char *buf = NULL;
	size_t len;
	v->pid = pid;
	v->uid = -1;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (tg_read_file(path, &buf, &len, 64) == 0)
		snprintf(v->comm, sizeof(v->comm), "%.*s", (int)strcspn(buf, "\n"), buf);
	free(buf);
	buf = NULL;
	long uid = tg_proc_status_num(pid, "Uid");
	if (uid >= 0)
		v->uid = uid;
	tg_read_proc_cgroup(pid, v->cgroup, sizeof(v->cgroup));
}

/* Bytes a shell never treats specially in a word. A table: strspn with a
 * set this large rebuilds its own table on every call. */
static bool shell_plain_byte(unsigned char c)
{
	static const char extra[] = "_-./=:,+@%";
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && memchr(extra, c, sizeof(extra) - 1));
}

/* Bytes `a` takes in tg_shell_join's output; *plain: as it is. */
static size_t shell_word_len(const char *a, bool *plain)
{
	const char *c = a;
	while (shell_plain_byte((unsigned char)*c))
		c++;
	*plain = *a && !*c;
	if (*plain)
		return (size_t)(c - a);
	size_t n = 2;
	for (c = a; *c; c++)
		n += *c == '\'' ? 4 : 1;
	return n;
}

char *tg_shell_join(char *const *argv)
{
	return tg_shell_join_max(argv, tg_strv_len(argv), SIZE_MAX);
}

char *tg_shell_join_max(char *const *argv, size_t argc, size_t max)
{
	static const char more[] = " ... (%zu more arguments)";
	size_t len = 0, n = 0, fit = 0;
	bool plain;
	for (; n < argc; n++) {
		size_t w = shell_word_len(argv[n], &plain) + (n > 0);
		/* The program always; then the words that fit whole. */
		if (fit == n && (n == 0 || (len <= max && w <= max - len))) {
			len += w;
			fit++;
		}
		if (fit < n && max != SIZE_MAX)
			break; /* the rest is counted by argc, never walked */
	}
	n = argc;
	char *out = malloc(len + sizeof(more) + 3 * sizeof(size_t)), *p = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < fit; i++) {
		const char *a = argv[i];
		if (i)
			*p++ = ' ';
		size_t w = shell_word_len(a, &plain);
		if (plain) {
			memcpy(p, a, w);
			p += w;
			continue;
		}
		*p++ = '\'';
		for (const char *c = a; *c; c++) {
			if (*c == '\'')
				p = stpcpy(p, "'\\''");
			else
				*p++ = *c;
		}
		*p++ = '\'';
	}
	*p = '\0';
	if (fit < n)
		sprintf(p, more, n - fit);
	return out;
}

uint64_t tg_hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, 64 bits */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

long tg_proc_status_num(pid_t pid, const char *field)
{
	char path[64], key[40];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	snprintf(key, sizeof(key), "\n%s:", field);
	_cleanup_free_ char *st = NULL;
	size_t len = 0;
	int r = tg_read_file(path, &st, &len, 1 << 16);
	if (r < 0)
		return r;
	const char *t = strstr(st, key);
	return t ? strtol(t + strlen(key), NULL, 10) : -ENOENT;
}

pid_t tg_proc_tgid(pid_t tid)
{
	long g = tg_proc_status_num(tid, "Tgid");
	return (pid_t)g;
}
