CLI_SRCS += src/engine/run_main.c
