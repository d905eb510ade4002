CLI_SRCS += src/rip/rip_main.c
