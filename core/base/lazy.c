/* lazy.c — a shared library loaded at its first use (see lazy.h). */
#include "lazy.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>

/* Loads are rare (a few per process) and may come from the journal's
 * threads at once: one lock for all libraries. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static void *handle(struct tg_lazy_lib *lib)
{
	void *h = __atomic_load_n(&lib->handle, __ATOMIC_ACQUIRE);
	if (h)
		return h;
	pthread_mutex_lock(&load_lock);
	if (!(h = lib->handle)) {
		/* RTLD_LOCAL: its symbols never stand in for the wrappers'. */
		h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
		if (h) {
			__atomic_store_n(&lib->handle, h, __ATOMIC_RELEASE);
		} else {
			const char *e = dlerror();
			snprintf(lib->error, sizeof(lib->error), "%s", e ? e : lib->soname);
		}
	}
	pthread_mutex_unlock(&load_lock);
	return h;
}

void *tg_lazy_sym(struct tg_lazy_lib *lib, const char *name)
{
	void *h = handle(lib);
	return h ? dlsym(h, name) : NULL;
}

bool tg_lazy_load(struct tg_lazy_lib *lib, char *why, size_t size)
{
	if (handle(lib))
		return true;
	if (why && size) {
		pthread_mutex_lock(&load_lock);
		snprintf(why, size, "%s", lib->error);
		pthread_mutex_unlock(&load_lock);
	}
	return false;
}

const char *tg_lazy_file(struct tg_lazy_lib *lib)
{
	void *h = __atomic_load_n(&lib->handle, __ATOMIC_ACQUIRE);
	struct link_map *map = NULL;
	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name || !*map->l_name)
		return NULL;
	return map->l_name;
}
