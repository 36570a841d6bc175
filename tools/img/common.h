/* SPDX-License-Identifier: MIT */
/*
 * common.h - what the sectorfs-img commands share.
 *
 * Each command is one file and one entry of the table in main.c (name,
 * usage line, summary, exec), as tmux does it.  The helpers here give
 * every command the same shape:
 *   - STORE/NAME arguments are parsed and checked once (img_ref_parse);
 *   - commands that change an image open the store with sfs_store_open(),
 *     which takes the store lock (so they refuse while a daemon serves
 *     it, naming the holder), and get the image through the store
 *     (img_session_*);
 *   - read-only commands look at the on-disk state without the lock
 *     (img_view_*), so they work while the store is served and change
 *     nothing;
 *   - messages are "sectorfs-img: ..." on stderr; usage errors add the
 *     usage line and a pointer to --help;
 *   - a progress bar (percent, MB/s, ETA) is drawn only when stdout is a
 *     terminal; SIGINT/SIGTERM set a flag that long operations poll.
 */
#ifndef SFS_IMG_COMMON_H
#define SFS_IMG_COMMON_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "toolutil.h"
#include "allocmap.h"
#include "image.h"
#include "imgops.h"
#include "sidecar.h"
#include "store.h"

#define IMG_PROG "sectorfs-img"

extern const struct tool_cmd img_cmd_create, img_cmd_info, img_cmd_check,
	img_cmd_resize, img_cmd_inflate, img_cmd_map;

/* ---- messages ---- */

/* "sectorfs-img: MSG" on stderr. */
void img_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "sectorfs-img CMD: MSG", the usage line and a --help hint on stderr; returns rc. */
int img_usage_error(const struct tool_cmd *cmd, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Report a getopt failure (unknown option, missing argument); returns rc. */
int img_bad_option(const struct tool_cmd *cmd, int rc, int opt, char **argv);

/* Parse a size argument named what ("-s"); prints the error.  0 or -1. */
int img_parse_size(const struct tool_cmd *cmd, const char *what, const char *s, uint64_t *out);

/* "8G (8589934592 bytes)" style text for people. */
const char *img_fmt_size(uint64_t bytes, char *buf, size_t len);

/* ---- STORE/NAME ---- */

struct img_ref {
	char store[PATH_MAX];          /* the store directory ("." when no slash) */
	char name[SFS_NAME_MAX + 1];   /* the image name */
	char path[PATH_MAX];           /* STORE/NAME as given, for messages */
};

/* Split arg into store and name and check both; prints the error.  0 or -1. */
int img_ref_parse(const char *arg, struct img_ref *ref);

/* Parse "[--FLAG] [--help] STORE/NAME", the arguments of the commands that
 * take one image (flag NULL: no flag).  True when the command goes on, with
 * *flag_set and ref filled; false with *status the exit status to return
 * (0 after --help, usage_rc after a usage error, which is printed). */
bool img_parse_one_image(const struct tool_cmd *cmd, const char *help, const char *flag, int usage_rc,
			 int argc, char **argv, bool *flag_set, struct img_ref *ref, int *status);

/* Is store an existing directory?  0, or -1 with the problem printed. */
int img_store_exists(const char *store);

/* Holder of the store's lock: true when a daemon serves it (holder in buf). */
bool img_served(const char *store, char *holder, size_t len);

/* Print why a change is refused when the store is served; 0 when free, -1 when served. */
int img_refuse_if_served(const struct img_ref *ref);

/* ---- changing an image: the store, locked ---- */

struct img_session {
	const struct img_ref *ref;
	struct sfs_store *store;
	struct sfs_image *im;          /* from sfs_store_get, or NULL */
	int store_fd, state_fd;
	bool quiet;                    /* IMG_S_QUIET */
	char lasterr[1024];            /* last core error about this image */
};

#define IMG_S_GET 1u        /* also get the image */
#define IMG_S_QUIET 2u      /* do not show the core's warnings about the image */

/* Refuse if served, open the store (lock) and, with IMG_S_GET, the image.  Prints errors.
 * 0 or -1. */
int img_session_open(struct img_session *ss, const struct img_ref *ref, const char *cmd,
		     unsigned flags);

/* The log sink of the session (warnings about the image shown, its last error kept). */
struct sfs_log img_session_log(struct img_session *ss);

/* Drop the image and close the store (flushes); 0 or -1 (printed). */
int img_session_close(struct img_session *ss);

/* Rewrite STORE/NAME.json with sc; 0 or -1 (printed). */
int img_save_sidecar(struct img_session *ss, const struct sfs_sidecar *sc);

/* ---- looking at an image: on-disk state, no lock ---- */

struct img_view {
	const struct img_ref *ref;
	int store_fd, state_fd;        /* state_fd -1 without .sectorfs */
	bool sc_present;               /* NAME.json exists */
	int sc_rc;                     /* sfs_sidecar_load result */
	struct sfs_sidecar sc;
	char sc_err[512];
	int map_rc;                    /* sfs_map_open result (-ENOENT: missing) */
	struct sfs_map *map;           /* read-only, salvaged: see sfs_map_damage(map) */
	char map_err[512];
	int bk_rc;                     /* lstat of the backing file (-ENOENT: missing) */
	struct stat bk;
	bool served;
	char holder[512];
};

/* Open the store directory and look at every file of the image; -1 (printed) only when the
 * store itself cannot be opened. */
int img_view_open(struct img_view *v, const struct img_ref *ref);

void img_view_close(struct img_view *v);

/* The image as the view shows it, for info and map: 0 with geometry, provisioning and flags
 * filled (from the map; from the sidecar when the image is only declared, *created false),
 * or -1 with the problem printed. */
int img_view_image(struct img_view *v, struct sfs_map_info *mi, bool *created);

/* ---- progress and interruption ---- */

struct img_progress {
	const char *label;
	bool tty;
	uint64_t t0, last;              /* ns */
	uint64_t done, total;
	bool drawn;
};

/* Start a bar labelled label (drawn only when stdout is a terminal). */
void img_progress_start(struct img_progress *p, const char *label);

/* sfs_progress_fn: redraws at most 10 times a second; returns 1 once interrupted. */
int img_progress_cb(void *ctx, uint64_t done, uint64_t total);

/* Finish the bar line (if one was drawn). */
void img_progress_end(struct img_progress *p);

#endif
