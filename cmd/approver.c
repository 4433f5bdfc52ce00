/* approver.c — `action: ask` answered by an outside program (approver.h). */
#include "approver.h"

#include <ctype.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/audit.h"
#include "base/json.h"
#include "base/util.h"

#define TG_ANSWER_MAX 4096

struct remembered {
	char *rule_id;
	bool allow;
	struct remembered *next;
};

struct tg_approver {
	char *cmd;
	uint64_t timeout_ms;
	char *workspace;
	struct remembered *memo;
	char reason[512];            /* the last answer's reason, or why it failed */
};

int tg_approver_new(const char *cmd, uint64_t timeout_ms, const char *workspace,
                    struct tg_approver **out)
{
	struct tg_approver *a = calloc(1, sizeof(*a));
	*out = NULL;
	if (!a || (cmd && !(a->cmd = tg_strdup(cmd))) ||
	    (workspace && !(a->workspace = tg_strdup(workspace)))) {
		tg_approver_free(a);
		return -ENOMEM;
	}
	a->timeout_ms = timeout_ms ? timeout_ms : 30000;
	*out = a;
	return 0;
}

void tg_approver_free(struct tg_approver *a)
{
	if (!a)
		return;
	while (a->memo) {
		struct remembered *m = a->memo;
		a->memo = m->next;
		free(m->rule_id);
		free(m);
	}
	free(a->cmd);
	free(a->workspace);
	free(a);
}

/* ---- the question ---- */

static char *question(const struct tg_approver *a, const struct tg_op *op, const struct tg_verdict *v)
{
	struct tg_json *j = tg_json_new_buffer();
	if (!j)
		return NULL;
	char addr[256];
	tg_json_begin_object(j);
	tg_json_kv_str(j, "rule", v->rule_id);
	tg_json_kv_str(j, "reason", v->reason);
	tg_json_kv_str(j, "source", v->source);
	tg_json_kv_str(j, "op", tg_op_kind_name(op->kind));
	tg_json_kv_str(j, "syscall", op->name);
	tg_json_kv_int(j, "pid", op->pid);
	tg_json_kv_str(j, "path", op->path);
	tg_json_kv_str(j, "path2", op->path2);
	if (op->argv)
		tg_json_kv_strv(j, "argv", op->argv);
	if (op->addrlen)
		tg_json_kv_str(j, "address", tg_sockaddr_format(&op->addr, op->addrlen, addr, sizeof(addr)));
	tg_json_kv_str(j, "workspace", a->workspace);
	tg_json_end_object(j);
	size_t len = 0;
	const char *s = tg_json_buffer(j, &len);
	char *out = s && !tg_json_error(j) ? tg_asprintf("%.*s\n", (int)len, s) : NULL;
	tg_json_free(j);
	return out;
}

/* ---- the answer: one flat JSON object of strings and booleans ---- */

struct answer {
	char decision[16];
	bool remember;
	char reason[400];
};

static const char *skip_ws(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/* A JSON string without escapes beyond \" and \\ (enough for an answer). */
static const char *parse_string(const char *p, char *buf, size_t size)
{
	size_t n = 0;
	if (*p++ != '"')
		return NULL;
	for (; *p && *p != '"'; p++) {
		if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
			p++;
		else if (*p == '\\' || (unsigned char)*p < 0x20)
			return NULL;
		if (n + 1 < size)
			buf[n++] = *p;
	}
	if (size)
		buf[n] = '\0';
	return *p == '"' ? p + 1 : NULL;
}

static int parse_answer(const char *line, struct answer *ans)
{
	memset(ans, 0, sizeof(*ans));
	const char *p = skip_ws(line);
	if (*p++ != '{')
		return -EINVAL;
	for (p = skip_ws(p); *p != '}';) {
		char key[32], val[sizeof(ans->reason)];
		if (!(p = parse_string(p, key, sizeof(key))) || *(p = skip_ws(p)) != ':')
			return -EINVAL;
		p = skip_ws(p + 1);
		bool is_bool = strncmp(p, "true", 4) == 0 || strncmp(p, "false", 5) == 0;
		if (is_bool) {
			bool b = *p == 't';
			p += b ? 4 : 5;
			if (strcmp(key, "remember") == 0)
				ans->remember = b;
		} else {
			if (!(p = parse_string(p, val, sizeof(val))))
				return -EINVAL;
			if (strcmp(key, "decision") == 0 && strlen(val) < sizeof(ans->decision))
				memcpy(ans->decision, val, strlen(val) + 1);
			else if (strcmp(key, "reason") == 0)
				snprintf(ans->reason, sizeof(ans->reason), "%s", val);
		}
		p = skip_ws(p);
		if (*p == ',')
			p = skip_ws(p + 1);
		else if (*p != '}')
			return -EINVAL;
	}
	if (*skip_ws(p + 1))
		return -EINVAL;
	return strcmp(ans->decision, "allow") == 0 || strcmp(ans->decision, "deny") == 0 ? 0 : -EINVAL;
}

/* ---- running it ---- */

/* Write all of q to fd, ignoring an approver that does not read it: its
 * answer alone counts. SIGPIPE is blocked around the write and any pending
 * one consumed, so txguard never dies of it. */
static void feed(int fd, const char *q)
{
	sigset_t pipe_set, old;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, &old);
	for (size_t off = 0, len = strlen(q); off < len;) {
		ssize_t n = write(fd, q + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	struct timespec zero = { 0, 0 };
	while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
		;
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Read one line until the deadline. 1 when a line (or EOF with text) came,
 * 0 at EOF without text, -ETIMEDOUT. */
static int read_line(int fd, char *buf, size_t size, uint64_t deadline_ns)
{
	size_t n = 0;
	for (;;) {
		uint64_t now = tg_now_ns();
		if (now >= deadline_ns)
			return -ETIMEDOUT;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int ms = (int)((deadline_ns - now) / 1000000u) + 1;
		int r = poll(&pfd, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 ? -ETIMEDOUT : -errno;
		ssize_t got = read(fd, buf + n, size - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			buf[n] = '\0';
			return n ? 1 : 0;
		}
		n += (size_t)got;
		buf[n] = '\0';
		char *nl = strchr(buf, '\n');
		if (nl) {
			*nl = '\0';
			return 1;
		}
		if (n + 1 >= size)
			return 1;   /* too long: parsed as garbage */
	}
}

static pid_t spawn(const char *cmd, int *in_fd, int *out_fd)
{
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		/* The approver is the caller's tool, not part of the run: the
		 * signals txguard blocks are its own again. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (pid < 0) {
		close(in[1]);
		close(out[0]);
		return -1;
	}
	*in_fd = in[1];
	*out_fd = out[0];
	return pid;
}

/* Ask the approver. Returns 1 allow, 0 deny (a->reason says what it said),
 * -1 when it failed (a->reason says how). */
static int ask(struct tg_approver *a, const struct tg_op *op, const struct tg_verdict *v, bool *remember)
{
	_cleanup_free_ char *q = question(a, op, v);
	int in_fd = -1, out_fd = -1;
	char line[TG_ANSWER_MAX];
	if (!q)
		return snprintf(a->reason, sizeof(a->reason), "out of memory asking the approver"), -1;
	pid_t pid = spawn(a->cmd, &in_fd, &out_fd);
	if (pid < 0)
		return snprintf(a->reason, sizeof(a->reason), "the approver could not be started: %s",
		                strerror(errno)), -1;
	feed(in_fd, q);
	close(in_fd);
	int r = read_line(out_fd, line, sizeof(line), tg_now_ns() + a->timeout_ms * 1000000ull);
	close(out_fd);
	if (r == -ETIMEDOUT)
		kill(pid, SIGKILL);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r == -ETIMEDOUT)
		return snprintf(a->reason, sizeof(a->reason), "the approver did not answer within %llu ms",
		                (unsigned long long)a->timeout_ms), -1;
	if (WIFSIGNALED(status))
		return snprintf(a->reason, sizeof(a->reason), "the approver was killed by %s",
		                tg_signal_name(WTERMSIG(status))), -1;
	if (r <= 0 || WEXITSTATUS(status) != 0)
		return snprintf(a->reason, sizeof(a->reason), "the approver exited %d without an answer",
		                WEXITSTATUS(status)), -1;
	struct answer ans;
	if (parse_answer(line, &ans) < 0)
		return snprintf(a->reason, sizeof(a->reason),
		                "the approver's answer is not {\"decision\": \"allow\"|\"deny\"}: %.200s", line), -1;
	*remember = ans.remember;
	bool allow = strcmp(ans.decision, "allow") == 0;
	snprintf(a->reason, sizeof(a->reason), "%s", ans.reason[0] ? ans.reason
	         : allow ? "allowed by the approver" : "denied by the approver");
	return allow ? 1 : 0;
}

static struct remembered *recall(const struct tg_approver *a, const char *rule_id)
{
	for (struct remembered *m = a ? a->memo : NULL; m; m = m->next)
		if (rule_id && strcmp(m->rule_id, rule_id) == 0)
			return m;
	return NULL;
}

static void memorise(struct tg_approver *a, const char *rule_id, bool allow)
{
	struct remembered *m = calloc(1, sizeof(*m));
	if (!m || !rule_id || !(m->rule_id = tg_strdup(rule_id))) {
		free(m);
		return;
	}
	m->allow = allow;
	m->next = a->memo;
	a->memo = m;
}

void tg_approver_resolve(struct tg_approver *a, const struct tg_op *op, struct tg_verdict *v)
{
	if (v->action != TG_ACT_ASK)
		return;
	if (!v->err)
		v->err = EPERM;
	struct remembered *m = recall(a, v->rule_id);
	if (m) {
		v->action = m->allow ? TG_ACT_ALLOW : TG_ACT_DENY;
		v->decided_by = "approver";
		v->reason = m->allow ? "allowed by the approver for the rest of this run"
		                     : "denied by the approver for the rest of this run";
		return;
	}
	if (!a || !a->cmd) {
		v->action = TG_ACT_DENY;
		v->decided_by = "txguard";
		v->reason = "the rule asks an approver and none was given (--approver CMD): ask is deny";
		return;
	}
	bool remember = false;
	int r = ask(a, op, v, &remember);
	v->action = r == 1 ? TG_ACT_ALLOW : TG_ACT_DENY;
	v->decided_by = r < 0 ? "txguard" : "approver";
	v->reason = a->reason;
	if (r >= 0 && remember)
		memorise(a, v->rule_id, r == 1);
}
