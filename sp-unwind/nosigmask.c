/* SPDX-License-Identifier: MIT */
/*
 * nosigmask.c: sp-unwind's own sigprocmask, which changes nothing.
 *
 * libunwind (1.6.2, built with its default --enable-block-signals) blocks
 * every signal around each use of an address space's unwind-rule cache
 * (lock_acquire/lock_release, include/libunwind_i.h, in get_rs_cache and
 * put_rs_cache, src/dwarf/Gparser.c) and of its memory pools (mempool_alloc
 * and mempool_free, src/mi/mempool.c, on every cache miss): at least two
 * rt_sigprocmask calls per unwound frame, 60-80% of sp-unwind's CPU.  No
 * caching policy avoids them: unw_set_caching_policy turns
 * UNW_CACHE_PER_THREAD into UNW_CACHE_GLOBAL (HAVE___THREAD is no longer
 * defined by any 1.6 build), and UNW_CACHE_NONE reaches the pools on every
 * frame instead.
 *
 * The blocking only keeps a signal handler from running, and perhaps
 * unwinding, while this thread holds one of those locks; the mutexes still
 * order threads.  sp-unwind catches no signal (SIGINT and SIGHUP are
 * blocked and taken by a thread of their own, lib/cli's
 * sp_finish_on_terminal_signals(); glibc's own 32 and 33, which come with
 * that thread, only pthread_cancel and set*id send), so an executable's
 * definition of sigprocmask, which the dynamic linker binds libunwind's
 * calls to, may do nothing.  tests/bats/sp-unwind.bats checks both: that sp-unwind
 * catches no signal (SigCgt) and that only sp-unwind defines this.
 *
 * Rules that keep it safe:
 *  - link it into sp-unwind only, never into lib/: an archive member that
 *    defines sigprocmask is pulled into every program that calls it (such
 *    as sp-record through lib/os/launch.c, whose child must really clear its
 *    mask before exec), and libstackpulse.so would impose it on its users;
 *  - sp-unwind installs no signal handler (SIG_IGN and SIG_DFL are fine),
 *    and neither cancels a thread nor changes its ids;
 *  - code in sp-unwind that must change its mask calls pthread_sigmask,
 *    which this does not replace.
 * Only libunwind-x86_64.so.8 and libunwind.so.8 import sigprocmask among
 * sp-unwind's libraries (liblzma calls pthread_sigmask; libc's own calls
 * are internal and never reach this).
 */
#include <signal.h>

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	(void)how;
	(void)set;
	if (old)
		sigemptyset(old);	/* libunwind only hands it back to us */
	return 0;
}
