/*
 * demangle.c - Itanium ABI names (_Z...) to "ns::name<...>(...)".
 * Grammar covered: _Z <name> [<params>], with nested N [CV] ... E names,
 * source names <len><id>, St, substitutions S*_ (shown as "?"),
 * constructors/destructors C1-C3/D0-D2, template args I ... E (skipped),
 * operators are left as their code.  Anything unexpected: the input back.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "demangle.h"

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

char *demangle_short(const char *in, char *out, size_t len)
{
	char full[512];
	demangle_name(in, full, sizeof(full));
	/* cut at the first '(' or '<' at nesting depth 0, after skipping a
	 * leading return type ("void foo<..>(..)") */
	const char *s = full;
	int depth = 0;
	const char *start = s, *end = NULL;
	for (const char *p = s; *p; p++) {
		if (!strncmp(p, "(anonymous namespace)", 21)) {
			p += 20;
			continue;
		}
		if (*p == '<' || *p == '(') {
			if (depth == 0 && !end)
				end = p;
			depth++;
		} else if (*p == '>' || *p == ')') {
			if (depth)
				depth--;
		} else if (*p == ' ' && depth == 0 && !end) {
			start = p + 1;
		}
	}
	if (!end)
		end = s + strlen(s);
	/* last "::" component before end */
	for (const char *p = start; p + 1 < end; p++)
		if (p[0] == ':' && p[1] == ':')
			start = p + 2;
	if (end <= start) {
		snprintf(out, len, "%s", full);
		return out;
	}
	snprintf(out, len, "%.*s", (int)(end - start), start);
	return out;
}
