/* changes.c — classify a run's changes from its records (changes.h). */
#include "journal.h"

#include <string.h>

#include "base/set.h"
#include "base/util.h"

#include <limits.h>
#include <stdlib.h>

enum { EV_CREATED, EV_CONTENT, EV_META, EV_GONE, EV_MOVED_OUT, EV_MOVED_IN,
       EV_VOID /* an event of a call that failed (TG_JREC_F_VOID): replayed as nothing */ };

/* One event on a path, in log order. */
struct tg_change_ev {
	char *path;
	char *other;     /* rename partner */
	uint64_t seq;
	int what;        /* EV_* */
	bool swap;       /* a rename with RENAME_EXCHANGE */
	bool dir;        /* EV_GONE of a directory (an rmdir, which may fail) */
	bool one_link;   /* the record's object had one name (meta.nlink == 1) */
	uint64_t dev, ino; /* the record's object: CONTENT, META, MOVED_OUT; a
	                    * link's CREATED: what it named (its BORN) */
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
	struct tg_change_ev *nv = tg_grow(s->v, s->n, &s->cap, sizeof(*nv), 256);
	if (!nv)
		return -ENOMEM;
	s->v = nv;
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

static void ev_id(struct tg_change_ev *e, const struct tg_jrec *r)
{
	e->dev = r->meta.dev;
	e->ino = r->meta.ino;
	e->one_link = r->meta.nlink == 1;
}

static int ev_push_id(struct tg_change_events *s, const struct tg_jrec *r, int what)
{
	int e = ev_push(s, r->path, r->seq, what, NULL);
	if (!e)
		ev_id(&s->v[s->n - 1], r);
	return e;
}

int tg_change_events_add(void *events, const struct tg_jrec *r)
{
	struct tg_change_events *s = events;
	switch (r->kind) {
	case TG_JREC_CREATED: {
		/* path2: a link's source, the object whose change a change made
		 * through the new name is (its BORN tells the object). */
		int e = ev_push(s, r->path, r->seq, EV_CREATED, r->path2);
		if (!e && r->path2)
			e = tg_idmap_put(&s->links, 0, r->seq, s->n - 1);
		return e;
	}
	case TG_JREC_CONTENT: return ev_push_id(s, r, EV_CONTENT);
	case TG_JREC_META:
		/* A parent's times saved along with an entry's change are not
		 * a change of their own. */
		return r->flags & TG_JREC_F_IMPLICIT ? 0 : ev_push_id(s, r, EV_META);
	case TG_JREC_RMDIR: {
		/* Journaled before the call, which fails on a directory that is
		 * not empty (git's cleanup of empty parents tries .git). */
		int e = ev_push(s, r->path, r->seq, EV_GONE, NULL);
		if (!e)
			s->v[s->n - 1].dir = true;
		return e;
	}
	case TG_JREC_STASHED:
	case TG_JREC_SAVED: return ev_push_id(s, r, EV_GONE);
	case TG_JREC_BORN: {
		if (r->flags & TG_JREC_F_VOID) /* its call's events came just before */
			for (size_t i = s->n; i > 0 && s->v[i - 1].seq >= r->ref; i--)
				if (s->v[i - 1].seq <= r->tar_off)
					s->v[i - 1].what = EV_VOID;
		uint64_t link;
		if (r->ref && tg_idmap_get(&s->links, 0, r->ref, &link)) {
			s->v[link].dev = r->meta.dev;
			s->v[link].ino = r->meta.ino;
		}
		return 0;
	}
	case TG_JREC_RENAMED: {
		int e = ev_push(s, r->path, r->seq, EV_MOVED_OUT, r->path2);
		if (!e)
			ev_id(&s->v[s->n - 1], r);
		e = e ? e : ev_push(s, r->path2, r->seq, EV_MOVED_IN, r->path);
		if (!e && (r->flags & TG_JREC_F_EXCHANGE))
			s->v[s->n - 1].swap = s->v[s->n - 2].swap = true;
		return e;
	}
	default: return 0;
	}
}

bool tg_change_events_saved(const struct tg_change_events *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].what == EV_CONTENT || s->v[i].what == EV_META || (s->v[i].what == EV_GONE && !s->v[i].dir))
			return true;
	return false;
}

void tg_change_events_clear(struct tg_change_events *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].other);
	}
	free(s->v);
	tg_idmap_clear(&s->links);
	memset(s, 0, sizeof(*s));
}

/* ---- classification: the run replayed, object by object ----
 *
 * A record names a path as it was when the call ran. Classifying each
 * path on its own misses what moved between calls: a file changed in b/
 * before `mv b c` ends at c/x, a file moved and then removed was deleted,
 * and the name an object had before the run is not the name it had when
 * it last moved. So the events are replayed in log order on objects: each
 * has the name it has now and the one it had before the run (NULL: the
 * run made it), and a directory's move carries what lies below it. At the
 * end each object is one line: made and still there, created; gone, the
 * name it had deleted; elsewhere, renamed; changed in place, modified or
 * metadata. Names a directory the run made holds have no records of their
 * own: the probe lists them (created_subtree), each path once. */

struct obj {
	char *cur;         /* its name now (owned) */
	const char *orig;  /* its name before the run (an event's, or orig_own),
	                    * NULL: made by the run */
	char *orig_own;    /* a name before the run that no event has: one
	                    * first met below a directory that had moved */
	bool gone;         /* removed, or replaced by a move */
	bool taken;        /* gone, and what took its name tells it */
	bool taker;        /* taken by an original's move onto it, whose line
	                    * tells only while a rename ends at that name;
	                    * else the taker carries this one's name on */
	bool content, meta;
	bool moved;        /* by a rename of its own (one of a directory above
	                    * it carries it silently) */
	bool rmdir;        /* gone by an rmdir, which may have failed */
	bool remade;       /* made by the run at an original's name, which it
	                    * carries on: what it holds has no records */
	uint64_t dev, ino; /* what its last move of its own moved (0: none) */
	/* Made by link(): the object it is a new name of, link_ino, whose
	 * change a change through it is: 1 + its index (link_of), or, when no
	 * object had that name yet, the original at link_from (0, NULL: not
	 * a link, or one that named nothing). */
	size_t link_of;
	const char *link_from; /* the event's */
	uint64_t link_dev, link_ino;
};

struct replay {
	struct obj *o;
	size_t n, cap;
	uint32_t *slot;    /* 1 + index into o; 0: empty (see find) */
	size_t nslot, used;
	struct tg_idmap moved; /* (dev, ino) a move of its own gave an object: its index */
	struct tg_idset removed; /* (dev, ino) of every file a STASHED or SAVED removed */
	struct tg_strset dirs; /* every directory above a name an object had */
};

/* The object named path now (live or gone), or NULL. A slot whose object
 * has since moved is stale and skipped: slots are never removed. */
static struct obj *find(const struct replay *r, const char *path)
{
	if (!r->nslot)
		return NULL;
	for (size_t i = tg_hash_str(path) & (r->nslot - 1);; i = (i + 1) & (r->nslot - 1)) {
		if (!r->slot[i])
			return NULL;
		struct obj *o = &r->o[r->slot[i] - 1];
		if (strcmp(o->cur, path) == 0)
			return o;
	}
}

static int index_add(struct replay *r, size_t idx);

static int grow(struct replay *r)
{
	size_t nslot = r->nslot ? r->nslot * 2 : 1024;
	uint32_t *slot = calloc(nslot, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	free(r->slot);
	r->slot = slot;
	r->nslot = nslot;
	r->used = 0;
	for (size_t i = 0; i < r->n; i++) {
		int e = index_add(r, i);
		if (e)
			return e;
	}
	return 0;
}

/* Name r->o[idx] by its cur: it replaces the slot of the object that had
 * that name before (a later find gets the newer one). */
static int index_add(struct replay *r, size_t idx)
{
	if ((r->used + 1) * 2 > r->nslot) {
		if (r->n > UINT32_MAX - 1)
			return -ENOMEM;
		return grow(r); /* indexes every object, idx included */
	}
	const char *path = r->o[idx].cur;
	size_t i = tg_hash_str(path) & (r->nslot - 1);
	for (; r->slot[i]; i = (i + 1) & (r->nslot - 1))
		if (strcmp(r->o[r->slot[i] - 1].cur, path) == 0)
			break;
	/* One slot per name: the live object's, else the latest gone one. */
	if (!r->slot[i])
		r->used++;
	if (!r->slot[i] || !r->o[idx].gone || r->o[r->slot[i] - 1].gone)
		r->slot[i] = (uint32_t)idx + 1;
	/* The directories above it: a move of one of them carries it. */
	char *d = tg_strdup(path);
	if (!d)
		return -ENOMEM;
	int e = 0;
	for (char *sl; !e && (sl = strrchr(d, '/'));) {
		*sl = '\0';
		e = tg_strset_add(&r->dirs, d);
		if (e == 0)
			break; /* it and all above it are there already */
		e = e < 0 ? e : 0;
	}
	free(d);
	return e;
}

static struct obj *obj_new(struct replay *r, const char *path, const char *orig)
{
	struct obj *nv = tg_grow(r->o, r->n, &r->cap, sizeof(*nv), 256);
	if (!nv)
		return NULL;
	r->o = nv;
	struct obj *o = &r->o[r->n];
	*o = (struct obj){ .cur = tg_strdup(path), .orig = orig };
	if (!o->cur)
		return NULL;
	r->n++;
	if (index_add(r, r->n - 1) < 0)
		return NULL;
	return &r->o[r->n - 1];
}

static void replay_free(struct replay *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->o[i].cur);
		free(r->o[i].orig_own);
	}
	free(r->o);
	free(r->slot);
	tg_idmap_clear(&r->moved);
	tg_idset_clear(&r->removed);
	tg_strset_clear(&r->dirs);
}

static bool revive(struct replay *r, struct obj *o);

/* The nearest directory above path that a live object names now, or NULL:
 * it lies where the run made and moved nothing. A call below a directory
 * an rmdir removed says that rmdir failed (revive). */
static struct obj *above(struct replay *r, const char *path)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);
	if (n >= sizeof(buf))
		return NULL;
	memcpy(buf, path, n + 1);
	for (char *sl; (sl = strrchr(buf, '/'));) {
		*sl = '\0';
		struct obj *d = find(r, buf);
		if (d && (!d->gone || revive(r, d)))
			return d;
	}
	return NULL;
}

/* Whether that directory is new: the run made it, or made it again. What
 * it holds is the run's, and has no records of its own. */
static bool is_new(const struct obj *d)
{
	return d && (!d->orig || d->remade);
}

/* o, a directory an rmdir removed last, is named again by a later call
 * (on it, or below it), with no creation of that name between: the rmdir
 * failed (ENOTEMPTY: git's cleanup of empty parents tries .git). A record
 * names only what is there when its call runs; a name made again has a
 * record of its own, unless its parent is new: then it has none, and o
 * stays gone. */
static bool revive(struct replay *r, struct obj *o)
{
	if (!o->rmdir || o->taken || is_new(above(r, o->cur)))
		return false;
	o->gone = o->rmdir = false;
	return true;
}

/* The live object at path, or a new one for what was there untouched so
 * far: an original, unless a directory the run made holds it, or that
 * name's original left it already: then the run made it too. An
 * original's name before the run is path's, or, below a directory that
 * moved, the name below where that directory was. */
static struct obj *at(struct replay *r, const char *path)
{
	struct obj *o = find(r, path);
	if (o && (!o->gone || revive(r, o)))
		return o;
	const struct obj *d = above(r, path);
	if (o || is_new(d))
		return obj_new(r, path, NULL);
	if (!d || strcmp(d->orig, d->cur) == 0)
		return obj_new(r, path, path);
	size_t cl = strlen(d->cur);
	char *was = tg_asprintf("%s%s", d->orig, path + cl);
	if (!was || !(o = obj_new(r, path, was))) {
		free(was);
		return NULL;
	}
	o->orig_own = was;
	return o;
}

/* Whether o is the original of name, at it still (or gone from it), and
 * nothing took its place yet: what replaces it there may speak for it. */
static bool own_name(const struct obj *o, const char *name)
{
	return o->orig && !o->taken && strcmp(o->orig, name) == 0;
}

/* What lies below src is now below dst. */
static int carry(struct replay *r, const char *src, const char *dst)
{
	if (!tg_strset_has(&r->dirs, src))
		return 0;
	size_t sl = strlen(src), dl = strlen(dst);
	int e = 0;
	for (size_t i = 0; !e && i < r->n; i++) {
		char *c = r->o[i].cur;
		if (strncmp(c, src, sl) != 0 || c[sl] != '/')
			continue;
		char *nc = malloc(dl + strlen(c + sl) + 1);
		if (!nc)
			return -ENOMEM;
		memcpy(nc, dst, dl);
		strcpy(nc + dl, c + sl);
		free(c);
		r->o[i].cur = nc;
		e = index_add(r, i);
	}
	return e;
}

/* o moves to dst, and whatever lies below it with it. */
static int move(struct replay *r, struct obj *o, const char *dst)
{
	size_t idx = (size_t)(o - r->o);
	/* What had that name is replaced (or was removed): the move says it,
	 * when that was the original of the name; one that had moved there
	 * says it was deleted. A name the run made, moved onto an original
	 * (the way sed -i, git and editors save: write a new file, rename it
	 * over the old), is that original rewritten, as a removal and a
	 * creation of the name is (replay_one, EV_CREATED): it carries the
	 * original on. */
	struct obj *there = find(r, dst);
	if (there && there != o) {
		bool own = own_name(there, dst);
		if (!o->orig && own) {
			o->orig = there->orig;
			o->content = o->remade = true;
		}
		there->gone = true;
		there->taken |= own;
		if (own && o->orig != there->orig)
			there->taker = true;
	}
	char *d = tg_strdup(dst);
	if (!d)
		return -ENOMEM;
	_cleanup_free_ char *src = o->cur;
	o->cur = d;
	o->moved = true;
	int e = index_add(r, idx);
	return e ? e : carry(r, src, dst);
}

/* RENAME_EXCHANGE: the objects at a and b trade names, and what lies
 * below each goes with it. */
static int swap(struct replay *r, const char *a, const char *b)
{
	struct obj *x = at(r, a);
	if (!x)
		return -ENOMEM;
	size_t xi = (size_t)(x - r->o); /* at() may move the array */
	struct obj *y = at(r, b);
	if (!y)
		return -ENOMEM;
	size_t yi = (size_t)(y - r->o);
	char *t = r->o[xi].cur;
	r->o[xi].cur = r->o[yi].cur;
	r->o[yi].cur = t;
	r->o[xi].moved = r->o[yi].moved = true;
	int e = index_add(r, xi);
	e = e ? e : index_add(r, yi);
	/* Below: b's first, to a name no path has, so that a's may follow. */
	_cleanup_free_ char *tmp = tg_asprintf("%s/\x01", b);
	if (!e && !tmp)
		e = -ENOMEM;
	e = e ? e : carry(r, b, tmp);
	e = e ? e : carry(r, a, b);
	return e ? e : carry(r, tmp, a);
}

/* The object a capture at e->path names, when a move of its own took it
 * from there already: a file with one name is at one name, so a record at
 * a name it had left is a call journaled before another task's move of it
 * ran (a write-open whose call then made a new file at the freed name).
 * NULL: the name's own object, as ever (at). */
static struct obj *moved_from(struct replay *r, const struct tg_change_ev *e)
{
	if (!e->ino || !e->one_link)
		return NULL;
	const struct obj *here = find(r, e->path);
	uint64_t idx;
	if ((here && !here->gone) || !tg_idmap_get(&r->moved, e->dev, e->ino, &idx))
		return NULL;
	struct obj *x = &r->o[idx];
	bool still = x->dev == e->dev && x->ino == e->ino; /* not since moved as another */
	return still && !x->gone && x->moved && strcmp(x->cur, e->path) != 0 ? x : NULL;
}

/* A removal journaled at a name while it held a file that an earlier
 * record of the run removed already, where another object has moved in
 * since: two tasks' calls on one name (one unlinks x while the other's
 * `mv y x` replaces it), journaled before either ran. Whichever ran first
 * removed the file; whether this one then removed the newcomer only the
 * tree can tell, and it does: the newcomer stays live here, and its line
 * asks the end state (report), as for any live object. Removed by name,
 * it was "deleted" while still there. */
static bool removed_before(const struct replay *r, const struct tg_change_ev *e, const struct obj *o)
{
	return e->ino && !o->gone && o->ino && (o->dev != e->dev || o->ino != e->ino) &&
	       tg_idset_has(&r->removed, e->dev, e->ino);
}

/* A change e made through o, a name link() made: the change of the object
 * it is a name of, whose own name must say so (ln f g; chmod 600 g; rm g:
 * f's mode changed, and g's line is gone). Only for the very object the
 * link named (a capture of it), and a source still at its name: one the
 * replay knew then (link_of), or an original no event had named, which
 * none may have named since either. */
static int link_source_changed(struct replay *r, const struct obj *o, const struct tg_change_ev *e)
{
	if ((!o->link_of && !o->link_from) || e->ino != o->link_ino || e->dev != o->link_dev)
		return 0;
	bool content = e->what == EV_CONTENT;
	struct obj *src = NULL;
	if (o->link_of)
		src = &r->o[o->link_of - 1];
	else if (!find(r, o->link_from) && !(src = at(r, o->link_from)))
		return -ENOMEM;
	if (src && !src->gone) {
		src->content |= content;
		src->meta |= !content;
	}
	return 0;
}

static int replay_one(struct replay *r, const struct tg_change_ev *e, const struct tg_change_ev *next)
{
	struct obj *o;
	switch (e->what) {
	case EV_CREATED: {
		/* A link's source, as the replay has it now. */
		struct obj *src = e->other && e->ino ? find(r, e->other) : NULL;
		size_t link_of = src && !src->gone ? (size_t)(src - r->o) + 1 : 0;
		/* A name whose original was removed in the run and made again
		 * (a rewrite: unlink, then create) carries the original on. */
		struct obj *was = find(r, e->path);
		const char *orig = was && own_name(was, e->path) ? was->orig : NULL;
		if (was) {
			/* A live one (an O_CREAT that raced a removal) is replaced.
			 * An original that had moved here is gone: its own line
			 * (deleted) says so. */
			was->taken |= orig != NULL;
			was->gone = true;
		}
		if (!(o = obj_new(r, e->path, orig)))
			return -ENOMEM;
		o->content = o->remade = orig != NULL;
		if (e->other && e->ino && (link_of || !src)) {
			o->link_of = link_of;
			o->link_from = link_of ? NULL : e->other;
			o->link_dev = e->dev;
			o->link_ino = e->ino;
		}
		return 0;
	}
	case EV_CONTENT:
	case EV_META:
		if (!(o = moved_from(r, e)) && !(o = at(r, e->path)))
			return -ENOMEM;
		o->content |= e->what == EV_CONTENT;
		o->meta |= e->what == EV_META;
		return link_source_changed(r, o, e);
	case EV_GONE:
		if (!(o = at(r, e->path)))
			return -ENOMEM;
		if (removed_before(r, e, o))
			return 0;
		o->gone = true;
		o->rmdir = e->dir;
		return tg_idset_add(&r->removed, e->dev, e->ino) < 0 ? -ENOMEM : 0;
	case EV_MOVED_OUT:
		if (!e->other || !next || next->what != EV_MOVED_IN || next->seq != e->seq)
			return 0;
		if (e->swap)
			return swap(r, e->path, e->other);
		if (!(o = at(r, e->path)))
			return -ENOMEM;
		size_t idx = (size_t)(o - r->o); /* move may grow the table */
		int rc = move(r, o, e->other);
		if (rc || !e->ino)
			return rc;
		r->o[idx].dev = e->dev;
		r->o[idx].ino = e->ino;
		return tg_idmap_put(&r->moved, e->dev, e->ino, idx);
	default:
		return 0; /* EV_MOVED_IN: with its MOVED_OUT */
	}
}

static int ev_order(const void *a, const void *b)
{
	const struct tg_change_ev *x = a, *y = b;
	return x->seq != y->seq ? (x->seq < y->seq ? -1 : 1) : (x->what == EV_MOVED_IN) - (y->what == EV_MOVED_IN);
}

static int by_path(const void *a, const void *b)
{
	const struct tg_change *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	return c ? c : (int)x->kind - (int)y->kind;
}

/* Whether o's line is a rename: an original that ends elsewhere by a move
 * of its own. */
static bool renamed(const struct obj *o)
{
	return o->orig && o->moved && strcmp(o->orig, o->cur) != 0;
}

/* One line for o (a created directory's names come from the probe). */
static int report(struct replay *r, const struct obj *o, const struct tg_change_probe *probe,
                  struct tg_changes *out)
{
	bool is_dir = false;
	/* An rmdir last, which nothing named again: still there, it failed. */
	bool failed_rmdir = o->gone && o->rmdir && !o->taken && find(r, o->cur) == o &&
	                    !is_new(above(r, o->cur));
	int ex = o->gone && !failed_rmdir ? 0 : probe->exists(probe->ud, o->cur, &is_dir);
	if (ex < 0)
		return ex;
	if (ex && failed_rmdir && !is_dir)
		ex = 0; /* a file at its name: whose, no record tells; as before */
	/* A rename's line says it replaced what was at its new name, while
	 * one ends there (mv y x; mv x z: x was deleted). */
	const struct obj *now = o->taker ? find(r, o->orig) : NULL;
	bool told = o->taken && (!o->taker || (now && !now->gone && renamed(now)));
	if (told && now) {
		/* ... and is there still: the run's own file goes with no record. */
		bool dir;
		int there = probe->exists(probe->ud, o->orig, &dir);
		if (there < 0)
			return there;
		told = there == 1;
	}
	if (!ex)
		return o->orig && !told ? tg_changes_push(out, TG_CHANGE_DELETED, o->orig, NULL) : 0;
	/* What a directory the run made holds (a name with an object of its
	 * own is that object's line; one that was there before the run and
	 * is again is modified: see tg_changes_classify). */
	bool subtree = is_dir && (!o->orig || o->remade);
	if (!o->orig) {
		int e = tg_changes_push(out, TG_CHANGE_CREATED, o->cur, NULL);
		return e || !subtree ? e : probe->created_subtree(probe->ud, o->cur, out);
	}
	int e = 0;
	if (renamed(o))
		e = tg_changes_push(out, TG_CHANGE_RENAMED, o->cur, o->orig);
	/* In place, or carried along by its directory's move. */
	else if (o->content || o->moved)
		e = tg_changes_push(out, TG_CHANGE_MODIFIED, o->cur, NULL);
	else if (o->meta)
		e = tg_changes_push(out, TG_CHANGE_METADATA, o->cur, NULL);
	return e || !subtree ? e : probe->created_subtree(probe->ud, o->cur, out);
}

/* The events of s replayed (sorted in place by log order). */
static int replay_run(struct tg_change_events *s, struct replay *r)
{
	int e = 0;
	size_t k = 1;
	while (k < s->n && ev_order(&s->v[k - 1], &s->v[k]) <= 0)
		k++;
	if (k < s->n) /* they come in log order: sorted only if not */
		qsort(s->v, s->n, sizeof(*s->v), ev_order);
	for (size_t i = 0; !e && i < s->n; i++)
		e = replay_one(r, &s->v[i], i + 1 < s->n ? &s->v[i + 1] : NULL);
	return e;
}

int tg_changes_final_names(struct tg_change_events *s, int (*add)(void *ud, const char *path), void *ud)
{
	struct replay r = { 0 };
	int e = replay_run(s, &r);
	for (size_t i = 0; !e && i < r.n; i++)
		e = add(ud, r.o[i].cur);
	replay_free(&r);
	return e;
}

int tg_changes_classify(struct tg_change_events *s, const struct tg_change_probe *probe,
                        struct tg_changes *out)
{
	struct replay r = { 0 };
	int e = replay_run(s, &r);
	size_t first = out->n;
	for (size_t i = 0; !e && i < r.n; i++)
		e = report(&r, &r.o[i], probe, out);
	/* A name that moved in under a created directory is its own line, not
	 * the walk's as well; a walk's name met twice, once. A name the walk
	 * of a directory made again finds where an original was removed is
	 * that original modified (rm -r d; mkdir d; echo > d/f). */
	if (!e && out->n > first + 1) {
		qsort(out->v + first, out->n - first, sizeof(*out->v), by_path);
		size_t w = first + 1;
		for (size_t i = first + 1; i < out->n; i++) {
			struct tg_change *p = &out->v[w - 1], *c = &out->v[i];
			if (p->kind == TG_CHANGE_CREATED && c->kind == TG_CHANGE_DELETED && strcmp(p->path, c->path) == 0) {
				out->count[TG_CHANGE_CREATED]--;
				out->count[TG_CHANGE_DELETED]--;
				out->count[TG_CHANGE_MODIFIED]++;
				p->kind = TG_CHANGE_MODIFIED;
				free(c->path);
				free(c->from);
				continue;
			}
			bool there = p->kind != TG_CHANGE_DELETED && c->kind != TG_CHANGE_DELETED;
			if (there && strcmp(p->path, c->path) == 0 &&
			    (c->kind == TG_CHANGE_CREATED || p->kind == TG_CHANGE_CREATED)) {
				struct tg_change *drop = c->kind == TG_CHANGE_CREATED ? c : p;
				out->count[drop->kind]--;
				free(drop->path);
				free(drop->from);
				if (drop == p)
					*p = *c;
				continue;
			}
			out->v[w++] = *c;
		}
		out->n = w;
	}
	replay_free(&r);
	return e;
}
