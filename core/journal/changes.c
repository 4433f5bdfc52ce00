/* changes.c — classify a run's changes from its records (changes.h). */
#include "journal.h"

#include <string.h>

#include "base/util.h"

enum { EV_CREATED, EV_CONTENT, EV_META, EV_GONE, EV_MOVED_OUT, EV_MOVED_IN };

/* One event on a path, in log order. */
struct tg_change_ev {
	char *path;
	char *other;     /* rename partner */
	uint64_t seq;
	int what;        /* EV_* */
};

void tg_changes_clear(struct tg_changes *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].path);
		free(c->v[i].from);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static const char *const change_kind_names[] = {
	[TG_CHANGE_CREATED] = "created",
	[TG_CHANGE_MODIFIED] = "modified",
	[TG_CHANGE_DELETED] = "deleted",
	[TG_CHANGE_RENAMED] = "renamed",
	[TG_CHANGE_METADATA] = "metadata",
};
_Static_assert(TG_ARRAY_SIZE(change_kind_names) == TG_CHANGE_KIND_COUNT, "a name for every change kind");

const char *tg_change_kind_name(enum tg_change_kind k)
{
	return (unsigned)k < TG_CHANGE_KIND_COUNT ? change_kind_names[k] : "unknown";
}

bool tg_changes_none(const size_t counts[TG_CHANGE_KIND_COUNT])
{
	for (int k = 0; k < TG_CHANGE_KIND_COUNT; k++)
		if (counts[k])
			return false;
	return true;
}

int tg_changes_push(struct tg_changes *c, enum tg_change_kind k, const char *path, const char *from)
{
	struct tg_change *nv = realloc(c->v, (c->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	c->v = nv;
	struct tg_change *ch = &c->v[c->n];
	ch->kind = k;
	ch->path = tg_strdup(path);
	ch->from = from ? tg_strdup(from) : NULL;
	if (!ch->path || (from && !ch->from)) {
		free(ch->path);
		free(ch->from);
		return -ENOMEM;
	}
	c->n++;
	c->count[k]++;
	return 0;
}

static int ev_push(struct tg_change_events *s, const char *path, uint64_t seq, int what, const char *other)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct tg_change_ev *nv = realloc(s->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	struct tg_change_ev *e = &s->v[s->n];
	*e = (struct tg_change_ev){ .path = tg_strdup(path), .other = other ? tg_strdup(other) : NULL,
	                            .seq = seq, .what = what };
	if (!e->path || (other && !e->other)) {
		free(e->path);
		free(e->other);
		return -ENOMEM;
	}
	s->n++;
	return 0;
}

int tg_change_events_add(void *events, const struct tg_jrec *r)
{
	struct tg_change_events *s = events;
	switch (r->kind) {
	case TG_JREC_CREATED: return ev_push(s, r->path, r->seq, EV_CREATED, NULL);
	case TG_JREC_CONTENT: return ev_push(s, r->path, r->seq, EV_CONTENT, NULL);
	case TG_JREC_META:
		/* A parent's times saved along with an entry's change are not
		 * a change of their own. */
		return r->flags & TG_JREC_F_IMPLICIT ? 0 : ev_push(s, r->path, r->seq, EV_META, NULL);
	case TG_JREC_STASHED:
	case TG_JREC_RMDIR:
	case TG_JREC_SAVED: return ev_push(s, r->path, r->seq, EV_GONE, NULL);
	case TG_JREC_RENAMED: {
		int e = ev_push(s, r->path, r->seq, EV_MOVED_OUT, r->path2);
		return e ? e : ev_push(s, r->path2, r->seq, EV_MOVED_IN, r->path);
	}
	default: return 0;
	}
}

void tg_change_events_clear(struct tg_change_events *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].other);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int ev_cmp(const void *a, const void *b)
{
	const struct tg_change_ev *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One path from its events [a, b). */
static int classify(const struct tg_change_ev *a, const struct tg_change_ev *b,
                    const struct tg_change_probe *probe, struct tg_changes *out)
{
	bool existed = a->what != EV_CREATED && a->what != EV_MOVED_IN;
	bool is_dir = false;
	int r = probe->exists(probe->ud, a->path, &is_dir);
	if (r < 0)
		return r;
	bool exists = r > 0;
	bool content = false, meta = false, moved = false;
	for (const struct tg_change_ev *e = a; e < b; e++) {
		content |= e->what == EV_CONTENT || e->what == EV_GONE || e->what == EV_CREATED;
		meta |= e->what == EV_META;
		moved |= e->what == EV_MOVED_OUT;
	}
	if (!existed && exists && a->what == EV_MOVED_IN)
		return tg_changes_push(out, TG_CHANGE_RENAMED, a->path, a->other);
	if (!existed && exists) {
		int e = tg_changes_push(out, TG_CHANGE_CREATED, a->path, NULL);
		return e || !is_dir ? e : probe->created_subtree(probe->ud, a->path, out);
	}
	/* Moved away and not replaced: reported once, at its new name. */
	if (existed && !exists)
		return moved ? 0 : tg_changes_push(out, TG_CHANGE_DELETED, a->path, NULL);
	if (existed && exists && (content || meta || b - a > 1 || a->what != EV_MOVED_OUT))
		return tg_changes_push(out, content || !meta ? TG_CHANGE_MODIFIED : TG_CHANGE_METADATA,
		                       a->path, NULL);
	return 0;
}

int tg_changes_classify(struct tg_change_events *s, const struct tg_change_probe *probe,
                        struct tg_changes *out)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), ev_cmp);
	int e = 0;
	for (size_t i = 0; !e && i < s->n;) {
		size_t k = i;
		while (k < s->n && !strcmp(s->v[k].path, s->v[i].path))
			k++;
		e = classify(&s->v[i], &s->v[k], probe, out);
		i = k;
	}
	return e;
}
