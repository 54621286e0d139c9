# SPDX-License-Identifier: MIT
# stackpulse: a sampling profiler as small Unix filters over libstackpulse.
#
#   make               build the tools and lib/libstackpulse.a
#   make check         install missing packages, build under ASan+UBSan, run all tests
#   make demo          install missing packages, profile bundled workload, write
#                      demo.folded and demo.svg
#   make fuzz          build the libFuzzer harnesses with clang and run each
#                      FUZZ_SECONDS (default 60) over its corpus (tests/fuzz/)
#   make soak          record processes that come and go for 30 minutes, watching memory
#   make soak-host     record the whole host as the fleet agent does for 5 minutes
#   make V=1           show commands; SANITIZE=address,undefined; O=DIR for out-of-tree builds

VERSION = 0.1.0
PREFIX ?= /usr/local
prefix ?= $(PREFIX)
bindir = $(prefix)/bin
libdir = $(prefix)/lib
includedir = $(prefix)/include
mandir = $(prefix)/share/man

CC ?= cc
O ?= .
CFLAGS ?= -O2 -g
DEVELOPER_CFLAGS = -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes \
	-Wno-unused-parameter -Wno-missing-field-initializers -Werror
ALL_CFLAGS = -std=gnu11 $(DEVELOPER_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS) \
	-Ilib -I$(O)/build/gen -DSP_VERSION='"$(VERSION)"' -D_GNU_SOURCE -fPIC
# The tools link these statically (libunwind and the C library stay
# shared: Debian's libunwind archives are not position-independent, and
# sp-unwind/nosigmask.c relies on libunwind binding to it at run time):
# loading and relocating them as shared objects cost each tool about
# 3.5 ms of CPU at every start here, more than a short recording's whole
# symbolizing (docs/PERFORMANCE.md).  DYNAMIC=1 links them as shared
# objects, as libstackpulse.so always does.
# ISA-L (inflating compressed DWARF, lib/elf/dwslice.c) comes as a shared
# object only: linked as needed, by the tools that symbolize.
UNWIND_LIBS = -lunwind-x86_64 -lunwind
DEP_LIBS = -ldw -lbpf -lelf -liberty -llzma -lz -lbz2 -lprotobuf-c
SHARED_LIBS = -Wl,--as-needed -lisal -Wl,--no-as-needed
SO_LDLIBS = $(UNWIND_LIBS) $(DEP_LIBS) -lisal -lpthread -lm
ifdef DYNAMIC
LDLIBS = $(SO_LDLIBS)
else
LDLIBS = $(UNWIND_LIBS) $(SHARED_LIBS) -Wl,-Bstatic $(DEP_LIBS) -Wl,-Bdynamic \
	-Wl,--as-needed -lpthread -lm -Wl,--no-as-needed
endif
ifdef SANITIZE
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
ALL_LDFLAGS += -fsanitize=$(SANITIZE)
endif

ifeq ($(V),1)
Q =
else
Q = @
endif

TOOLS = sp-record sp-unwind sp-symbolize sp-fold sp-flame sp-spool sp-push

# lib/: one folder per layer and stage (lib/README.md); a stage uses base,
# format, os and elf, never another stage (tests/layers.sh checks it)
LIB_OBJ = base/io base/stream base/hashtab base/grow base/err base/idset \
	format/records format/alive format/raw format/tail format/unwound format/frame format/symtext \
	format/folded format/python \
	format/spool-codec format/spool-write format/spool-read \
	os/perf os/procfs os/launch os/kallsyms os/perfmap os/perm \
	elf/elfcache elf/symtab elf/plt elf/buildid elf/procs elf/debuginfo \
	elf/debuginfod \
	elf/dwarfinfo elf/dwline elf/dwslice elf/demangle elf/jitdump elf/gopclntab elf/bidstore \
	elf/locate elf/symcache \
	record/record record/events record/convert record/merge record/attach \
	record/synth record/host record/capture record/stacktail record/keep \
	record/offcpu record/python record/python-bpf record/pyframes \
	unwind/unwind unwind/outermost unwind/gostep unwind/splice unwind/intern \
	unwind/memo \
	unwind/unwstream unwind/missing unwind/offcpu \
	symbolize/symbolize symbolize/src-kernel symbolize/src-elf symbolize/src-go \
	symbolize/src-jitdump symbolize/src-perfmap symbolize/symstream \
	symbolize/missing symbolize/python \
	fold/fold fold/offcpu fold/top fold/names fold/pprof fold/speedscope \
	fold/window fold/compact \
	flame/flame flame/colour flame/svg flame/flame-js \
	api/recorder api/symbolizer api/offline

# code generated from lib/*/*.proto by protoc-c, under $(O)/build/gen
GEN = $(O)/build/gen
GEN_OBJ = $(GEN)/fold/profile.pb-c.o
LIB_OBJS = $(foreach o,$(LIB_OBJ),$(O)/lib/$(o).o) $(GEN_OBJ)

UNIT_TESTS = $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test-*.c))

# cli: messages and exits for the tools' mains; never in the library
CLI_OBJ = cli/cli
# push: sp-push's uploads, over libcurl, which nothing else links
PUSH_OBJ = push/push
PUSH_A = $(O)/lib/libsppush.a
CURL_LIBS = -lcurl

SONAME = libstackpulse.so.0
LIB_A = $(O)/lib/libstackpulse.a
LIB_SO = $(O)/lib/libstackpulse.so.$(VERSION)
CLI_A = $(O)/lib/libspcli.a
TOOL_BINS = $(foreach t,$(TOOLS),$(O)/$(t)/$(t))
UNIT_BINS = $(foreach t,$(UNIT_TESTS),$(O)/build/unit/$(t))
HDRS = $(wildcard lib/*/*.h sp-*/*.h)
# what lib/api/stackpulse.h includes, installed under the same folders
PUBLIC_HDRS = base/stream.h format/records.h format/unwound.h format/spool.h \
	format/frame.h os/launch.h

.DELETE_ON_ERROR:
.PHONY: all check test unit bats demo deps clean install bench bench-flame bench-offcpu bench-python soak soak-host examples layers \
	fuzz fuzz-bins fuzz-replay

all: $(TOOL_BINS) $(LIB_A) $(LIB_SO) $(O)/lib/stackpulse.pc

$(O)/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(GEN)/fold/%.pb-c.c $(GEN)/fold/%.pb-c.h: lib/fold/%.proto
	@mkdir -p $(GEN)/fold
	@$(if $(Q),echo "  PROTOC  $<")
	$(Q)protoc-c --proto_path=lib/fold --c_out=$(GEN)/fold $<

$(GEN)/fold/profile.pb-c.o: $(GEN)/fold/profile.pb-c.c
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(O)/lib/fold/pprof.o: $(GEN)/fold/profile.pb-c.h

# the script of the flame graphs, a C array: od and sed, no tool more
$(GEN)/flame/flame-js.c: lib/flame/flame.js
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GEN     $@")
	$(Q)if grep -q ']]>' $<; then echo "$<: ']]>' would end its CDATA section" >&2; exit 1; fi
	$(Q){ echo '/* generated from lib/flame/flame.js by the Makefile: do not edit */'; \
		echo 'const char sp_flame_js[] = {'; \
		od -An -v -tx1 $< | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
		echo '0 };'; \
		echo 'const unsigned long sp_flame_js_len = sizeof(sp_flame_js) - 1;'; \
	} >$@

$(O)/lib/flame/flame-js.o: $(GEN)/flame/flame-js.c
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# the BPF program that reads Python's frames in a sample, compiled for the
# kernel's BPF target (clang) and made a C array the same way
BPF_CC = clang
BPF_CFLAGS = -O2 -g -target bpf -I/usr/include/$(shell $(BPF_CC) -print-multiarch)
$(GEN)/record/python.bpf.o: lib/record/python.bpf.c lib/record/pychain.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  BPF     $@")
	$(Q)$(BPF_CC) $(BPF_CFLAGS) -Ilib/record -c -o $@ $<

$(GEN)/record/python-bpf.c: $(GEN)/record/python.bpf.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GEN     $@")
	$(Q){ echo '/* generated from lib/record/python.bpf.c by the Makefile: do not edit */'; \
		echo 'const unsigned char sp_python_bpf[] = {'; \
		od -An -v -tx1 $< | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
		echo '};'; \
		echo 'const unsigned long sp_python_bpf_len = sizeof(sp_python_bpf);'; \
	} >$@

$(O)/lib/record/python-bpf.o: $(GEN)/record/python-bpf.c
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(LIB_A): $(LIB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# exports exactly the functions the installed headers declare
$(O)/lib/libstackpulse.map: lib/api/mkmap.sh lib/api/stackpulse.h \
		$(addprefix lib/,$(PUBLIC_HDRS))
	@mkdir -p $(dir $@)
	$(Q)sh $^ >$@

$(LIB_SO): $(LIB_OBJS) $(O)/lib/libstackpulse.map
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(ALL_LDFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=$(O)/lib/libstackpulse.map -o $@ \
		$(LIB_OBJS) $(SO_LDLIBS)
	$(Q)ln -sf $(notdir $@) $(O)/lib/$(SONAME)
	$(Q)ln -sf $(SONAME) $(O)/lib/libstackpulse.so

$(CLI_A): $(foreach o,$(CLI_OBJ),$(O)/lib/$(o).o)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(PUSH_A): $(foreach o,$(PUSH_OBJ),$(O)/lib/$(o).o)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(O)/lib/stackpulse.pc: lib/api/stackpulse.pc.in Makefile
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@prefix@|$(prefix)|' -e 's|@libdir@|$(libdir)|' \
		-e 's|@includedir@|$(includedir)|' -e 's|@VERSION@|$(VERSION)|' \
		$< > $@

# each tool lives in its own directory: sp-x/sp-x
$(O)/sp-record/sp-record: $(O)/sp-record/main.o $(LIB_A) $(CLI_A)
# nosigmask.o: sp-unwind's no-op sigprocmask, in the two tools that unwind;
# never in lib/ (see the file).  sp-fold unwinds and symbolizes a raw input
# itself, with sp-unwind's report and sp-symbolize's options.
UNWIND_TOOL_OBJ = $(O)/sp-unwind/nosigmask.o $(O)/sp-unwind/report.o
SYMBOLIZE_TOOL_OBJ = $(O)/sp-symbolize/options.o
$(O)/sp-unwind/sp-unwind: $(O)/sp-unwind/main.o $(UNWIND_TOOL_OBJ) $(LIB_A) $(CLI_A)
$(O)/sp-symbolize/sp-symbolize: $(O)/sp-symbolize/main.o $(SYMBOLIZE_TOOL_OBJ) $(LIB_A) $(CLI_A)
$(O)/sp-fold/sp-fold: $(O)/sp-fold/main.o $(UNWIND_TOOL_OBJ) $(SYMBOLIZE_TOOL_OBJ) $(LIB_A) $(CLI_A)
$(O)/sp-flame/sp-flame: $(O)/sp-flame/main.o $(LIB_A) $(CLI_A)
$(O)/sp-spool/sp-spool: $(O)/sp-spool/main.o $(LIB_A) $(CLI_A)
$(O)/sp-push/sp-push: $(O)/sp-push/main.o $(PUSH_A) $(CLI_A) $(LIB_A)
$(O)/sp-push/sp-push: EXTRA_LIBS = $(CURL_LIBS)
$(TOOL_BINS):
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(ALL_LDFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(EXTRA_LIBS)

$(O)/build/unit/%: tests/unit/%.c tests/unit/unit.h tests/unit/records.h \
		tests/unit/libcdebug.h $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -Itests/unit -o $@ $< $(LIB_A) $(LDLIBS)

# test-dwline reads the line table of every version gcc writes: its fixture
# is compiled into it once per DWARF version below gcc's default 5
DWLINE_FIXTURES = $(foreach v,2 3 4,$(O)/build/unit/dwline-fixture-v$(v).o)
$(O)/build/unit/dwline-fixture-v%.o: tests/unit/dwline-fixture.c \
		tests/unit/dwline-fixture.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -gdwarf-$* -DFIXTURE=fixture_v$* -c -o $@ $<
$(O)/build/unit/test-dwline: tests/unit/test-dwline.c tests/unit/unit.h \
		tests/unit/libcdebug.h $(DWLINE_FIXTURES) $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -Itests/unit -o $@ $< $(DWLINE_FIXTURES) $(LIB_A) $(LDLIBS)

# sp-push's library links libcurl
$(O)/build/unit/test-push: tests/unit/test-push.c tests/unit/unit.h $(PUSH_A) $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -Itests/unit -o $@ $< $(PUSH_A) $(LIB_A) $(LDLIBS) $(CURL_LIBS)

# the tutorials of the original design, as C programs over the public API
EXAMPLES = $(patsubst examples/%.c,%,$(filter-out examples/demo.c,$(wildcard examples/*.c)))
EXAMPLE_BINS = $(foreach e,$(EXAMPLES),$(O)/build/examples/$(e))
examples: $(EXAMPLE_BINS)
$(O)/build/examples/%: examples/%.c $(HDRS) $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -Ilib/api $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB_A) $(LDLIBS)

# Fuzzing (tests/fuzz/README.md): one harness per reader, fuzz-NAME.c, with
# a seed corpus in tests/fuzz/corpus/NAME and every input that ever crashed
# in tests/fuzz/regress/NAME.  make fuzz builds them with clang's libFuzzer
# and runs them; make check replays both folders through gcc-built harnesses
# under ASan+UBSan.
FUZZERS = $(patsubst tests/fuzz/fuzz-%.c,%,$(wildcard tests/fuzz/fuzz-*.c))
FUZZ_O = build/fuzz
FUZZ_FLAGS = O=$(FUZZ_O) CC=clang SANITIZE=address,undefined CFLAGS="-O1 -g" \
	EXTRA_CFLAGS="-fsanitize=fuzzer-no-link -DSP_IO_CHUNK=4096"
FUZZ_SRC = tests/fuzz/fuzz.c tests/fuzz/fuzz.h
FUZZ_SECONDS ?= 60

fuzz: deps
	$(Q)$(MAKE) --no-print-directory $(FUZZ_FLAGS) fuzz-bins
	$(Q)sh tests/fuzz/run.sh $(FUZZ_O) $(FUZZ_SECONDS) $(FUZZERS)

fuzz-bins: $(foreach f,$(FUZZERS),$(O)/fuzz/$(f))

$(O)/fuzz/%: tests/fuzz/fuzz-%.c $(FUZZ_SRC) $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $(ALL_LDFLAGS) -Itests/fuzz -o $@ \
		$< tests/fuzz/fuzz.c $(LIB_A) $(LDLIBS)

$(O)/build/replay/%: tests/fuzz/fuzz-%.c tests/fuzz/replay.c $(FUZZ_SRC) $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -Itests/fuzz -o $@ \
		$< tests/fuzz/fuzz.c tests/fuzz/replay.c $(LIB_A) $(LDLIBS)

# fuzz-rawsym.c is fuzz-rawgen.c with the symbolizer after the unwinder
$(O)/fuzz/rawsym $(O)/build/replay/rawsym: tests/fuzz/fuzz-rawgen.c

REPLAY_BINS = $(foreach f,$(FUZZERS),$(O)/build/replay/$(f))
fuzz-replay: $(REPLAY_BINS)
	@set -e; for f in $(FUZZERS); do \
		$(O)/build/replay/$$f tests/fuzz/corpus/$$f tests/fuzz/regress/$$f; done

# Packages the build and the tests need, installed when missing and root.
DEPS = gcc make libelf-dev libdw-dev libunwind-dev zlib1g-dev libbz2-dev libisal-dev bats bats-assert \
	bats-support g++ binutils libiberty-dev liblzma-dev xz-utils \
	pkg-config python3 util-linux protobuf-c-compiler libprotobuf-c-dev \
	libxml2-utils chromium fonts-dejavu-core golang-go clang libclang-rt-dev \
	time libc6-dbg libcurl4-openssl-dev libdebuginfod-dev debuginfod libbpf-dev
deps:
	@sh tests/install-deps.sh $(DEPS)
	@sh tests/install-deps.sh --npm tests/browser


SAN_O = build/san
SAN_FLAGS = SANITIZE=address,undefined O=$(SAN_O) CFLAGS="-O1 -g"

check: deps layers
	$(Q)$(MAKE) --no-print-directory $(SAN_FLAGS) all unit-bins examples
	$(Q)$(MAKE) --no-print-directory $(SAN_FLAGS) unit
	$(Q)$(MAKE) --no-print-directory $(SAN_FLAGS) fuzz-replay
	$(Q)$(MAKE) --no-print-directory bats

# a stage of lib/ includes no other stage (lib/README.md)
layers:
	@sh tests/layers.sh lib

unit-bins: $(UNIT_BINS)

unit: $(UNIT_BINS)
	@set -e; pass=0; for t in $(UNIT_BINS); do \
		echo "  UNIT    $$t"; $$t; pass=$$((pass+1)); done; \
		echo "unit: $$pass passed, 0 failed"

test: check

bats:
	SP_BIN=$(CURDIR)/$(SAN_O) bats tests/bats

demo: deps all
	@sh examples/demo.sh $(O)

bench: all
	@sh bench/run.sh
	@sh bench/flame.sh $(O)

# sp-flame against flamegraph.pl alone (FLAMEGRAPH_PL=/path/to/flamegraph.pl)
bench-flame: all
	@sh bench/flame.sh $(O)

# off-CPU time against perf sched, and --off-cpu's cost on a program that
# switches 400,000 times a second (OFFCPU_SECONDS, OFFCPU_REPS)
bench-offcpu: all
	@OFFCPU_BIN=$(O) bash bench/offcpu.sh

# what reading CPython's frames in each sample costs the target
bench-python: all
	@PY_BIN=$(O) bash bench/python.sh

# half an hour of processes coming and going, every stage's memory watched
# (SOAK_SECONDS=300 for five minutes)
soak: all
	@SOAK_BIN=$(O) bash bench/soak.sh

# the whole host as the fleet agent records it, 5 minutes (HOST_SECONDS)
soak-host: all
	@HOST_BIN=$(O) bash bench/host.sh

install: all
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(mandir)/man1 \
		$(DESTDIR)$(libdir)/pkgconfig $(DESTDIR)$(includedir)/stackpulse
	for t in $(TOOLS); do install -m 755 $(O)/$$t/$$t $(DESTDIR)$(bindir)/$$t; \
		install -m 644 $$t/$$t.1 $(DESTDIR)$(mandir)/man1/$$t.1; done
	install -m 644 $(LIB_A) $(DESTDIR)$(libdir)/
	install -m 755 $(LIB_SO) $(DESTDIR)$(libdir)/
	ln -sf $(notdir $(LIB_SO)) $(DESTDIR)$(libdir)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(libdir)/libstackpulse.so
	install -m 644 lib/api/stackpulse.h $(DESTDIR)$(includedir)/stackpulse/
	for h in $(PUBLIC_HDRS); do \
		install -D -m 644 lib/$$h $(DESTDIR)$(includedir)/stackpulse/$$h; done
	install -m 644 $(O)/lib/stackpulse.pc $(DESTDIR)$(libdir)/pkgconfig/

clean:
	rm -rf build lib/*/*.o lib/*.a lib/*.so* lib/*.map lib/stackpulse.pc sp-*/*.o $(foreach t,$(TOOLS),$(t)/$(t)) \
		lib/flame/flame-js.c lib/record/python-bpf.c \
		demo.folded demo.svg demo.raw
