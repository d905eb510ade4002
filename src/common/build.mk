# src/common/build.mk - what the corotracer binary's areas share: safe output
# files (outfile.c, docs/SECURITY.md "Outputs").
CLI_SRCS += src/common/outfile.c
# The trace writer's benchmark links the writer alone, and the writer opens
# the trace through outfile.c.
$(O)/bench/bench-writer: $(O)/obj/src/common/outfile.o

# Its unit test links the one object it tests.
$(O)/tests/test-outfile: $(O)/obj/tests/test-outfile.o $(O)/obj/src/common/outfile.o
	$(call link)
TESTS += $(O)/tests/test-outfile
