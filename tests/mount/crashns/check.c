/* SPDX-License-Identifier: MIT */
/*
 * check.c - after the crash: what the store and the remounted namespace
 * show, against the model.
 *
 * precheck (before the restart): sectorfs-img check STORE exits 0, what
 * the start will finish or undo named as pending.
 *
 * verify (remounted): the listing, every name's presence, size and
 * sectors against the candidates of its thread (crashns.h); no write's
 * data under two names; no file in STORE or STORE/.sectorfs but the
 * image, sidecar and map of each name present and the lock;
 * sectorfs-img check clean on every image; every name absent from the
 * listing can be created (and is unlinked again).  The model then adopts
 * what was found.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crashns.h"

/* ---- sectorfs-img check ---- */

int run_check(const char *imgtool, const char *path, char *out, size_t len)
{
	int p[2], st;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		execl(imgtool, imgtool, "check", path, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], out + got, len - 1 - got)) > 0 && got + (size_t)n < len - 1)
		got += (size_t)n;
	if (n > 0)
		got += (size_t)n;
	while (read(p[0], &st, sizeof(st)) > 0)
		;
	out[got] = '\0';
	close(p[0]);
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void print_indented(const char *text)
{
	const char *p = text;

	while (*p) {
		size_t n = strcspn(p, "\n");

		printf("      | %.*s\n", (int)n, p);
		p += n;
		if (*p)
			p++;
	}
}

/* What a check said, for the key of a lasting problem: the first line
 * after the path, digits dropped (sizes change, the problem stays). */
static void check_gist(const char *out, char *buf, size_t len)
{
	const char *p = strstr(out, ": ");
	size_t o = 0;

	p = p ? p + 2 : out;
	for (; *p && *p != '\n' && o + 1 < len; p++)
		if (*p < '0' || *p > '9')
			buf[o++] = *p;
	buf[o] = '\0';
}

static void check_image(struct report *r, enum kind k, const char *imgtool, const char *store, const char *name)
{
	char path[4096], out[8192], key[KEYLEN], gist[KEYLEN];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", store, name);
	rc = run_check(imgtool, path, out, sizeof(out));
	if (rc == 0)
		return;
	check_gist(out, gist, sizeof(gist));
	snprintf(key, sizeof(key), "%s|%d|%.60s", name, rc, gist);
	if (problem(r, k, key, "sectorfs-img check %s exited %d, want 0 (clean):", path, rc))
		print_indented(out);
}

/* The first line of a check's output that is not a clean image, a pending item or a note. */
static const char *first_problem(const char *out)
{
	const char *p = out;

	while (*p) {
		const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p), *c = strstr(p, ": clean (");
		const char *pend = strstr(p, ": pending: "), *note = strstr(p, ": note: ");

		if (!((c && c < end) || (pend && pend < end) || (note && note < end)))
			return p;
		p = nl ? nl + 1 : end;
	}
	return out;
}

/* Right after the kill -9, before the restart: sectorfs-img check STORE must exit 0, each
 * operation the start will finish or undo named as pending. */
int cmd_precheck(struct state *s, const char *store, const char *imgtool)
{
	static const enum kind owned[] = { K_CHECK_BEFORE };
	char out[16384], key[KEYLEN], gist[KEYLEN];
	struct report r;
	int rc;

	report_init(&r, s, "right after the kill -9, before the restart", owned, 1);
	rc = run_check(imgtool, store, out, sizeof(out));
	if (rc == 0) {
		unsigned n = 0;

		for (const char *p = out; (p = strstr(p, ": pending: ")); p++)
			n++;
		if (n)
			printf("# round %u: check before the restart exits 0, with %u item%s pending\n", s->round, n,
			       n == 1 ? "" : "s");
	} else {
		check_gist(first_problem(out), gist, sizeof(gist));
		snprintf(key, sizeof(key), "%d|%.60s", rc, gist);
		if (problem(&r, K_CHECK_BEFORE, key, "sectorfs-img check %s exited %d, want 0 (clean, or "
			    "pending for the next start):", store, rc))
			print_indented(out);
	}
	report_finish(&r);
	return r.found ? 1 : 0;
}

static bool is_sidecar(const char *f, char *name, size_t len)
{
	size_t n = strlen(f);

	if (f[0] == '.' || n <= 5 || strcmp(f + n - 5, ".json") != 0 || n - 5 >= len)
		return false;
	snprintf(name, len, "%.*s", (int)(n - 5), f);
	return true;
}

/* ---- reading the namespace back ---- */

/* Is f one of the names t0-a .. t3-f? */
static bool parse_name(const char *f, int *t, int *i)
{
	char c, back[16];

	if (sscanf(f, "t%d-%c", t, &c) != 2 || *t < 0 || *t >= NT || c < 'a' || c >= 'a' + NN)
		return false;
	*i = c - 'a';
	name_of(*t, *i, back, sizeof(back));
	return strcmp(back, f) == 0;
}

static void read_name(struct report *r, const char *mnt, const char *name, struct found *f, unsigned char *buf)
{
	char path[4096];
	struct stat st;
	uint64_t want;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", mnt, name);
	f->exists = true;
	fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		problem(r, K_UNOPENABLE, name, "%s is in the listing, but open fails: %s", path, strerror(errno));
		f->unreadable = true;
		if (stat(path, &st) == 0)
			f->bytes = (uint64_t)st.st_size;
		if (fd >= 0)
			close(fd);
		return;
	}
	f->bytes = (uint64_t)st.st_size;
	f->nsect = f->bytes / SECT < MAXS ? (uint32_t)(f->bytes / SECT) : MAXS;
	want = (uint64_t)f->nsect * SECT;
	n = want ? pread(fd, buf, want, 0) : 0;
	if (n < 0 || (uint64_t)n != want)
		problem(r, K_UNOPENABLE, NULL, "%s: reading %llu bytes gives %s", path, (unsigned long long)want,
			n < 0 ? strerror(errno) : "a short read");
	for (uint32_t s = 0; s < f->nsect; s++)
		f->tag[s] = n >= 0 && (uint64_t)(s + 1) * SECT <= (uint64_t)n ? read_sector(buf + (size_t)s * SECT)
									: TAG_JUNK;
	close(fd);
}

/* 0 when f[] is the state c allows, else the kind of the worst difference. */
static int mismatch(const struct cand *c, const struct found f[NN], bool bad[NN])
{
	int worst = -1;

	for (int i = 0; i < NN; i++) {
		int k = -1;

		if (f[i].exists != c->exists[i])
			k = K_PRESENCE;
		else if (f[i].exists && f[i].bytes != (uint64_t)c->nsect[i] * SECT)
			k = K_SIZE;
		else if (f[i].exists && f[i].unreadable)
			k = K_CONTENT;
		else
			for (uint32_t s = 0; s < f[i].nsect && k < 0; s++)
				if (c->a[i][s] != TAG_ANY && c->b[i][s] != TAG_ANY && f[i].tag[s] != c->a[i][s] &&
				    f[i].tag[s] != c->b[i][s])
					k = K_CONTENT;
		bad[i] = k >= 0;
		if (k >= 0 && (worst < 0 || k < worst))
			worst = k;
	}
	return worst < 0 ? 0 : worst + 1;
}

static void verify_thread(struct report *r, struct state *s, int t, const struct found f[NN], struct cand c[2])
{
	const struct op *op = &s->inflight[t];
	int n = op_steps(op), nc = 1, best = -1, m[2];
	bool bad[2][NN], show;
	char name[16];

	apply(s->st[t], op, op->done, &c[0]);
	if (op->kind != OP_NONE && op->done < n && !op->idle) {
		apply(s->st[t], op, op->done + 1, &c[1]);
		nc = 2;
	}
	for (int k = 0; k < nc; k++) {
		m[k] = mismatch(&c[k], f, bad[k]);
		if (m[k] == 0)
			goto adopt;
		if (best < 0 || m[k] > m[best])
			best = k;
	}
	/* the least grave difference of the candidates names the kind */
	if (problem(r, (enum kind)(m[best] - 1), NULL, "t%d: its names are in no state the model allows", t)) {
		for (int i = 0; i < NN; i++) {
			show = bad[0][i] || (nc > 1 && bad[1][i]) ||
			       (op->kind != OP_NONE && (i == op->a || (op->kind >= OP_RENAME && op->kind <= OP_NOREPLACE && i == op->b)));
			if (!show)
				continue;
			name_of(t, i, name, sizeof(name));
			printf("    %s allowed: ", name);
			describe_cand(stdout, &c[0], i);
			printf("  (%s)\n", nc > 1 ? "before the step in flight" : "after the steps that returned");
			if (nc > 1) {
				printf("    %s allowed: ", name);
				describe_cand(stdout, &c[1], i);
				printf("  (after '%s')\n", step_name(op, op->done));
			}
			printf("    %s found:   ", name);
			describe_found(stdout, &f[i]);
			printf("\n");
		}
	}
adopt:
	for (int i = 0; i < NN; i++) {
		struct nstate *ns = &s->st[t][i];

		ns->exists = f[i].exists;
		ns->nsect = f[i].exists ? f[i].nsect : 0;
		for (uint32_t sct = 0; sct < ns->nsect; sct++)
			ns->tag[sct] = f[i].unreadable || f[i].tag[sct] == TAG_JUNK ? TAG_ANY : f[i].tag[sct];
	}
}

/* ---- the same data under two names ---- */

struct wref {
	uint64_t w;
	int name;           /* t * NN + i */
	uint32_t first, last;
};

static int cmp_wref(const void *x, const void *y)
{
	const struct wref *a = x, *b = y;

	return a->w < b->w ? -1 : a->w > b->w ? 1 : a->name - b->name;
}

static void verify_unique(struct report *r, struct found f[NT][NN])
{
	struct wref *v = malloc(sizeof(*v) * NT * NN * MAXS);
	size_t n = 0;
	char na[16], nb[16], tag[64], key[KEYLEN];

	if (!v)
		return;
	for (int t = 0; t < NT; t++)
		for (int i = 0; i < NN; i++)
			for (uint32_t s = 0; f[t][i].exists && s < f[t][i].nsect; s++) {
				uint64_t g = f[t][i].tag[s];

				if (g == TAG_ZERO || g >= TAG_JUNK)
					continue;
				if (n && v[n - 1].name == t * NN + i && v[n - 1].w == g >> 20) {
					v[n - 1].last = s;
					continue;
				}
				v[n++] = (struct wref){ g >> 20, t * NN + i, s, s };
			}
	qsort(v, n, sizeof(*v), cmp_wref);
	for (size_t j = 1; j < n; j++) {
		if (v[j].w != v[j - 1].w || v[j].name == v[j - 1].name)
			continue;
		name_of(v[j - 1].name / NN, v[j - 1].name % NN, na, sizeof(na));
		name_of(v[j].name / NN, v[j].name % NN, nb, sizeof(nb));
		describe_tag(tag, sizeof(tag), v[j].w << 20);
		snprintf(key, sizeof(key), "%s|%s|%s", tag, na, nb);
		problem(r, K_DUP, key, "data %s is under %s (sectors %u-%u) and under %s (sectors %u-%u); "
			"a write goes to one name only", tag, na, v[j - 1].first, v[j - 1].last, nb, v[j].first,
			v[j].last);
	}
	free(v);
}

/* ---- files in the store ---- */

static void verify_files(struct report *r, const char *store, const char *sub, struct found f[NT][NN])
{
	char dir[4096], path[4096 + 256], name[512];
	struct dirent *de;
	struct stat st;
	int t, i;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s%s%s", store, sub ? "/" : "", sub ? sub : "");
	d = opendir(dir);
	if (!d) {
		problem(r, K_STRAYFILE, NULL, "%s cannot be listed: %s", dir, strerror(errno));
		return;
	}
	while ((de = readdir(d))) {
		const char *e = de->d_name;
		size_t n = strlen(e);
		bool ok;

		if (strcmp(e, ".") == 0 || strcmp(e, "..") == 0)
			continue;
		if (!sub) {
			ok = strcmp(e, ".sectorfs") == 0 ||
			     (parse_name(e, &t, &i) && f[t][i].exists) ||
			     (is_sidecar(e, name, sizeof(name)) && parse_name(name, &t, &i) && f[t][i].exists);
		} else {
			ok = strcmp(e, "lock") == 0 ||
			     (n > 4 && strcmp(e + n - 4, ".map") == 0 && n - 4 < sizeof(name) &&
			      (snprintf(name, sizeof(name), "%.*s", (int)(n - 4), e), parse_name(name, &t, &i)) &&
			      f[t][i].exists);
		}
		if (ok)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e);
		if (lstat(path, &st) < 0)
			continue;    /* went away while we looked */
		snprintf(name, sizeof(name), "%s%s%s", sub ? sub : "", sub ? "/" : "", e);
		problem(r, strstr(e, ".tmp") ? K_TMPFILE : K_STRAYFILE, name,
			"STORE/%s (%s, %lld bytes) is left in the store; expected only the image, sidecar and map "
			"of each name present and .sectorfs/lock", name, S_ISREG(st.st_mode) ? "file" : "not a file",
			(long long)st.st_size);
	}
	closedir(d);
}

static void store_files_of(const char *store, const char *name, char *buf, size_t len)
{
	static const char *const fmt[] = { "%s/%s", "%s/%s.json", "%s/.sectorfs/%s.map" };
	static const char *const what[] = { "backing file", "sidecar", "map" };
	char path[4096];
	struct stat st;
	size_t o = 0;

	buf[0] = '\0';
	for (int k = 0; k < 3; k++) {
		snprintf(path, sizeof(path), fmt[k], store, name);
		if (lstat(path, &st) == 0)
			o += (size_t)snprintf(buf + o, len > o ? len - o : 0, "%s%s (%lld bytes)", o ? ", " : "",
					      what[k], (long long)st.st_size);
	}
	if (o == 0)
		snprintf(buf, len, "none of its files");
}

/* An absent name must be free: create it (and unlink it again). */
static void probe(struct report *r, struct state *s, const char *mnt, const char *store, int t, int i)
{
	char name[16], path[4096], files[512];
	int fd;

	name_of(t, i, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", mnt, name);
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;

		store_files_of(store, name, files, sizeof(files));
		problem(r, e == EEXIST ? K_EEXIST : K_PROBE, name, "open(%s, O_CREAT|O_EXCL): %s, but %s is not in "
			"the listing; the store holds %s", path, strerror(e), name, files);
		s->blocked[t][i] = true;
		return;
	}
	close(fd);
	s->blocked[t][i] = false;
	if (unlink(path) < 0) {
		problem(r, K_PROBE, NULL, "%s: created, but unlink fails: %s", path, strerror(errno));
		s->st[t][i].exists = true;
		s->st[t][i].nsect = 0;
	}
}

int cmd_verify(struct state *s, const char *mnt, const char *store, const char *imgtool)
{
	static const enum kind owned[] = { K_DUP, K_TMPFILE, K_STRAYFILE, K_CHECK_AFTER, K_EEXIST, K_PROBE,
					   K_UNOPENABLE, K_LISTING };
	struct found (*f)[NN] = calloc(NT, sizeof(*f));
	struct cand *c = malloc(2 * sizeof(*c));
	unsigned char *buf = NULL;
	bool listed[NT][NN] = { { false } };
	char name[256], path[4096];
	struct dirent *de;
	struct report r;
	struct stat st;
	int t, i, present = 0;
	DIR *d;

	if (!f || !c || posix_memalign((void **)&buf, 4096, MAXS * SECT) != 0) {
		fprintf(stderr, "crashns: out of memory\n");
		return 2;
	}
	report_init(&r, s, "after the restart", owned, (int)(sizeof(owned) / sizeof(owned[0])));

	d = opendir(mnt);
	if (!d) {
		fprintf(stderr, "crashns: %s: %s\n", mnt, strerror(errno));
		return 2;
	}
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 || strcmp(de->d_name, ".stats") == 0)
			continue;
		if (parse_name(de->d_name, &t, &i))
			listed[t][i] = true;
		else
			problem(&r, K_LISTING, de->d_name, "'%s' is in the listing of the mount, a name this test "
				"never made", de->d_name);
	}
	closedir(d);

	for (t = 0; t < NT; t++) {
		for (i = 0; i < NN; i++) {
			name_of(t, i, name, sizeof(name));
			snprintf(path, sizeof(path), "%s/%s", mnt, name);
			if (!listed[t][i]) {
				if (stat(path, &st) == 0)
					problem(&r, K_LISTING, name, "%s is not in the listing, but stat finds it (%lld bytes)",
						path, (long long)st.st_size);
				else if (errno != ENOENT)
					problem(&r, K_LISTING, name, "%s is not in the listing, and stat gives %s", path,
						strerror(errno));
				else
					continue;
			}
			read_name(&r, mnt, name, &f[t][i], buf);
			present++;
		}
	}
	verify_unique(&r, f);
	for (t = 0; t < NT; t++)
		verify_thread(&r, s, t, f[t], c);
	verify_files(&r, store, NULL, f);
	verify_files(&r, store, ".sectorfs", f);

	/* sectorfs-img check on every image: each name present, each sidecar */
	for (t = 0; t < NT; t++)
		for (i = 0; i < NN; i++)
			if (f[t][i].exists) {
				name_of(t, i, name, sizeof(name));
				check_image(&r, K_CHECK_AFTER, imgtool, store, name);
			}
	d = opendir(store);
	while (d && (de = readdir(d)))
		if (is_sidecar(de->d_name, name, sizeof(name)) && !(parse_name(name, &t, &i) && f[t][i].exists))
			check_image(&r, K_CHECK_AFTER, imgtool, store, name);
	if (d)
		closedir(d);

	for (t = 0; t < NT; t++)
		for (i = 0; i < NN; i++)
			if (!f[t][i].exists)
				probe(&r, s, mnt, store, t, i);
	for (t = 0; t < NT; t++)
		memset(&s->inflight[t], 0, sizeof(s->inflight[t]));
	s->rounds_checked++;
	report_finish(&r);
	printf("%s - round %u: kill -9 after %u ms and %u operations; %d names present; %u new failure%s\n",
	       s->round_found ? "not ok" : "ok", s->round, s->run_ms, s->run_ops, present, s->round_found,
	       s->round_found == 1 ? "" : "s");
	free(buf);
	free(c);
	free(f);
	return r.found ? 1 : 0;
}
