/* SPDX-License-Identifier: MIT */
/*
 * options.c - the daemon's command line: the sectorfs -o options (the
 * defaults of new images, the pid file, the transport, the limits),
 * --help and --version, STORE, and libfuse's own options and MOUNTPOINT
 * (fuse_parse_cmdline); each value checked, with a message naming the
 * option, before anything starts.  What is left goes to fuse_new.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "model/model.h"
#include "options.h"

/* The sectorfs options as given, before they are checked. */
struct given {
	char *store;
	char *sector;
	char *provisioning;
	char *block_size;
	char *profile;
	char *pidfile;
	char *io_uring;
	char *serve;
	unsigned max_background;
	char *max_open;
	int nostats;
	int buffered;
	int no_default_permissions;
	int no_zero_offload;
	int nonempty;
	int show_help;
	int show_version;
};

#define OPT(t, p) { t, offsetof(struct given, p), 1 }
static const struct fuse_opt option_spec[] = {
	OPT("sector=%s", sector),
	OPT("provisioning=%s", provisioning),
	OPT("block_size=%s", block_size),
	OPT("profile=%s", profile),
	OPT("pidfile=%s", pidfile),
	OPT("max_background=%u", max_background),
	OPT("io_uring=%s", io_uring),
	OPT("serve=%s", serve),
	OPT("max_open=%s", max_open),
	OPT("nostats", nostats),
	OPT("buffered", buffered),
	OPT("no_zero_offload", no_zero_offload),
	OPT("nodefault_permissions", no_default_permissions),
	OPT("nonempty", nonempty),
	OPT("-h", show_help),
	OPT("--help", show_help),
	OPT("-V", show_version),
	OPT("--version", show_version),
	FUSE_OPT_END
};

static void usage(const char *prog)
{
	printf("usage: %s [options] STORE MOUNTPOINT\n"
	       "\n"
	       "Serve the disk images of STORE (raw files NAME with sidecars NAME.json) at\n"
	       "MOUNTPOINT, each behaving like a disk of its sector format and provisioning.\n"
	       "\n"
	       "sectorfs options:\n"
	       "    -o sector=FORMAT        512n, 512e or 4kn for images created in the mount (512n)\n"
	       "    -o provisioning=MODE    thin, zeroedthick or eagerzeroedthick for new images (thin)\n"
	       "    -o block_size=SIZE      allocation unit of new images, e.g. 64K, 1M (1M)\n"
	       "    -o no_zero_offload      new images zero by writing, not FALLOC_FL_ZERO_RANGE\n"
	       "    -o profile=NAME|PATH    device timing profile of new images: a shipped one\n"
	       "                            (sata-ssd, nvme-slow-small-writes, hdd-7200, ram)\n"
	       "                            or a profile JSON; requests complete no earlier\n"
	       "                            than that drive would complete them\n"
	       "    -o nostats              keep no statistics (no .stats directory)\n"
	       "    -o buffered             buffered I/O on the backing files (the host page\n"
	       "                            cache as a large volatile write cache) instead of\n"
	       "                            O_DIRECT\n"
	       "    -o pidfile=FILE         write the daemon's pid to FILE once the mount is up\n"
	       "    -o nonempty             mount even on a directory that is not empty or is\n"
	       "                            already a mount point (hiding what is there until\n"
	       "                            unmounted); without it such a mount point is refused\n"
	       "    -o max_open=N           at most N images with their files open at once (the\n"
	       "                            others are closed until used; default: as many as\n"
	       "                            the descriptor limit allows, at most 4096)\n"
	       "    -o max_threads=N        at most N worker threads (sectorfs default: 64)\n"
	       "    -o max_background=N     asynchronous requests the kernel may have in flight\n"
	       "                            (default: the number of worker threads, at least 12)\n"
	       "    -o io_uring=auto|on|off requests through FUSE over io_uring (Linux 6.14+,\n"
	       "                            fuse.enable_uring=Y): auto where the kernel offers it,\n"
	       "                            on or fail, off for /dev/fuse only (default: auto)\n"
	       "    -o serve=loop|threads   event loops doing the reads, overwrites\n"
	       "                            and flushes of disks with asynchronous I/O, helper\n"
	       "                            threads for the rest (loop, the default), or a\n"
	       "                            thread per request (threads)\n"
	       "    -o max_idle_threads=N   keep at most N idle worker threads, the others exit\n"
	       "                            (sectorfs default: 10)\n"
	       "    -o nodefault_permissions  turn off the kernel's permission checks, which\n"
	       "                            sectorfs turns on by default (default_permissions)\n"
	       "    -h, --help              this help, then the FUSE options\n"
	       "    -V, --version           print the version\n"
	       "\n"
	       "Statistics: MOUNTPOINT/.stats/NAME (text, write \"reset\" to zero),\n"
	       "MOUNTPOINT/.stats/NAME.json, and every image's in the Prometheus text format\n"
	       "in MOUNTPOINT/.stats/metrics.  As a systemd service: sectorfs@INSTANCE, with\n"
	       "/etc/sectorfs/INSTANCE.conf.  See sectorfs(1) and sectorfs.json(5).\n"
	       "\n", prog);
	fuse_cmdline_help();
	fuse_lib_help(&(struct fuse_args)FUSE_ARGS_INIT(0, NULL));
}

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct given *o = data;

	if (key == FUSE_OPT_KEY_NONOPT && !o->store) {
		o->store = strdup(arg);
		return 0;
	}
	return 1;
}

/* Fill the defaults for new images from -o options; 0 or -EINVAL with a message printed. */
static int parse_defaults(const struct given *o, struct sfs_sidecar *d)
{
	const struct { const char *key, *text; } set[] = {
		{ "sector", o->sector }, { "provisioning", o->provisioning }, { "block_size", o->block_size },
		{ "zero_offload", o->no_zero_offload ? "false" : NULL },
	};
	struct sfs_sidecar_draft dr;
	char err[256];

	sfs_sidecar_draft_init(&dr, NULL);
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++) {
		if (set[i].text && sfs_sidecar_draft_set(&dr, set[i].key, set[i].text, err, sizeof(err)) < 0) {
			fprintf(stderr, "sectorfs: -o %s\n", err);
			return -EINVAL;
		}
	}
	if (o->profile) {
		struct sfs_profile p;

		if (strlen(o->profile) >= sizeof(d->profile)) {
			fprintf(stderr, "sectorfs: -o profile=%s: too long\n", o->profile);
			return -EINVAL;
		}
		if (sfs_profile_load(AT_FDCWD, o->profile, &p, err, sizeof(err)) < 0) {
			fprintf(stderr, "sectorfs: -o profile=%s: %s\n", o->profile, err);
			return -EINVAL;
		}
	}
	if (sfs_sidecar_draft_done(&dr, false, "-o", d, err, sizeof(err)) < 0) {
		fprintf(stderr, "sectorfs: %s\n", err);
		return -EINVAL;
	}
	if (o->profile)
		snprintf(d->profile, sizeof(d->profile), "%s", o->profile);
	return 0;
}

/* Make *path absolute, from the current directory, so that it names the
 * same file after the daemon moves to "/".  0 or -ENOMEM, -errno of getcwd. */
static int absolute_path(char **path)
{
	char *cwd, *abs;

	if ((*path)[0] == '/')
		return 0;
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return -errno;
	if (asprintf(&abs, "%s/%s", cwd, *path) < 0) {
		free(cwd);
		return -ENOMEM;
	}
	free(cwd);
	free(*path);
	*path = abs;
	return 0;
}

/* -o io_uring=auto|on|off (auto if not given); 0 or -EINVAL, the reason printed. */
static int parse_uring(const char *text, enum sfs_uring_mode *out)
{
	if (!text || strcmp(text, "auto") == 0) {
		*out = SFS_URING_AUTO;
	} else if (strcmp(text, "on") == 0) {
		*out = SFS_URING_ON;
	} else if (strcmp(text, "off") == 0) {
		*out = SFS_URING_OFF;
	} else {
		fprintf(stderr, "sectorfs: -o io_uring=%s: expected auto, on or off\n", text);
		return -EINVAL;
	}
	return 0;
}

/* -o serve=loop|threads (loop if not given): *loop; 0 or -EINVAL, the reason printed. */
static int parse_serve(const char *text, bool *loop)
{
	if (!text || strcmp(text, "loop") == 0) {
		*loop = true;
	} else if (strcmp(text, "threads") == 0) {
		*loop = false;
	} else {
		fprintf(stderr, "sectorfs: -o serve=%s: expected loop or threads\n", text);
		return -EINVAL;
	}
	return 0;
}

/* -o max_open=N, N from 1 to 1000000; 0 or -EINVAL, the reason printed. */
static int parse_max_open(const char *text, unsigned long *out)
{
	char *end;

	*out = strtoul(text, &end, 10);
	if (!*text || *end || *out == 0 || *out > 1000000) {
		fprintf(stderr, "sectorfs: -o max_open=%s: expected a number of images from 1 to 1000000\n", text);
		return -EINVAL;
	}
	return 0;
}

/* The sectorfs options checked and turned into o's fields; 0 or -EINVAL, the reason printed. */
static int check_given(struct given *g, struct sfs_options *o)
{
	int rc;

	/* a path names the same file from the store, where sidecars' paths start */
	if (g->profile && strchr(g->profile, '/') && absolute_path(&g->profile) < 0)
		return -EINVAL;
	if (parse_defaults(g, &o->defaults) < 0 || parse_uring(g->io_uring, &o->uring) < 0 ||
	    parse_serve(g->serve, &o->loop) < 0)
		return -EINVAL;
	if (g->max_open && parse_max_open(g->max_open, &o->max_open) < 0)
		return -EINVAL;
	if (g->pidfile && (rc = absolute_path(&g->pidfile)) < 0) {
		fprintf(stderr, "sectorfs: -o pidfile=%s: %s\n", g->pidfile, strerror(-rc));
		return -EINVAL;
	}
	o->max_background = g->max_background;
	o->nostats = g->nostats;
	o->buffered = g->buffered;
	o->no_default_permissions = g->no_default_permissions;
	o->nonempty = g->nonempty;
	return 0;
}

int sfs_options_parse(int argc, char *argv[], struct sfs_options *o)
{
	struct given g = { 0 };
	int rc = -EINVAL;

	o->args = (struct fuse_args)FUSE_ARGS_INIT(argc, argv);
	for (int i = 1; i < argc; i++)
		if (strstr(argv[i], "max_threads="))
			o->max_threads_given = true;
	if (fuse_opt_parse(&o->args, &g, option_spec, opt_proc) < 0) {
		/* libfuse said why */
	} else if (g.show_version || g.show_help) {
		if (g.show_version)
			printf("sectorfs %s (libfuse %s)\n", PACKAGE_VERSION, fuse_pkgversion());
		else
			usage(argv[0]);
		o->done = true;
		rc = 0;
	} else if (fuse_parse_cmdline(&o->args, &o->cmdline) < 0) {
		/* libfuse said why */
	} else if (!g.store || !o->cmdline.mountpoint) {
		fprintf(stderr, "usage: %s [options] STORE MOUNTPOINT  (see --help)\n", argv[0]);
	} else {
		rc = check_given(&g, o);
	}
	o->store = g.store;
	o->pidfile = g.pidfile;
	free(g.sector);
	free(g.provisioning);
	free(g.block_size);
	free(g.profile);
	free(g.io_uring);
	free(g.serve);
	free(g.max_open);
	return rc;
}

void sfs_options_free(struct sfs_options *o)
{
	free(o->cmdline.mountpoint);
	fuse_opt_free_args(&o->args);
	free(o->store);
	free(o->pidfile);
}
