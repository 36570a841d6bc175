/* SPDX-License-Identifier: MIT */
/*
 * sidecar_write.c - write the JSON sidecar NAME.json (see sidecar.h):
 * the text of a sidecar (sfs_sidecar_dump), its atomic save beside its
 * image, and how a sidecar differs from what a map recorded.  Reading
 * and checking are sidecar.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "util/log.h"
#include "sidecar.h"
#include "util/tmpfile.h"
#include "util/units.h"

/* The failure keys the file gave into o: non-zero when one could not be set. */
static int dump_fail_keys(json_t *o, const struct sfs_sidecar_fail *f)
{
	char policy[64];
	int bad = 0;

	if (f->have & SFS_HAVE_WRITE_CACHE)
		bad |= json_object_set_new(o, "write_cache", json_string(f->mode == SFS_WC_VOLATILE ? "volatile" : "none"));
	if (f->have & SFS_HAVE_WRITE_CACHE_SIZE)
		bad |= json_object_set_new(o, "write_cache_size", json_integer((json_int_t)f->cache_size));
	if (f->have & SFS_HAVE_AWU)
		bad |= json_object_set_new(o, "atomic_write_unit", json_integer(f->awu));
	if (f->have & SFS_HAVE_AWB)
		bad |= json_object_set_new(o, "atomic_write_boundary", json_integer(f->awb));
	if (f->have & SFS_HAVE_RMW_POWER_SAFE)
		bad |= json_object_set_new(o, "rmw_power_safe", json_boolean(f->rmw_power_safe));
	if (f->have & SFS_HAVE_POWER_CUT_POLICY) {
		sfs_wc_format_policy(&f->cut, policy, sizeof(policy));
		bad |= json_object_set_new(o, "power_cut_policy", json_string(policy));
	}
	if (f->have & SFS_HAVE_LATENCY_SPIKE)
		bad |= json_object_set_new(o, "latency_spike", sfs_spike_json(&f->spike));
	return bad;
}

/* sc must be valid (sfs_sidecar_validate); NULL with errno EINVAL otherwise. */
char *sfs_sidecar_dump(const struct sfs_sidecar *sc)
{
	const char *sector = sfs_sector_name(sc->lss, sc->pss);
	const char *prov = sfs_prov_name(sc->prov);
	char *text = NULL;
	json_t *o;
	int bad;

	if (!prov) {
		errno = EINVAL;
		return NULL;
	}
	o = json_object();
	if (!o) {
		errno = ENOMEM;
		return NULL;
	}
	bad = json_object_set_new(o, "size", json_integer((json_int_t)sc->size));
	if (sector) {
		bad |= json_object_set_new(o, "sector", json_string(sector));
	} else {
		bad |= json_object_set_new(o, "logical_sector_size", json_integer(sc->lss));
		bad |= json_object_set_new(o, "physical_sector_size", json_integer(sc->pss));
	}
	bad |= json_object_set_new(o, "provisioning", json_string(prov));
	bad |= json_object_set_new(o, "block_size", json_integer((json_int_t)sc->block_size));
	bad |= json_object_set_new(o, "zero_offload", json_boolean(sc->zero_offload));
	if (sc->profile[0])
		bad |= json_object_set_new(o, "profile", json_string(sc->profile));
	bad |= dump_fail_keys(o, &sc->fail);
	if (!bad)
		text = json_dumps(o, JSON_INDENT(2));
	json_decref(o);
	if (!text)
		errno = ENOMEM;
	return text;
}

/* Open the directory holding dirfd/fname; *base points at fname's last component. */
static int open_parent(int dirfd, const char *fname, const char **base)
{
	const char *slash = strrchr(fname, '/');
	char parent[PATH_MAX];
	int fd;

	*base = slash ? slash + 1 : fname;
	if (!slash)
		strcpy(parent, ".");
	else if (slash == fname)
		strcpy(parent, "/");
	else if ((size_t)(slash - fname) < sizeof(parent))
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - fname), fname);
	else
		return -ENAMETOOLONG;
	fd = openat(dirfd, parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * The new text is written to a temporary file of tmpdir's (tmpfile.h:
 * O_EXCL, a name nothing else can have), made durable and renamed over
 * FNAME; without a tmpdir the temporary file is made beside FNAME.
 * Callers serialise saves of one sidecar.  An error after the rename
 * (fsync of a directory) leaves the new file in place, only its
 * durability is in doubt.
 */
int sfs_sidecar_save(int dirfd, const char *fname, int tmpdir, const struct sfs_sidecar *sc)
{
	const char *base;
	char *text, *line;
	size_t n;
	int pfd, rc;

	if (sfs_sidecar_validate(sc, fname, NULL, 0))
		return -EINVAL;
	text = sfs_sidecar_dump(sc);
	if (!text)
		return -errno;
	n = strlen(text);
	line = realloc(text, n + 2);
	if (!line) {
		free(text);
		return -ENOMEM;
	}
	text = line;
	memcpy(text + n, "\n", 2);
	pfd = open_parent(dirfd, fname, &base);
	if (pfd < 0) {
		free(text);
		return pfd;
	}
	rc = sfs_write_file_atomic(tmpdir >= 0 ? tmpdir : pfd, pfd, base, text, strlen(text), 0644);
	/* a state directory on another filesystem: the temporary file goes beside the sidecar */
	if (rc == -EXDEV && tmpdir >= 0)
		rc = sfs_write_file_atomic(pfd, pfd, base, text, strlen(text), 0644);
	free(text);
	close(pfd);
	return rc;
}

unsigned sfs_sidecar_diff(const struct sfs_sidecar *sc, const struct sfs_geom *rec, enum sfs_prov rec_prov)
{
	unsigned d = 0;

	if (sc->lss != rec->lss || sc->pss != rec->pss)
		d |= SFS_DIFF_SECTOR;
	if (sc->block_size != rec->block_size)
		d |= SFS_DIFF_BLOCK;
	if (sc->prov != rec_prov)
		d |= SFS_DIFF_PROV;
	if (sc->size < rec->size)
		d |= SFS_DIFF_SMALLER;
	else if (sc->size > rec->size)
		d |= SFS_DIFF_LARGER;
	return d;
}
