/* SPDX-License-Identifier: MIT */
/*
 * options.h - the daemon's command line (options.c): what sectorfs.c sets
 * up the store, the mount and the transport with.
 */
#ifndef SFS_OPTIONS_H
#define SFS_OPTIONS_H

#include <stdbool.h>

#include "fuse_version.h"
#include <fuse_lowlevel.h>

#include "contract/sidecar.h"
#include "xport.h"

struct sfs_options {
	struct fuse_args args;             /* what is left for fuse_new */
	struct fuse_cmdline_opts cmdline;  /* libfuse's own: the mount point, -f, -s, threads */
	bool done;                         /* --help or --version answered: exit 0 */
	bool max_threads_given;            /* -o max_threads= was on the command line */
	char *store;                       /* STORE as given */
	char *pidfile;                     /* -o pidfile=, made absolute; NULL if not given */
	struct sfs_sidecar defaults;       /* for images created in the mount */
	enum sfs_uring_mode uring;         /* -o io_uring= */
	bool loop;                         /* -o serve=loop */
	unsigned long max_open;            /* -o max_open=, 1 to 1000000; 0 if not given */
	unsigned max_background;           /* -o max_background=; 0 if not given */
	bool nostats, buffered, no_default_permissions, nonempty;
};

/*
 * Read argc, argv into *o (zeroed by the caller): 0 to go on, or 0 with
 * o->done set once --help or --version has been printed; -EINVAL if the
 * command line is refused, the reason printed on stderr (by libfuse for
 * its own options).  sfs_options_free(o) afterwards in every case.
 */
int sfs_options_parse(int argc, char *argv[], struct sfs_options *o);

/* Free what sfs_options_parse allocated in o. */
void sfs_options_free(struct sfs_options *o);

#endif
