/*
 * json_tok.c - JSON scanning primitives (see json_tok.h): fixed-point numbers,
 * value skipping and string unescaping for the streaming trace importer.
 */
#include "json_tok.h"

static const int64_t pow10_tab[19] = {
	1LL, 10LL, 100LL, 1000LL, 10000LL, 100000LL, 1000000LL, 10000000LL,
	100000000LL, 1000000000LL, 10000000000LL, 100000000000LL,
	1000000000000LL, 10000000000000LL, 100000000000000LL,
	1000000000000000LL, 10000000000000000LL, 100000000000000000LL,
	1000000000000000000LL,
};

int json_tok_fixed(const char **pp, const char *e, int scale, int64_t *out)
{
	const char *p = *pp;
	int neg = 0;
	if (p < e && *p == '-') {
		neg = 1;
		p++;
	}
	uint64_t mant = 0;
	int exp10 = 0, nd = 0, dropped = 0;
	const char *d0 = p;
	while (p < e && (unsigned)(*p - '0') < 10) {
		if (mant <= (UINT64_MAX - 9) / 10)
			mant = mant * 10 + (unsigned)(*p - '0');
		else {
			exp10++;
			dropped |= *p != '0';
		}
		p++;
	}
	nd = (int)(p - d0);
	if (p < e && *p == '.') {
		p++;
		const char *f0 = p;
		while (p < e && (unsigned)(*p - '0') < 10) {
			if (mant <= (UINT64_MAX - 9) / 10) {
				mant = mant * 10 + (unsigned)(*p - '0');
				exp10--;
			}
			p++;
		}
		if (p == f0 && p < e)
			return JT_BAD;
		nd += (int)(p - f0);
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		int eneg = 0, ev = 0;
		if (p < e && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		const char *x0 = p;
		while (p < e && (unsigned)(*p - '0') < 10) {
			if (ev < 10000)
				ev = ev * 10 + (*p - '0');
			p++;
		}
		if (p == x0 && p < e)
			return JT_BAD;
		exp10 += eneg ? -ev : ev;
	}
	if (p >= e)
		return JT_MORE;
	if (nd == 0)
		return JT_BAD;
	(void)dropped;
	int t = exp10 + scale;
	int64_t v;
	if (mant == 0) {
		v = 0;
	} else if (t >= 0) {
		if (t > 18 || mant > (uint64_t)INT64_MAX / (uint64_t)pow10_tab[t])
			return JT_BAD;
		v = (int64_t)mant * pow10_tab[t];
	} else if (t < -18) {
		v = 0;
	} else {
		uint64_t d = (uint64_t)pow10_tab[-t];
		uint64_t q = mant / d, r = mant % d;
		if (r * 2 >= d)
			q++;
		if (q > (uint64_t)INT64_MAX)
			return JT_BAD;
		v = (int64_t)q;
	}
	*out = neg ? -v : v;
	*pp = p;
	return JT_OK;
}

int json_tok_skip(const char **pp, const char *e)
{
	const char *p = *pp;
	size_t depth = 0;
	for (;;) {
		p = json_tok_ws(p, e);
		if (p >= e)
			return JT_MORE;
		char c = *p;
		if (c == '{' || c == '[') {
			depth++;
			p++;
			continue;
		}
		if (c == '}' || c == ']') {
			if (depth == 0)
				return JT_BAD;
			p++;
			if (--depth == 0)
				break;
			continue;
		}
		if (c == ',' || c == ':') {
			if (depth == 0)
				return JT_BAD;
			p++;
			continue;
		}
		if (c == '"') {
			const char *s;
			size_t n;
			int esc;
			int rc = json_tok_str(&p, e, &s, &n, &esc);
			if (rc)
				return rc;
		} else {
			const char *q = p;
			while (q < e && ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'z') ||
					 (*q >= 'A' && *q <= 'Z') || *q == '-' || *q == '+' || *q == '.'))
				q++;
			if (q >= e)
				return JT_MORE;
			if (q == p)
				return JT_BAD;
			p = q;
		}
		if (depth == 0)
			break;
	}
	*pp = p;
	return JT_OK;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int hex4(const char *s, size_t left)
{
	if (left < 4)
		return -1;
	int v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval(s[i]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

static size_t put_utf8(char *d, uint32_t cp)
{
	if (cp < 0x80) {
		d[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = (char)(0xc0 | (cp >> 6));
		d[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = (char)(0xe0 | (cp >> 12));
		d[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		d[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	d[0] = (char)(0xf0 | (cp >> 18));
	d[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	d[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	d[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

size_t json_tok_unescape(const char *s, size_t len, char *dst)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\\' || i + 1 >= len) {
			dst[o++] = s[i];
			continue;
		}
		char c = s[++i];
		switch (c) {
		case 'n': dst[o++] = '\n'; break;
		case 't': dst[o++] = '\t'; break;
		case 'r': dst[o++] = '\r'; break;
		case 'b': dst[o++] = '\b'; break;
		case 'f': dst[o++] = '\f'; break;
		case 'u': {
			int v = hex4(s + i + 1, len - i - 1);
			if (v < 0) {
				dst[o++] = '?';
				break;
			}
			i += 4;
			uint32_t cp = (uint32_t)v;
			if (cp >= 0xd800 && cp < 0xdc00 && i + 2 < len && s[i + 1] == '\\' &&
			    s[i + 2] == 'u') {
				int lo = hex4(s + i + 3, len - i - 3);
				if (lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
					i += 6;
				}
			}
			/* \uXXXX is 6 source bytes, at most 4 output bytes: fits */
			o += put_utf8(dst + o, cp);
			break;
		}
		default: dst[o++] = c; break;
		}
	}
	return o;
}
