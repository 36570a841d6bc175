/* SPDX-License-Identifier: MIT */
/*
 * test_intent.c - the pieces that tell files apart, on their own: file
 * identities (core/util/fileid.c), intent records as text (core/store/intent.c) and
 * the verdict on a map found on disk (core/map/ident.c).
 *
 * Proves: two identities are the same only with the same inode and every
 * strong part known on both sides (birth time, handle generation), and
 * never when one side has a strong part and the other none; the device
 * counts within a run, and after a restart only where nothing stronger is
 * known; identities and records read back as written, each kind with its
 * identity lines, a record of an older version (first line only) still
 * reads, a damaged one is -EUCLEAN and one that is not a regular file is
 * -EPERM without being opened; a map judged against its image is OK,
 * RENAMED by hand, REPLACED (another backing file), COPIED with its image,
 * FOREIGN as a copy or a hard link of another image's map or a copy put
 * over the image's own, NONE without an identity.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "map/map.h"
#include "util/fileid.h"
#include "store/intent.h"
#include "map/ident.h"
#include "fixtures/tmpstore.h"

TMPSTORE_SUITE(intent, "intent", true, 30);

static struct sfs_fileid fid(uint64_t dev, uint64_t ino, uint32_t has, int64_t sec, uint32_t nsec, uint64_t gen)
{
	struct sfs_fileid f = { dev, ino, sec, nsec, has, gen };

	return f;
}

/* ---- file identities ---- */

Test(intent, identities_are_the_same_only_when_every_known_part_is)
{
	struct sfs_fileid a = fid(8, 12, SFS_FILEID_BTIME, 1000, 5, 0);
	struct sfs_fileid b = a;

	cr_expect(sfs_fileid_same(&a, &b, true));
	b.btime_nsec = 6;
	cr_expect_not(sfs_fileid_same(&a, &b, false), "another birth time: a new file on the inode");
	b = a;
	b.ino = 13;
	cr_expect_not(sfs_fileid_same(&a, &b, false));
	b = a;
	b.dev = 9;
	cr_expect_not(sfs_fileid_same(&a, &b, true), "another device within a run");
	cr_expect(sfs_fileid_same(&a, &b, false), "a device number that changed at a reboot");
	b = fid(8, 12, 0, 0, 0, 0);
	cr_expect_not(sfs_fileid_same(&a, &b, false), "a strong part on one side only");
	a = fid(8, 12, 0, 0, 0, 0);
	cr_expect(sfs_fileid_same(&a, &b, false), "inode and device alone, on both sides");
	b.dev = 9;
	cr_expect_not(sfs_fileid_same(&a, &b, false), "without a strong part the device counts");
	a = fid(8, 12, SFS_FILEID_GEN, 0, 0, 0xabc);
	b = fid(8, 12, SFS_FILEID_GEN, 0, 0, 0xabd);
	cr_expect_not(sfs_fileid_same(&a, &b, false), "another generation");
	b.gen = 0xabc;
	cr_expect(sfs_fileid_same(&a, &b, false));
	b = fid(8, 12, SFS_FILEID_BTIME, 1000, 5, 0);
	cr_expect_not(sfs_fileid_same(&a, &b, false), "strong parts, none in common");
}

Test(intent, a_file_made_again_is_another_file)
{
	struct sfs_fileid a, b;
	struct stat st;

	tmp_write_file(ts.fd, "f", "x", 1);
	cr_assert_eq(sfs_fileid_at(ts.fd, "f", &a, &st), 0);
	cr_expect_eq(a.ino, (uint64_t)st.st_ino);
	cr_expect(a.has, "/tmp reports neither a birth time nor file handles");
	cr_assert_eq(unlinkat(ts.fd, "f", 0), 0);
	tmp_write_file(ts.fd, "f", "x", 1);
	cr_assert_eq(sfs_fileid_at(ts.fd, "f", &b, NULL), 0);
	cr_expect_not(sfs_fileid_same(&a, &b, true), "made again, and the same file");
	cr_expect_eq(sfs_fileid_at(ts.fd, "none", &b, NULL), -ENOENT);
}

Test(intent, identities_read_back_as_written)
{
	struct sfs_fileid a = fid(2049, 123456789, SFS_FILEID_BTIME | SFS_FILEID_GEN, 1796518289, 726375343,
				  0x0123456789abcdefull), b, c;
	char text[640], two[256];

	sfs_fileid_format(&a, "", text, sizeof(text));
	cr_expect_str_eq(text, "dev=2049 ino=123456789 btime=1796518289.726375343 gen=0123456789abcdef");
	cr_assert_eq(sfs_fileid_parse(text, "", &b), 0);
	cr_expect(memcmp(&a, &b, sizeof(a)) == 0, "read back: %s", text);
	sfs_fileid_format(&a, "sc.", two, sizeof(two));
	snprintf(text, sizeof(text), "id=00 dev=1 ino=2 %s", two);
	cr_assert_eq(sfs_fileid_parse(text, "sc.", &c), 0);
	cr_expect(memcmp(&a, &c, sizeof(a)) == 0, "the prefixed one: %s", text);
	cr_assert_eq(sfs_fileid_parse(text, "", &c), 0);
	cr_expect(c.dev == 1 && c.ino == 2 && c.has == 0, "the plain one, beside the prefixed");
	cr_expect_eq(sfs_fileid_parse("dev=1", "", &c), -EINVAL, "no inode");
	cr_expect_eq(sfs_fileid_parse("dev=1 ino=x", "", &c), -EINVAL);
	cr_expect_eq(sfs_fileid_parse("dev=1 ino=2 btime=3.1000000000", "", &c), -EINVAL, "ns past a second");
}

/* ---- records ---- */

static struct sfs_intent_who who(int seed)
{
	unsigned char id[SFS_IMAGE_ID_LEN];
	struct sfs_fileid bk = fid(7, 100 + (uint64_t)seed, SFS_FILEID_BTIME, 1700000000 + seed, (uint32_t)seed, 0);
	struct sfs_fileid sc = fid(7, 200 + (uint64_t)seed, SFS_FILEID_BTIME, 1700000100 + seed, 9, 0);

	memset(id, 0x10 + seed, sizeof(id));
	return sfs_intent_who_of(id, &bk, seed % 2 ? &sc : NULL);
}

static void expect_who(const struct sfs_intent_who *a, const struct sfs_intent_who *b, const char *what)
{
	cr_expect(a->has_id == b->has_id && memcmp(a->id, b->id, sizeof(a->id)) == 0, "%s: id", what);
	cr_expect(a->has_backing == b->has_backing && (!a->has_backing ||
		  sfs_fileid_same(&a->backing, &b->backing, true)), "%s: backing", what);
	cr_expect(a->has_sidecar == b->has_sidecar && (!a->has_sidecar ||
		  sfs_fileid_same(&a->sidecar, &b->sidecar, true)), "%s: sidecar", what);
}

Test(intent, records_read_back_as_written)
{
	static const struct { enum sfs_intent_kind kind; const char *file; } k[] = {
		{ SFS_INTENT_RENAME, "img.rename" }, { SFS_INTENT_UNLINK, "img.unlink" },
		{ SFS_INTENT_CREATE, "img.create" }, { SFS_INTENT_GROW, "img.grow" },
		{ SFS_INTENT_TRIM, "img.grow" }, { SFS_INTENT_INFLATE, "img.inflate" },
	};

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct sfs_intent in = { .kind = k[i].kind, .old_size = 4096, .new_size = 8192, .old_len = 4096,
					 .sidecar = 1, .dev = 7, .ino = 101, .has_devino = k[i].kind == SFS_INTENT_UNLINK };
		struct sfs_intent out;
		char fname[64];

		if (in.kind == SFS_INTENT_TRIM) {
			in.old_size = 8192;
			in.new_size = 4096;
		}
		snprintf(in.name, sizeof(in.name), "img");
		snprintf(in.to, sizeof(in.to), "%s", in.kind == SFS_INTENT_RENAME ? "other" : "");
		in.img = who((int)i);
		in.has_over = in.kind == SFS_INTENT_RENAME;
		in.over = who(3);
		cr_assert_eq(sfs_intent_file(&in, fname, sizeof(fname)), 0);
		cr_expect_str_eq(fname, k[i].file);
		cr_assert_eq(sfs_intent_write(ts.statefd, &in), 0);
		cr_assert_eq(sfs_intent_read(ts.statefd, in.kind == SFS_INTENT_TRIM ? SFS_INTENT_GROW : in.kind,
					     fname, &out), 0, "%s", fname);
		cr_expect_eq(out.kind, in.kind, "%s", fname);
		cr_expect_str_eq(out.name, "img");
		cr_expect_str_eq(out.to, in.to);
		expect_who(&out.img, &in.img, fname);
		cr_expect_eq(out.has_over, in.has_over, "%s", fname);
		if (in.has_over)
			expect_who(&out.over, &in.over, "over");
		if (in.kind == SFS_INTENT_GROW || in.kind == SFS_INTENT_TRIM)
			cr_expect(out.old_size == in.old_size && out.new_size == in.new_size, "%s: sizes", fname);
		if (in.kind == SFS_INTENT_UNLINK)
			cr_expect(out.has_devino && out.dev == 7 && out.ino == 101, "unlink: its first line");
		cr_assert_eq(sfs_intent_remove(ts.statefd, &in), 0);
		cr_expect_not(tmp_exists(ts.statefd, fname));
	}
}

Test(intent, records_of_older_versions_still_read)
{
	struct sfs_intent out;

	tmp_write_file(ts.statefd, "a.unlink", "unlink 5 6\n", 11);
	cr_assert_eq(sfs_intent_read(ts.statefd, SFS_INTENT_UNLINK, "a.unlink", &out), 0);
	cr_expect(out.has_devino && out.dev == 5 && out.ino == 6 && !out.img.has_id && !out.img.has_backing);
	tmp_write_file(ts.statefd, "a.create", "create\n", 7);
	cr_assert_eq(sfs_intent_read(ts.statefd, SFS_INTENT_CREATE, "a.create", &out), 0);
	cr_expect(!out.has_devino && !out.img.has_id);
	tmp_write_file(ts.statefd, "a.grow", "grow 1 2 1 0\n", 13);
	cr_assert_eq(sfs_intent_read(ts.statefd, SFS_INTENT_GROW, "a.grow", &out), 0);
	cr_expect(out.kind == SFS_INTENT_GROW && out.old_size == 1 && out.new_size == 2 && out.sidecar == 0);
	tmp_write_file(ts.statefd, "rename", "a\0b\0", 4);
	cr_assert_eq(sfs_intent_read(ts.statefd, SFS_INTENT_RENAME, "rename", &out), 0);
	cr_expect(!strcmp(out.name, "a") && !strcmp(out.to, "b") && !out.img.has_id);
}

Test(intent, damaged_records_and_special_files, .timeout = 10)
{
	static const char *const bad[] = { "unlink 5\n", "grow 2 1 1 0\n", "grow 1 2 1 0\nid=zz\n",
					   "grow 1 2 1 0\nid=00000000000000000000000000000000 ino=q\n" };
	struct sfs_intent out;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *f = i == 0 ? "a.unlink" : "a.grow";

		tmp_write_file(ts.statefd, f, bad[i], strlen(bad[i]));
		cr_expect_eq(sfs_intent_read(ts.statefd, i == 0 ? SFS_INTENT_UNLINK : SFS_INTENT_GROW, f, &out),
			     -EUCLEAN, "%s", bad[i]);
		unlinkat(ts.statefd, f, 0);
	}
	tmp_write_file(ts.statefd, "rename", "a\0a\0", 4);
	cr_expect_eq(sfs_intent_read(ts.statefd, SFS_INTENT_RENAME, "rename", &out), -EUCLEAN, "onto itself");
	tmp_write_file(ts.statefd, "rename", "../x\0b\0", 7);
	cr_expect_eq(sfs_intent_read(ts.statefd, SFS_INTENT_RENAME, "rename", &out), -EUCLEAN, "no image name");
	cr_assert_eq(mkfifoat(ts.statefd, "b.grow", 0600), 0);
	cr_expect_eq(sfs_intent_read(ts.statefd, SFS_INTENT_GROW, "b.grow", &out), -EPERM);
	cr_assert_eq(mkdirat(ts.statefd, "c.unlink", 0700), 0);
	cr_expect_eq(sfs_intent_read(ts.statefd, SFS_INTENT_UNLINK, "c.unlink", &out), -EPERM);
	cr_expect_eq(sfs_intent_read(ts.statefd, SFS_INTENT_UNLINK, "d.unlink", &out), -ENOENT);
}

/* ---- a map judged against its image ---- */

static struct sfs_map_info info = { { 1 << 20, 512, 512, 1 << 16 }, SFS_PROV_THIN, 0 };

/* Map fname in the state directory for image name whose backing file is STORE/backing. */
static void make_map(const char *fname, const char *name, const char *backing)
{
	struct sfs_map_ident id = { .present = true };
	struct sfs_map *m;

	cr_assert_eq(sfs_fileid_at(ts.fd, backing, &id.backing, NULL), 0);
	cr_assert_eq(sfs_image_id_new(id.id), 0);
	snprintf(id.name, sizeof(id.name), "%s", name);
	cr_assert_eq(sfs_map_create_as(ts.statefd, fname, &info, &id, &m), 0);
	sfs_map_close(m);
}

static enum sfs_map_tie tie(const char *fname, const char *name, const char *backing)
{
	struct sfs_fileid bk;
	struct sfs_map *m = tmp_map_open_ro(ts.statefd, fname);
	char why[768];
	enum sfs_map_tie t;

	cr_assert_eq(sfs_fileid_at(ts.fd, backing, &bk, NULL), 0);
	t = sfs_map_tie(m, name, &bk, why, sizeof(why));
	cr_log_info("%s as %s's, beside %s: %s", fname, name, backing, why);
	sfs_map_close(m);
	return t;
}

static void copy(int dirfd, const char *from, const char *to)
{
	static char buf[1 << 16];
	ssize_t n = tmp_read_file(dirfd, from, buf, sizeof(buf));

	cr_assert_gt(n, 0);
	tmp_write_file(dirfd, to, buf, (size_t)n);
}

Test(intent, a_map_is_judged_against_its_image)
{
	struct sfs_map *m;

	tmp_write_file(ts.fd, "a", "a", 1);
	tmp_write_file(ts.fd, "b", "b", 1);
	make_map("a.map", "a", "a");
	make_map("b.map", "b", "b");
	cr_expect_eq(tie("a.map", "a", "a"), SFS_TIE_OK);
	cr_expect_eq(tie("a.map", "x", "a"), SFS_TIE_RENAMED, "renamed by hand with its backing file");
	cr_expect_eq(tie("a.map", "a", "b"), SFS_TIE_REPLACED, "another backing file beside it");
	copy(ts.statefd, "b.map", "c.map");
	cr_expect_eq(tie("c.map", "a", "a"), SFS_TIE_FOREIGN, "a copy of b's map");
	cr_assert_eq(linkat(ts.statefd, "b.map", ts.statefd, "d.map", 0), 0);
	cr_expect_eq(tie("d.map", "a", "a"), SFS_TIE_FOREIGN, "a hard link to b's map");
	copy(ts.statefd, "a.map", "e.map");
	cr_expect_eq(tie("e.map", "a", "a"), SFS_TIE_FOREIGN, "a copy put over the image's own");
	copy(ts.fd, "a", "a2");
	cr_expect_eq(tie("e.map", "a", "a2"), SFS_TIE_COPIED, "map and backing file both copies");
	cr_assert_eq(sfs_map_create(ts.statefd, "f.map", &info, &m), 0);
	sfs_map_close(m);
	cr_expect_eq(tie("f.map", "a", "a"), SFS_TIE_NONE);
	cr_expect(sfs_map_tie_servable(SFS_TIE_COPIED) && !sfs_map_tie_servable(SFS_TIE_REPLACED) &&
		  !sfs_map_tie_servable(SFS_TIE_FOREIGN));
}

Test(intent, image_identities_as_text)
{
	unsigned char id[SFS_IMAGE_ID_LEN], back[SFS_IMAGE_ID_LEN];
	char hex[2 * SFS_IMAGE_ID_LEN + 1];

	cr_assert_eq(sfs_image_id_new(id), 0);
	cr_expect_eq(strlen(sfs_image_id_hex(id, hex)), 32);
	cr_assert_eq(sfs_image_id_parse(hex, back), 0);
	cr_expect(memcmp(id, back, sizeof(id)) == 0);
	cr_expect_eq(sfs_image_id_parse("0123", back), -EINVAL);
	cr_expect_eq(sfs_image_id_parse("0123456789abcdef0123456789abcdefX", back), -EINVAL);
}
