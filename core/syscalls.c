/* syscalls.c — placeholder until its module lands. */
