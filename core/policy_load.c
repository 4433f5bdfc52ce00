/* policy_load.c — placeholder until its module lands. */
