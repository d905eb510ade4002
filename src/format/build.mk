# src/format/build.mk - the trace format (docs/TRACE_FORMAT.md), below the engine
# and the readers alike: its reading side (the JSONL line parser, the one UTF-8
# rule, the binary decoder) and its writing side (the buffered trace writer, the
# record lines, the binary encoder). Read before the other areas (Makefile):
# the report links the first (REPORT_SRCS), the engine the second (CLI_SRCS,
# CT_WRITER_OBJS); the writer opens files through src/common/outfile.c.
FORMAT_READ_SRCS := src/format/parse.c src/format/text.c src/format/ctrace_dec.c \
  src/format/ctrace_pack.c
FORMAT_WRITE_SRCS := src/format/writer.c src/format/records.c src/format/ctrace_enc.c
