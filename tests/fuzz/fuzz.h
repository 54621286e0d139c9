/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h: what the fuzz harnesses share.
 *
 * Each tests/fuzz/fuzz-NAME.c defines LLVMFuzzerTestOneInput() over one
 * reader of stackpulse.  Built with clang -fsanitize=fuzzer it is a libFuzzer
 * binary (make fuzz); built with replay.c it is a plain program that runs the
 * inputs it is given once each, which is how make check replays the seed
 * corpus and every input that ever crashed (tests/fuzz/README.md).
 *
 * A harness must not leak, print, or keep state between inputs, and must
 * never touch a file the input names: the readers are given memory only.
 * The exceptions are the unwinder and the symbolizer, whose job is to open
 * the files a stream names (fuzz-unwound.c, fuzz-rawgen.c): they open them
 * for reading, as the tools do, and write nothing; and the symbolizer's
 * ELF cache (fz_elf_cache()), which sp-symbolize keeps too for every
 * process of a stream.
 */
#ifndef SP_FUZZ_H
#define SP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sp_elf_cache;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * A file descriptor of an anonymous file holding data, positioned at its
 * start; aborts when the file cannot be made (the harness cannot go on).
 */
int fz_memfd(const uint8_t *data, size_t size);

/* The same as a stdio stream, for the text readers. */
FILE *fz_memfile(const uint8_t *data, size_t size);

/* A NUL-terminated copy of data (malloc'ed), for parsers of strings. */
char *fz_strdup(const uint8_t *data, size_t size);

/*
 * The path of a small kallsyms file in memory (a few symbols, a module's
 * among them), made on first use and kept: what the harnesses that
 * symbolize give for /proc/kallsyms, whose 200000 lines would otherwise be
 * read again for every input.
 */
const char *fz_kallsyms(void);

/*
 * The ELF cache of an input's unwinder and symbolizer; call it once per
 * input.  sp-unwind and sp-symbolize keep one cache for all the processes
 * of a stream, so the files it holds are met again by later mappings, as
 * here by later inputs, while what an input makes of them is still all its
 * own (its address spaces and symbolizer are new).  Reading the harness's
 * own symbol table afresh for every input took half of each input's time.
 * Every 256 inputs it is made anew, so that the paths and images inputs
 * name cannot pile up in it over a long run.
 */
struct sp_elf_cache *fz_elf_cache(void);

struct sp_out;

/*
 * An output whose bytes go nowhere (/dev/null), for the writers a harness
 * runs over what a reader gave; aborts when it cannot be made.  The caller
 * sp_out_close()s it.
 */
struct sp_out *fz_out(void);

/*
 * An output into an anonymous file whose descriptor is put in *fd, for a
 * harness that compares what writers wrote; fz_read_all() gives the bytes
 * back after sp_out_close().  Aborts when it cannot be made.
 */
struct sp_out *fz_out_memfd(int *fd);

/*
 * All bytes of the file at fd, malloc'ed with a NUL after them, their
 * count in *len.
 */
uint8_t *fz_read_all(int fd, size_t *len);

/*
 * Read the spool file held in data to its end through the spool reader
 * (format/spool.h), as sp-spool and the public API do, with every accessor:
 * records and samples, the stacks samples refer to, the summary, the tally
 * and the info.  Aborts when the reader breaks a promise of its header (a
 * sample whose stack it cannot give back, an error without a message), or
 * hands out a record that a reader of the unwound stream would refuse:
 * sp-spool cat feeds them to sp-symbolize.  Read record by record (one
 * input in three, by its length), the records go to a spool writer too,
 * as sp-spool write does, and what it wrote must read back as the records
 * it took.
 */
void fz_read_spool(const uint8_t *data, size_t size);

/*
 * Whether p holds n bytes of text as the writers of JSON and XML promise
 * it: UTF-8 in its shortest forms, no surrogates, nothing above U+10FFFF,
 * no control characters but tab, newline and carriage return, and with
 * xml set nothing XML 1.0 forbids (U+FFFE, U+FFFF).  p[n] must be 0, as
 * fz_read_all() leaves it.
 */
int fz_utf8_text(const uint8_t *p, size_t n, int xml);

struct sp_rec_hdr;

/*
 * Whether sp-symbolize would take rec, a record of the unwound stream, as
 * far as its own bytes go: the framing of its type (records.h, unwound.h).
 */
int fz_unwound_ok(const struct sp_rec_hdr *rec);

/*
 * What a stage wrote must be what the next stage reads: read the
 * symbolized text stream of len bytes as sp-fold does, and abort when it
 * is refused.
 */
void fz_check_symtext(const uint8_t *text, size_t len);

#endif
