/* ship_spawn.h - the engine's one hook into shipping (`run --ship`): a dump
 * on disk handed to a shipper process of its own (src/ship/ship_spawn.c). */
#ifndef CT_SHIP_SPAWN_H
#define CT_SHIP_SPAWN_H

/* Starts `corotracer ship --detach --spool SPOOL --add PATH`, the URL in its
 * environment (never on a command line); the launcher exits as soon as the
 * shipper forked off into its own session, and is reaped at a later call
 * without waiting: the caller waits for one posix_spawn, never for a process
 * start or the database. spool NULL: the default. 0 or -errno. */
int ct_ship_spawn(const char *url, const char *spool, const char *path);

#endif
