/* affinity — what a task alone in a busy tree sees of its CPUs.
 *
 *   affinity MODE FILE
 *
 * The tracer pins a task that is alone in its tree and makes trapped
 * calls in quick succession to the CPU it runs on itself (tracer.c,
 * "pinning"). This makes such calls (chmod of FILE to its own mode) in
 * rounds until /proc/self/status shows one CPU, prints "pinned LIST" (or
 * "never pinned" after 50 rounds), then, by MODE:
 *
 *   get     "get LIST" from sched_getaffinity; then rounds again until the
 *           status shows one CPU: "again LIST" (or "never again"); then
 *           "get2 LIST" from sched_getaffinity once more;
 *   fork    forks: "child LIST" from the child's status, then "parent LIST";
 *   thread  starts a thread: "thread LIST" from its status, then "main LIST";
 *   set     sets its affinity to the first of its CPUs (without asking for
 *           them: it reads them from its status before the first round),
 *           forks: "child LIST" from the child's status, "set LIST" from
 *           its own, then "later LIST" after one more round;
 *   quiet   computes, with no syscall, in slices of 20 ms until the status
 *           shows more than one CPU (2 s at most): "quiet LIST";
 *   texec   does all of the above in a second thread instead, which then
 *           execs "affinity quiet FILE" (the thread takes over the process).
 *
 * LIST is a CPU list as the kernel writes it ("0-1", "3"). Exits 0, or 2
 * on a failed call (with a message).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUND_CALLS 400
#define MAX_ROUNDS 50

static void die(const char *what)
{
	fprintf(stderr, "affinity: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* Cpus_allowed_list of this thread, as /proc writes it. */
static void status_list(char *out, size_t size)
{
	char line[512];
	FILE *f = fopen("/proc/thread-self/status", "r");
	if (!f)
		die("/proc/thread-self/status");
	out[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
			snprintf(out, size, "%s", line + 18 + strspn(line + 18, " \t"));
			out[strcspn(out, "\n")] = '\0';
		}
	fclose(f);
}

/* The same list, from a cpu_set_t. */
static void set_list(const cpu_set_t *set, char *out, size_t size)
{
	size_t n = 0;
	out[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, set))
			continue;
		int end = c;
		while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, set))
			end++;
		n += (size_t)snprintf(out + n, size - n, n ? ",%d" : "%d", c);
		if (end > c)
			n += (size_t)snprintf(out + n, size - n, "-%d", end);
		c = end;
		if (n >= size)
			break;
	}
}

/* "0-3,8" into a set. */
static void parse_list(const char *s, cpu_set_t *set)
{
	CPU_ZERO(set);
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b && c < CPU_SETSIZE; c++)
			CPU_SET((int)c, set);
		s = *end == ',' ? end + 1 : end + strlen(end);
	}
}

static void round_of_calls(const char *file, mode_t mode)
{
	for (int i = 0; i < ROUND_CALLS; i++)
		if (chmod(file, mode) < 0)
			die("chmod");
}

/* Fork a child that prints "child LIST" and exits; wait for it. */
static void fork_child_reports(void)
{
	char list[256];
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		status_list(list, sizeof(list));
		printf("child %s\n", list);
		_exit(0);
	}
	if (waitpid(pid, NULL, 0) < 0)
		die("waitpid");
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* the vDSO: no syscall, no stop */
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Rounds until the status shows one CPU (true), MAX_ROUNDS at most. */
static bool rounds_until_pinned(const char *file, mode_t mode, char *list, size_t size)
{
	for (int r = 0; r < MAX_ROUNDS; r++) {
		round_of_calls(file, mode);
		status_list(list, size);
		if (!strpbrk(list, ",-"))
			return true;
	}
	return false;
}

static const char *self_exe, *texec_file;

/* The rounds in a thread that then execs: the pin must follow it. */
static void *texec_main(void *arg)
{
	char list[256];
	struct stat st;
	(void)arg;
	if (stat(texec_file, &st) < 0)
		die(texec_file);
	if (!rounds_until_pinned(texec_file, st.st_mode & 07777, list, sizeof(list)))
		printf("never pinned\n");
	else
		printf("pinned %s\n", list);
	execl(self_exe, self_exe, "quiet", texec_file, (char *)NULL);
	die("execl");
	return NULL;
}

static void *thread_main(void *arg)
{
	char list[256];
	(void)arg;
	status_list(list, sizeof(list));
	printf("thread %s\n", list);
	return NULL;
}

int main(int argc, char **argv)
{
	char list[256], before[256];
	struct stat st;
	cpu_set_t set;

	if (argc != 3) {
		fprintf(stderr, "usage: affinity get|fork|thread|set FILE\n");
		return 2;
	}
	const char *mode = argv[1], *file = argv[2];
	if (stat(file, &st) < 0)
		die(file);
	setvbuf(stdout, NULL, _IONBF, 0);
	if (strcmp(mode, "texec") == 0) {
		pthread_t th;
		self_exe = "/proc/self/exe";
		texec_file = file;
		if ((errno = pthread_create(&th, NULL, texec_main, NULL)) != 0)
			die("pthread_create");
		pthread_join(th, NULL); /* never returns: the exec ends this thread */
		return 2;
	}
	status_list(before, sizeof(before));
	if (!rounds_until_pinned(file, st.st_mode & 07777, list, sizeof(list)))
		printf("never pinned\n");
	else
		printf("pinned %s\n", list);

	if (strcmp(mode, "get") == 0) {
		if (sched_getaffinity(0, sizeof(set), &set) < 0)
			die("sched_getaffinity");
		set_list(&set, list, sizeof(list));
		printf("get %s\n", list);
		if (!rounds_until_pinned(file, st.st_mode & 07777, list, sizeof(list)))
			printf("never again\n");
		else
			printf("again %s\n", list);
		if (sched_getaffinity(0, sizeof(set), &set) < 0)
			die("sched_getaffinity");
		set_list(&set, list, sizeof(list));
		printf("get2 %s\n", list);
	} else if (strcmp(mode, "fork") == 0) {
		fork_child_reports();
		status_list(list, sizeof(list));
		printf("parent %s\n", list);
	} else if (strcmp(mode, "thread") == 0) {
		pthread_t th;
		if ((errno = pthread_create(&th, NULL, thread_main, NULL)) != 0)
			die("pthread_create");
		pthread_join(th, NULL);
		status_list(list, sizeof(list));
		printf("main %s\n", list);
	} else if (strcmp(mode, "set") == 0) {
		cpu_set_t first;
		parse_list(before, &set);
		CPU_ZERO(&first);
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set)) {
				CPU_SET(c, &first);
				break;
			}
		if (sched_setaffinity(0, sizeof(first), &first) < 0)
			die("sched_setaffinity");
		/* The fork ends a pin: what comes back must be what we set. */
		fork_child_reports();
		status_list(list, sizeof(list));
		printf("set %s\n", list);
		round_of_calls(file, st.st_mode & 07777);
		status_list(list, sizeof(list));
		printf("later %s\n", list);
	} else if (strcmp(mode, "quiet") == 0) {
		double until = now_s() + 2;
		volatile unsigned long spin = 0;
		do {
			for (double slice = now_s() + 0.02; now_s() < slice;)
				spin++;
			status_list(list, sizeof(list));
		} while (!strpbrk(list, ",-") && now_s() < until);
		printf("quiet %s\n", list);
	} else {
		fprintf(stderr, "affinity: unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
