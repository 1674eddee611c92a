/*
 * demangle.c - Itanium ABI names (_Z...) to "ns::name<...>(...)".
 * Grammar covered: _Z <name> [<params>], with nested N [CV] ... E names,
 * source names <len><id>, St, substitutions S*_ (shown as "?"),
 * constructors/destructors C1-C3/D0-D2, template args I ... E (skipped),
 * operators are left as their code.  Anything unexpected: the input back.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "demangle.h"
#include "gtrace/store.h"

struct dm {
	const char *p;
	char *o;
	size_t n, len;
	char last[64];     /* last source name (for ctor/dtor) */
	int bad;
};

/* append k bytes to the output, truncating at its size */
static void put(struct dm *d, const char *s, size_t k)
{
	for (size_t i = 0; i < k; i++)
		if (d->n + 1 < d->len)
			d->o[d->n++] = s[i];
	d->o[d->n < d->len ? d->n : d->len - 1] = 0;
}

/* a decimal length prefix; sets bad when there is none */
static long number(struct dm *d)
{
	long v = 0;
	if (!isdigit((unsigned char)*d->p)) {
		d->bad = 1;
		return 0;
	}
	while (isdigit((unsigned char)*d->p))
		v = v * 10 + (*d->p++ - '0');
	return v;
}

/* skip template args after 'I' up to the matching 'E' */
static void skip_targs(struct dm *d)
{
	int depth = 1;
	while (*d->p && depth > 0) {
		char c = *d->p;
		if (isdigit((unsigned char)c)) {
			long k = number(d);
			if ((long)strlen(d->p) < k) {
				d->bad = 1;
				return;
			}
			d->p += k;
			continue;
		}
		d->p++;
		if (c == 'L') {
			while (*d->p && *d->p != 'E')
				d->p++;
			if (*d->p)
				d->p++;
		} else if (c == 'I' || c == 'N' || c == 'X') {
			depth++;
		} else if (c == 'E') {
			depth--;
		}
	}
	if (depth)
		d->bad = 1;
}

/* one component; returns 0 at the end of a nested name */
static int component(struct dm *d, int first)
{
	char c = *d->p;
	if (!c)
		d->bad = 1;
	if (!c || d->bad)
		return 0;
	if (c == 'E') {
		d->p++;
		return 0;
	}
	if (c == 'I') {
		d->p++;
		skip_targs(d);
		put(d, "<...>", 5);
		return 1;
	}
	if (!first)
		put(d, "::", 2);
	if (isdigit((unsigned char)c)) {
		long k = number(d);
		if (k <= 0 || (long)strlen(d->p) < k) {
			d->bad = 1;
			return 0;
		}
		if (k >= 11 && !strncmp(d->p, "_GLOBAL__N_", 11)) {
			put(d, "(anonymous namespace)", 21);
		} else {
			put(d, d->p, (size_t)k);
			snprintf(d->last, sizeof(d->last), "%.*s", (int)(k < 63 ? k : 63), d->p);
		}
		d->p += k;
		return 1;
	}
	if (c == 'S' && d->p[1] == 't') {
		d->p += 2;
		put(d, "std", 3);
		return 1;
	}
	if (c == 'S') {
		d->p++;
		while (*d->p && *d->p != '_')
			d->p++;
		if (*d->p)
			d->p++;
		put(d, "?", 1);
		return 1;
	}
	if ((c == 'C' || c == 'D') && d->p[1] >= '0' && d->p[1] <= '5') {
		if (c == 'D')
			put(d, "~", 1);
		put(d, d->last, strlen(d->last));
		d->p += 2;
		return 1;
	}
	if (islower((unsigned char)c) && islower((unsigned char)d->p[1])) {
		put(d, "operator", 8);
		put(d, d->p, 2);
		d->p += 2;
		return 1;
	}
	d->bad = 1;
	return 0;
}

char *demangle_name(const char *in, char *out, size_t len)
{
	if (!len)
		return out;
	snprintf(out, len, "%s", in);
	if (strncmp(in, "_Z", 2))
		return out;
	struct dm d = { .p = in + 2, .o = out, .len = len };
	out[0] = 0;
	if (*d.p == 'N') {
		d.p++;
		while (*d.p == 'K' || *d.p == 'V' || *d.p == 'r')
			d.p++;
		int first = 1;
		while (component(&d, first))
			first = 0;
	} else if (*d.p == 'L' && isdigit((unsigned char)d.p[1])) {
		d.p++;
		component(&d, 1);
	} else {
		component(&d, 1);
		if (*d.p == 'I') {
			d.p++;
			skip_targs(&d);
			put(&d, "<...>", 5);
		}
	}
	if (d.bad || !d.n) {
		snprintf(out, len, "%s", in);
		return out;
	}
	/* a '.' suffix (clone) ends the parameters */
	if (*d.p && *d.p != '.')
		put(&d, "(...)", 5);
	return out;
}

/* the span [*a, *b) of the last "::" component of the identifier that ends
 * at `end` (after skipping back over a "<...>" right before it) */
static void ident_before(const char *s, const char *end, const char **a, const char **b)
{
	const char *e = end;
	if (e > s && e[-1] == '>') {          /* template arguments: back to their '<' */
		int depth = 0;
		while (e > s) {
			e--;
			if (*e == '>')
				depth++;
			else if (*e == '<' && --depth == 0)
				break;
		}
	}
	const char *st = e;
	while (st > s && st[-1] != ' ' && st[-1] != '(' && st[-1] != '<' && st[-1] != ',')
		st--;
	for (const char *p = st; p + 1 < e; p++)
		if (p[0] == ':' && p[1] == ':')
			st = p + 2;
	*a = st;
	*b = e;
}

char *demangle_short(const char *in, char *out, size_t len)
{
	/* the whole name, however long: a name cut short has no closing '>'
	   and no parameter list, and its "short form" would be the fragment at
	   the cut ("doub" of a cut "double &" in nsys's clover kernels) */
	size_t flen = strlen(in) * 2 + 512;
	char stackbuf[1024];
	char *full = flen <= sizeof(stackbuf) ? stackbuf : malloc(flen);
	if (!full) {
		snprintf(out, len, "%s", in);
		return out;
	}
	if (full == stackbuf)
		flen = sizeof(stackbuf);
	demangle_name(in, full, flen);
	/* the name is the identifier before the parameter list: the first '('
	 * at nesting depth 0 ("(anonymous namespace)" is no parameter list),
	 * behind any return type ("void f<..>(..)", "std::enable_if<..>::type
	 * vllm::f<..>(..)") and without its template arguments */
	const char *s = full, *params = NULL, *targs = NULL;
	int depth = 0;
	for (const char *p = s; *p && !params; p++) {
		if (!strncmp(p, "(anonymous namespace)", 21)) {
			p += 20;
			continue;
		}
		if (*p == '(' && depth == 0)
			params = p;
		else if (*p == '<' || *p == '(' || *p == '[' || *p == '{')
			depth++;
		else if ((*p == '>' || *p == ')' || *p == ']' || *p == '}') && depth)
			depth--;
	}
	if (!params)
		params = s + strlen(s);
	const char *a, *b;
	ident_before(s, params, &a, &b);
	if (b <= a) {
		snprintf(out, len, "%s", full);
		if (full != stackbuf)
			free(full);
		return out;
	}
	if (b < params && *b == '<')
		targs = b + 1;
	/* a kernel template instantiated with a lambda (par_for<f(..)::[lambda
	 * (instance 2)]>): name the function the lambda is in, or every
	 * instantiation reads alike */
	char extra[96] = "";
	if (targs && (strstr(targs, "::[lambda") || strstr(targs, "::{lambda"))) {
		const char *lp = strchr(targs, '(');
		const char *la, *lb;
		if (lp && lp < params) {
			ident_before(targs, lp, &la, &lb);
			const char *inst = strstr(targs, "(instance ");
			int n = inst && inst < params ? atoi(inst + 10) : 0;
			if (lb > la && n > 1)
				snprintf(extra, sizeof(extra), "<%.*s#%d>", (int)(lb - la), la, n);
			else if (lb > la)
				snprintf(extra, sizeof(extra), "<%.*s>", (int)(lb - la), la);
		}
	}
	snprintf(out, len, "%.*s%s", (int)(b - a), a, extra);
	if (full != stackbuf)
		free(full);
	return out;
}

char *demangle_short_of(const struct gt_store *s, const char *in, char *out, size_t len)
{
	uint32_t id = s ? gt_store_str_find(s, in, strlen(in)) : UINT32_MAX;
	uint32_t sh = id != UINT32_MAX ? gt_store_str_short(s, id) : 0;
	if (sh) {
		snprintf(out, len, "%s", gt_store_str(s, sh));
		return out;
	}
	return demangle_short(in, out, len);
}
