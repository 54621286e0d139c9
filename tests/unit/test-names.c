/* SPDX-License-Identifier: MIT */
/*
 * test-names.c: short frame names.  The C++ and Rust cases are symbols
 * that g++ 12 and rustc emitted, demangled here by sp_demangle(), so each
 * expectation is tied to what the demangler really prints; the demangled
 * text is checked too, so that a demangler printing otherwise shows up as
 * such and not as a shortening bug.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/demangle.h"
#include "fold/names.h"
#include "unit.h"

/* short form of name is want */
static void check_short(const char *name, const char *want, int line)
{
	char *got = sp_name_short(name);

	if (got && !strcmp(got, want)) {
		unit_pass++;
	} else {
		unit_fail++;
		fprintf(stderr,
			"%s:%d: sp_name_short('%s') = '%s', want '%s'\n",
			__FILE__, line, name ? name : "(null)",
			got ? got : "(null)", want);
	}
	free(got);
}

/* mangled demangles to full, whose short form is want */
static void check_mangled(const char *mangled, const char *full,
			  const char *want, int line)
{
	char *d = sp_demangle(mangled);

	if (d && !strcmp(d, full)) {
		unit_pass++;
		check_short(d, want, line);
	} else {
		unit_fail++;
		fprintf(stderr, "%s:%d: sp_demangle('%s') = '%s', want '%s'\n",
			__FILE__, line, mangled, d ? d : "(null)", full);
	}
	free(d);
}

#define SHORT(name, want) check_short(name, want, __LINE__)
#define SAME(name) check_short(name, name, __LINE__)
#define MANGLED(m, full, want) check_mangled(m, full, want, __LINE__)

static void test_plain(void)
{
	MANGLED("_Z3fooi", "foo(int)", "foo");
	MANGLED("_Z3foov", "foo()", "foo");
	MANGLED("_ZN2ns3fooEiPKc", "ns::foo(int, char const*)", "ns::foo");
	MANGLED("_ZNK3Foo1mEi", "Foo::m(int) const", "Foo::m");
	MANGLED("_ZNV3Foo1vEv", "Foo::v() volatile", "Foo::v");
	MANGLED("_ZNR3Foo1lEv", "Foo::l() &", "Foo::l");
	MANGLED("_ZNO3Foo1rEv", "Foo::r() &&", "Foo::r");
	MANGLED("_ZN3FooD1Ev", "Foo::~Foo()", "Foo::~Foo");
	MANGLED("_ZN3FooC2Ev", "Foo::Foo()", "Foo::Foo");
	MANGLED("_Z5noexfPDoFviE", "noexf(void (*)(int) noexcept)", "noexf");
	MANGLED("_Z9my_signaliPFviE", "my_signal(int, void (*)(int))",
		"my_signal");
	/* qualifiers the Itanium ABI does not mangle on a function itself */
	SHORT("Foo::bar() noexcept", "Foo::bar");
	SHORT("Foo::bar() const && noexcept", "Foo::bar");
	SHORT("Foo::bar() noexcept(false)", "Foo::bar");
	SHORT("Foo::bar() noexcept (false)", "Foo::bar");
	SHORT("Foo::bar() throw()", "Foo::bar");
	SHORT("Foo::bar() const volatile restrict", "Foo::bar");
	SHORT("Foo::bar() transaction_safe", "Foo::bar");
}

static void test_clones_and_tags(void)
{
	MANGLED("_Z9getstatici.cold", "getstatic(int) [clone .cold]",
		"getstatic [clone .cold]");
	MANGLED("_ZL4workii.constprop.0",
		"work(int, int) [clone .constprop.0]",
		"work [clone .constprop.0]");
	MANGLED("_ZL4isra1Si.constprop.0.isra.0",
		"isra(S, int) [clone .constprop.0] [clone .isra.0]",
		"isra [clone .constprop.0] [clone .isra.0]");
	MANGLED("_ZNK3Foo3barEv.part.0", "Foo::bar() const [clone .part.0]",
		"Foo::bar [clone .part.0]");
	MANGLED("_ZN3Foo3barEv.cold.12", "Foo::bar() [clone .cold.12]",
		"Foo::bar [clone .cold.12]");
	MANGLED("_Z3foov.lto_priv.0", "foo() [clone .lto_priv.0]",
		"foo [clone .lto_priv.0]");
	SHORT("foo()::x [clone .lto_priv.0]", "foo::x [clone .lto_priv.0]");
	MANGLED("_Z6abi_fnB5cxx11v", "abi_fn[abi:cxx11]()", "abi_fn[abi:cxx11]");
	MANGLED("_Z6gettlsB5cxx11v", "gettls[abi:cxx11]()",
		"gettls[abi:cxx11]");
	/* a clone suffix on a name without parameters is not one of ours */
	SAME("foo [clone .cold]");
	SAME("foo() [clone .cold");
	SAME("foo() [clone [x]]");
	SAME("foo() [clone .cold] bar");
}

static void test_templates(void)
{
	MANGLED("_ZN3geo3dotIdLi8EEET_PKS1_S3_",
		"double geo::dot<double, 8>(double const*, double const*)",
		"geo::dot<double, 8>");
	MANGLED("_ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx"
		"17__normal_iteratorIPiS1_EEDpOT_",
		"void std::vector<int, std::allocator<int> >::_M_realloc_insert"
		"<int const&>(__gnu_cxx::__normal_iterator<int*, std::vector<int,"
		" std::allocator<int> > >, int const&)",
		"std::vector<int, std::allocator<int> >::_M_realloc_insert"
		"<int const&>");
	MANGLED("_ZNSt3mapIjmSt4lessIjESaISt4pairIKjmEEEixERS3_",
		"std::map<unsigned int, unsigned long, std::less<unsigned int>, "
		"std::allocator<std::pair<unsigned int const, unsigned long> > >"
		"::operator[](unsigned int const&)",
		"std::map<unsigned int, unsigned long, std::less<unsigned int>, "
		"std::allocator<std::pair<unsigned int const, unsigned long> > >"
		"::operator[]");
	MANGLED("_Z5mkvecIiESt6vectorIT_SaIS1_EES1_",
		"std::vector<int, std::allocator<int> > mkvec<int>(int)",
		"mkvec<int>");
	MANGLED("_Z4crefIiERKT_S2_", "int const& cref<int>(int const&)",
		"cref<int>");
	MANGLED("_Z4ptrfIiEPT_S1_", "int* ptrf<int>(int*)", "ptrf<int>");
	MANGLED("_Z2ulIiEmT_", "unsigned long ul<int>(int)", "ul<int>");
	MANGLED("_Z6autofnIiEDaT_", "auto autofn<int>(int)", "autofn<int>");
	MANGLED("_Z3addIilEDTplfp_fp0_ET_T0_",
		"decltype ({parm#1}+{parm#2}) add<int, long>(int, long)",
		"add<int, long>");
	MANGLED("_Z2dtISt6vectorIiSaIiEEEDTcldtfp_4sizeEET_",
		"decltype (({parm#1}.size)()) dt<std::vector<int, "
		"std::allocator<int> > >(std::vector<int, std::allocator<int> >)",
		"dt<std::vector<int, std::allocator<int> > >");
	MANGLED("_ZSt12construct_atIiJiEEDTgsnwcvPvLi0E_T_pispcl7declvalIT0_"
		"EEEEPS1_DpOS2_",
		"decltype (::new ((void*)(0)) int((declval<int>)())) "
		"std::construct_at<int, int>(int*, int&&)",
		"std::construct_at<int, int>");
	MANGLED("_ZSt3maxImERKT_S2_S2_",
		"unsigned long const& std::max<unsigned long>(unsigned long "
		"const&, unsigned long const&)",
		"std::max<unsigned long>");
	/* a return type that is a local name, with its function's params */
	MANGLED("_ZSt7forwardIRZ6useallvEUliE_EOT_RNSt16remove_referenceIS2_E"
		"4typeE",
		"useall()::{lambda(int)#1}& std::forward<useall()::{lambda(int)"
		"#1}&>(std::remove_reference<useall()::{lambda(int)#1}&>::type&)",
		"std::forward<useall()::{lambda(int)#1}&>");
	MANGLED("_ZNKSt9_Any_data9_M_accessIZ6useallvEUliE_EERKT_v",
		"useall()::{lambda(int)#1} const& std::_Any_data::_M_access"
		"<useall()::{lambda(int)#1}>() const",
		"std::_Any_data::_M_access<useall()::{lambda(int)#1}>");
	/* functions returning pointers to functions, members, arrays */
	MANGLED("_Z4tsigIiEPFviET_", "void (*tsig<int>(int))(int)",
		"tsig<int>");
	MANGLED("_Z6getmfpIiEM1PFviET_", "void (P::*getmfp<int>(int))(int)",
		"getmfp<int>");
	MANGLED("_Z6getarrIiEPA3_iT_", "int (*getarr<int>(int)) [3]",
		"getarr<int>");
	SHORT("void (*signal(int, void (*)(int)))(int)", "signal");
	SHORT("void (*signal(int, void (*)(int)))(int) [clone .cold]",
	      "signal [clone .cold]");
	SHORT("void (*(*f<int>(int))[3])(char)", "f<int>");
	SHORT("void (Foo::*Foo::get() const)(int) const &", "Foo::get");
	/* comparisons in template arguments are not brackets */
	MANGLED("_Z2geILi4EE1AIXgeT_Li1EEES0_IXT_EE",
		"A<(4)>=(1)> ge<4>(A<4>)", "ge<4>");
	MANGLED("_Z3cmpILi5EE1AIXgtT_Li3EEES0_IXT_EE",
		"A<((5)>(3))> cmp<5>(A<5>)", "cmp<5>");
	MANGLED("_Z5cmpltILi5EE1AIXltT_Li3EEES0_IXT_EE",
		"A<(5)<(3)> cmplt<5>(A<5>)", "cmplt<5>");
	MANGLED("_Z3shrILi4EE1AIXrsT_Li1EEES0_IXT_EE",
		"A<(4)>>(1)> shr<4>(A<4>)", "shr<4>");
	MANGLED("_ZNK1WIM1PKFicREE4callEv",
		"W<int (P::*)(char) const &>::call() const",
		"W<int (P::*)(char) const &>::call");
	MANGLED("_ZNK1WIPDoFicEE4callEv",
		"W<int (*)(char) noexcept>::call() const",
		"W<int (*)(char) noexcept>::call");
}

static void test_operators(void)
{
	MANGLED("_ZNK3FooltERKS_", "Foo::operator<(Foo const&) const",
		"Foo::operator<");
	MANGLED("_ZN3FoolsERSo", "Foo::operator<<(std::ostream&)",
		"Foo::operator<<");
	MANGLED("_ZN3FoorsEi", "Foo::operator>>(int)", "Foo::operator>>");
	MANGLED("_ZNK1PssERKS_", "P::operator<=>(P const&) const",
		"P::operator<=>");
	MANGLED("_ZNK1PeqERKS_", "P::operator==(P const&) const",
		"P::operator==");
	MANGLED("_ZN3FooclEi", "Foo::operator()(int)", "Foo::operator()");
	MANGLED("_ZN3FooixEi", "Foo::operator[](int)", "Foo::operator[]");
	MANGLED("_ZN3FoonwEm", "Foo::operator new(unsigned long)",
		"Foo::operator new");
	MANGLED("_ZN3FoonaEm", "Foo::operator new[](unsigned long)",
		"Foo::operator new[]");
	MANGLED("_ZN3FoodaEPv", "Foo::operator delete[](void*)",
		"Foo::operator delete[]");
	MANGLED("_ZN3FooptEv", "Foo::operator->()", "Foo::operator->");
	MANGLED("_ZN3FoopmEi", "Foo::operator->*(int)", "Foo::operator->*");
	MANGLED("_ZN3FoocmEi", "Foo::operator,(int)", "Foo::operator,");
	MANGLED("_ZNSt17_Rb_tree_iteratorISt4pairIKjmEEppEv",
		"std::_Rb_tree_iterator<std::pair<unsigned int const, unsigned "
		"long> >::operator++()",
		"std::_Rb_tree_iterator<std::pair<unsigned int const, unsigned "
		"long> >::operator++");
	MANGLED("_Znwm", "operator new(unsigned long)", "operator new");
	MANGLED("_ZnwmPv", "operator new(unsigned long, void*)",
		"operator new");
	MANGLED("_ZdlPv", "operator delete(void*)", "operator delete");
	MANGLED("_Zli3_kmy", "operator\"\" _km(unsigned long long)",
		"operator\"\" _km");
	/* conversions: the type is the name */
	MANGLED("_ZNK3FoocvbEv", "Foo::operator bool() const",
		"Foo::operator bool");
	MANGLED("_ZNK3FoocvNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcE"
		"EEEv",
		"Foo::operator std::__cxx11::basic_string<char, std::char_traits"
		"<char>, std::allocator<char> >() const",
		"Foo::operator std::__cxx11::basic_string<char, std::char_traits"
		"<char>, std::allocator<char> >");
	MANGLED("_ZNK3FoocvSt6vectorIiSaIiEEEv",
		"Foo::operator std::vector<int, std::allocator<int> >() const",
		"Foo::operator std::vector<int, std::allocator<int> >");
	MANGLED("_ZNK3FoocvPKcEv", "Foo::operator char const*() const",
		"Foo::operator char const*");
	MANGLED("_ZNK3FoocvPFviEEv", "Foo::operator void (*)(int)() const",
		"Foo::operator void (*)(int)");
	MANGLED("_ZNK3FoocvT_IlEEv", "Foo::operator long<long>() const",
		"Foo::operator long<long>");
	SHORT("Foo::operator std::string() const", "Foo::operator std::string");
	SHORT("Foo::operator unsigned long() const",
	      "Foo::operator unsigned long");
	/* templated operators: "< <" is one operator and its arguments */
	MANGLED("_ZN3FooltIiEEbT_", "bool Foo::operator< <int>(int)",
		"Foo::operator< <int>");
	MANGLED("_ZltIiEbRKSt6vectorIT_SaIS1_EEi",
		"bool operator< <int>(std::vector<int, std::allocator<int> > "
		"const&, int)",
		"operator< <int>");
	MANGLED("_ZlsIiEbRKSt6vectorIT_SaIS1_EEi",
		"bool operator<< <int>(std::vector<int, std::allocator<int> > "
		"const&, int)",
		"operator<< <int>");
	MANGLED("_ZN9__gnu_cxxmiIPiSt6vectorIiSaIiEEEENS_17__normal_iterator"
		"IT_T0_E15difference_typeERKS8_SB_",
		"__gnu_cxx::__normal_iterator<int*, std::vector<int, std::"
		"allocator<int> > >::difference_type __gnu_cxx::operator-<int*, "
		"std::vector<int, std::allocator<int> > >(__gnu_cxx::__normal_"
		"iterator<int*, std::vector<int, std::allocator<int> > > const&, "
		"__gnu_cxx::__normal_iterator<int*, std::vector<int, std::"
		"allocator<int> > > const&)",
		"__gnu_cxx::operator-<int*, std::vector<int, std::allocator<int> "
		"> >");
	SHORT("bool operator><int>(int, int)", "operator><int>");
	SHORT("bool operator>=<int>(int, int)", "operator>=<int>");
	SHORT("A<&B::operator< > f<&B::operator< >()",
	      "f<&B::operator< >");
	/* an operator without parameters is not a signature */
	SAME("operator<");
	SAME("operator");
	SAME("operator ");
}

static void test_local_names(void)
{
	MANGLED("_ZZ4mainENKUliE_clEi",
		"main::{lambda(int)#1}::operator()(int) const",
		"main::{lambda(int)#1}::operator()");
	MANGLED("_ZZ3lamiENKUliE_clEi",
		"lam(int)::{lambda(int)#1}::operator()(int) const",
		"lam::{lambda(int)#1}::operator()");
	MANGLED("_ZZ3lamiENKUlvE0_clEv",
		"lam(int)::{lambda()#2}::operator()() const",
		"lam::{lambda()#2}::operator()");
	MANGLED("_ZZ3lamiENKUlT_E1_clIiEEDaS_",
		"auto lam(int)::{lambda(auto:1)#3}::operator()<int>(int) const",
		"lam::{lambda(auto:1)#3}::operator()<int>");
	MANGLED("_ZZZ2m2vENKUlvE_clEvENKUliE_clEi",
		"m2()::{lambda()#1}::operator()() const::{lambda(int)#1}::"
		"operator()(int) const",
		"m2::{lambda()#1}::operator()::{lambda(int)#1}::operator()");
	MANGLED("_ZZ3foovE3bar", "foo()::bar", "foo::bar");
	MANGLED("_ZZ8localclsiENK1L3getEv", "localcls(int)::L::get() const",
		"localcls::L::get");
	MANGLED("_ZZ4tlocIiEiT_E1x", "tloc<int>(int)::x", "tloc<int>::x");
	MANGLED("_ZZ4tlocIiEiT_ENKUliE_clEi",
		"tloc<int>(int)::{lambda(int)#1}::operator()(int) const",
		"tloc<int>::{lambda(int)#1}::operator()");
	MANGLED("_ZN12_GLOBAL__N_16helperEi", "(anonymous namespace)::helper(int)",
		"(anonymous namespace)::helper");
	MANGLED("_ZN12_GLOBAL__N_14ImplD0Ev",
		"(anonymous namespace)::Impl::~Impl()",
		"(anonymous namespace)::Impl::~Impl");
	MANGLED("_ZNKSt8functionIFviEEclEi",
		"std::function<void (int)>::operator()(int) const",
		"std::function<void (int)>::operator()");
	MANGLED("_ZNSt17_Function_handlerIFviEZ6useallvEUliE_E9_M_invokeERK"
		"St9_Any_dataOi",
		"std::_Function_handler<void (int), useall()::{lambda(int)#1}>::"
		"_M_invoke(std::_Any_data const&, int&&)",
		"std::_Function_handler<void (int), useall()::{lambda(int)#1}>::"
		"_M_invoke");
	SHORT("int (anonymous namespace)::helper(int)",
	      "(anonymous namespace)::helper");
	SAME("{lambda()#2}");
	SAME("main::{lambda(int)#1}");
}

static void test_special(void)
{
	MANGLED("_ZTv0_n32_N2VB2vfEv", "virtual thunk to VB::vf()",
		"virtual thunk to VB::vf");
	MANGLED("_ZThn8_N2MI2vfEv", "non-virtual thunk to MI::vf()",
		"non-virtual thunk to MI::vf");
	MANGLED("_ZThn8_N2MID1Ev", "non-virtual thunk to MI::~MI()",
		"non-virtual thunk to MI::~MI");
	MANGLED("_ZTch0_v0_n32_N1Q3covEv", "covariant return thunk to Q::cov()",
		"covariant return thunk to Q::cov");
	MANGLED("_ZGVZ9getstaticiE1s", "guard variable for getstatic(int)::s",
		"guard variable for getstatic::s");
	MANGLED("_ZGRZ3foovE1x_", "reference temporary #0 for foo()::x",
		"reference temporary #0 for foo::x");
	MANGLED("_ZTI3Foo", "typeinfo for Foo", "typeinfo for Foo");
	MANGLED("_ZTS3Foo", "typeinfo name for Foo", "typeinfo name for Foo");
	MANGLED("_ZTV3Foo", "vtable for Foo", "vtable for Foo");
	MANGLED("_ZTT2VB", "VTT for VB", "VTT for VB");
	MANGLED("_ZTIZ6useallvEUliE_", "typeinfo for useall()::{lambda(int)#1}",
		"typeinfo for useall::{lambda(int)#1}");
	MANGLED("_ZTIPFviE", "typeinfo for void (*)(int)",
		"typeinfo for void (*)(int)");
	MANGLED("_ZTIM1PFiiE", "typeinfo for int (P::*)(int)",
		"typeinfo for int (P::*)(int)");
	MANGLED("_ZTIFviE", "typeinfo for void (int)", "typeinfo for void (int)");
	MANGLED("_ZTVN12_GLOBAL__N_14ImplE",
		"vtable for (anonymous namespace)::Impl",
		"vtable for (anonymous namespace)::Impl");
	MANGLED("_ZTH3tlsB5cxx11", "TLS init function for tls[abi:cxx11]",
		"TLS init function for tls[abi:cxx11]");
	MANGLED("_ZTW3tls", "TLS wrapper function for tls",
		"TLS wrapper function for tls");
	SHORT("non-virtual thunk to transaction clone for Foo::f(int)",
	      "non-virtual thunk to transaction clone for Foo::f");
}

static void test_rust(void)
{
	static const char *const r[][2] = {
		{ "_ZN4core3ptr46drop_in_place$LT$alloc..vec..Vec$LT$u8$GT$$GT$"
		  "17h527d7013781da89cE",
		  "core::ptr::drop_in_place<alloc::vec::Vec<u8>>" },
		{ "_ZN58_$LT$r..Wrap$LT$T$GT$$u20$as$u20$core..ops..drop..Drop"
		  "$GT$4drop17h8fbd69508dbd9642E",
		  "<r::Wrap<T> as core::ops::drop::Drop>::drop" },
		{ "_ZN57_$LT$fn$LP$u8$RP$$u20$.$GT$$u20$u8$u20$as$u20$r..Call"
		  "$GT$4call17h11af62ec0bda82a1E",
		  "<fn(u8) .> u8 as r::Call>::call" },
		{ "_ZN1r4main28_$u7b$$u7b$closure$u7d$$u7d$17hbcc4e7c6dd8db766E",
		  "r::main::{{closure}}" },
		{ "_ZN4core3ops8function6FnOnce40call_once$u7b$$u7b$vtable.shim"
		  "$u7d$$u7d$17h42e08618e5619cfaE",
		  "core::ops::function::FnOnce::call_once{{vtable.shim}}" },
		{ "_ZN54_$LT$$LP$$RP$$u20$as$u20$std..process..Termination$GT$"
		  "6report17hb14abffc65974b5aE",
		  "<() as std::process::Termination>::report" },
		{ "_ZN4core3ptr65drop_in_place$LT$$LP$u8$C$u8$C$alloc..vec..Vec"
		  "$LT$u32$GT$$RP$$GT$17h689ce44cfb6b6c50E",
		  "core::ptr::drop_in_place<(u8,u8,alloc::vec::Vec<u32>)>" },
		{ "_RNvXs_Cs6GmmlP4bgsG_1rFhEhNtB4_4Call4call",
		  "<fn(u8) -> u8 as r::Call>::call" },
		{ "_RNCNvCs6GmmlP4bgsG_1r4main0B3_", "r::main::{closure#0}" },
		{ "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtCs6GmmlP4bgsG_"
		  "1r4WraphEEBJ_",
		  "core::ptr::drop_in_place::<r::Wrap<u8>>" },
		{ "_RNvYFEuINtNtNtCsgEmfK2I1SDS_4core3ops8function6FnOnceuE9call_"
		  "onceCs6GmmlP4bgsG_1r",
		  "<fn() as core::ops::function::FnOnce<()>>::call_once" },
		{ "_RNvXs1g_NtCsgEmfK2I1SDS_4core3fmtRDNtB6_5DebugEL_Bx_3fmtB8_",
		  "<&dyn core::fmt::Debug as core::fmt::Debug>::fmt" },
		{ "_RNvMs3_NtCslNYArtu3iFV_5alloc7raw_vecINtB5_6RawVecTOhFUKCBN_"
		  "EuENtNtCsjrHSEGnQ3l9_3std5alloc6SystemE8grow_oneB13_",
		  "<alloc::raw_vec::RawVec<(*mut u8, unsafe extern \"C\" fn(*mut "
		  "u8)), std::alloc::System>>::grow_one" },
		{ "_RNSNvYNCINvMs0_NtNtCsjrHSEGnQ3l9_3std4sync4onceNtBd_4Once9call_"
		  "onceNCNvNtBh_2rt7cleanup0E0INtNtNtCsgEmfK2I1SDS_4core3ops8"
		  "function6FnOnceTRNtBd_9OnceStateEE9call_once6vtableBh_",
		  "<<std::sync::once::Once>::call_once<std::rt::cleanup::{closure"
		  "#0}>::{closure#0} as core::ops::function::FnOnce<(&std::sync::"
		  "once::OnceState,)>>::call_once::{shim:vtable#0}" },
	};
	size_t i;

	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		MANGLED(r[i][0], r[i][1], r[i][1]);
}

static void test_unchanged(void)
{
	static const char *const same[] = {
		/* C, kernel, synthetic */
		"main", "__libc_start_main", "do_syscall_64", "foo.cold",
		"foo.part.0", "_GLOBAL__sub_I_main.cpp", "[unknown]",
		"[libc.so.6]+0x1f0", "[truncated]", "ext4_readdir [ext4]", "",
		"malloc@plt",
		/* Go */
		"main.(*T).Method", "runtime.goexit", "main.main.func1",
		"main.(*List[go.shape.int_0]).Push",
		"main.Map[go.shape.string_0,go.shape.int_1]",
		"main..dict.(*List[int]).Push", "type:.eq.[2]interface {}",
		/* perf maps: Python, V8, JVM, .NET */
		"py::fib:/tmp/x.py", "py::<module>:/tmp/x.py",
		"py::Foo.bar:/tmp/x.py",
		"LazyCompile:~fib /tmp/x.js:3:16", "JS:*fib /tmp/x.js:3",
		"Builtin: InterpreterEntryTrampoline",
		"Function:~<anonymous> /tmp/x.js:1:1",
		"RegExp:\\d(\\w)", "Ljava/lang/Thread;::run()V",
		"java.lang.Thread::run()V",
		"[System.Private.CoreLib] System.String::Concat(string,string)"
		"[OptimizedTier1]",
		/* unbalanced or not a signature */
		"foo(int", "foo(int))", "foo)(", "foo<int(char)", "a>b(int)",
		"foo<int>>(int)", "(int)", "((((", "))))", "<<<<", ">>>>",
		"foo(int) bar", "foo(int)x", "foo(int) noexcept(",
		"operator new[", "{lambda(int)#1", "void (*f(int)",
		"void (*)(int)", "foo (int)", "int (f)(char)", "f(x)::(y)",
		"foo()::", "\x01" "foo(int)", "foo(int)\t", "a:b(int)",
		"x(1)y(2)", "foo() const::",
	};
	size_t i;

	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		SAME(same[i]);
	SHORT(NULL, "");
}

/* name in a buffer of its exact size, so that ASan sees any over-read */
static void probe(const char *name, size_t len)
{
	char *in = malloc(len + 1);
	char *out;

	if (!in) {
		unit_fail++;
		return;
	}
	memcpy(in, name, len);
	in[len] = '\0';
	out = sp_name_short(in);
	CHECK(out && strlen(out) <= strlen(in));
	free(out);
	free(in);
}

/*
 * Every prefix of the real names, and random sequences of the tokens the
 * scanner cares about and of raw bytes: no crash, no over-read, never a
 * longer name.
 */
static void test_garbage(void)
{
	static const char *const names[] = {
		"void (*signal(int, void (*)(int)))(int) [clone .cold]",
		"m2()::{lambda()#1}::operator()() const::{lambda(int)#1}::"
		"operator()(int) const",
		"Foo::operator void (*)(int)() const",
		"bool operator< <int>(std::vector<int, std::allocator<int> > "
		"const&, int)",
		"decltype (::new ((void*)(0)) int((declval<int>)())) "
		"std::construct_at<int, int>(int*, int&&)",
		"A<(4)>>(1)> shr<4>(A<4>)", "int (*getarr<int>(int)) [3]",
		"guard variable for getstatic(int)::s",
		"reference temporary #0 for foo()::x",
		"Foo::bar() noexcept (false) [clone .isra.0]",
		"operator\"\" _km(unsigned long long)",
	};
	static const char *const toks[] = {
		"(", ")", "<", ">", "[", "]", "{", "}", " ", "::", ":", "*",
		"&", "&&", ",", "-", "=", "\"", "#", ".", "foo", "int",
		"operator", "operator<", "operator()", "operator ",
		"operator\"\"",
		"new", "delete[]", " const", " noexcept", " throw", "decltype ",
		"(anonymous namespace)", " [clone .cold]", " [clone ",
		"{lambda()#1}", "virtual thunk to ",
		"reference temporary #1 for ",
		"operator< <", "(*", ")(", ">>(", ">=", "->",
	};
	char buf[1024];
	size_t i, j, len, n;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (len = 0; len <= strlen(names[i]); len++)
			probe(names[i], len);
	for (i = 0; i < 20000; i++) {
		n = unit_rand() % 24;
		for (len = 0, j = 0; j < n; j++) {
			const char *t = toks[unit_rand() % (sizeof(toks) /
						       sizeof(toks[0]))];

			memcpy(buf + len, t, strlen(t));
			len += strlen(t);
		}
		probe(buf, len);
	}
	for (i = 0; i < 20000; i++) {
		len = unit_rand() % 64;
		for (j = 0; j < len; j++)
			buf[j] = (char)(1 + unit_rand() % 255);
		probe(buf, len);
	}
}

/*
 * Long names stay cheap: a scan that went back over the name per bracket
 * or per local scope would take minutes here, not milliseconds.
 */
static void test_long(void)
{
	size_t depth = 200000, i, n = 0;
	char *name = malloc(16 * depth + 64);
	char *want = malloc(16 * depth + 64);
	char *got;

	if (!name || !want) {
		unit_fail++;
		free(name);
		free(want);
		return;
	}
	for (i = 0; i < depth; i++)
		n += (size_t)sprintf(name + n, "A<");
	n += (size_t)sprintf(name + n, "int");
	for (i = 0; i < depth; i++)
		n += (size_t)sprintf(name + n, ">");
	memcpy(want, name, n);
	want[n] = '\0';
	sprintf(name + n, "::f(int) const");
	got = sp_name_short(name);
	CHECK(got && !strcmp(got, strcat(want, "::f")));
	free(got);

	for (i = 0, n = 0; i < depth; i++)
		n += (size_t)sprintf(name + n, "f() const::");
	sprintf(name + n, "x");
	for (i = 0, n = 0; i < depth; i++)
		n += (size_t)sprintf(want + n, "f::");
	sprintf(want + n, "x");
	got = sp_name_short(name);
	CHECK(got && !strcmp(got, want));
	free(got);

	for (i = 0, n = 0; i < depth; i++)
		n += (size_t)sprintf(name + n, "(");
	got = sp_name_short(name);
	CHECK(got && !strcmp(got, name));
	free(got);
	free(name);
	free(want);
}

int main(void)
{
	test_plain();
	test_clones_and_tags();
	test_templates();
	test_operators();
	test_local_names();
	test_special();
	test_rust();
	test_unchanged();
	test_garbage();
	test_long();
	return unit_done("test-names");
}
