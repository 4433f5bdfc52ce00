/* lazy.h — a shared library loaded at its first use (dlopen).
 *
 * A library the executable is linked with costs every start of txguard its
 * loading and relocation, whether the run calls it or not. A run whose
 * policy comes from the cache (base/cache.h) and that saves no pre-image
 * needs neither libyaml (parsing policy files) nor libzstd and libarchive
 * (the journal's tar): so those are loaded here, the first time a wrapper
 * is called. The wrappers have the library's own names and prototypes and
 * live in a file that includes its header, which checks them:
 *
 *     static struct tg_lazy_lib zstd = TG_LAZY_LIB("libzstd.so.1");
 *     ZSTD_CCtx *ZSTD_createCCtx(void)
 *     {
 *         TG_LAZY_FN(zstd, ZSTD_createCCtx);
 *         return fn_ ? fn_() : NULL;
 *     }
 *
 * The executable never names the library (it is linked --as-needed and
 * with the headers only). Where the library cannot be loaded, fn_ is NULL
 * and the wrapper returns the library's own failure value: its caller fails
 * closed, as on any other error of that library. Safe from any thread. */
#ifndef TG_BASE_LAZY_H
#define TG_BASE_LAZY_H

#include <stdbool.h>
#include <stddef.h>

struct tg_lazy_lib {
	const char *soname;
	void *handle;    /* set once, when loaded */
	char error[192]; /* dlerror() of the last failed load */
};

#define TG_LAZY_LIB(so) { .soname = (so) }

/* `name` in lib, loading lib first if need be; NULL when either fails. */
void *tg_lazy_sym(struct tg_lazy_lib *lib, const char *name);

/* Load lib now: true when it is loaded; else false and, when why is not
 * NULL, the reason ("libzstd.so.1: cannot open shared object file...")
 * in why. */
bool tg_lazy_load(struct tg_lazy_lib *lib, char *why, size_t size);

/* The file lib was loaded from (ld.so's name for it, e.g.
 * "/lib/x86_64-linux-gnu/libseccomp.so.2"); NULL while it is not loaded. */
const char *tg_lazy_file(struct tg_lazy_lib *lib);

/* libseccomp (seccomp_lazy.c), used by the filter and by the policy's
 * syscall names: tg_lazy_load and tg_lazy_file of it. */
bool tg_seccomp_load(char *why, size_t size);
const char *tg_seccomp_file(void);

/* In a wrapper named `name`: fn_, the library's function of that name,
 * looked up once per process, or NULL when it cannot be had. */
#define TG_LAZY_FN(lib, name) \
	static __typeof__(&name) real_; \
	__typeof__(&name) fn_ = __atomic_load_n(&real_, __ATOMIC_ACQUIRE); \
	if (!fn_) { \
		fn_ = (__typeof__(&name))tg_lazy_sym(&(lib), #name); \
		__atomic_store_n(&real_, fn_, __ATOMIC_RELEASE); \
	}

#endif
