/* SPDX-License-Identifier: MIT */
/*
 * names.h: the short form of a demangled frame name, the way a flame graph
 * wants it: one box per function, not per overload.
 *
 * libiberty prints a C++ function as
 *
 *	[RETURN-TYPE ]QUALIFIED-NAME(PARAMS)[ QUALIFIERS][ [clone .X]]...
 *
 * and the short form keeps QUALIFIED-NAME alone, namespaces, classes and
 * template arguments included:
 *
 *	double geo::dot<double, 8>(double const*, double const*)
 *	-> geo::dot<double, 8>
 *	std::function<void (int)>::operator()(int) const
 *	-> std::function<void (int)>::operator()
 *
 * The rules:
 *
 *  - The return type goes: it is everything before the last space outside
 *    brackets ahead of the name, and a function that returns a function
 *    pointer, "void (*signal(int, void (*)(int)))(int)", gives "signal".
 *  - The parameter list goes, with the qualifiers the demangler prints after
 *    it: const, volatile, restrict, &, &&, noexcept[(...)], throw(...),
 *    transaction_safe.
 *  - Nothing is cut inside <>, (), [] or {}: template arguments (local
 *    names in them included, "f<g()::{lambda()#1}>"), lambda signatures
 *    "{lambda(int)#1}", "(anonymous namespace)" and ABI tags "[abi:cxx11]"
 *    stay whole.  The "<", ">", "(" and ")" of operator names
 *    ("operator<", "operator>>=", "operator()", "operator->*", and the
 *    space of "operator< <int>") are not brackets, and neither are
 *    comparisons inside template arguments ("A<(4)>=(1)>").
 *  - Conversion operators keep their type: "operator char const*",
 *    "operator void (*)(int)".
 *  - A local name loses the parameters of the functions it is local to:
 *    "m2()::{lambda()#1}::operator()() const" ->
 *    "m2::{lambda()#1}::operator()", "foo()::bar" -> "foo::bar".
 *  - Clone suffixes stay after the short name, " [clone .cold]",
 *    " [clone .constprop.0] [clone .isra.0]": a clone is a separate piece
 *    of code, and a cold path should not merge into its hot function.
 *  - The words libiberty puts before special names (thunks, guard
 *    variables, reference temporaries, TLS functions, transaction clones,
 *    typeinfo, vtables) stay and the rest is shortened: "virtual thunk to
 *    Foo::bar()" -> "virtual thunk to Foo::bar", "guard variable for
 *    foo()::x" -> "guard variable for foo::x".
 *  - Anything else comes back unchanged: names without a parameter list (C,
 *    kernel, Rust, Go, variables, "typeinfo for Foo", "[unknown]"), names
 *    with a single ':', '/', ';', '\\', quotes or control bytes outside
 *    brackets (perf-map names of Python, V8, the JVM), names whose brackets
 *    do not balance or whose parameter list is followed by anything but
 *    qualifiers, clone suffixes and the rest of a function-pointer
 *    declarator.
 *
 * The name is read once, left to right, with a stack of open brackets: the
 * cost is linear in its length, and one allocation.
 */
#ifndef SP_NAMES_H
#define SP_NAMES_H

/*
 * Returns the short form of name by the rules above, malloc'd (the caller
 * frees it), never longer than name; NULL when out of memory.  A NULL name
 * reads as "".
 */
char *sp_name_short(const char *name);

#endif
