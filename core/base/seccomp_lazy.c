/* seccomp_lazy.c — libseccomp, loaded at its first use (lazy.h).
 *
 * libseccomp compiles the filter (trace/filter.c) and checks the syscall
 * names a policy denies (policy/load.c). A start whose filter comes from
 * the cache calls neither, and its cache key no longer asks libseccomp for
 * its version and API level (filter.c): such a start does not load the
 * library, nor run its probe of the kernel (nine seccomp(2) calls), about
 * 0.2 ms off every start. It lives in base because two modules use it.
 *
 * These functions have libseccomp's names and prototypes (checked against
 * <seccomp.h>). Where the library cannot be loaded, each returns its own
 * failure value (NULL, __NR_SCMP_ERROR, -ELIBACC): no filter is built, so
 * nothing runs, and a policy's syscall name is an error (fail closed).
 * seccomp_rule_add_exact, which is variadic, is not here: filter.c calls
 * the _array form.
 */
#include <errno.h>
#include <seccomp.h>

#include "lazy.h"

/* The soname of libseccomp 2.x. */
static struct tg_lazy_lib seccomp = TG_LAZY_LIB("libseccomp.so.2");

bool tg_seccomp_load(char *why, size_t size)
{
	return tg_lazy_load(&seccomp, why, size);
}

const char *tg_seccomp_file(void)
{
	return tg_lazy_file(&seccomp);
}

const struct scmp_version *seccomp_version(void)
{
	TG_LAZY_FN(seccomp, seccomp_version);
	return fn_ ? fn_() : NULL;
}

unsigned int seccomp_api_get(void)
{
	TG_LAZY_FN(seccomp, seccomp_api_get);
	return fn_ ? fn_() : 0;
}

int seccomp_api_set(unsigned int level)
{
	TG_LAZY_FN(seccomp, seccomp_api_set);
	return fn_ ? fn_(level) : -ELIBACC;
}

scmp_filter_ctx seccomp_init(uint32_t def_action)
{
	TG_LAZY_FN(seccomp, seccomp_init);
	return fn_ ? fn_(def_action) : NULL;
}

void seccomp_release(scmp_filter_ctx ctx)
{
	TG_LAZY_FN(seccomp, seccomp_release);
	if (fn_)
		fn_(ctx);
}

int seccomp_attr_set(scmp_filter_ctx ctx, enum scmp_filter_attr attr, uint32_t value)
{
	TG_LAZY_FN(seccomp, seccomp_attr_set);
	return fn_ ? fn_(ctx, attr, value) : -ELIBACC;
}

int seccomp_rule_add_exact_array(scmp_filter_ctx ctx, uint32_t action, int syscall, unsigned int arg_cnt,
                                 const struct scmp_arg_cmp *arg_array)
{
	TG_LAZY_FN(seccomp, seccomp_rule_add_exact_array);
	return fn_ ? fn_(ctx, action, syscall, arg_cnt, arg_array) : -ELIBACC;
}

int seccomp_export_bpf(const scmp_filter_ctx ctx, int fd)
{
	TG_LAZY_FN(seccomp, seccomp_export_bpf);
	return fn_ ? fn_(ctx, fd) : -ELIBACC;
}

int seccomp_syscall_resolve_name(const char *name)
{
	TG_LAZY_FN(seccomp, seccomp_syscall_resolve_name);
	return fn_ ? fn_(name) : __NR_SCMP_ERROR;
}

char *seccomp_syscall_resolve_num_arch(uint32_t arch_token, int num)
{
	TG_LAZY_FN(seccomp, seccomp_syscall_resolve_num_arch);
	return fn_ ? fn_(arch_token, num) : NULL;
}
