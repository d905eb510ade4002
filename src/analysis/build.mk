CLI_SRCS += src/analysis/report_main.c
