/* SPDX-License-Identifier: MIT */
/*
 * info.c - sectorfs-img info: what an image is and how much of it is used.
 *
 * Geometry, provisioning and block size are the recorded ones (the map
 * header: the image's truth, see core/image/io.c), zero offload is the
 * sidecar's setting as the store's filesystem can honour it (a probe on
 * an unnamed temporary file, sfs_zero_range_probe: on tmpfs it falls back
 * to writing zeros, and says why), allocation is counted from the map, and backing file
 * usage is st_blocks * 512 of STORE/NAME, and its failures (power, bad
 * sectors, a crash's unflushed writes: failinfo.c) are listed.  The image is looked at on disk
 * without the store lock (view.c): info works while a daemon serves the
 * store, and then shows the allocation of the daemon's last flush.  An
 * image only declared by its sidecar is shown as "not created yet".
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "common.h"
#include "failinfo.h"
#include "model/model.h"
#include "stats/stats.h"
#include "util/units.h"

static const char info_help[] =
	"Show the geometry (recorded in the image's map), provisioning, block size, size,\n"
	"allocated blocks and bytes, backing file usage (st_blocks * 512) of STORE/NAME,\n"
	"and whether a sectorfs daemon serves its store.  Works while the store is served\n"
	"(allocation is then as of the daemon's last flush); changes nothing.\n\n"
	"  --json      one JSON object instead of text\n"
	"  -h, --help  this help\n";

struct facts {
	struct sfs_map_info mi;
	bool created, zeroed;
	uint64_t nblocks, alloc_blocks, alloc_bytes, bk_size, bk_used;
	struct sfs_stats_info zo;     /* zero_offload and zero_offload_fallback */
	char zo_text[192], zo_why[128];   /* as the stats say it, and the reason alone */
	struct img_fail fail;             /* power, bad sectors, a crash's unflushed writes */
};

static int print_json(const struct img_view *v, const struct facts *f)
{
	const struct sfs_geom *g = &f->mi.geom;
	const char *sector = sfs_sector_name(g->lss, g->pss);
	json_t *o = json_object();

	json_object_set_new(o, "image", json_string(v->ref->path));
	json_object_set_new(o, "store", json_string(v->ref->store));
	json_object_set_new(o, "name", json_string(v->ref->name));
	json_object_set_new(o, "created", json_boolean(f->created));
	json_object_set_new(o, "size", json_integer((json_int_t)g->size));
	json_object_set_new(o, "sector", sector ? json_string(sector) : json_null());
	json_object_set_new(o, "logical_sector_size", json_integer(g->lss));
	json_object_set_new(o, "physical_sector_size", json_integer(g->pss));
	json_object_set_new(o, "provisioning", json_string(sfs_prov_name(f->mi.prov)));
	json_object_set_new(o, "block_size", json_integer((json_int_t)g->block_size));
	json_object_set_new(o, "zero_offload", json_boolean(f->zo.zero_offload && !f->zo.zero_offload_fallback));
	json_object_set_new(o, "zero_offload_fallback",
			    f->zo.zero_offload_fallback ? json_string(f->zo_why) : json_null());
	json_object_set_new(o, "profile", v->sc.profile[0] ? json_string(v->sc.profile) : json_null());
	json_object_set_new(o, "total_blocks", json_integer((json_int_t)f->nblocks));
	json_object_set_new(o, "allocated_blocks", json_integer((json_int_t)f->alloc_blocks));
	json_object_set_new(o, "allocated_bytes", json_integer((json_int_t)f->alloc_bytes));
	json_object_set_new(o, "backing_size", json_integer((json_int_t)f->bk_size));
	json_object_set_new(o, "backing_bytes_used", json_integer((json_int_t)f->bk_used));
	json_object_set_new(o, "zeroed", json_boolean(f->zeroed));
	img_fail_json(o, &f->fail);
	json_object_set_new(o, "served", json_boolean(v->served));
	json_object_set_new(o, "holder", v->served ? json_string(v->holder) : json_null());
	return tool_print_json(o, JSON_INDENT(2));
}

/* The profile line, and for a rotational drive the hint that loop devices need. */
static void print_profile(const struct img_view *v)
{
	struct sfs_profile p;
	char err[512];

	if (!v->sc.profile[0])
		return;
	if (sfs_profile_load(v->store_fd, v->sc.profile, &p, err, sizeof(err)) < 0) {
		printf("profile:        %s (cannot be loaded: %s)\n", v->sc.profile, err);
		return;
	}
	printf("profile:        %s (%u channel%s%s)\n", v->sc.profile, p.channels, p.channels == 1 ? "" : "s",
	       p.rotational ? ", rotational" : "");
	if (p.rotational)
		printf("                a loop device over it reports itself non-rotational: "
		       "echo 1 > /sys/block/loopN/queue/rotational\n");
}

static int print_text(const struct img_view *v, const struct facts *f)
{
	const struct sfs_geom *g = &f->mi.geom;
	const char *sector = sfs_sector_name(g->lss, g->pss);
	char a[64], b[64];

	printf("image:          %s\n", v->ref->path);
	printf("size:           %s\n", tool_fmt_size(g->size, TOOL_SIZE_EXACT, a, sizeof(a)));
	printf("sector format:  %s (logical %u, physical %u)\n", sector ? sector : "custom", g->lss, g->pss);
	printf("provisioning:   %s\n", sfs_prov_name(f->mi.prov));
	printf("block size:     %s\n", tool_fmt_size(g->block_size, TOOL_SIZE_EXACT, a, sizeof(a)));
	printf("zero offload:   %s\n", f->zo_text);
	print_profile(v);
	if (!f->created) {
		printf("state:          declared by its sidecar, not created yet\n");
	} else {
		sfs_format_human(f->alloc_bytes, a, sizeof(a));
		printf("allocated:      %llu of %llu blocks, %s (%llu bytes)\n",
		       (unsigned long long)f->alloc_blocks, (unsigned long long)f->nblocks, a,
		       (unsigned long long)f->alloc_bytes);
		sfs_format_human(f->bk_used, b, sizeof(b));
		printf("backing file:   %s used (%llu bytes), %llu bytes long\n", b,
		       (unsigned long long)f->bk_used, (unsigned long long)f->bk_size);
	}
	if (f->mi.prov == SFS_PROV_EAGERZEROEDTHICK)
		printf("eager zeroing:  %s\n", f->zeroed ? "done" : "not finished");
	img_fail_print_text(&f->fail, v->ref->name);
	if (v->served)
		printf("served:         yes, by %s (allocation as of its last flush)\n",
		       v->holder[0] ? v->holder : "an unknown holder");
	else
		printf("served:         no\n");
	return 0;
}

static int exec_info(const struct tool_cmd *self, struct tool_item *item)
{
	struct img_target *t = item->target;
	struct img_view *v = &t->view;
	struct facts f = { .mi = t->mi, .created = t->created };
	int rc;

	(void)self;
	f.nblocks = sfs_geom_nblocks(&f.mi.geom);
	f.zeroed = (f.mi.flags & SFS_MAP_F_ZEROED) != 0;
	f.zo.zero_offload = v->sc.zero_offload;
	if (v->sc.zero_offload && sfs_zero_range_probe(v->store_fd, &f.zo.zero_offload_fallback) < 0)
		f.zo.zero_offload_fallback = 0;    /* cannot be told here: the daemon finds out */
	sfs_stats_zero_offload_text(&f.zo, f.zo_text, sizeof(f.zo_text));
	sfs_stats_zero_fallback_reason(f.zo.zero_offload_fallback, f.zo_why, sizeof(f.zo_why));
	if (f.created) {
		img_fail_read(v, &f.mi, &f.fail);
		f.alloc_blocks = sfs_map_count(v->map);
		f.alloc_bytes = sfs_allocated_bytes(v->map, &f.mi.geom);
		f.bk_size = (uint64_t)v->bk.st_size;
		f.bk_used = (uint64_t)v->bk.st_blocks * 512;
	}
	rc = item->opt[IMG_OPT_JSON].set ? print_json(v, &f) : print_text(v, &f);
	img_fail_free(&f.fail);
	return rc;
}

TOOL_CMD(img_cmd_info, "info", "[--json] STORE/NAME",
	 "show geometry, provisioning, allocation and backing file usage",
	 .help = info_help, .opts = img_json_opts, .args = { "STORE/NAME" },
	 .target = IMG_TARGET_VIEW, .exec = exec_info);
