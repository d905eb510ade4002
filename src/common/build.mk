# src/common/build.mk - what the corotracer binary's areas share: safe output
# files (outfile.c, docs/SECURITY.md "Outputs"), the growable byte buffer (buf.c),
# the subcommands' one option parser (args.c) and their bad command line's line
# (usage_error.c).
CLI_SRCS += src/common/outfile.c src/common/buf.c src/common/args.c src/common/usage_error.c
# What links the trace writer alone (its benchmark, the binary trace's unit
# test, the tests' trace reader) links these too: the writer opens the trace
# through outfile.c, the flight window keeps its pinned lines in a buf.c.
$(O)/bench/bench-writer $(O)/tests/test-ctrace $(O)/tests/test-ctrace-like \
  $(O)/tests/lib/ctjl: $(O)/obj/src/common/outfile.o $(O)/obj/src/common/buf.o

# Its unit test links the one object it tests.
$(O)/tests/test-outfile: $(O)/obj/tests/test-outfile.o $(O)/obj/src/common/outfile.o
	$(call link)
TESTS += $(O)/tests/test-outfile

# The option parser's unit test links the one object it tests.
$(O)/tests/test-args: $(O)/obj/tests/test-args.o $(O)/obj/src/common/args.o
	$(call link)
TESTS += $(O)/tests/test-args

# The one JSON string escaper (jsonesc.h) and its wrappers, strict UTF-8.
$(O)/tests/test-jsonesc: $(O)/obj/tests/test-jsonesc.o $(O)/obj/src/common/buf.o
	$(call link)
TESTS += $(O)/tests/test-jsonesc
