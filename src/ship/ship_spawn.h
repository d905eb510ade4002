/* ship_spawn.h - the engine's one hook into shipping (`run --ship`): a dump
 * on disk handed to a shipper process of its own (src/ship/ship_spawn.c). */
#ifndef CT_SHIP_SPAWN_H
#define CT_SHIP_SPAWN_H

/* Starts `corotracer ship --detach --spool SPOOL --add PATH` in its own
 * session, the URL in its environment (never on a command line), and reaps
 * the launcher, which exits as soon as the shipper forked off: the caller
 * waits about one fork, never for the database. spool NULL: the default.
 * 0 or -errno. Async-signal-unsafe work happens in the child only after exec. */
int ct_ship_spawn(const char *url, const char *spool, const char *path);

#endif
