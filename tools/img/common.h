/* SPDX-License-Identifier: MIT */
/*
 * common.h - what the sectorfs-img commands share.
 *
 * Each command is one file and one entry of the table in main.c, as tmux
 * does it (toolutil.h): the entry carries the option template, the
 * argument names and the target, and tool_main() parses, answers --help,
 * counts and opens the target before the command's exec runs.  The
 * targets (target.c) are the ways a command holds an image:
 *   - IMG_TARGET_REF: STORE/NAME parsed and checked (ref.c), nothing
 *     opened (create, which makes the image);
 *   - IMG_TARGET_VIEW: the image's files looked at on disk without the
 *     lock (view.c), so it works while a daemon serves the store and
 *     changes nothing (info, map);
 *   - IMG_TARGET_SESSION: the store opened with sfs_store_open(), which
 *     takes the store lock (so it refuses while a daemon serves it,
 *     naming the holder), and the image got through it (session.c;
 *     resize, inflate);
 *   - IMG_TARGET_CHECK: a store directory, or else STORE/NAME parsed
 *     (check, which opens views and sessions as it goes).
 * Messages are "sectorfs-img: ..." on stderr (tool_error); usage errors
 * add the usage line and a pointer to --help.  A progress bar is drawn
 * only when stdout is a terminal; SIGINT/SIGTERM set a flag that long
 * operations poll (toolutil.h).
 */
#ifndef SFS_IMG_COMMON_H
#define SFS_IMG_COMMON_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "contract/names.h"
#include "store/recover.h"
#include "toolutil.h"
#include "map/map.h"
#include "image/image.h"
#include "contract/sidecar.h"
#include "store/store.h"

#define IMG_PROG "sectorfs-img"

extern const struct tool_cmd img_cmd_create, img_cmd_info, img_cmd_check,
	img_cmd_resize, img_cmd_inflate, img_cmd_map;

/* ---- STORE/NAME (ref.c) ---- */

struct img_ref {
	char store[PATH_MAX];          /* the store directory ("." when no slash) */
	char name[SFS_NAME_MAX + 1];   /* the image name */
	char path[PATH_MAX];           /* STORE/NAME as given, for messages */
};

/* Split arg into store and name and check both; prints the error.  0 or -1. */
int img_ref_parse(const char *arg, struct img_ref *ref);

/* Is store an existing directory?  0, or -1 with the problem printed. */
int img_store_exists(const char *store);

/* Holder of the store's lock: true when a daemon serves it (holder in buf). */
bool img_served(const char *store, char *holder, size_t len);

/* Print why a change is refused when the store is served; 0 when free, -1 when served. */
int img_refuse_if_served(const struct img_ref *ref);

/* img_refuse_if_served for a store directory. */
int img_refuse_store_if_served(const char *store);

/* ---- changing an image: the store, locked (session.c) ---- */

struct img_session {
	const struct img_ref *ref;
	struct sfs_store *store;       /* NULL when not open */
	struct sfs_image *im;          /* from sfs_store_lookup, or NULL */
	int store_fd, state_fd;
	bool quiet;                    /* IMG_S_QUIET */
	bool about_image;              /* what the core logs now concerns the image: its warnings
					* are shown (never when quiet; session.c says how it knows) */
};

#define IMG_S_GET 1u        /* also get the image */
#define IMG_S_QUIET 2u      /* do not show the core's warnings about the image */

/* Refuse if served, open the store (lock; the holder says "sectorfs-img CMD") and, with
 * IMG_S_GET, the image.  Prints errors.  0 or -1. */
int img_session_open(struct img_session *ss, const struct img_ref *ref, const char *cmd,
		     unsigned flags);

/* The log sink of the session (warnings about the image shown, its last error kept). */
struct sfs_log img_session_log(struct img_session *ss);

/* Drop the image and close the store (flushes); 0 or -1 (printed).  Closing a session that
 * is not open does nothing. */
int img_session_close(struct img_session *ss);

/* Rewrite STORE/NAME.json with sc; 0 or -1 (printed). */
int img_save_sidecar(struct img_session *ss, const struct sfs_sidecar *sc);

/* The progress of a store operation (sfs_store_progress): a bar per phase on stdout, the last
 * one ended when the data is in place; a phase does not start once interrupted. */
struct img_bars {
	struct tool_progress p;        /* first: the ctx tool_progress_bar_cb gets */
	bool on;
};

/* The sfs_store_progress of b (zeroed by the caller); img_bars_end after the call. */
struct sfs_store_progress img_bars_progress(struct img_bars *b);

/* End the bar still drawn, if any. */
void img_bars_end(struct img_bars *b);

/* ---- looking at an image: on-disk state, no lock (view.c) ---- */

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
	struct sfs_fileid bk_id;       /* its identity (fileid.h), when bk_rc is 0 */
	bool bk_data;                  /* a regular file that holds data (SEEK_DATA finds some) */
	bool served;
	char holder[512];
	const struct sfs_recover_item *pend;   /* what the next start does to the image
						* (recover.h), or NULL: the view shows
						* the image as it will leave it */
};

/* Open the store directory and look at every file of the image; -1 (printed) only when the
 * store itself cannot be opened. */
int img_view_open(struct img_view *v, const struct img_ref *ref);

/* As img_view_open, the image as the next start's recovery leaves it after pend (NULL: as
 * it is): a rename's files where they are now, a grow's or inflate's sidecar as it will be
 * rewritten, a backing file as it will be cut. */
int img_view_open_as(struct img_view *v, const struct img_ref *ref,
		     const struct sfs_recover_item *pend);

void img_view_close(struct img_view *v);

/* The image as the view shows it, for info and map: 0 with geometry, provisioning and flags
 * filled (from the map; from the sidecar when the image is only declared, *created false),
 * or -1 with the problem printed. */
int img_view_image(struct img_view *v, struct sfs_map_info *mi, bool *created);

/* The option template of the commands that show a view (info, map): --json alone. */
enum { IMG_OPT_JSON };
extern const struct tool_opt img_json_opts[];

/* "NAME.map: <what sfs_map_damage says>" of a map whose bitmap chunks fail their checksum. */
const char *img_view_damage_text(const struct img_view *v, char *buf, size_t len);

/* ---- the targets (target.c) ---- */

enum img_target_kind {
	IMG_TARGET_NONE,
	IMG_TARGET_REF,
	IMG_TARGET_VIEW,
	IMG_TARGET_SESSION,
	IMG_TARGET_CHECK,
};

/* What tool_main opened for an img command (item->target). */
struct img_target {
	const char *store_dir;         /* IMG_TARGET_CHECK given a directory, else NULL */
	struct img_ref ref;            /* every kind but a store directory */
	struct img_view view;          /* IMG_TARGET_VIEW */
	bool view_open;
	struct sfs_map_info mi;        /* IMG_TARGET_VIEW: the image it shows */
	bool created;                  /* IMG_TARGET_VIEW: false when only declared */
	struct img_session ss;         /* IMG_TARGET_SESSION, with the image */
};

/* The tool's open_target and close_target (toolutil.h). */
int img_target_open(struct tool_item *item);
int img_target_close(struct tool_item *item, int rc);

#endif
