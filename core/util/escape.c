/* SPDX-License-Identifier: MIT */
/*
 * escape.c - the ls -b and Prometheus label escaping of image names (see escape.h).
 *
 * One pass over the bytes.  A byte >= 0x80 starts a UTF-8 sequence only if
 * the whole sequence is valid (right continuation bytes, shortest form, no
 * surrogate, at most U+10FFFF); a valid sequence is copied whole unless it
 * encodes a C1 control, anything else is escaped byte by byte in octal.
 * The Prometheus label escaping (sfs_escape_label) uses the same UTF-8
 * test and shows the bytes it fails as /xHH.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "escape.h"

/* Length of the valid UTF-8 sequence at p (1..4) and its code point, or 0 if there is none. */
static size_t utf8_seq(const unsigned char *p, uint32_t *cp)
{
	size_t n;
	uint32_t c, min;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if ((p[0] & 0xe0) == 0xc0)
		n = 2, c = p[0] & 0x1f, min = 0x80;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3, c = p[0] & 0x0f, min = 0x800;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4, c = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)      /* also stops at the NUL */
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* The two-character escape of byte c ('n' for '\n', ...), or 0 if it has none. */
static char short_escape(unsigned char c)
{
	static const char from[] = "\a\b\t\n\v\f\r\\ ", to[] = "abtnvfr\\ ";
	const char *p = c ? memchr(from, c, sizeof(from) - 1) : NULL;

	return p ? to[p - from] : 0;
}

/* The ls -b form of the character at p into esc (16 bytes): its length, with *n the bytes of
 * the name it stands for. */
static size_t escape_name_char(const unsigned char *p, bool ascii, char *esc, size_t *n)
{
	size_t k = 0;
	uint32_t cp;

	*n = utf8_seq(p, &cp);
	if (ascii && *n > 1)
		*n = 0;
	if (*n > 0 && cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp <= 0x9f) &&
	    !short_escape(*p)) {
		memcpy(esc, p, *n);           /* printable: as it is */
		return *n;
	}
	if (*n == 1 && short_escape(*p)) {
		esc[0] = '\\';
		esc[1] = short_escape(*p);
		return 2;
	}
	if (*n == 0)
		*n = 1;                       /* a stray byte, escaped on its own */
	for (size_t i = 0; i < *n; i++) {
		esc[k++] = '\\';
		esc[k++] = (char)('0' + (p[i] >> 6));
		esc[k++] = (char)('0' + ((p[i] >> 3) & 7));
		esc[k++] = (char)('0' + (p[i] & 7));
	}
	return k;
}

/* The Prometheus label form of the character at p into esc: as escape_name_char. */
static size_t escape_label_char(const unsigned char *p, bool ascii, char *esc, size_t *n)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t cp;

	(void)ascii;
	*n = utf8_seq(p, &cp);
	if (*n == 0) {                        /* not UTF-8: /xHH */
		esc[0] = '/';
		esc[1] = 'x';
		esc[2] = hex[*p >> 4];
		esc[3] = hex[*p & 15];
		*n = 1;
		return 4;
	}
	if (*p == '\\' || *p == '"' || *p == '\n') {
		esc[0] = '\\';
		esc[1] = *p == '\n' ? 'n' : (char)*p;
		return 2;
	}
	memcpy(esc, p, *n);
	return *n;
}

/* name into buf (len bytes), each character as one_char escapes it: 0, or -ENOSPC with buf
 * holding what fitted. */
static int escape_all(const char *name, bool ascii, char *buf, size_t len,
		      size_t (*one_char)(const unsigned char *, bool, char *, size_t *))
{
	const unsigned char *p = (const unsigned char *)name;
	size_t o = 0;

	if (len == 0)
		return -ENOSPC;
	while (*p) {
		char esc[16];
		size_t n, k = one_char(p, ascii, esc, &n);

		if (o + k + 1 > len) {
			buf[o] = '\0';
			return -ENOSPC;
		}
		memcpy(buf + o, esc, k);
		o += k;
		p += n;
	}
	buf[o] = '\0';
	return 0;
}

int sfs_escape_name(const char *name, bool ascii, char *buf, size_t len)
{
	return escape_all(name, ascii, buf, len, escape_name_char);
}

int sfs_escape_columns(const char *s, bool utf8)
{
	mbstate_t st;
	wchar_t wc;
	size_t n;
	int cols = 0, w;

	memset(&st, 0, sizeof(st));
	while (*s) {
		n = utf8 ? mbrtowc(&wc, s, MB_CUR_MAX, &st) : 1;
		if (n == 0 || n == (size_t)-1 || n == (size_t)-2) {
			memset(&st, 0, sizeof(st));
			n = 1;
			w = 1;
		} else {
			w = utf8 ? wcwidth(wc) : 1;
		}
		cols += w < 0 ? 1 : w;
		s += n;
	}
	return cols;
}

int sfs_escape_label(const char *name, char *buf, size_t len)
{
	return escape_all(name, false, buf, len, escape_label_char);
}
