/* journal/gc.c — retire runs from the history, empty the trash later
 * (journal/journal.h). */

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "journal_int.h"
#include "base/fs.h"
#include "base/util.h"

int tg_journal_open_sub(const char *state_dir, const char *sub)
{
	_cleanup_free_ char *p = tg_asprintf("%s/%s", state_dir, sub);
	if (!p)
		return -ENOMEM;
	int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int tg_journal_retire(const char *state_dir, const char *id)
{
	if (!id[0] || strchr(id, '/') || id[0] == '.')
		return -EINVAL;
	_cleanup_close_ int sd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sd < 0)
		return -errno;
	if (mkdirat(sd, "trash", 0700) < 0 && errno != EEXIST)
		return -errno;
	_cleanup_free_ char *from = tg_asprintf("txn/%s", id);
	_cleanup_free_ char *to = tg_asprintf("trash/%s", id);
	if (!from || !to)
		return -ENOMEM;
	/* When trash/<id> is somehow there already the rename fails and the
	 * run simply stays in the history: never lose one for the trash. */
	return renameat(sd, from, sd, to) == 0 || errno == ENOENT ? 0 : -errno;
}

int tg_journal_retire_sync(const char *state_dir)
{
	_cleanup_close_ int txn = tg_journal_open_sub(state_dir, "txn");
	_cleanup_close_ int trash = tg_journal_open_sub(state_dir, "trash");
	if (txn < 0)
		return txn;
	if (trash < 0)
		return trash == -ENOENT ? tg_fs_fsync_dir(txn) : trash;
	int e = tg_fs_fsync_dir(txn);
	return e ? e : tg_fs_fsync_dir(trash);
}

bool tg_journal_has_trash(const char *state_dir)
{
	_cleanup_close_ int fd = tg_journal_open_sub(state_dir, "trash");
	DIR *d = fd >= 0 ? tg_fs_opendir(fd) : NULL;
	if (!d)
		return false;
	bool any = tg_fs_readdir(d) != NULL;
	closedir(d);
	return any;
}

/* Past an error it goes on with the rest; the first -errno is returned. */
int tg_journal_gc_upto(const char *state_dir, size_t max)
{
	_cleanup_close_ int fd = tg_journal_open_sub(state_dir, "trash");
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	DIR *d = tg_fs_opendir(fd);
	if (!d)
		return -errno;
	int e = 0;
	struct dirent *de;
	while ((de = tg_fs_readdir(d))) {
		int q = tg_fs_remove_tree_upto(dirfd(d), de->d_name, &max);
		if (q && !e)
			e = q;
		if (q > 0)
			break;
	}
	closedir(d);
	return e;
}

int tg_journal_gc(const char *state_dir)
{
	return tg_journal_gc_upto(state_dir, SIZE_MAX);
}

int tg_journal_gc_main(const char *state_dir)
{
	(void)setpriority(PRIO_PROCESS, 0, 19);
	return tg_journal_gc(state_dir) < 0 ? 1 : 0;
}

static void gc_child(const char *state_dir)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int i = 0; i < 3; i++)
		if (null >= 0)
			dup3(null, i, 0);
	closefrom(3);
	sigset_t all;
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	setsid();
	_exit(tg_journal_gc_main(state_dir));
}

static const char *gc_exe;

void tg_journal_gc_set_exe(const char *exe)
{
	gc_exe = exe;
}

/* The same start as gc_child's, made by posix_spawn: a new session, no
 * signal blocked or ignored, /dev/null for 0-2 and no other fd. */
static int gc_exec(const char *state_dir)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	if (posix_spawn_file_actions_init(&fa) != 0)
		return -ENOMEM;
	if (posix_spawnattr_init(&at) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -ENOMEM;
	}
	int e = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDWR, 0);
	if (!e)
		e = posix_spawn_file_actions_adddup2(&fa, 0, 1);
	if (!e)
		e = posix_spawn_file_actions_adddup2(&fa, 0, 2);
	if (!e)
		e = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	if (!e)
		e = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (!e)
		e = posix_spawnattr_setsigmask(&at, &none);
	if (!e)
		e = posix_spawnattr_setsigdefault(&at, &all);
	char *argv[] = { TG_GC_ARGV0, (char *)state_dir, NULL };
	pid_t pid;
	if (!e)
		e = posix_spawn(&pid, gc_exe, &fa, &at, argv, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return -e;
}

int tg_journal_gc_spawn(const char *state_dir)
{
	if (gc_exe && gc_exec(state_dir) == 0)
		return 0;
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* The grandchild is adopted by init (or a subreaper): nobody
		 * has to reap it, nobody waits for it. */
		pid_t g = fork();
		if (g == 0)
			gc_child(state_dir);
		_exit(g < 0 ? 1 : 0);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return 0;
}
