# src/cli/build.mk - the `corotracer` command's dispatcher and `corotracer dump`.
CLI_SRCS += src/cli/main.c src/cli/dump_main.c src/cli/db_exec.c src/cli/db_linked.c
# The database commands: in corotracer-db linked in, in corotracer run there
# (src/common/commands.h "ct_db").
DB_SRCS += src/cli/db_linked.c
BIN_SRCS += src/cli/db_none.c
