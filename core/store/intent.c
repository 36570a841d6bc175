/* SPDX-License-Identifier: MIT */
/*
 * intent.c - intent records as text (intent.h): formatted, written
 * through a temporary file, read back and parsed.
 *
 * Reading opens with O_NONBLOCK and O_NOFOLLOW and refuses what is not a
 * regular file before it reads a byte, so a FIFO or a directory planted
 * under a record's name is named, never waited on.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "intent.h"
#include "map/ident.h"
#include "store.h"
#include "util/tmpfile.h"

#define TEXT_MAX 2048

static const char *suffix_of(enum sfs_intent_kind k)
{
	switch (k) {
	case SFS_INTENT_RENAME:
		return SFS_RENAME_SUFFIX;
	case SFS_INTENT_UNLINK:
		return SFS_UNLINK_SUFFIX;
	case SFS_INTENT_CREATE:
		return SFS_CREATE_SUFFIX;
	case SFS_INTENT_GROW:
	case SFS_INTENT_TRIM:
		return SFS_GROW_SUFFIX;
	case SFS_INTENT_INFLATE:
		return SFS_INFLATE_SUFFIX;
	default:
		return "";
	}
}

int sfs_intent_file(const struct sfs_intent *in, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s%s", in->name, suffix_of(in->kind));

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The words of w ("id=... dev=... ino=... sc.dev=..."), after a space each, appended to buf
 * (len bytes in all, *n used). */
static void format_who(const struct sfs_intent_who *w, char *buf, size_t len, size_t *n)
{
	char hex[2 * SFS_IMAGE_ID_LEN + 1], fid[256];

	if (w->has_id && *n < len)
		*n += (size_t)snprintf(buf + *n, len - *n, " id=%s", sfs_image_id_hex(w->id, hex));
	if (w->has_backing && *n < len) {
		sfs_fileid_format(&w->backing, "", fid, sizeof(fid));
		*n += (size_t)snprintf(buf + *n, len - *n, " %s", fid);
	}
	if (w->has_sidecar && *n < len) {
		sfs_fileid_format(&w->sidecar, "sc.", fid, sizeof(fid));
		*n += (size_t)snprintf(buf + *n, len - *n, " %s", fid);
	}
}

/* The text of in into buf: its length, or -ENAMETOOLONG when it does not fit. */
static int format(const struct sfs_intent *in, char *buf, size_t len)
{
	char who[1024];
	size_t n, wn = 0;

	switch (in->kind) {
	case SFS_INTENT_RENAME:
		n = (size_t)snprintf(buf, len, "%s%c%s%c", in->name, '\0', in->to, '\0');
		break;
	case SFS_INTENT_UNLINK:
		n = (size_t)snprintf(buf, len, "unlink %" PRIu64 " %" PRIu64 "\n", in->dev, in->ino);
		break;
	case SFS_INTENT_CREATE:
		n = (size_t)snprintf(buf, len, "create\n");
		break;
	case SFS_INTENT_GROW:
		n = (size_t)snprintf(buf, len, "grow %" PRIu64 " %" PRIu64 " %" PRIu64 " %d\n", in->old_size,
				     in->new_size, in->old_len, in->sidecar);
		break;
	case SFS_INTENT_TRIM:
		n = (size_t)snprintf(buf, len, "trim %" PRIu64 " %" PRIu64 "\n", in->old_size, in->new_size);
		break;
	default:
		n = (size_t)snprintf(buf, len, "inflate\n");
		break;
	}
	format_who(&in->img, who, sizeof(who), &wn);
	if (wn && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s\n", who + 1);
	if (in->has_over && n < len) {
		wn = 0;
		format_who(&in->over, who, sizeof(who), &wn);
		n += (size_t)snprintf(buf + n, len - n, "over%s\n", wn ? who : "");
	}
	return n < len ? (int)n : -ENAMETOOLONG;
}

int sfs_intent_write(int statefd, const struct sfs_intent *in)
{
	char fname[SFS_FILE_NAME_LEN], text[TEXT_MAX];
	int n = format(in, text, sizeof(text)), rc = sfs_intent_file(in, fname, sizeof(fname));

	if (rc < 0 || n < 0)
		return rc < 0 ? rc : n;
	return sfs_write_file_atomic(statefd, statefd, fname, text, (size_t)n, 0600);
}

int sfs_intent_remove(int statefd, const struct sfs_intent *in)
{
	char fname[SFS_FILE_NAME_LEN];
	int rc = sfs_intent_file(in, fname, sizeof(fname));

	return rc < 0 ? rc : sfs_remove_durably(statefd, fname);
}

/* Does line hold a word starting with key ("ino=")? */
static bool has_word(const char *line, const char *key)
{
	size_t k = strlen(key);

	for (const char *p = line; *p;) {
		p += strspn(p, " ");
		if (strncmp(p, key, k) == 0)
			return true;
		p += strcspn(p, " ");
	}
	return false;
}

/* The who of line (id=, the backing file's keys, sc.*) into w; -EUCLEAN when a value is bad. */
static int parse_who(const char *line, struct sfs_intent_who *w)
{
	memset(w, 0, sizeof(*w));
	for (const char *p = line; *p;) {
		p += strspn(p, " ");
		if (strncmp(p, "id=", 3) == 0) {
			if (sfs_image_id_parse(p + 3, w->id) < 0)
				return -EUCLEAN;
			w->has_id = true;
		}
		p += strcspn(p, " ");
	}
	if (has_word(line, "ino=")) {
		if (sfs_fileid_parse(line, "", &w->backing) < 0)
			return -EUCLEAN;
		w->has_backing = true;
	}
	if (has_word(line, "sc.ino=")) {
		if (sfs_fileid_parse(line, "sc.", &w->sidecar) < 0)
			return -EUCLEAN;
		w->has_sidecar = true;
	}
	return 0;
}

/* The first line of a record of kind in text (NUL-terminated at its end) into out. */
static int parse_first(enum sfs_intent_kind kind, const char *text, struct sfs_intent *out)
{
	char tail;
	int n = 0;

	switch (kind) {
	case SFS_INTENT_UNLINK:
		if (sscanf(text, "unlink %" SCNu64 " %" SCNu64 "%c", &out->dev, &out->ino, &tail) != 3 || tail != '\n')
			return -EUCLEAN;
		out->has_devino = true;
		return 0;
	case SFS_INTENT_CREATE:
		if (strncmp(text, "create\n", 7) == 0)
			return 0;
		n = sscanf(text, "create %" SCNu64 " %" SCNu64 "%c", &out->dev, &out->ino, &tail);
		out->has_devino = n == 3 && tail == '\n';
		return out->has_devino ? 0 : -EUCLEAN;
	case SFS_INTENT_GROW:
	case SFS_INTENT_TRIM:
		if (strncmp(text, "trim ", 5) == 0) {
			out->kind = SFS_INTENT_TRIM;
			return sscanf(text, "trim %" SCNu64 " %" SCNu64 "%c", &out->old_size, &out->new_size, &tail) == 3 &&
			       tail == '\n' && out->new_size < out->old_size ? 0 : -EUCLEAN;
		}
		out->kind = SFS_INTENT_GROW;
		if (sscanf(text, "grow %" SCNu64 " %" SCNu64 " %" SCNu64 " %d%c", &out->old_size, &out->new_size,
			   &out->old_len, &out->sidecar, &tail) != 5 || tail != '\n' || out->new_size <= out->old_size ||
		    (out->sidecar != 0 && out->sidecar != 1))
			return -EUCLEAN;
		return 0;
	case SFS_INTENT_INFLATE:
		return strncmp(text, "inflate\n", 8) == 0 ? 0 : -EUCLEAN;
	default:
		return -EUCLEAN;
	}
}

/* A rename record fname: "FROM\0TO\0" then the lines; the offset of the lines, or -EUCLEAN (also
 * when fname is FROM.rename of another FROM: one record cannot stand for another image's). */
static int parse_rename(const char *fname, const char *buf, size_t len, struct sfs_intent *out)
{
	size_t fl = strlen(fname), k = sizeof(SFS_RENAME_SUFFIX) - 1, n;
	const char *from = buf, *z1 = memchr(buf, '\0', len), *to, *z2;

	if (!z1 || z1 + 1 >= buf + len)
		return -EUCLEAN;
	to = z1 + 1;
	z2 = memchr(to, '\0', (size_t)(buf + len - to));
	if (!z2 || sfs_name_valid(from) < 0 || sfs_name_valid(to) < 0 || strcmp(from, to) == 0)
		return -EUCLEAN;
	n = (size_t)(z1 - from);
	/* FROM.rename holds the rename of FROM (the "rename" of older versions any) */
	if (strcmp(fname, SFS_RENAME_JOURNAL) != 0 &&
	    (fl != n + k || memcmp(fname, from, n) != 0 || strcmp(fname + n, SFS_RENAME_SUFFIX) != 0))
		return -EUCLEAN;
	/* valid names are at most SFS_NAME_MAX bytes */
	memcpy(out->name, from, n + 1);
	memcpy(out->to, to, (size_t)(z2 - to) + 1);
	return (int)(z2 + 1 - buf);
}

int sfs_intent_read(int statefd, enum sfs_intent_kind kind, const char *fname, struct sfs_intent *out)
{
	char buf[TEXT_MAX], *lines, *nl;
	struct stat st;
	ssize_t n;
	int off = 0, rc;

	memset(out, 0, sizeof(*out));
	out->kind = kind;
	if (fstatat(statefd, fname, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EPERM;
	n = sfs_read_small_file(statefd, fname, buf, sizeof(buf));
	if (n < 0)
		return n == -EFBIG ? -EUCLEAN : (int)n;
	if (kind == SFS_INTENT_RENAME) {
		off = parse_rename(fname, buf, (size_t)n, out);
		if (off < 0)
			return off;
	} else {
		size_t k = strlen(suffix_of(kind)), fl = strlen(fname);

		if (fl <= k || fl - k > SFS_NAME_MAX || strcmp(fname + fl - k, suffix_of(kind)) != 0)
			return -EUCLEAN;
		memcpy(out->name, fname, fl - k);
		out->name[fl - k] = '\0';
		if (sfs_name_valid(out->name) < 0 || memchr(buf, '\0', (size_t)n))
			return -EUCLEAN;
		if ((rc = parse_first(kind, buf, out)) < 0)
			return rc;
		off = (int)(strchr(buf, '\n') - buf) + 1;
	}
	/* the lines after the first: the image's, then "over ..." */
	lines = buf + off;
	if ((size_t)off < (size_t)n && lines[0] && (nl = strchr(lines, '\n'))) {
		*nl = '\0';
		if ((rc = parse_who(lines, &out->img)) < 0)
			return rc;
		lines = nl + 1;
		if (strncmp(lines, "over", 4) == 0 && (nl = strchr(lines, '\n'))) {
			*nl = '\0';
			if ((rc = parse_who(lines + 4, &out->over)) < 0)
				return rc;
			out->has_over = true;
		}
	}
	return 0;
}

int sfs_intent_put(int statefd, const char *name, const char *suffix, const char *text)
{
	char rec[SFS_FILE_NAME_LEN];

	if ((size_t)snprintf(rec, sizeof(rec), "%s%s", name, suffix) >= sizeof(rec))
		return -ENAMETOOLONG;
	return sfs_write_file_atomic(statefd, statefd, rec, text, strlen(text), 0600);
}

int sfs_intent_drop(int statefd, const char *name, const char *suffix)
{
	char rec[SFS_FILE_NAME_LEN];

	if ((size_t)snprintf(rec, sizeof(rec), "%s%s", name, suffix) >= sizeof(rec))
		return -ENAMETOOLONG;
	return sfs_remove_durably(statefd, rec);
}
