# Makefile - builds libcorotracer (probe + rip), the corotracer binary, the
# examples and the tests. Each area adds its sources and tests in its own
# build.mk (src/*/build.mk, examples/*/build.mk, tests/build.mk, bench/build.mk).
#
#   make            build everything into $(O) (default build/default)
#   make check      install build deps, then run every test: gcc, clang,
#                   ASan+UBSan and TSan builds
#   make test       run the tests of one build (O=..., SAN=asan|tsan)
#   make check-arm  the AArch64 build's tests under qemu-user (part of check)
#   make demo       the demo story (see README.md)
#   make install PREFIX=/usr/local

# `all` is the default goal whatever rule a build.mk defines first.
.DEFAULT_GOAL := all

PREFIX ?= /usr/local
SAN ?=
O ?= build/default$(if $(SAN),-$(SAN))
CC ?= cc
CXX ?= c++

WARN := -Wall -Wextra -Werror
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O2 -fPIC -fvisibility=hidden $(WARN) -Iinclude -Isrc
BASE_CXXFLAGS := -std=c++20 -D_GNU_SOURCE -g -O2 -fPIC $(WARN) -Iinclude -Isrc
ifeq ($(SAN),asan)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else ifeq ($(SAN),tsan)
SAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
else
SAN_FLAGS :=
endif
CFLAGS_ALL = $(BASE_CFLAGS) $(SAN_FLAGS) $(CFLAGS)
CXXFLAGS_ALL = $(BASE_CXXFLAGS) $(SAN_FLAGS) $(CXXFLAGS)
LDFLAGS_ALL = $(SAN_FLAGS) $(LDFLAGS)

# Libraries of the analysis side, found through pkg-config only.
PKGS := libdw zlib
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

LIBA := $(O)/lib/libcorotracer.a
LIBSO := $(O)/lib/libcorotracer.so
BIN := $(O)/bin/corotracer

# Filled in by the build.mk files.
LIB_SRCS :=      # linked into libcorotracer (probe, rip): libc + pthreads only
CLI_SRCS :=      # linked into the corotracer binary (may use PKGS)
TESTS :=         # test programs or scripts, run by tests/run.sh in every build
TESTS_NOSAN :=   # tests run only in the plain build (e.g. timing-bound end-to-end)
TESTS_SAN :=     # tests run only in sanitizer builds (they check the sanitizers' verdict)
PROGS :=         # other programs (examples, benchmarks) built by `make`

include $(sort $(wildcard src/*/build.mk)) $(sort $(wildcard examples/*/build.mk))
include $(wildcard tests/build.mk) $(wildcard bench/build.mk)

LIB_OBJS := $(LIB_SRCS:%.c=$(O)/obj/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(O)/obj/%.o)

.PHONY: all check check-arm test demo demo-fixed demo-story install deps clean bench
all: $(LIBA) $(LIBSO) $(BIN) $(PROGS) $(filter-out %.sh,$(TESTS) $(TESTS_NOSAN))

$(O)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

$(O)/obj/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS_ALL) -MMD -MP -c $< -o $@

$(LIBA): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIBSO): $(LIB_OBJS)
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libcorotracer.so.1 $(LDFLAGS_ALL) -o $@ $^ -lpthread

$(BIN): $(CLI_OBJS) $(LIBA)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $(CLI_OBJS) $(LIBA) $(PKG_LIBS) -lpthread

# A test or program named tests/foo.c links against the static library.
$(O)/tests/%: $(O)/obj/tests/%.o $(LIBA)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(LIBA) -lpthread

test: all
	O=$(O) SAN=$(SAN) sh tests/run.sh $(TESTS) $(if $(SAN),$(TESTS_SAN),$(TESTS_NOSAN))

deps:
	sh scripts/install-deps.sh

# The demo needs the dependencies before anything is built (libdw for the
# corotracer binary, redis-tools for the load): install, then build and run
# in a fresh make that sees them. Recipe: examples/demo/build.mk.
demo: deps
	$(MAKE) O=$(O) demo-story DEMO_ARGS=--bug
demo-fixed: deps
	$(MAKE) O=$(O) demo-story DEMO_ARGS=--fixed

# Every test, in every build we ship: gcc and clang warnings-as-errors, the
# plain tests, then ASan+UBSan and TSan.
check: deps
	$(MAKE) O=build/clang CC=clang CXX=clang++ all
	$(MAKE) O=build/default test
	$(MAKE) check-arm
	$(MAKE) O=build/asan SAN=asan test
	$(MAKE) O=build/tsan SAN=tsan CC=clang CXX=clang++ test

# The AArch64 leg: cross-built with aarch64-linux-gnu-gcc, run under qemu-user
# against the native engine and reader of build/default (tests/arm/check.sh).
check-arm:
	MAKE="$(MAKE)" sh tests/arm/check.sh

install: $(LIBA) $(LIBSO) $(BIN)
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 0644 include/*.h $(wildcard include/*.hpp) $(DESTDIR)$(PREFIX)/include/
	install -m 0644 $(LIBA) $(DESTDIR)$(PREFIX)/lib/
	install -m 0755 $(LIBSO) $(DESTDIR)$(PREFIX)/lib/libcorotracer.so.1
	ln -sf libcorotracer.so.1 $(DESTDIR)$(PREFIX)/lib/libcorotracer.so
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|' corotracer.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/corotracer.pc

clean:
	rm -rf build

-include $(shell find $(O)/obj -name '*.d' 2>/dev/null)
