/* db_linked.c - corotracer-db's database commands: linked in
 * (src/common/commands.h "ct_db"). */
#include "common/commands.h"
#include "export/export.h"

const struct ct_db_cmds ct_db = {.ship_main = ct_ship_main,
                                 .fleet_main = ct_fleet_main,
                                 .fleet_serve_main = ct_fleet_serve_main,
                                 .sqlite_sink = cx_sqlite_sink,
                                 .pg_sink = cx_pg_sink,
                                 .mysql_sink = cx_mysql_sink};
