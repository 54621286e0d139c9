/* SPDX-License-Identifier: MIT */
/*
 * names.c: frame names as folded lines want them, and demangled names
 * without return types and parameter lists.
 */
#include <stdlib.h>
#include <string.h>

#include "format/frame.h"
#include "fold.h"
#include "names.h"

/* a bracket on the stack that is part of a declarator, "(*f(int))" */
#define DECL	0x80

enum tok { T_IDENT, T_OP, T_CONV, T_OPEN, T_CLOSE, T_SPACE, T_CHAR };

struct scan {
	const char *s;
	size_t n;
	char *out;
	size_t olen;
	size_t base;		/* out keeps this much (a prefix) on a reset */
	unsigned char *stk;	/* open brackets, DECL-flagged or not */
	size_t depth;
	size_t nopaque;		/* open brackets without DECL */
};

static int is_ident(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '$' || c >= 0x80;
}

static int at(const struct scan *sc, size_t i, const char *lit)
{
	size_t len = strlen(lit);

	return i <= sc->n && sc->n - i >= len && !memcmp(sc->s + i, lit, len);
}

/* lit at i as a whole word: no identifier byte after it */
static int at_word(const struct scan *sc, size_t i, const char *lit)
{
	size_t len = strlen(lit);

	return at(sc, i, lit) &&
	       (i + len == sc->n || !is_ident(sc->s[i + len]));
}

static int top(const struct scan *sc)
{
	return sc->depth ? sc->stk[sc->depth - 1] : 0;
}

static void push(struct scan *sc, char c, int decl)
{
	sc->stk[sc->depth++] = (unsigned char)c | (decl ? DECL : 0);
	if (!decl)
		sc->nopaque++;
}

/* Pop the bracket that close closes; -1 when it does not match. */
static int pop(struct scan *sc, char close)
{
	int t = top(sc);
	char open = close == ')' ? '(' : close == ']' ? '[' :
		    close == '}' ? '{' : '<';

	if (!sc->depth || (t & ~DECL) != open)
		return -1;
	if (!(t & DECL))
		sc->nopaque--;
	sc->depth--;
	return 0;
}

static void copy(struct scan *sc, size_t i, size_t len)
{
	memcpy(sc->out + sc->olen, sc->s + i, len);
	sc->olen += len;
}

/*
 * Operator names, longest first.  Those containing brackets are why the
 * scan needs to know them; the others only keep "operator" from reading as
 * an identifier followed by punctuation.
 */
static const char *const ops[] = {
	"->*", "<=>", "<<=", ">>=",
	"->", "()", "[]", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
	",", "+", "-", "*", "/", "%", "^", "&", "|", "~", "!", "=", "<", ">",
};

/*
 * After "operator" ending at j: the end of the operator's name, 0 when
 * "operator" is a plain identifier.  *conv is set for a conversion
 * operator, whose name "operator " is followed by a type.
 */
static size_t op_end(const struct scan *sc, size_t j, int *conv)
{
	const char *s = sc->s;
	size_t k, w;

	*conv = 0;
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		if (at(sc, j, ops[k])) {
			j += strlen(ops[k]);
			/* "operator< <int>": the space keeps "<<" apart */
			if (s[j - 1] == '<' && at(sc, j, " <"))
				j++;
			return j;
		}
	}
	if (at(sc, j, "\"\"")) {	/* operator"" _km */
		j += 2;
		if (j + 1 < sc->n && s[j] == ' ' && is_ident(s[j + 1]))
			for (j++; j < sc->n && is_ident(s[j]); j++)
				;
		return j;
	}
	if (j >= sc->n || s[j] != ' ')
		return 0;
	w = j + 1;
	if (at_word(sc, w, "new") || at_word(sc, w, "delete")) {
		j = w + (s[w] == 'n' ? 3 : 6);
		return at(sc, j, "[]") ? j + 2 : j;
	}
	if (at_word(sc, w, "co_await"))
		return w + 8;
	*conv = 1;
	return w;
}

/*
 * The token at i: its kind in *kind, its length returned.  Whether '<' and
 * '>' are brackets depends on what precedes them and on the open bracket:
 * the demangler prints comparisons inside template arguments with their
 * operands in parentheses, "A<(5)<(3)>", "A<(4)>=(1)>", "A<(4)>>(1)>", and
 * a lone '>' in an extra pair, "A<((5)>(3))>".
 */
static size_t lex(const struct scan *sc, size_t i, enum tok *kind)
{
	const char *s = sc->s;
	unsigned char c = s[i];
	size_t j, k;
	int conv;

	if (is_ident(c)) {
		for (j = i; j < sc->n && is_ident(s[j]); j++)
			;
		if (j - i == 8 && !memcmp(s + i, "operator", 8) &&
		    (k = op_end(sc, j, &conv))) {
			*kind = conv ? T_CONV : T_OP;
			return k - i;
		}
		*kind = T_IDENT;
		return j - i;
	}
	*kind = T_CHAR;
	switch (c) {
	case '(': case '[': case '{':
		*kind = T_OPEN;
		return 1;
	case ')': case ']': case '}':
		*kind = T_CLOSE;
		return 1;
	case ' ':
		*kind = T_SPACE;
		return 1;
	case '<':
		/* "(a)<(b)", but "operator()<int>" opens template arguments */
		if (i > 0 && s[i - 1] == ')' &&
		    !(i >= 10 && !memcmp(s + i - 10, "operator()", 10))) {
			if (at(sc, i, "<=>"))
				return 3;
			return at(sc, i, "<<") || at(sc, i, "<=") ? 2 : 1;
		}
		*kind = T_OPEN;
		return 1;
	case '>':
		if ((top(sc) & ~DECL) != '<' || (i > 0 && s[i - 1] == '-'))
			return 1;
		if (at(sc, i, ">="))
			return 2;
		if (at(sc, i, ">>=") || at(sc, i, ">>("))
			return 2;
		*kind = T_CLOSE;
		return 1;
	}
	return 1;
}

/*
 * Skip the bracket group opening at i without copying it.  Returns the
 * index after its closing bracket, 0 when it never closes.
 */
static size_t skip_group(struct scan *sc, size_t i)
{
	size_t d0 = sc->depth, o0 = sc->nopaque, len;
	enum tok kind;

	push(sc, sc->s[i], 0);
	i++;
	while (sc->depth > d0) {
		if (i >= sc->n)
			goto err;
		len = lex(sc, i, &kind);
		if (kind == T_OPEN)
			push(sc, sc->s[i], 0);
		else if (kind == T_CLOSE && pop(sc, sc->s[i]) < 0)
			goto err;
		i += len;
	}
	return i;
err:
	sc->depth = d0;
	sc->nopaque = o0;
	return 0;
}

/* Skip the qualifiers after a parameter list at j; returns where they end. */
static size_t skip_quals(struct scan *sc, size_t j)
{
	static const char *const words[] = {
		"const", "volatile", "restrict", "__restrict",
		"transaction_safe",
	};
	size_t k, w;

	while (j < sc->n && sc->s[j] == ' ') {
		w = j + 1;
		for (k = 0; k < sizeof(words) / sizeof(words[0]); k++)
			if (at_word(sc, w, words[k]))
				break;
		if (k < sizeof(words) / sizeof(words[0])) {
			j = w + strlen(words[k]);
		} else if (at_word(sc, w, "noexcept") ||
			   at_word(sc, w, "throw")) {
			j = w + (sc->s[w] == 'n' ? 8 : 5);
			k = at(sc, j, " (") ? j + 1 : j;
			if (k < sc->n && sc->s[k] == '(') {
				if (!(j = skip_group(sc, k)))
					return sc->n + 1;
			}
		} else if (at(sc, w, "&&")) {
			j = w + 2;
		} else if (at(sc, w, "&")) {
			j = w + 1;
		} else {
			break;
		}
	}
	return j;
}

/*
 * Copy the clone suffixes " [clone .X]" at k, which must end the name.
 * Returns 0, or -1 when something else follows.
 */
static int clones(struct scan *sc, size_t k)
{
	size_t e;

	while (at(sc, k, " [clone ")) {
		for (e = k + 8; e < sc->n && sc->s[e] != ']'; e++)
			if (sc->s[e] == '[')
				return -1;
		if (e == sc->n)
			return -1;
		copy(sc, k, e + 1 - k);
		k = e + 1;
	}
	return k == sc->n ? 0 : -1;
}

/*
 * The parameter list of the name ended at k, its qualifiers skipped: what
 * may follow is the rest of a declarator the name is in, "(*f(int))(char)",
 * "(*f()) [3]", and clone suffixes.  Returns 0 when the name is complete.
 */
static int finish(struct scan *sc, size_t k)
{
	int closed = 0;
	size_t g;

	for (;;) {
		k = skip_quals(sc, k);
		if (k == sc->n)
			return sc->depth ? -1 : 0;
		if (k > sc->n)
			return -1;
		if (sc->s[k] == ')' && sc->depth) {
			if (pop(sc, ')') < 0)
				return -1;
			k++;
			closed = 1;
			continue;
		}
		if (!sc->depth && at(sc, k, " [clone "))
			return clones(sc, k);
		if (!closed)
			return -1;
		g = at(sc, k, " [") ? k + 1 : k;
		if (sc->s[g] != '(' && sc->s[g] != '[')
			return -1;
		if (!(k = skip_group(sc, g)))
			return -1;
	}
}

/* Whether the '(' at i is that of "decltype (...)", a return type. */
static int after_decltype(const struct scan *sc, size_t i)
{
	return i >= 9 && !memcmp(sc->s + i - 9, "decltype ", 9);
}

/*
 * Scan the name from sc->base on, building the short form in sc->out.
 * Returns 0 when out holds it, -1 when the name stays as it is.
 */
static int shorten(struct scan *sc, size_t i)
{
	const char *s = sc->s;
	int ne = 0;		/* the last token ends a name: '(' is params */
	int conv = 0;		/* in the type of a conversion operator */
	int local = 0;		/* past "f(...)::", a local name's function */
	enum tok kind;
	size_t len, j, k;

	while (i < sc->n) {
		unsigned char c = s[i];

		len = lex(sc, i, &kind);
		if (sc->nopaque) {
			/* inside brackets of the name: copy them whole */
			if (kind == T_OPEN)
				push(sc, c, 0);
			else if (kind == T_CLOSE && pop(sc, c) < 0)
				return -1;
			copy(sc, i, len);
			i += len;
			if (!sc->nopaque)
				ne = c != ')' || conv;
			continue;
		}
		switch (kind) {
		case T_IDENT:
		case T_OP:
			copy(sc, i, len);
			ne = 1;
			break;
		case T_CONV:
			copy(sc, i, len);
			ne = 0;
			conv = 1;
			break;
		case T_SPACE:
			if (at(sc, i, " [clone "))
				return local && !sc->depth ? clones(sc, i) : -1;
			if (conv) {
				copy(sc, i, len);
			} else {
				/* what came before was the return type */
				sc->olen = sc->base;
				local = 0;
			}
			ne = 0;
			break;
		case T_OPEN:
			if (c == '(' && ne) {
				if (!(j = skip_group(sc, i)))
					return -1;
				k = skip_quals(sc, j);
				if (k > sc->n)
					return -1;
				if (at(sc, k, "::")) {
					/* a function a local name is in */
					local = 1;
					conv = 0;
					ne = 0;
					i = k;
					continue;
				}
				if (!conv)
					return finish(sc, k);
				if (k == sc->n || (k < sc->n && s[k] == ')') ||
				    at(sc, k, " [clone "))
					return finish(sc, k);
				/* a function type in a conversion's type */
				copy(sc, i, j - i);
				i = j;
				ne = 1;
				continue;
			}
			if (c == '(' && !conv) {
				if (at(sc, i, "(anonymous namespace)")) {
					len = strlen("(anonymous namespace)");
					copy(sc, i, len);
					ne = 0;
					break;
				}
				if (!after_decltype(sc, i)) {
					/* "(*f(int))(char)": the name inside */
					if (local)
						return -1;
					push(sc, c, 1);
					sc->olen = sc->base;
					ne = 0;
					break;
				}
			}
			push(sc, c, 0);
			copy(sc, i, len);
			ne = 0;
			break;
		case T_CLOSE:
			/* unbalanced, or a declarator without a function */
			return -1;
		case T_CHAR:
			if (c == ':' && at(sc, i, "::")) {
				len = 2;
			} else if (c == ':' || c == '/' || c == ';' ||
				   c == '\\' || c == '"' || c == '\'' ||
				   c == '>' || c < 0x20 || c == 0x7f) {
				return -1;
			} else if ((c == '*' || c == '&') && sc->depth &&
				   !conv) {
				/* "(*f", "(Foo::*f": the name follows */
				if (local)
					return -1;
				sc->olen = sc->base;
				ne = 0;
				break;
			}
			copy(sc, i, len);
			ne = conv && (c == '*' || c == '&');
			break;
		}
		i += len;
	}
	/* a local variable, "foo()::bar" */
	return local && ne && !sc->depth ? 0 : -1;
}

/*
 * The words libiberty puts before special names; "reference temporary #N
 * for " has a number and is matched apart.
 */
static const char *const prefixes[] = {
	"virtual thunk to ", "non-virtual thunk to ",
	"covariant return thunk to ", "guard variable for ",
	"TLS init function for ", "TLS wrapper function for ",
	"hidden alias for ", "transaction clone for ",
	"non-transaction clone for ", "typeinfo for ", "typeinfo name for ",
	"typeinfo fn for ", "vtable for ", "VTT for ",
	"construction vtable for ", "template parameter object for ",
	"java Class for ",
};

static size_t prefix_end(const struct scan *sc, size_t i)
{
	size_t k;

	for (k = 0; k < sizeof(prefixes) / sizeof(prefixes[0]); k++)
		if (at(sc, i, prefixes[k]))
			return i + strlen(prefixes[k]);
	if (at(sc, i, "reference temporary #")) {
		k = i + strlen("reference temporary #");
		if (k >= sc->n || sc->s[k] < '0' || sc->s[k] > '9')
			return i;
		while (k < sc->n && sc->s[k] >= '0' && sc->s[k] <= '9')
			k++;
		if (at(sc, k, " for "))
			return k + 5;
	}
	return i;
}

char *sp_name_short(const char *name)
{
	struct scan sc = { 0 };
	size_t i = 0, e;

	sc.s = name ? name : "";
	sc.n = strlen(sc.s);
	/* the short name, then the bracket stack: never longer than name */
	sc.out = malloc(2 * sc.n + 1);
	if (!sc.out)
		return NULL;
	sc.stk = (unsigned char *)sc.out + sc.n + 1;
	while ((e = prefix_end(&sc, i)) > i)
		i = e;
	copy(&sc, 0, i);
	sc.base = sc.olen;
	if (shorten(&sc, i) < 0) {
		sc.olen = 0;
		copy(&sc, 0, sc.n);
	}
	sc.out[sc.olen] = '\0';
	return sc.out;
}

/* Folded names */

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* "[module]+0x1f0" -> "[module]": stackcollapse-perf.pl merges them too */
static void strip_offset(char *s, size_t *len)
{
	char *plus = strrchr(s, '+');
	char *p;

	if (!plus || plus == s || plus[-1] != ']' || s[0] != '[' ||
	    plus[1] != '0' || plus[2] != 'x' || !plus[3])
		return;
	for (p = plus + 3; *p; p++)
		if (!is_digit(*p) && (*p < 'a' || *p > 'f'))
			return;
	*plus = 0;
	*len = (size_t)(plus - s);
}

char *sp_fold_name(const char *name, unsigned kind, unsigned origin)
{
	static const char unknown[] = "[unknown]";
	const char *suffix = "";
	size_t len = name ? strlen(name) : 0, i, j;
	char *s;

	s = malloc((len > sizeof(unknown) ? len : sizeof(unknown)) + 5);
	if (!s)
		return NULL;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == ';')
			c = ':';
		else if (c < 0x20 || c == 0x7f)
			c = ' ';
		s[i] = (char)c;
	}
	s[len] = 0;
	if (origin == SP_FO_NONE)
		strip_offset(s, &len);
	while (len && s[len - 1] == ' ')
		s[--len] = 0;
	/*
	 * flamegraph.pl reads "name 12 5" as a differential line: the frame
	 * must not end in whitespace and a number
	 */
	for (j = len; j && (is_digit(s[j - 1]) || s[j - 1] == '.'); j--)
		;
	if (j < len && j && s[j - 1] == ' ')
		for (; j && s[j - 1] == ' '; j--)
			s[j - 1] = '_';
	if (!len) {
		memcpy(s, unknown, sizeof(unknown));
		len = sizeof(unknown) - 1;
	}
	if (kind == SP_FK_KERNEL)
		suffix = "_[k]";
	else if (kind == SP_FK_JIT || kind == SP_FK_INTERPRETED)
		suffix = "_[j]";	/* as -X perf's py:: frames are */
	else if (kind == SP_FK_INLINE)
		suffix = "_[i]";
	strcpy(s + len, suffix);
	return s;
}

char *sp_fold_comm_name(const char *comm)
{
	size_t len = comm ? strlen(comm) : 0, i;
	char *s;

	if (!len)
		return strdup("[unknown]");
	s = malloc(len + 1);
	if (!s)
		return NULL;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)comm[i];

		if (c == ' ' || c < 0x20 || c == 0x7f)
			c = '_';
		else if (c == ';')
			c = ':';
		s[i] = (char)c;
	}
	s[len] = 0;
	return s;
}
