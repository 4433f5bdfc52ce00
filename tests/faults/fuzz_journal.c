/* fuzz_journal — libFuzzer target for the journal reader and the restore.
 *
 * The input is a transaction's log, optionally followed by the separator
 * "\n--TGFUZZ-TAR--\n" and its pre.tar.zst, optionally followed by
 * "\n--TGFUZZ-INFO--\n" and extra lines for its info file (state=, ended_ns=
 * ...; never workspace=, see jfixture.h). Each run writes them into a
 * throwaway state dir next to a small real workspace (jfixture.h), then
 * decodes every record, loads the journal and rolls it back twice (the
 * restore must be idempotent and must resume). What must hold, whatever the
 * bytes: no crash, no sanitizer report, and nothing outside the workspace
 * changed — not the sentinel beside it, not what its symlinks point at.
 *
 * Build: CC=clang meson setup -Dfuzzing=true -Db_sanitize=address,undefined
 * -Db_lundef=false build-fuzz; run: scripts/fuzz.sh, or
 * build-fuzz/tests/faults/fuzz-journal tests/faults/fuzz-corpus.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "journal/journal.h"
#include "jfixture.h"

#define SEP "\n--TGFUZZ-TAR--\n"
#define SEP_INFO "\n--TGFUZZ-INFO--\n"

static struct jfx fx;

static void cleanup(void)
{
	jfx_teardown(&fx);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	int e = jfx_setup(&fx);
	if (e < 0) {
		fprintf(stderr, "fuzz-journal: fixture: %s\n", strerror(-e));
		exit(1);
	}
	atexit(cleanup);
	return 0;
}

static void must_hold(const char *when)
{
	const char *what = jfx_outside_changed(&fx);
	if (what) {
		fprintf(stderr, "fuzz-journal: %s changed something outside the workspace: %s\n", when, what);
		abort();
	}
}

static void decode_all(const uint8_t *log, size_t len)
{
	size_t pos = 0;
	while (pos < len) {
		struct tg_jrec r;
		ssize_t used = tg_jrec_decode((const char *)log + pos, len - pos, &r);
		if (used <= 0)
			break;
		if ((size_t)used > len - pos)
			abort(); /* consumed more than it was given */
		/* Touch every field a reader uses: ASan sees a bad length. */
		volatile size_t sink = strlen(r.path) + (r.path2 ? strlen(r.path2) : 0);
		for (size_t i = 0; i < r.aux_len; i++)
			sink += (unsigned char)r.aux[i];
		(void)sink;
		(void)tg_jrec_kind_name(r.kind);
		tg_jrec_clear(&r);
		pos += (size_t)used;
	}
}

/* A mutated record almost never keeps a valid CRC, which would stop every
 * input at the first record: most inputs get their CRCs recomputed, so the
 * fuzzer reaches the restore; the rest test the CRC check itself. */
static uint8_t *fix_crcs(const uint8_t *log, size_t len)
{
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		abort();
	memcpy(buf, log, len);
	size_t pos = 0;
	while (len - pos >= 12) {
		uint32_t plen;
		memcpy(&plen, buf + pos + 4, 4);
		if (plen > len - pos - 12)
			break;
		uint32_t crc = tg_crc32(0, buf + pos + 12, plen);
		memcpy(buf + pos + 8, &crc, 4);
		pos += 12 + (size_t)plen;
	}
	return buf;
}

static int count_cb(void *ud, const struct tg_jrec *r)
{
	(void)r;
	(*(size_t *)ud)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *tar = memmem(data, size, SEP, strlen(SEP));
	size_t loglen = tar ? (size_t)(tar - data) : size;
	size_t tarlen = tar ? size - loglen - strlen(SEP) : 0;
	if (tar)
		tar += strlen(SEP);
	const uint8_t *info = tar ? memmem(tar, tarlen, SEP_INFO, strlen(SEP_INFO)) : NULL;
	size_t infolen = 0;
	if (info) {
		infolen = tarlen - (size_t)(info - tar) - strlen(SEP_INFO);
		tarlen = (size_t)(info - tar);
		info += strlen(SEP_INFO);
	}

	uint8_t *log = (size & 3) != 3 ? fix_crcs(data, loglen) : NULL;
	decode_all(log ? log : data, loglen);
	int e = jfx_reset_ws(&fx);
	if (!e)
		e = jfx_write_txn_info(&fx, log ? log : data, loglen, tar, tarlen, (const char *)info, infolen);
	free(log);
	if (e < 0) {
		fprintf(stderr, "fuzz-journal: cannot reset the fixture: %s\n", strerror(-e));
		abort();
	}
	struct tg_journal *j = NULL;
	if (tg_journal_load(fx.state, JFX_ID, &j) == 0) {
		size_t n = 0;
		(void)tg_journal_foreach(j, count_cb, &n);
		(void)tg_journal_rollback(j, NULL, NULL);
		must_hold("the rollback");
		tg_journal_free(j);
		/* Again from the state the first one left (resume, idempotence). */
		if (tg_journal_load(fx.state, JFX_ID, &j) == 0) {
			(void)tg_journal_rollback(j, NULL, NULL);
			tg_journal_free(j);
		}
	}
	must_hold("the second rollback");
	return 0;
}
