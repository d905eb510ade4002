# src/engine/build.mk - `corotracer run`: the engine (libc only).
CLI_SRCS += src/engine/run_main.c src/engine/opts.c src/engine/rundir.c src/engine/spawn.c \
            src/engine/guard.c src/engine/harvest.c src/engine/modules.c src/engine/writer.c \
            src/engine/status.c src/engine/sched.c

# The trace writer's formatting benchmark (links the writer alone).
$(O)/bench/bench-writer: $(O)/obj/bench/bench-writer.o $(O)/obj/src/engine/writer.o
	$(call link)
PROGS += $(O)/bench/bench-writer

# The engine's reading of shared memory, for tests/fuzz/fuzz-shm.c.
FUZZ_SRCS_shm := src/engine/harvest.c src/engine/writer.c src/engine/modules.c
