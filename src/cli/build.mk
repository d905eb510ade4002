CLI_SRCS += src/cli/main.c
CLI_SRCS += src/cli/args.c src/cli/usage_error.c src/cli/dump_main.c

# The option parser's unit test links the one object it tests.
$(O)/tests/test-args: $(O)/obj/tests/test-args.o $(O)/obj/src/cli/args.o
	$(call link)
TESTS += $(O)/tests/test-args
