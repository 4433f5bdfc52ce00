/* tree — process trees for the tracer's integration tests.
 *
 *   tree fanout N          fork N children that each exit 0; wait; exit 0
 *   tree threads N PROG    N threads, each fork+exec PROG and wait; exit 0 if all ran
 *   tree vfork PROG        vfork + exec PROG; exit with its code
 *   tree thread-exec PROG ARGS...   a non-leader thread execs PROG
 *   tree daemon FILE       double fork + setsid; the daemon sleeps 60 s then
 *                          touches FILE; the main child exits 0 at once
 *   tree argv-race N       a second thread keeps rewriting argv while the
 *                          first execs /bin/true with it (N attempts)
 *   tree path-race N       same, rewriting the program path between /bin/true and /bin/echo
 *   tree bench-trap N FILE N trapped calls (chmod FILE); prints ns per call
 *   tree bench-free N FILE N untrapped calls (stat FILE); prints ns per call
 *   tree sleep MS          sleep, then exit 0
 *   tree ignore-term MS    ignore SIGTERM, sleep MS, exit 0
 *   tree count-int MS      count SIGINTs: wait for the first, then MS more; exit with the count
 *   tree raise SIG         die of signal SIG (default action restored first)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char **exec_argv;

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int run_and_wait(char *const *argv)
{
	int st;
	pid_t p = fork();
	if (p == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (p < 0 || waitpid(p, &st, 0) != p)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int fanout(int n)
{
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p == 0)
			_exit(0);
		if (p < 0)
			return 1;
	}
	int st, bad = 0;
	while (wait(&st) > 0)
		bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	return bad;
}

static void *thread_spawn(void *arg)
{
	return (void *)(intptr_t)run_and_wait(exec_argv);
}

static int threads(int n)
{
	pthread_t t[256];
	int bad = 0;
	if (n > 256)
		n = 256;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, thread_spawn, NULL) != 0)
			return 1;
	for (int i = 0; i < n; i++) {
		void *r;
		pthread_join(t[i], &r);
		bad |= r != NULL;
	}
	return bad;
}

static int do_vfork(char **argv)
{
	int st;
	pid_t p = vfork();
	if (p == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (p < 0 || waitpid(p, &st, 0) != p)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void *thread_exec(void *arg)
{
	execvp(exec_argv[0], exec_argv);
	_exit(127);
}

static int thread_exec_main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, thread_exec, NULL) != 0)
		return 1;
	for (;;)
		pause();
}

static int daemonize(const char *file)
{
	pid_t p = fork();
	if (p != 0) {
		int st;
		waitpid(p, &st, 0);
		return 0;
	}
	setsid();
	if (fork() != 0)
		_exit(0);
	msleep(60000);
	int fd = open(file, O_WRONLY | O_CREAT, 0644);
	_exit(fd < 0);
}

static volatile sig_atomic_t nint;

static void on_int(int sig)
{
	nint++;
}

static int count_int(long ms)
{
	struct sigaction sa = { .sa_handler = on_int };
	sigset_t block, old;
	sigaction(SIGINT, &sa, NULL);
	/* Blocked until sigsuspend: a SIGINT between the test of nint and
	 * a pause() would be handled there and leave pause() waiting forever. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &old);
	printf("ready\n");
	fflush(stdout);
	while (!nint)
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	msleep(ms);
	return nint;
}

static char race_buf[2][16] = { "aaaaaaaa", "aaaaaaaa" };
static atomic_int racing = 1;

/* Writes through volatile: without it a compiler may keep the flips in a
 * register (no other thread may legally look) and the race never happens. */
static void *flipper(void *arg)
{
	volatile char *b = race_buf[1];
	while (atomic_load(&racing))
		for (int i = 0; i < 8; i++)
			b[i] = b[i] == 'a' ? 'b' : 'a';
	return NULL;
}

static int argv_race(int n)
{
	pthread_t t;
	char *argv[] = { "/bin/true", race_buf[1], NULL };
	if (pthread_create(&t, NULL, flipper, NULL) != 0)
		return 1;
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p == 0) {
			/* The child has one thread: race inside it instead. */
			pthread_t t2;
			pthread_create(&t2, NULL, flipper, NULL);
			execv(argv[0], argv);
			_exit(127);
		}
		int st;
		waitpid(p, &st, 0);
	}
	return 0;
}

static char path_buf[16] = "/bin/true";

static void *path_flipper(void *arg)
{
	volatile char *b = path_buf;
	for (unsigned long i = 0; atomic_load(&racing); i++) {
		const char *src = i & 1 ? "/bin/echo" : "/bin/true";
		for (int k = 0; k < 10; k++)
			b[k] = src[k];
	}
	return NULL;
}

static int path_race(int n)
{
	char *argv[] = { "prog", NULL };
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p == 0) {
			pthread_t t;
			pthread_create(&t, NULL, path_flipper, NULL);
			for (;;)
				syscall(SYS_execve, path_buf, argv, NULL);
		}
		int st;
		waitpid(p, &st, 0);
	}
	return 0;
}

static long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static int bench(int n, const char *file, bool trapped)
{
	struct stat st;
	long t0 = now_ns();
	for (int i = 0; i < n; i++)
		if (trapped ? chmod(file, 0644) : stat(file, &st))
			return 1;
	printf("%ld ns per %s call\n", (now_ns() - t0) / n, trapped ? "trapped" : "untrapped");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: tree MODE ARG...\n");
		return 125;
	}
	const char *mode = argv[1];
	exec_argv = argv + 3;
	if (strcmp(mode, "fanout") == 0)
		return fanout(atoi(argv[2]));
	if (strcmp(mode, "threads") == 0)
		return threads(atoi(argv[2]));
	if (strcmp(mode, "vfork") == 0)
		return do_vfork(argv + 2);
	if (strcmp(mode, "thread-exec") == 0) {
		exec_argv = argv + 2;
		return thread_exec_main();
	}
	if (strcmp(mode, "daemon") == 0)
		return daemonize(argv[2]);
	if (strcmp(mode, "argv-race") == 0)
		return argv_race(atoi(argv[2]));
	if (strcmp(mode, "path-race") == 0)
		return path_race(atoi(argv[2]));
	if (strcmp(mode, "bench-trap") == 0 || strcmp(mode, "bench-free") == 0)
		return argc > 3 ? bench(atoi(argv[2]), argv[3], mode[6] == 't') : 125;
	if (strcmp(mode, "sleep") == 0) {
		msleep(atol(argv[2]));
		return 0;
	}
	if (strcmp(mode, "ignore-term") == 0) {
		signal(SIGTERM, SIG_IGN);
		msleep(atol(argv[2]));
		return 0;
	}
	if (strcmp(mode, "count-int") == 0)
		return count_int(atol(argv[2]));
	if (strcmp(mode, "raise") == 0) {
		int sig = atoi(argv[2]);
		signal(sig, SIG_DFL);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		raise(sig);
		return 1;
	}
	fprintf(stderr, "tree: unknown mode %s\n", mode);
	return 125;
}
