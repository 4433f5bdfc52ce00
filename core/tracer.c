/* tracer.c — placeholder until its module lands. */
