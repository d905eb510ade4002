# tests/fuzz/build.mk - libFuzzer targets of the readers of untrusted bytes.
#
# Convention: tests/fuzz/fuzz-NAME.c defines LLVMFuzzerTestOneInput; its seed
# corpus is tests/fuzz/corpus/NAME/ (every input that ever found a bug stays
# there, so each run replays it first); tests/fuzz/NAME.dict, if present, is
# its libFuzzer dictionary; the sources it links are listed by the owning
# area's build.mk as FUZZ_SRCS_NAME := ... . Any tests/fuzz/fuzz-*.c is picked
# up, so this file is included after every other build.mk (Makefile).
#
# Targets are built with clang into $(FUZZ_O), apart from the other builds:
# every object, the sources under test included, is instrumented for coverage
# and checked by ASan and UBSan (-fsanitize=fuzzer,address,undefined).
#   make fuzz-check   each target for FUZZ_CHECK_SECONDS (part of make check)
#   make fuzz         each target for FUZZ_SECONDS
#   make fuzz FUZZ=rip FUZZ_SECONDS=3600   one target, longer
FUZZ_CC ?= clang
FUZZ_O ?= build/fuzz
FUZZ_SECONDS ?= 600
FUZZ_CHECK_SECONDS ?= 20
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz-%.c,%,$(wildcard tests/fuzz/fuzz-*.c))
FUZZ ?= $(FUZZ_NAMES)
FUZZ_SAN := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_LD = $(FUZZ_CC) $(FUZZ_SAN)
FUZZ_CFLAGS = $(BASE_CFLAGS) -Iinclude -Isrc $(FUZZ_SAN) $(PKG_CFLAGS) $(CFLAGS)

$(FUZZ_O)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

# $(FUZZ_O)/fuzz-NAME from its target and FUZZ_SRCS_NAME.
define FUZZ_TARGET_RULE
$(FUZZ_O)/fuzz-$1: $(FUZZ_O)/obj/tests/fuzz/fuzz-$1.o $(FUZZ_SRCS_$1:%.c=$(FUZZ_O)/obj/%.o)
	$$(call link,$$(FUZZ_LD),$$(PKG_LIBS))
endef
$(foreach n,$(FUZZ_NAMES),$(eval $(call FUZZ_TARGET_RULE,$n)))

.PHONY: fuzz fuzz-check fuzz-build
fuzz-build: $(FUZZ:%=$(FUZZ_O)/fuzz-%)
fuzz: fuzz-build
	sh tests/fuzz/run.sh $(FUZZ_O) $(FUZZ_SECONDS) $(FUZZ)
fuzz-check: fuzz-build
	sh tests/fuzz/run.sh $(FUZZ_O) $(FUZZ_CHECK_SECONDS) $(FUZZ)

-include $(shell find $(FUZZ_O)/obj -name '*.d' 2>/dev/null)
