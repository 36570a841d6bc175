/* SPDX-License-Identifier: MIT */
/*
 * escape.h - image names made safe for text output, as `ls -b` shows them.
 *
 * An image name is any bytes but '/' and NUL: newlines, escape sequences
 * and bytes that are not UTF-8 included.  Printed raw, such a name splits
 * a line in two or drives the terminal.  The text stats file and
 * sectorfs-stat print names escaped the way GNU ls -b (--quoting-style=
 * escape) prints them in a UTF-8 locale:
 *
 *   \a \b \t \n \v \f \r    for those control characters
 *   \\  and  "\ "           for a backslash and a space
 *   \ooo (3 octal digits)   for every other byte of a control character
 *                           (0x00-0x1f, 0x7f, and the C1 controls U+0080-
 *                           U+009F), and for every byte that is not part
 *                           of a valid UTF-8 sequence (overlong forms and
 *                           surrogates included)
 *
 * Everything else, valid UTF-8 included, is kept as it is; asked for
 * ASCII only (ls -b in a locale that is not UTF-8), every byte >= 0x80 is
 * escaped in octal too.  The result never holds a byte below 0x20 nor a C1
 * control, so it stays on one line.  JSON output needs none of this: the
 * JSON encoder escapes names itself.
 */
#ifndef SFS_ESCAPE_H
#define SFS_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes that always suffice for the escaped form of a name of n bytes, the NUL included. */
#define SFS_ESCAPED_SIZE(n) (4 * (n) + 1)

/* Escape name into buf (len bytes, NUL-terminated), keeping valid UTF-8 unless ascii; 0, or
 * -ENOSPC when it does not fit (buf then holds the escapes of a prefix that did fit, never half an
 * escape). */
int sfs_escape_name(const char *name, bool ascii, char *buf, size_t len);

/* Terminal columns of an escaped name s: wcwidth in a UTF-8 locale (utf8; the caller has set
 * the locale), else one per byte (ASCII). */
int sfs_escape_columns(const char *s, bool utf8);

/* Escape name as a Prometheus label value (the text between the quotes) into buf (len bytes,
 * NUL-terminated): a backslash, a double quote and a newline as \\, \" and \n, as the exposition
 * format requires; each byte that is not part of a valid UTF-8 sequence as "/xHH" (two lower-case
 * hex digits), which no image name can hold (names have no '/'), so two names never give one
 * label; everything else as it is.  0, or -ENOSPC when it does not fit (never half an escape).
 * SFS_ESCAPED_SIZE is always enough. */
int sfs_escape_label(const char *name, char *buf, size_t len);

#endif
