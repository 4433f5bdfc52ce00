/* journal-tamper: change a workspace file (journaled), then go after
 * txguard's state directory — named in the tracer's /proc/PID/cmdline
 * (--state-dir), and passed as ESC_STATE so the native run can show the
 * attack works: truncate every file in it, unlink them, and drop a file of
 * our own there. Then exit 1, so txguard must roll back from a journal it
 * still has. Breach when any write to the state directory goes through;
 * the runner also checks that the workspace file came back. */
#include <dirent.h>
#include <limits.h>
#include "../esc.h"

/* What an attacker would find: the tracer's command line. */
static void show_tracer_cmdline(void)
{
	pid_t tp = esc_tracer_pid();
	char path[64], buf[4096];
	if (tp <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", tp);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (n <= 0) {
		esc_log("tracer cmdline: %s", strerror(errno));
		return;
	}
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	esc_log("tracer cmdline: %s", buf);
}

static int attack_dir(const char *dir, int depth)
{
	int hits = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d) {
		esc_log("opendir %s: %s", dir, strerror(errno));
		return 0;
	}
	while ((e = readdir(d)) && depth < 4) {
		char p[PATH_MAX];
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR) {
			hits += attack_dir(p, depth + 1);
			continue;
		}
		if (truncate(p, 0) == 0)
			hits++;
		if (unlink(p) == 0)
			hits++;
	}
	closedir(d);
	return hits;
}

int main(void)
{
	esc_start("journal-tamper");
	const char *state = esc_env("ESC_STATE");
	int err = esc_write_file(esc_ws("journaled.txt"), "CHANGED\n", O_TRUNC);
	esc_log("workspace write -> %d", err);
	show_tracer_cmdline();
	int hits = attack_dir(state, 0);
	char *own = NULL;
	if (asprintf(&own, "%s/planted", state) > 0 && esc_write_file(own, "PLANTED\n", O_TRUNC) == 0)
		hits++;
	esc_log("%d writes into the state directory went through", hits);
	if (hits)
		esc_log("BREACH: the tracee changed txguard's state directory");
	return ESC_HELD;
}
