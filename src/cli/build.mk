# src/cli/build.mk - the `corotracer` command's dispatcher and `corotracer dump`.
CLI_SRCS += src/cli/main.c src/cli/dump_main.c
