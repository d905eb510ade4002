# src/ship/build.mk - `corotracer ship` and `corotracer fleet`: traces and
# flight dumps shipped to PostgreSQL through the export, the spool, the
# findings grouped across hosts, and `run --ship`'s shipper (docs/FLEET.md).
SHIP_SRCS := src/ship/ship_main.c src/ship/ship_db.c src/ship/ship_facts.c src/ship/spool.c \
             src/ship/fleet_main.c src/ship/fleet_serve.c src/ship/ship_spawn.c
CLI_SRCS += $(SHIP_SRCS)
DB_SRCS += src/ship/ship_main.c src/ship/ship_db.c src/ship/fleet_main.c src/ship/fleet_serve.c

# Three hosts' dumps grouped, the spool while the server is down, a shipper
# killed midway, hostile text, no password shown: a real PostgreSQL, and a
# program with one of two lost wakeups.
$(O)/tests/lib/fleet-prog: $(O)/obj/tests/lib/fleet-prog.o $(LIBA)
	$(call link)
PROGS += $(O)/tests/lib/fleet-prog
TESTS += tests/test-fleet-pg.sh

# What ship reads of a file before exporting it, fuzzed (tests/fuzz/fuzz-shipfacts.c).
FUZZ_SRCS_shipfacts := src/ship/ship_facts.c $(FUZZ_SRCS_trace)
