/* SPDX-License-Identifier: MIT */
/*
 * failinfo.c - an image's failures as sectorfs-img shows them
 * (failinfo.h): its power, a cut under way, its bad sectors and the
 * unflushed writes a crash left in its volatile write cache's log, read
 * from STORE/.sectorfs/NAME.disk and NAME.undo without serving it
 * (sfs_fail_peek).  info lists them; check accepts them, says what the
 * next start does with them, and reports a file that does not parse (the
 * daemon refuses the image then) as a problem --repair leaves alone.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failinfo.h"

void img_fail_read(const struct img_view *v, const struct sfs_map_info *mi, struct img_fail *f)
{
	memset(f, 0, sizeof(*f));
	if (v->state_fd < 0)
		return;
	f->rc = sfs_fail_peek(v->state_fd, v->ref->name, mi->geom.lss, mi->geom.pss, mi->geom.size, &f->ds,
			      &f->writes, f->err, sizeof(f->err));
	f->loaded = f->rc == 0;
	if (f->loaded && sfs_bad_format(&f->ds.bad, &f->list, &f->listlen) < 0)
		f->list = NULL;
}

void img_fail_free(struct img_fail *f)
{
	if (f->loaded)
		sfs_disk_free(&f->ds);
	free(f->list);
	f->loaded = false;
	f->list = NULL;
}

/* The power as a phrase: "on", "off", "off (a cut under way ...)". */
static const char *power_text(const struct img_fail *f, char *buf, size_t len)
{
	if (!f->ds.power_off)
		return "on";
	if (!f->ds.cut_pending)
		return "off (user.sectorfs.power: I/O fails with EIO until it is set on)";
	snprintf(buf, len, "off, a power cut (seed %" PRIu64 ") under way: the next start finishes it",
		 f->ds.cut.seed);
	return buf;
}

void img_fail_print_text(const struct img_fail *f, const char *name)
{
	char buf[160];
	uint64_t n;

	if (f->rc < 0) {
		printf("failures:       cannot be read: %s\n", f->err);
		return;
	}
	if (!f->loaded)
		return;
	printf("power:          %s\n", power_text(f, buf, sizeof(buf)));
	n = sfs_bad_count(&f->ds.bad, SFS_BAD_ANY);
	if (!n) {
		printf("bad sectors:    none\n");
	} else {
		printf("bad sectors:    %" PRIu64 " (%" PRIu64 " damaged by power cuts):\n", n,
		       sfs_bad_count(&f->ds.bad, SFS_BAD_DAMAGED));
		for (char *p = f->list, *e; p && *p; p = e + 1) {
			e = strchr(p, '\n');
			printf("                %.*s\n", (int)(e ? e - p : (long)strlen(p)), p);
			if (!e)
				break;
		}
	}
	if (f->writes)
		printf("write cache:    %" PRIu64 " unflushed writes a daemon crash left in " SFS_STATE_DIR "/%s"
		       SFS_UNDO_SUFFIX "; the next start keeps them\n", f->writes, name);
}

void img_fail_json(json_t *o, const struct img_fail *f)
{
	json_t *a;

	if (!f->loaded) {
		json_object_set_new(o, "power", f->rc < 0 ? json_null() : json_string("on"));
		json_object_set_new(o, "bad_sectors", json_array());
		json_object_set_new(o, "unflushed_writes", json_integer(0));
		if (f->rc < 0)
			json_object_set_new(o, "failures_error", json_string(f->err));
		return;
	}
	json_object_set_new(o, "power", json_string(f->ds.power_off ? "off" : "on"));
	json_object_set_new(o, "power_cut_pending", json_boolean(f->ds.cut_pending));
	a = json_array();
	for (char *p = f->list, *e; a && p && *p; p = e + 1) {
		e = strchr(p, '\n');
		json_array_append_new(a, json_stringn(p, e ? (size_t)(e - p) : strlen(p)));
		if (!e)
			break;
	}
	json_object_set_new(o, "bad_sectors", a);
	json_object_set_new(o, "unflushed_writes", json_integer((json_int_t)f->writes));
}

/* Add a remark to d->note, after "; " when it has one already. */
__attribute__((format(printf, 2, 3)))
static void note(struct img_diag *d, const char *fmt, ...)
{
	size_t len = strlen(d->note);
	va_list ap;

	if (len && len + 2 < sizeof(d->note)) {
		memcpy(d->note + len, "; ", 3);
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(d->note + len, sizeof(d->note) - len, fmt, ap);
	va_end(ap);
}

void img_fail_check(const struct img_view *v, struct img_diag *d)
{
	struct sfs_map_info mi;
	struct img_fail f;
	uint64_t n;

	if (!v->map)
		return;
	mi = *sfs_map_info(v->map);
	img_fail_read(v, &mi, &f);
	if (f.rc < 0) {
		snprintf(d->text[P_FAILSTATE], sizeof(d->text[P_FAILSTATE]), SFS_STATE_DIR "/%s (sectorfs refuses the "
			 "image)", f.err);
		d->has[P_FAILSTATE] = true;
		d->n++;
		return;
	}
	if (!f.loaded)
		return;
	n = sfs_bad_count(&f.ds.bad, SFS_BAD_ANY);
	if (f.ds.power_off)
		note(d, "the power is off%s", f.ds.cut_pending ? ", a cut under way that the next start finishes" : "");
	if (n)
		note(d, "%" PRIu64 " bad sectors listed (user.sectorfs.bad_sectors)", n);
	if (f.writes)
		note(d, "%" PRIu64 " unflushed writes a daemon crash left: the next start keeps them", f.writes);
	img_fail_free(&f);
}
