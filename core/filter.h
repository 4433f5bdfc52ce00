/* filter.h — the seccomp-BPF filter of the traced tree (DESIGN.md "The trap set").
 *
 * Built with libseccomp from the syscall table (syscalls.h) and the run's
 * tg_filter_config: the arch gate first (non-native arch and x32 numbers
 * kill the process), RET_TRACE for exec, namespace and metadata mutations
 * and write-capable opens, network calls only when the config asks, and a
 * fixed errno without a stop for the calls no transaction may make.
 */
#pragma once

#include <stdio.h>

#include "tracer.h"

/* Load the filter into the calling thread. The caller must have set
 * no_new_privs (or hold CAP_SYS_ADMIN). Returns 0 or -errno: -EINVAL for an
 * unknown syscall name in cfg->denied_syscalls, else libseccomp's error. */
int tg_filter_load(const struct tg_filter_config *cfg);

/* Build the filter without loading it, so a bad config is reported before
 * anything forks. Returns 0 or -errno; on -EINVAL, *bad (when not NULL)
 * names the unknown syscall or the one with an errno out of 1..4095. */
int tg_filter_check(const struct tg_filter_config *cfg, const char **bad);

/* Write the filter for cfg in libseccomp's pseudo-filter-code text (for
 * `txguard doctor --verbose` and tests). Returns 0 or -errno. */
int tg_filter_export_pfc(const struct tg_filter_config *cfg, int fd);
