/* refusal.c — Landlock refusals as decisions (see refusal.h). */
#include "refusal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/path.h"
#include "base/util.h"

struct pending {
	pid_t pid;
	struct tg_op op;
	struct pending *next;
};

struct tg_refusals {
	struct tg_landlock_view *view;
	char **writable;               /* the spec's writable places, as given */
	char **secrets;                /* deny_read entries Landlock enforces */
	struct pending *pending;
	struct tg_op last;             /* returned by tg_refusals_result */
	struct tg_unobserved unobserved[1];
	size_t nunobserved;
};

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

int tg_refusals_new(const struct tg_landlock_spec *spec, struct tg_landlock_view *view,
                    struct tg_refusals **out)
{
	struct tg_refusals *rf = calloc(1, sizeof(*rf));
	*out = NULL;
	if (!rf) {
		tg_landlock_view_free(view);
		return -ENOMEM;
	}
	rf->view = view;
	int r = view ? 0 : tg_landlock_view_new(spec, &rf->view);
	for (size_t i = 0; r == 0 && i < spec->nwritable; i++)
		r = tg_strv_push(&rf->writable, spec->writable[i]);
	for (size_t i = 0; r == 0 && i < spec->ndeny_read; i++)
		if (!has_glob(spec->deny_read[i]))
			r = tg_strv_push(&rf->secrets, spec->deny_read[i]);
	if (r < 0) {
		tg_refusals_free(rf);
		return r;
	}
	if (rf->secrets) {
		rf->unobserved[0] = (struct tg_unobserved){
			.rule_id = "deny-read",
			.enforced_by = "Landlock",
			.ops = "read exec",
			.paths = (const char *const *)rf->secrets,
			.npaths = tg_strv_len(rf->secrets),
			.why = "read-only opens and execs never stop the command, the kernel's audit "
			       "log of Landlock denials is off or out of reach, and fanotify permission "
			       "events (root only) were unavailable or do not serve these paths (a glob, "
			       "too many subdirectories, a secret inside a writable place): a refused read "
			       "fails with EACCES in the command and is not reported one by one",
		};
		rf->nunobserved = 1;
	}
	*out = rf;
	return 0;
}

static void pending_drop(struct tg_refusals *rf, pid_t pid)
{
	for (struct pending **p = &rf->pending; *p; p = &(*p)->next) {
		if ((*p)->pid != pid)
			continue;
		struct pending *d = *p;
		*p = d->next;
		tg_op_clear(&d->op);
		free(d);
		return;
	}
}

void tg_refusals_free(struct tg_refusals *rf)
{
	if (!rf)
		return;
	while (rf->pending)
		pending_drop(rf, rf->pending->pid);
	tg_op_clear(&rf->last);
	tg_landlock_view_free(rf->view);
	tg_strv_free(rf->writable);
	tg_strv_free(rf->secrets);
	free(rf);
}

/* Landlock has no right for metadata (modes, owners, times, xattrs). For
 * the rest, does the call write the object at path, or a name in its
 * parent directory? */
static bool landlock_handles(enum tg_op_kind k)
{
	return k == TG_OP_OPEN || k == TG_OP_TRUNCATE || (k >= TG_OP_UNLINK && k <= TG_OP_MKNOD);
}

static bool may_refuse(const struct tg_refusals *rf, const struct tg_op *op)
{
	bool entry = op->kind != TG_OP_OPEN && op->kind != TG_OP_TRUNCATE;
	if (tg_landlock_view_may_refuse(rf->view, op->path, entry))
		return true;
	return op->path2 && tg_landlock_view_may_refuse(rf->view, op->path2, true);
}

static int op_copy(struct tg_op *dst, const struct tg_op *src)
{
	*dst = *src;
	dst->path = dst->path2 = dst->target = dst->xattr_name = NULL;
	dst->argv = NULL;
	dst->argc = 0;
	dst->via = NULL;
	if ((src->path && !(dst->path = tg_strdup(src->path))) ||
	    (src->path2 && !(dst->path2 = tg_strdup(src->path2)))) {
		tg_op_clear(dst);
		return -ENOMEM;
	}
	return 0;
}

bool tg_refusals_watch(struct tg_refusals *rf, const struct tg_op *op)
{
	if (!rf || !op->writes || !op->path || !landlock_handles(op->kind) || !may_refuse(rf, op))
		return false;
	struct pending *p = calloc(1, sizeof(*p));
	if (!p || op_copy(&p->op, op) < 0) {
		free(p);
		return false;
	}
	pending_drop(rf, op->pid);
	p->pid = op->pid;
	p->next = rf->pending;
	rf->pending = p;
	return true;
}

static bool in_writable(const struct tg_refusals *rf, const char *path)
{
	for (size_t i = 0; rf->writable && rf->writable[i]; i++)
		if (tg_path_is_under(path, rf->writable[i]))
			return true;
	return false;
}

/* Name the rule Landlock enforced, as truthfully as the ruleset tells. */
static void classify(const struct tg_refusals *rf, const struct tg_op *op, struct tg_verdict *v)
{
	const char *p = op->path;
	if (op->path2 && !tg_landlock_view_excluded(rf->view, p) && !in_writable(rf, op->path2))
		p = op->path2;
	v->action = TG_ACT_DENY;
	v->source = "landlock";
	if (tg_landlock_view_excluded(rf->view, p)) {
		v->rule_id = "deny-read";
		v->reason = "secrets (keys, tokens, credentials) are not readable or writable under txguard";
	} else if (in_writable(rf, p)) {
		v->rule_id = "landlock-new-place";
		v->reason = "a writable place that did not exist when the run started (or a new name in a "
		            "directory on the way to a denied path) has no Landlock grant: create it "
		            "before the run (mkdir -p, or touch for a file)";
	} else {
		v->rule_id = "read-only-outside-workspace";
		v->reason = "only the workspace and the writable places may change; the rest is read-only "
		            "(enforced by Landlock)";
	}
}

const struct tg_op *tg_refusals_result(struct tg_refusals *rf, pid_t pid, long rval,
                                       struct tg_verdict *v)
{
	if (!rf)
		return NULL;
	struct pending *p = rf->pending;
	while (p && p->pid != pid)
		p = p->next;
	if (!p)
		return NULL;
	tg_op_clear(&rf->last);
	rf->last = p->op;
	memset(&p->op, 0, sizeof(p->op));
	pending_drop(rf, pid);
	if (rval != -EACCES && rval != -EPERM)
		return NULL;
	memset(v, 0, sizeof(*v));
	classify(rf, &rf->last, v);
	v->err = (int)-rval;
	return &rf->last;
}

bool tg_refusals_predict(const struct tg_refusals *rf, const struct tg_op *op, struct tg_verdict *v)
{
	if (!rf || !op->path)
		return false;
	bool reads = op->kind == TG_OP_EXEC || (op->kind == TG_OP_OPEN && !op->writes);
	if (reads ? !tg_landlock_view_excluded(rf->view, op->path)
	          : !landlock_handles(op->kind) || !may_refuse(rf, op))
		return false;
	memset(v, 0, sizeof(*v));
	classify(rf, op, v);
	v->err = EACCES;
	return true;
}

const struct tg_unobserved *tg_refusals_unobserved(const struct tg_refusals *rf, size_t *n)
{
	*n = rf ? rf->nunobserved : 0;
	return rf && rf->nunobserved ? rf->unobserved : NULL;
}

/* Landlock grants rights to inodes that exist when the ruleset is built: a
 * cache directory that a tool would create on first use has no rule, and
 * granting its parent instead would open the parent (often $HOME) to every
 * write. Creating the place beforehand is the narrow way. */
struct parent {
	char *path; /* the last place's parent, opened: fd, or -errno */
	int fd;
};

static int precreate_one(const char *path, struct parent *last)
{
	size_t l = strlen(path);
	bool dir = l > 1 && path[l - 1] == '/';
	_cleanup_free_ char *p = tg_strndup(path, dir ? l - 1 : l);
	if (!p)
		return -ENOMEM;
	char *slash = strrchr(p, '/');
	if (!slash || slash == p)
		return -EINVAL;
	*slash = '\0';
	/* Places come in groups under one parent (a tool's cache dirs). */
	if (!last->path || strcmp(last->path, p) != 0) {
		if (last->fd >= 0)
			close(last->fd);
		free(last->path);
		last->path = tg_strdup(p);
		last->fd = open(p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (last->fd < 0)
			last->fd = -errno;
	}
	int pfd = last->fd;
	if (pfd < 0)
		return pfd;
	const char *name = slash + 1;
	if (dir)
		return mkdirat(pfd, name, 0700) < 0 ? -errno : 1;
	int fd = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	return 1;
}

int tg_refusals_precreate(char *const *paths)
{
	int n = 0;
	struct parent last = { .fd = -1 };
	for (size_t i = 0; paths && paths[i]; i++)
		if (precreate_one(paths[i], &last) == 1)
			n++;
	if (last.fd >= 0)
		close(last.fd);
	free(last.path);
	return n;
}
