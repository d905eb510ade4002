# Makefile - builds libcorotracer (the probe), the corotracer binary, the
# examples and the tests. Each area adds its sources and tests in its own
# build.mk (src/*/build.mk, examples/*/build.mk, tests/build.mk, tests/fuzz/build.mk).
#
#   make            install the build's Debian packages if missing, then
#                   build everything into $(O) (default build/default)
#   make all        build everything, without looking at the packages
#   make help       this list
#   make demo       the demo story: a coroutine server with a lost wakeup,
#                   traced and reported (installs redis-benchmark; README.md)
#   make demo-fixed the same load with the bug off
#   make check      install every test's packages, then run every test: gcc,
#                   clang, ASan+UBSan, TSan, AArch64 (qemu), fuzzers
#   make test       run the tests of one build (O=..., SAN=asan|tsan);
#                   T=NAME runs only that test (test-rip-api, rip-api, test-rip.sh...)
#   make fuzz       run the fuzz targets longer (tests/fuzz/build.mk)
#   make check-arm  the AArch64 build's tests under qemu-user (part of check)
#   make bench      the quick benchmarks; BENCH="probe report" or BENCH=all
#                   (bench/run.sh, docs/BENCHMARKS.md)
#   make install    PREFIX=/usr/local (default); a program then builds with
#                   `cc app.c $(pkg-config --cflags --libs corotracer)`
#   make clean      remove build/

# `default` is the default goal whatever rule a build.mk defines first.
.DEFAULT_GOAL := default

PREFIX ?= /usr/local
# The release, from its one place (include/corotracer.h).
VERSION := $(shell sed -n 's/^\#define COROTRACER_VERSION "\(.*\)"$$/\1/p' include/corotracer.h)
SAN ?=
O ?= build/default$(if $(SAN),-$(SAN))
CC ?= cc
CXX ?= c++
# ThreadSanitizer builds use clang unless a compiler is named: GCC 12's TSan
# refuses atomic_thread_fence (-Werror=tsan), which the engine's sleep
# handshake needs (a seq_cst fence, src/run/run_main.c).
ifeq ($(SAN),tsan)
ifeq ($(origin CC),default)
CC := clang
endif
ifeq ($(origin CXX),default)
CXX := clang++
endif
endif

WARN := -Wall -Wextra -Werror
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O2 -fPIC -fvisibility=hidden $(WARN)
BASE_CXXFLAGS := -std=c++20 -D_GNU_SOURCE -g -O2 -fPIC $(WARN)
# Internal headers (src/) for our own code; examples see the public headers
# only, as users do.
INC = -Iinclude -Isrc
$(O)/obj/examples/%.o: INC = -Iinclude
ifeq ($(SAN),asan)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else ifeq ($(SAN),tsan)
SAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
else
SAN_FLAGS :=
endif
CFLAGS_ALL = $(BASE_CFLAGS) $(INC) $(SAN_FLAGS) $(CFLAGS)
CXXFLAGS_ALL = $(BASE_CXXFLAGS) $(INC) $(SAN_FLAGS) $(CXXFLAGS)
LDFLAGS_ALL = $(SAN_FLAGS) $(LDFLAGS)

# The one link recipe: $(call link[,LINKER[,LIBS]]) links $@ from the objects
# among the prerequisites, then the static libraries among them, then LIBS
# (e.g. -L... -lfoo, $(PKG_LIBS)) and pthreads. LINKER defaults to $(CC);
# extra linker flags (-pie, -shared) go with it: $(call link,$(CC) -pie).
# (A comma inside an argument: $(,).)
, := ,
define link
@mkdir -p $(@D)
$(or $1,$(CC)) $(LDFLAGS_ALL) -o $@ $(filter %.o,$^) $(filter %.a,$^) $2 -lpthread
endef

# Libraries of the analysis side, found through pkg-config only: the
# corotracer binary's (BIN_PKGS), and the database clients (DB_PKGS, from the
# areas' build.mk) that only corotracer-db links (src/common/commands.h "ct_db").
BIN_PKGS := libdw zlib
DB_PKGS :=
PKGS = $(BIN_PKGS) $(DB_PKGS)
BIN_LIBS = $(shell pkg-config --libs $(BIN_PKGS) 2>/dev/null)
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

LIBA := $(O)/lib/libcorotracer.a
LIBSO := $(O)/lib/libcorotracer.so
LIBSO1 := $(O)/lib/libcorotracer.so.1
BIN := $(O)/bin/corotracer
BIN_DB := $(O)/bin/corotracer-db

# Filled in by the build.mk files.
LIB_SRCS :=      # linked into libcorotracer (the probe): libc + pthreads only
CLI_SRCS :=      # linked into corotracer-db, all commands (may use PKGS)
DB_SRCS :=       # of those, the ones only corotracer-db links (may use DB_PKGS)
BIN_SRCS :=      # linked into the corotracer binary beside CLI_SRCS but DB_SRCS
TESTS :=         # test programs or scripts, run by tests/run.sh in every build
TESTS_NOSAN :=   # tests run only in the plain build (e.g. timing-bound end-to-end)
TESTS_SAN :=     # tests run only in sanitizer builds (they check the sanitizers' verdict)
PROGS :=         # other programs (examples, benchmarks) built by `make`

# The format layer first: the areas above it list its sources (FORMAT_*_SRCS).
include src/format/build.mk
include $(filter-out src/format/build.mk,$(sort $(wildcard src/*/build.mk)))
include $(sort $(wildcard examples/*/build.mk))
include $(wildcard tests/build.mk) $(wildcard bench/build.mk)
# Last: it makes rules from every area's FUZZ_SRCS_<name>.
include tests/fuzz/build.mk

LIB_OBJS := $(LIB_SRCS:%.c=$(O)/obj/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(O)/obj/%.o)
BIN_OBJS := $(patsubst %.c,$(O)/obj/%.o,$(filter-out $(DB_SRCS),$(CLI_SRCS)) $(BIN_SRCS))

# Objects made by a chain of pattern rules stay: make would delete them as
# intermediates after the link, and a second make running in the tree (a
# `make test T=...` beside a build) could then link without them.
.SECONDARY:
.PHONY: default all check check-arm test demo demo-fixed demo-story install deps deps-build deps-demo clean bench help
all: $(LIBA) $(LIBSO) $(LIBSO1) $(BIN) $(BIN_DB) $(PROGS) $(filter-out %.sh,$(TESTS) $(TESTS_NOSAN))

# Plain `make` on a fresh Debian machine: the build's packages first (compilers,
# libdw, the export's client libraries; scripts/install-deps.sh says which it
# installs, and on another system what to install), then everything in a fresh
# make that sees them, as `make demo` does.
default: deps-build
	+@$(MAKE) --no-print-directory all
deps-build:
	@sh scripts/install-deps.sh build

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
	$(call link,$(CC) -shared -Wl$(,)-soname$(,)libcorotracer.so.1)

# The soname, so that a program linked with -L$(O)/lib -lcorotracer runs from
# the build tree (LD_LIBRARY_PATH or -Wl,-rpath), as after `make install`.
$(LIBSO1): $(LIBSO)
	ln -sf libcorotracer.so $@

$(BIN): $(BIN_OBJS) $(LIBA)
	$(call link,,$(BIN_LIBS))

$(BIN_DB): $(CLI_OBJS) $(LIBA)
	$(call link,,$(PKG_LIBS))

# A test or program named tests/foo.c links against the static library.
$(O)/tests/%: $(O)/obj/tests/%.o $(LIBA)
	$(call link)

# The tests of this build; with T=NAME[ NAME...] only those named (a name
# with or without its test- prefix and .sh suffix).
TEST_LIST = $(TESTS) $(if $(SAN),$(TESTS_SAN),$(TESTS_NOSAN))
test_named = $(strip $(foreach t,$(TEST_LIST),$(if $(filter $(basename $(notdir $t)),$(foreach n,$(T:.sh=),$n test-$n)),$t)))
test: all
	$(if $(T),$(if $(test_named),,@echo "make test: no test named $(T) in this build" >&2; exit 2))
	O=$(O) SAN=$(SAN) sh tests/run.sh $(if $(T),$(test_named),$(TEST_LIST))

deps:
	sh scripts/install-deps.sh
deps-demo:
	@sh scripts/install-deps.sh demo

# The benchmarks (bench/run.sh): the quick set, or BENCH="NAME..." or BENCH=all.
bench: all
	O=$(O) sh bench/run.sh $(BENCH)

# The demo needs the dependencies before anything is built (libdw for the
# corotracer binary, redis-tools for the load): install, then build and run
# in a fresh make that sees them. Recipe: examples/demo/build.mk.
demo: deps-demo
	$(MAKE) O=$(O) demo-story DEMO_ARGS=--bug
demo-fixed: deps-demo
	$(MAKE) O=$(O) demo-story DEMO_ARGS=--fixed

# Every test, in every build we ship: gcc and clang warnings-as-errors, the
# plain tests, then ASan+UBSan and TSan, then each fuzz target briefly.
# Each leg ends with its summary line (`N passed, N failed`).
check: deps
	$(MAKE) O=build/clang CC=clang CXX=clang++ all
	@echo "build/clang: 1 passed, 0 failed (everything built with clang, warnings as errors)"
	$(MAKE) O=build/default test
	$(MAKE) check-arm
	$(MAKE) O=build/asan SAN=asan test
	$(MAKE) O=build/tsan SAN=tsan CC=clang CXX=clang++ test
	$(MAKE) fuzz-check

# The AArch64 leg: cross-built with aarch64-linux-gnu-gcc, run under qemu-user
# against the native engine and reader of build/default (tests/arm/check.sh).
check-arm:
	MAKE="$(MAKE)" sh tests/arm/check.sh

# The list at the top of this file, from its one place.
help:
	@sed -n 's/^#   //p' Makefile

# Outside /usr the dynamic linker does not look in $(PREFIX)/lib (or not until
# ldconfig runs): the .pc then gives a user's program an rpath to it, so that a
# program built with `pkg-config --libs corotracer` runs where it was built.
PC_RPATH = $(if $(filter /usr,$(patsubst %/,%,$(PREFIX))),,-Wl$(,)-rpath$(,)$${libdir})

install: $(LIBA) $(LIBSO) $(BIN) $(BIN_DB)
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 0644 include/*.h $(wildcard include/*.hpp) $(DESTDIR)$(PREFIX)/include/
	install -m 0644 $(LIBA) $(DESTDIR)$(PREFIX)/lib/
	install -m 0755 $(LIBSO) $(DESTDIR)$(PREFIX)/lib/libcorotracer.so.1
	ln -sf libcorotracer.so.1 $(DESTDIR)$(PREFIX)/lib/libcorotracer.so
	install -m 0755 $(BIN) $(BIN_DB) $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@RPATH@|$(PC_RPATH)|' corotracer.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/corotracer.pc

clean:
	rm -rf build

-include $(shell find $(O)/obj -name '*.d' 2>/dev/null)
