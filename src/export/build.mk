# src/export/build.mk - `corotracer export`: SQLite, PostgreSQL, MariaDB/MySQL,
# CSV, JSONL (ours and the reference's v1) and Perfetto (docs/EXPORT.md).
# The databases' client libraries come through pkg-config (PKGS).
DB_PKGS += sqlite3 libpq libmariadb
EXPORT_SRCS := src/export/export_main.c src/export/export_model.c src/export/export_tables.c \
               src/export/export_sql.c src/export/export_sqlite.c src/export/export_pg.c \
               src/export/export_mysql.c src/export/export_csv.c src/export/export_jsonl.c \
               src/export/export_perfetto.c src/export/pb.c \
               src/export/export_ctrace.c
CLI_SRCS += $(EXPORT_SRCS)
DB_SRCS += src/export/export_sqlite.c src/export/export_pg.c src/export/export_mysql.c

# Streaming: a 10^7-event trace exported within 200 MB (a minute or two: plain build only).
TESTS_NOSAN += tests/test-export-memory.sh
# Round trips through real servers started by the tests (temp dirs, Unix
# sockets), SQLite, CSV, JSONL, jsonl-v1 and Perfetto (decoded by protoc).
TESTS += tests/test-export-files.sh tests/test-export-perfetto.sh tests/test-export-pg.sh \
         tests/test-export-mysql.sh
