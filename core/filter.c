/* filter.c — placeholder until its module lands. */
