# src/common/build.mk - what the corotracer binary's areas share: safe output
# files (outfile.c, docs/SECURITY.md "Outputs").
CLI_SRCS += src/common/outfile.c
# The trace writer's benchmark links the writer alone, and the writer opens
# the trace through outfile.c.
$(O)/bench/bench-writer: $(O)/obj/src/common/outfile.o
