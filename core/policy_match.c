/* policy_match.c — placeholder until its module lands. */
