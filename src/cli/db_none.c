/* db_none.c - the corotracer binary's database commands: none linked, each
 * runs in corotracer-db (src/common/commands.h "ct_db", src/cli/db_exec.c). */
#include "common/commands.h"

const struct ct_db_cmds ct_db = {0};
