/* policy.c — placeholder until its module lands. */
