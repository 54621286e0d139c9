// SPDX-License-Identifier: MIT
// sym-cxx: C++ names for the demangler: namespaces, templates, operators.
//
//	main -> app::engine::Pipeline<app::Vec3<float>, 4>::step(unsigned long)
//	     -> app::detail::hot<std::pair<int, long> >(std::pair<int, long>*, unsigned long)
//
// usage: sym-cxx [SECONDS]	(default 5); prints nothing
// Creates the file $WL_READY names, if set, before its loop (as wl.h's
// wl_ready does).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>

#define NOINLINE __attribute__((noinline, noipa, used))

static volatile std::uint64_t sink;

namespace app {
template <typename T> struct Vec3 {
	T x, y, z;
};

namespace detail {
template <typename P> NOINLINE std::uint64_t hot(P *p, unsigned long n)
{
	std::uint64_t v = sink + (std::uint64_t)p->first;

	while (n--) {
		v = v * 6364136223846793005ull + (std::uint64_t)p->second;
		__asm__ volatile("" : "+r"(v));
	}
	return v;
}
} // namespace detail

namespace engine {
template <typename V, int N> struct Pipeline {
	V state[N];
	NOINLINE std::uint64_t step(unsigned long n)
	{
		std::pair<int, long> p(N, (long)n);
		std::uint64_t r = detail::hot(&p, n);

		__asm__ volatile("" ::: "memory");
		return r;
	}
};
} // namespace engine
} // namespace app

int main(int argc, char **argv)
{
	double secs = argc > 1 ? std::atof(argv[1]) : 5;
	auto end = std::chrono::steady_clock::now() +
		   std::chrono::duration<double>(secs);
	app::engine::Pipeline<app::Vec3<float>, 4> pl{};
	const char *ready = std::getenv("WL_READY");

	if (ready && *ready) {
		std::FILE *f = std::fopen(ready, "w");

		if (!f || std::fclose(f)) {
			std::perror(ready);
			return 70;
		}
	}
	do {
		sink = pl.step(200000);
		__asm__ volatile("" ::: "memory");
	} while (std::chrono::steady_clock::now() < end);
	return 0;
}
