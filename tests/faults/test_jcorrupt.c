/* test_jcorrupt — the journal reader and restore fed truncated, bit-flipped
 * and fuzzer-found logs (tests/faults/fuzz-corpus, tests/faults/regress):
 * every decode either yields a whole record or refuses (-EBADMSG), a torn
 * tail ends the log where the last whole record ends, and no restore ever
 * changes anything outside the workspace (jfixture.h). Plus a capture that
 * fails for lack of room (RLIMIT_FSIZE standing in for a full disk): the
 * next capture and the restore must still work.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "journal/journal.h"
#include "jfixture.h"

#define SEP "\n--TGFUZZ-TAR--\n"

struct blob {
	char *p;
	size_t len;
};

static struct blob read_blob(const char *path)
{
	struct blob b = { 0 };
	FILE *f = fopen(path, "rb");
	cr_assert(f, "cannot open %s", path);
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		b.p = realloc(b.p, b.len + n + 1);
		cr_assert(b.p);
		memcpy(b.p + b.len, buf, n);
		b.len += n;
	}
	fclose(f);
	return b;
}

/* Every file of a source dir, by name (the corpus and the regressions). */
static size_t list_dir(const char *sub, char names[][1024], size_t max)
{
	const char *src = getenv("TXGUARD_SOURCE_DIR");
	cr_assert(src, "TXGUARD_SOURCE_DIR unset: run through meson test");
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/tests/faults/%s", src, sub);
	DIR *d = opendir(dir);
	cr_assert(d, "cannot list %s", dir);
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < max)
		if (de->d_name[0] != '.')
			snprintf(names[n++], 1024, "%s/%s", dir, de->d_name);
	closedir(d);
	return n;
}

/* Decode buf as a log: every step consumes a whole record or stops with
 * -EBADMSG (0 only at the very end). Returns the records read and sets
 * *used to the bytes they span. */
static size_t decode_log(const char *buf, size_t len, size_t *used)
{
	size_t pos = 0, n = 0;
	for (;;) {
		struct tg_jrec r;
		ssize_t u = tg_jrec_decode(buf + pos, len - pos, &r);
		if (u == 0) {
			cr_assert_eq(pos, len, "decode returned 0 before the end (at %zu of %zu)", pos, len);
			break;
		}
		if (u < 0) {
			cr_assert_eq(u, -EBADMSG, "decode at %zu: %zd, want a record or -EBADMSG", pos, u);
			break;
		}
		cr_assert_leq((size_t)u, len - pos, "decode consumed more than it was given");
		cr_assert(r.path, "a decoded record without a path");
		tg_jrec_clear(&r);
		pos += (size_t)u;
		n++;
	}
	*used = pos;
	return n;
}

/* Load and roll back log (+ tar) on a fresh workspace; whatever the restore
 * does with it, nothing outside the workspace may change. */
static void restore_case(struct jfx *f, const char *log, size_t loglen, const char *tar, size_t tarlen,
                         const char *what)
{
	cr_assert_eq(jfx_reset_ws(f), 0);
	cr_assert_eq(jfx_write_txn(f, log, loglen, tar, tarlen), 0);
	struct tg_journal *j = NULL;
	int e = tg_journal_load(f->state, JFX_ID, &j);
	if (e == 0) {
		(void)tg_journal_rollback(j, NULL, NULL);
		tg_journal_free(j);
	} else {
		cr_assert_eq(e < 0, true, "%s: load returned %d", what, e);
	}
	const char *changed = jfx_outside_changed(f);
	cr_assert_null(changed, "%s: the restore changed something outside the workspace: %s", what, changed);
}

static char names[2048][1024];
static struct jfx fx;

/* Criterion runs .fini even when an assertion ends the test early. */
static void fx_init(void)
{
	cr_assert_eq(jfx_setup(&fx), 0);
}

static void fx_fini(void)
{
	jfx_teardown(&fx);
}

/* One regression input in a child process, so that a crash in one does not
 * hide the others. Exit 0: refused or restored, nothing outside changed;
 * 2: something outside changed; a signal: the reader or restore crashed. */
static void regression_child(struct jfx *f, const char *path)
{
	struct blob b = read_blob(path);
	const char *sep = memmem(b.p, b.len, SEP, strlen(SEP));
	size_t loglen = sep ? (size_t)(sep - b.p) : b.len;
	const char *tar = sep ? sep + strlen(SEP) : NULL;
	for (size_t pos = 0; pos < loglen;) {
		struct tg_jrec r;
		ssize_t u = tg_jrec_decode(b.p + pos, loglen - pos, &r);
		if (u <= 0)
			break;
		tg_jrec_clear(&r);
		pos += (size_t)u;
	}
	if (jfx_reset_ws(f) < 0 || jfx_write_txn(f, b.p, loglen, tar, tar ? b.len - loglen - strlen(SEP) : 0) < 0)
		_exit(3);
	struct tg_journal *j = NULL;
	if (tg_journal_load(f->state, JFX_ID, &j) == 0) {
		(void)tg_journal_rollback(j, NULL, NULL);
		tg_journal_free(j);
	}
	const char *changed = jfx_outside_changed(f);
	if (changed) {
		fprintf(stderr, "%s: changed outside the workspace: %s\n", path, changed);
		_exit(2);
	}
	_exit(0);
}

Test(jcorrupt, regressions_refuse_cleanly, .init = fx_init, .fini = fx_fini)
{
	struct jfx f = fx;
	size_t n = list_dir("regress", names, 2048);
	cr_assert_gt(n, 0);
	char failed[4096] = "";
	for (size_t i = 0; i < n; i++) {
		fflush(NULL);
		pid_t pid = fork();
		cr_assert_geq(pid, 0);
		if (pid == 0)
			regression_child(&f, names[i]);
		int st = 0;
		cr_assert_eq(waitpid(pid, &st, 0), pid);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			continue;
		char line[1200];
		snprintf(line, sizeof(line), "\n  %s: %s %d", strrchr(names[i], '/') + 1,
		         WIFSIGNALED(st) ? "crashed with signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		strncat(failed, line, sizeof(failed) - strlen(failed) - 1);
	}
	cr_assert_str_empty(failed, "fuzzer-found journals not handled cleanly:%s", failed);
}

/* The corpus logs, cut at every length: the records before the cut decode,
 * the torn one stops the reader, the restore stays inside. */
Test(jcorrupt, truncated_logs_stop_at_the_torn_tail, .timeout = 120, .init = fx_init, .fini = fx_fini)
{
	struct jfx f = fx;
	size_t n = list_dir("fuzz-corpus", names, 2048), logs = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strstr(names[i], ".log") || strstr(names[i], ".logtar"))
			continue;
		struct blob b = read_blob(names[i]);
		size_t full_used, whole = decode_log(b.p, b.len, &full_used);
		cr_assert_eq(full_used, b.len, "%s: the intact log does not decode to its end", names[i]);
		cr_assert_gt(whole, 0);
		for (size_t cut = 0; cut <= b.len; cut++) {
			size_t used;
			decode_log(b.p, cut, &used);
			cr_assert_leq(used, cut);
			if (cut % 23 == 0 || cut + 1 >= b.len)
				restore_case(&f, b.p, cut, NULL, 0, names[i]);
		}
		logs++;
		free(b.p);
	}
	cr_assert_gt(logs, 0, "no .log seeds in tests/faults/fuzz-corpus");
}

/* One flipped bit anywhere in a record: CRC32 catches every single-bit
 * error, so the reader stops exactly at that record. */
Test(jcorrupt, bit_flips_are_refused, .timeout = 120, .init = fx_init, .fini = fx_fini)
{
	struct jfx f = fx;
	size_t n = list_dir("fuzz-corpus", names, 2048);
	for (size_t i = 0; i < n; i++) {
		if (!strstr(names[i], ".log") || strstr(names[i], ".logtar"))
			continue;
		struct blob b = read_blob(names[i]);
		/* Record boundaries of the intact log. */
		size_t starts[4096], nrec = 0, pos = 0;
		while (pos < b.len && nrec < 4096) {
			struct tg_jrec r;
			ssize_t u = tg_jrec_decode(b.p + pos, b.len - pos, &r);
			cr_assert_gt(u, 0);
			tg_jrec_clear(&r);
			starts[nrec++] = pos;
			pos += (size_t)u;
		}
		for (size_t off = 0; off < b.len; off++) {
			b.p[off] ^= (char)(1u << (off % 8));
			size_t used, k = 0;
			while (k + 1 < nrec && starts[k + 1] <= off)
				k++;
			size_t got = decode_log(b.p, b.len, &used);
			cr_assert_eq(got, k, "%s: a flip at byte %zu (record %zu) read %zu records", names[i], off, k, got);
			if (off % 29 == 0)
				restore_case(&f, b.p, b.len, NULL, 0, names[i]);
			b.p[off] ^= (char)(1u << (off % 8));
		}
		free(b.p);
	}
}

/* A capture that runs out of room (RLIMIT_FSIZE: EFBIG, as ENOSPC would)
 * must leave pre.tar.zst a clean sequence of frames: the next capture is
 * readable and the restore puts both files back. */
Test(jcorrupt, failed_capture_leaves_the_tar_usable, .init = fx_init, .fini = fx_fini)
{
	struct jfx f = fx;
	char big[512], a[512], c[512];
	jfx_path(big, sizeof(big), f.ws, "big");
	jfx_path(a, sizeof(a), f.ws, "a");
	jfx_path(c, sizeof(c), f.ws, "d/c");
	size_t blen = 1u << 20;
	char *bytes = malloc(blen);
	cr_assert(bytes);
	unsigned s = 12345;
	for (size_t i = 0; i < blen; i++)
		bytes[i] = (char)((s = s * 1103515245u + 12345u) >> 16); /* incompressible enough */
	cr_assert_eq(jfx_write(big, bytes, blen, 0644), 0);

	struct tg_journal *j = NULL;
	cr_assert_eq(tg_journal_create(f.state, f.ws, "test", NULL, &j), 0);
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = { 256 * 1024, 256 * 1024 };
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);

	struct stat st;
	cr_assert_eq(lstat(big, &st), 0);
	int e = tg_journal_content(j, "big", &st);
	cr_assert_lt(e, 0, "a 1 MiB pre-image fitted under a 256 KiB file size limit");
	cr_assert_eq(lstat(c, &st), 0);
	cr_assert_eq(tg_journal_content(j, "d/c", &st), 0, "the capture after a failed one");
	cr_assert_eq(jfx_write(c, "changed\n", 8, 0600), 0);

	e = tg_journal_rollback(j, NULL, NULL);
	cr_assert_eq(e, 0, "rollback after a failed capture: %s", strerror(-e));
	cr_assert(jfx_file_is(c, "gamma\n"), "d/c was not restored");
	cr_assert(jfx_file_is(a, "alpha\n"));
	tg_journal_free(j);
	free(bytes);
}
