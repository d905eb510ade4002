CLI_SRCS += src/cli/main.c
