/* SPDX-License-Identifier: MIT */
/*
 * create.c - sectorfs-img create: a new image, its sidecar and its map.
 *
 * This file checks the options, the store and RAWFILE, and prints; the
 * image is made by the store (sfs_store_make_image, core/store/make.c),
 * which orders the files around an intent record so that a crash part way
 * is undone at the next start, and the sidecar, which declares the image,
 * comes last.  The backing file and the map are exactly what the daemon
 * would have made; eagerzeroedthick is zeroed now and --from RAWFILE
 * copies the data extents of RAWFILE in first (holes stay unallocated),
 * each with a progress bar.
 *
 * The store lock is held throughout.  An existing sidecar, backing file
 * or map is never overwritten.  On any failure, and on Ctrl-C, the store
 * removes the three files and the record: no half-made image is left.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "store/recover.h"
#include "util/units.h"

static const char create_help[] =
	"Create the image NAME in the store directory STORE: the backing file STORE/NAME,\n"
	"its allocation map in STORE/.sectorfs/ and its sidecar STORE/NAME.json.\n\n"
	"  -s, --size SIZE          disk size, a multiple of the logical sector (required\n"
	"                           unless --from gives it: RAWFILE's size rounded up)\n"
	"  -f, --format FORMAT      sector format: 512n, 512e or 4kn (512n)\n"
	"      --logical N          logical sector size instead of -f (with --physical)\n"
	"      --physical N         physical sector size instead of -f (with --logical)\n"
	"  -p, --provisioning MODE  thin, zeroedthick or eagerzeroedthick (thin)\n"
	"  -b, --block-size BLOCK   allocation and zeroing unit, power of two (1M)\n"
	"      --no-zero-offload    zero by writing zeros, not FALLOC_FL_ZERO_RANGE\n"
	"      --from RAWFILE       import RAWFILE: its data is copied, its holes stay\n"
	"                           unallocated; a file that starts like a qcow2, qed,\n"
	"                           vmdk, vdi, vhdx or vhd image is refused\n"
	"      --raw                with --from: take RAWFILE as raw whatever it starts with\n"
	"  -h, --help               this help\n\n"
	"eagerzeroedthick zeroes every block now, with a progress bar when stdout is a\n"
	"terminal.  An existing image is never overwritten.  Ctrl-C removes the partly\n"
	"made image and exits 130.  Refused while a sectorfs daemon serves STORE.\n";

/* Which of the image's three files exists?  NULL when none. */
static const char *existing_file(const struct img_ref *ref, char *buf, size_t len)
{
	struct stat st;

	snprintf(buf, len, "%s/%s" SFS_SIDECAR_SUFFIX, ref->store, ref->name);
	if (lstat(buf, &st) == 0)
		return buf;
	snprintf(buf, len, "%s/%s", ref->store, ref->name);
	if (lstat(buf, &st) == 0)
		return buf;
	snprintf(buf, len, "%s/" SFS_STATE_DIR "/%s" SFS_MAP_SUFFIX, ref->store, ref->name);
	if (lstat(buf, &st) == 0)
		return buf;
	return NULL;
}

/* Is a change of the image left by a crash (an intent record naming it) pending?  Then the
 * store's recovery, run when the store is locked, settles its files first. */
static bool change_pending(const struct img_ref *ref)
{
	char path[sizeof(ref->store) + sizeof(SFS_STATE_DIR) + 2], what[SFS_FILE_NAME_LEN + 64];
	int sfd, pending;

	snprintf(path, sizeof(path), "%s/" SFS_STATE_DIR, ref->store);
	sfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return false;
	pending = sfs_recover_pending(sfd, ref->name, what, sizeof(what));
	close(sfd);
	return pending > 0;
}

/* Refuse an image whose files are there; before the store is locked (locked false), not when a
 * crash left a change of it pending: the locked check, after recovery, decides. */
static int refuse_existing(const struct img_ref *ref, bool locked)
{
	char path[sizeof(ref->store) + sizeof(ref->name) + sizeof(SFS_STATE_DIR) + 8];

	if (!existing_file(ref, path, sizeof(path)) || (!locked && change_pending(ref)))
		return 0;
	tool_error("%s: image already exists (%s is there); refusing to overwrite it", ref->path, path);
	return -1;
}

/* Make the image through the store, its sidecar last; 0, -ECANCELED when interrupted, -1 when
 * failed (printed).  Nothing is left of it unless it is whole. */
static int make_image(struct img_session *ss, const struct sfs_sidecar *sc, int src_fd)
{
	struct img_bars b = { .on = false };
	struct sfs_store_progress pr = img_bars_progress(&b);
	char err[1024];
	int rc = sfs_store_make_image(ss->store, ss->ref->name, sc, src_fd, &pr, err, sizeof(err));

	img_bars_end(&b);
	if (rc == -ECANCELED)
		return rc;
	if (rc < 0) {
		tool_error("%s: %s", ss->ref->path, err);
		return -1;
	}
	return 0;
}

/* The container format whose signature starts buf (n bytes), or NULL: a disk image that is
 * not raw, whose bytes would be copied as they are if taken for one. */
static const char *image_format(const unsigned char *buf, size_t n)
{
	static const struct { const char *name; size_t off; const char *magic; size_t len; } sig[] = {
		{ "qcow2", 0, "QFI\xfb", 4 },
		{ "qed", 0, "QED\0", 4 },
		{ "vmdk", 0, "KDMV", 4 },
		{ "vmdk", 0, "# Disk DescriptorFile", 21 },
		{ "vdi", 64, "\x7f\x10\xda\xbe", 4 },
		{ "vhdx", 0, "vhdxfile", 8 },
		{ "vpc (vhd)", 0, "conectix", 8 },
	};

	for (size_t i = 0; i < sizeof(sig) / sizeof(sig[0]); i++)
		if (n >= sig[i].off + sig[i].len && memcmp(buf + sig[i].off, sig[i].magic, sig[i].len) == 0)
			return sig[i].name;
	return NULL;
}

/* Open RAWFILE and check it fits; without -s (have_size false) the disk takes its size.
 * A file that starts like another image format is refused unless raw says it is raw. */
static int open_source(const char *from, const struct img_ref *ref, struct sfs_sidecar *sc,
		       bool have_size, bool raw)
{
	unsigned char head[512];
	const char *fmt;
	struct stat st;
	uint64_t need;
	ssize_t n;
	int fd = open(from, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		tool_error("%s: cannot open: %s", from, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		tool_error("%s: not a regular file", from);
		close(fd);
		return -1;
	}
	n = pread(fd, head, sizeof(head), 0);
	if (!raw && n > 0 && (fmt = image_format(head, (size_t)n))) {
		tool_error("%s is a %s image: convert it with 'qemu-img convert -O raw' first (or give --raw "
			   "to copy its bytes as they are)", from, fmt);
		close(fd);
		return -1;
	}
	need = ((uint64_t)st.st_size + sc->lss - 1) / sc->lss * sc->lss;
	if (!have_size) {
		sc->size = need;
	} else if (sc->size < need) {
		tool_error("%s: size %llu is smaller than %s (%lld bytes)", ref->path,
			   (unsigned long long)sc->size, from, (long long)st.st_size);
		close(fd);
		return -1;
	}
	return fd;
}


enum {
	CREATE_SIZE, CREATE_FORMAT, CREATE_LOGICAL, CREATE_PHYSICAL, CREATE_PROV, CREATE_BLOCK,
	CREATE_NO_OFFLOAD, CREATE_FROM, CREATE_RAW,
};
static const struct tool_opt create_opts[] = {
	[CREATE_SIZE] = { "size", 's', TOOL_SIZE },
	[CREATE_FORMAT] = { "format", 'f', TOOL_STRING },
	[CREATE_LOGICAL] = { "logical", 0, TOOL_SIZE },
	[CREATE_PHYSICAL] = { "physical", 0, TOOL_SIZE },
	[CREATE_PROV] = { "provisioning", 'p', TOOL_STRING },
	[CREATE_BLOCK] = { "block-size", 'b', TOOL_SIZE },
	[CREATE_NO_OFFLOAD] = { "no-zero-offload", 0, TOOL_FLAG },
	[CREATE_FROM] = { "from", 0, TOOL_STRING },
	[CREATE_RAW] = { "raw", 0, TOOL_FLAG },
	{ NULL },
};

/* The sidecar the options declare; its size is RAWFILE's when --from comes without -s. */
static int check_create(const struct tool_cmd *self, struct tool_item *item)
{
	const struct tool_value *o = item->opt, *lss = &o[CREATE_LOGICAL], *pss = &o[CREATE_PHYSICAL];
	struct sfs_sidecar *sc = item->data;
	struct sfs_sidecar_draft d;

	sfs_sidecar_draft_init(&d, NULL);
	for (const struct tool_value *v = lss; v <= pss; v++)
		if (v->set && v->n > SFS_SECTOR_MAX)
			return tool_usage_error(self, "%s %s: a sector size is a power of two from %u to %u",
						v == lss ? "--logical" : "--physical", v->arg, SFS_SECTOR_MIN,
						SFS_SECTOR_MAX);
	if (o[CREATE_PROV].set && sfs_sidecar_draft_set(&d, "provisioning", o[CREATE_PROV].arg, NULL, 0) < 0)
		return tool_usage_error(self, "unknown provisioning '%s': use thin, zeroedthick or "
					"eagerzeroedthick", o[CREATE_PROV].arg);
	if (!o[CREATE_SIZE].set && !o[CREATE_FROM].set)
		return tool_usage_error(self, "missing -s SIZE");
	/* the sidecar's keys, set as its key table reads them; the rules between them are its */
	if (o[CREATE_FORMAT].set)
		d.have |= SFS_HAVE_SECTOR;
	if (lss->set)
		sfs_sidecar_draft_set(&d, "logical_sector_size", lss->arg, NULL, 0);
	if (pss->set)
		sfs_sidecar_draft_set(&d, "physical_sector_size", pss->arg, NULL, 0);
	switch (sfs_sidecar_draft_clash(&d)) {
	case SFS_CLASH_SECTOR_AND_SIZES:
		return tool_usage_error(self, "-f and --logical/--physical exclude each other");
	case SFS_CLASH_SIZES_APART:
		return tool_usage_error(self, "--logical and --physical go together");
	case SFS_CLASH_NONE:
		break;
	}
	if (o[CREATE_FORMAT].set && sfs_sidecar_draft_set(&d, "sector", o[CREATE_FORMAT].arg, NULL, 0) < 0)
		return tool_usage_error(self, "unknown sector format '%s': use 512n, 512e or 4kn, or "
					"--logical and --physical", o[CREATE_FORMAT].arg);
	if (o[CREATE_SIZE].set)
		sfs_sidecar_draft_set(&d, "size", o[CREATE_SIZE].arg, NULL, 0);
	if (o[CREATE_BLOCK].set)
		sfs_sidecar_draft_set(&d, "block_size", o[CREATE_BLOCK].arg, NULL, 0);
	if (o[CREATE_NO_OFFLOAD].set)
		sfs_sidecar_draft_set(&d, "zero_offload", "false", NULL, 0);
	/* validated, with the name of the sidecar in the messages, once --from gives the size */
	*sc = d.sc;
	sc->lss = (uint32_t)d.lss;
	sc->pss = (uint32_t)d.pss;
	return 0;
}

/* Is sc what an image can be?  0, or -1 (printed). */
static int validate(const struct img_ref *ref, const struct sfs_sidecar *sc)
{
	char fname[PATH_MAX + 8], err[1024];

	sfs_sidecar_name(fname, sizeof(fname), ref->path);
	if (sfs_sidecar_validate(sc, fname, err, sizeof(err)) == 0)
		return 0;
	tool_error("cannot create %s: %s", ref->path, err);
	return -1;
}

/* Everything that can be checked before the store is locked: the options (with --from and no
 * -s, once the size is known), the store, that the image is new, RAWFILE.  -1 (printed), or
 * 0 with *src_fd RAWFILE opened (-1 without --from). */
static int check_unlocked(const struct tool_item *item, const struct img_ref *ref,
			  struct sfs_sidecar *sc, int *src_fd)
{
	const struct tool_value *from = &item->opt[CREATE_FROM];

	*src_fd = -1;
	if (validate(ref, sc) < 0 || img_store_exists(ref->store) < 0 || img_refuse_if_served(ref) < 0 ||
	    refuse_existing(ref, false) < 0)
		return -1;
	if (!from->set)
		return 0;
	*src_fd = open_source(from->arg, ref, sc, item->opt[CREATE_SIZE].set, item->opt[CREATE_RAW].set);
	if (*src_fd < 0)
		return -1;
	if (validate(ref, sc) == 0)
		return 0;
	close(*src_fd);
	*src_fd = -1;
	return -1;
}

static int exec_create(const struct tool_cmd *self, struct tool_item *item)
{
	const struct img_ref *ref = &((struct img_target *)item->target)->ref;
	struct sfs_sidecar *sc = item->data;
	struct img_session ss = { .store_fd = -1, .state_fd = -1 };
	char size[64], block[32];
	int rc, src_fd;

	(void)self;
	if (check_unlocked(item, ref, sc, &src_fd) < 0)
		return 1;
	if (img_session_open(&ss, ref, "create", 0) < 0 || refuse_existing(ref, true) < 0) {
		img_session_close(&ss);
		if (src_fd >= 0)
			close(src_fd);
		return 1;
	}
	tool_catch_signals();
	rc = make_image(&ss, sc, src_fd);
	if (src_fd >= 0)
		close(src_fd);
	if (img_session_close(&ss) < 0 && rc == 0)
		rc = -1;
	if (rc == -ECANCELED) {
		tool_error("create interrupted; %s removed", ref->path);
		return 130;
	}
	if (rc < 0)
		return 1;
	sfs_format_size(sc->block_size, block, sizeof(block));
	printf("created %s: %s, %s (logical %u, physical %u), %s, block size %s\n", ref->path,
	       tool_fmt_size(sc->size, TOOL_SIZE_EXACT, size, sizeof(size)),
	       sfs_sector_name(sc->lss, sc->pss) ? sfs_sector_name(sc->lss, sc->pss) : "custom",
	       sc->lss, sc->pss, sfs_prov_name(sc->prov), block);
	return 0;
}

TOOL_CMD(img_cmd_create, "create",
	 "-s SIZE [-f FORMAT] [-p MODE] [-b BLOCK] [--from RAWFILE [--raw]] [...] STORE/NAME",
	 "create an image and its sidecar (eager zeroing with a progress bar)",
	 .help = create_help, .opts = create_opts, .args = { "STORE/NAME" },
	 .target = IMG_TARGET_REF, .data_size = sizeof(struct sfs_sidecar), .check = check_create,
	 .exec = exec_create);
