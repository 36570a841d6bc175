/* SPDX-License-Identifier: MIT */
/*
 * stats.h - per-image I/O statistics: counters, histograms, latency.
 *
 * The image layer records every I/O here; the daemon's .stats files and
 * sectorfs-stat read snapshots.  Recording is lock-free: counters live in
 * a few cache-line-aligned shards picked by the calling CPU, so threads
 * on different CPUs never write the same cache line; a snapshot sums the
 * shards.  Counts are exact under concurrency (atomic adds); a snapshot
 * taken during I/O may mix I/Os in flight but never tears a counter.
 *
 * Latency is kept per class in log-linear histograms of nanoseconds
 * (each power of two split into SFS_LAT_SUB linear sub-buckets), so a
 * percentile read from the histogram is within 1/SFS_LAT_SUB/2 of the
 * true value (about 3%).  The mean and max are exact.
 *
 * Interval tools subtract two snapshots.  Each snapshot says which run of
 * counters it belongs to: reset_generation changes exactly when the
 * counters start again from zero (creation, reset), and the daemon's
 * identity (its start time and pid) tells one daemon from the next.  A
 * snapshot never mixes counters from before a reset with the generation
 * after it, so two snapshots with the same generation and daemon can be
 * subtracted counter by counter without any going negative.
 *
 * Besides the counters, each image keeps its last SFS_RECENT_MAX refused
 * I/Os and its last SFS_RECENT_MAX read-modify-write writes, each with
 * the process that asked (recent.h); a reset clears them too.
 */
#ifndef SFS_STATS_H
#define SFS_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fail/fail.h"
#include "contract/geometry.h"
#include "recent.h"

enum sfs_lat_class {
	SFS_LAT_READ = 0,
	SFS_LAT_WRITE_OVERWRITE = 1,
	SFS_LAT_WRITE_FIRST = 2,
	SFS_LAT_FLUSH = 3,
	SFS_LAT_NCLASS = 4,
};

/* I/O size histogram: bucket i holds sizes in [512 << i, 512 << (i+1)), last is >= 1 MiB. */
#define SFS_SIZE_NBUCKET 12   /* <1K(512..), 1K, 2K, 4K, ... 512K, >=1M */
#define SFS_LAT_SUB_BITS 4
#define SFS_LAT_SUB (1u << SFS_LAT_SUB_BITS)
#define SFS_LAT_NBUCKET 640   /* covers 0 .. ~2^43 ns (~2.4 h); larger values go in the last bucket */

struct sfs_stats;  /* opaque, recorded into concurrently */

/* Everything a snapshot holds; plain numbers, safe to copy. */
struct sfs_stats_snap {
	uint64_t reads, writes, bytes_read, bytes_written;
	uint64_t flushes, discards, write_zeroes, discard_bytes, write_zeroes_bytes;
	uint64_t first_writes, overwrites, zeroed_bytes;
	uint64_t misaligned_rejected, rmw_writes, out_of_range;
	uint64_t bounced_bytes;      /* data copied through a bounce buffer for O_DIRECT (debug) */
	uint64_t size_hist[SFS_SIZE_NBUCKET];        /* reads + writes, accepted I/O */
	uint64_t align_hist[SFS_ALIGN_NCLASS];       /* every I/O, rejected ones too */
	struct {
		uint64_t count, sum_ns, max_ns;
		uint64_t hist[SFS_LAT_NBUCKET];
	} lat[SFS_LAT_NCLASS];
	uint64_t model_delay_ns[SFS_LAT_NCLASS];     /* time the device profile added, per class */
	uint64_t elapsed_ns;  /* since creation or last reset */
	uint64_t reset_generation;   /* changes at creation and each reset: unique in this process */
	uint64_t daemon_start;       /* this process's identity: its start, Unix seconds ... */
	uint64_t daemon_pid;         /* ... and pid (see sfs_stats_origin) */
};

/* Eager zeroing of an eagerzeroedthick image (sfs_image_zeroing). */
enum sfs_zeroing {
	SFS_ZEROING_NONE,      /* not eagerzeroedthick */
	SFS_ZEROING_DONE,      /* every block zeroed, recorded in the map */
	SFS_ZEROING_RUNNING,   /* in the background */
	SFS_ZEROING_STOPPED,   /* not finished, not running: resumes at the next open */
	SFS_ZEROING_FAILED,    /* ended with an error: resumes at the next open */
};

/* The last refused and read-modify-write I/Os of an image, newest first (sfs_stats_recent). */
struct sfs_stats_recent {
	size_t nrefused, nrmw;
	struct sfs_recent_io refused[SFS_RECENT_MAX];   /* misaligned (EINVAL), out of range (ENOSPC),
	                                                   a media error (EIO) */
	struct sfs_recent_io rmw[SFS_RECENT_MAX];       /* accepted writes covering a physical sector in part */
};

/* What the renderers print besides the counters. */
struct sfs_stats_info {
	const char *name;
	struct sfs_geom geom;
	enum sfs_prov prov;
	bool zero_offload;            /* the sidecar asks for zero offload */
	int zero_offload_fallback;    /* ... which is not in force: the errno FALLOC_FL_ZERO_RANGE
	                                 fails with on the backing filesystem (zeros are written); 0 */
	bool direct;                  /* backing I/O is O_DIRECT */
	uint64_t allocated_blocks, total_blocks;
	enum sfs_zeroing zeroing;
	uint64_t zeroing_done, zeroing_total;   /* bytes */
	int zeroing_err;                        /* -errno when FAILED */
	const char *profile;                    /* the device profile in force, NULL for none */
	const char *transport;                  /* how requests reach the daemon, or NULL */
	const char *serve;                      /* how the daemon serves them ("loop", "threads"), or NULL */
	const struct sfs_stats_recent *recent;  /* the recent I/O lists, or NULL: shown empty */
	const struct sfs_fail_status *fail;     /* the failure state (fail.h), NULL for none: not shown */
	const struct sfs_fail_cutinfo *last_cut; /* its last cut (with fail; NULL: not shown) */
};

/* Why zeroing fell back to writing zeros, for the errno e (> 0) FALLOC_FL_ZERO_RANGE failed
 * with: "the backing filesystem has no FALLOC_FL_ZERO_RANGE: STRERROR", into buf. */
void sfs_stats_zero_fallback_reason(int e, char *buf, size_t len);

/* How zeroing is done, for info: "on", "off", or "fell back to writing zeros (REASON)", into
 * buf. */
void sfs_stats_zero_offload_text(const struct sfs_stats_info *info, char *buf, size_t len);

/* Allocate zeroed stats of reset generation generation (from sfs_stats_next_generation), their
 * elapsed time counted from start_ns (sfs_now_ns, clock.h): stats made when first needed that
 * go on from the empty snapshots shown before.  0 or -ENOMEM. */
int sfs_stats_new_at(uint64_t generation, uint64_t start_ns, struct sfs_stats **out);

/* Allocate stats that hold what snap (its counters, max fields and reset_generation) and recent
 * (NULL: empty lists) say, their elapsed time counted from start_ns: what a snapshot, the recent
 * lists and sfs_stats_start of other stats gave, made again (cell.c unpacks so).  0 or
 * -ENOMEM. */
int sfs_stats_new_from(const struct sfs_stats_snap *snap, const struct sfs_stats_recent *recent, uint64_t start_ns,
		       struct sfs_stats **out);

/* When st's elapsed time starts (sfs_now_ns): its creation or last reset. */
uint64_t sfs_stats_start(const struct sfs_stats *st);

/* Is 64-bit slot i of a struct sfs_stats_snap a counter (a max field included), rather than
 * what a snapshot fills (elapsed_ns, reset_generation, daemon_start, daemon_pid) or past its
 * end? */
bool sfs_stats_is_counter(size_t i);

/* A reset generation larger than every one handed out so far in this process. */
uint64_t sfs_stats_next_generation(void);

/* The snapshot of stats never recorded into: every counter 0, of generation generation, the
 * elapsed time since start_ns, this process's identity. */
void sfs_stats_snapshot_empty(uint64_t generation, uint64_t start_ns, struct sfs_stats_snap *snap);

/* Free stats (NULL is fine). */
void sfs_stats_free(struct sfs_stats *st);

/* Zero every counter, restart the elapsed clock and give the stats a new, larger reset_generation. */
void sfs_stats_reset(struct sfs_stats *st);

/* Run a command written to a text stats file (buf, len bytes, any offset): "reset", optionally
 * followed by spaces and newlines, resets st; 0, or -EINVAL for anything else (nothing changes). */
int sfs_stats_command(struct sfs_stats *st, const char *buf, size_t len);

/* Is buf (len bytes) a command sfs_stats_command runs?  0 ("reset"), or -EINVAL. */
int sfs_stats_command_check(const char *buf, size_t len);

/* This process's identity for interval tools, fixed by the first call (snapshots call it too):
 * the time of that call in Unix seconds and getpid(). */
void sfs_stats_origin(uint64_t *start, uint64_t *pid);

/* Record an accepted read of len bytes at off that took lat_ns. */
void sfs_stats_read(struct sfs_stats *st, uint64_t off, uint64_t len, uint64_t lat_ns);

/* Record an accepted write; first = touched a never-written block, rmw = partial physical sector
 * (an rmw write is also kept in the recent list, with this thread's requester). */
void sfs_stats_write(struct sfs_stats *st, uint64_t off, uint64_t len, uint64_t lat_ns,
		     bool first, bool rmw);

/* Record an op refused for alignment with EINVAL (counted in misaligned_rejected and the alignment
 * histogram, kept in the recent refused list with this thread's requester). */
void sfs_stats_misaligned(struct sfs_stats *st, enum sfs_io_op op, uint64_t off, uint64_t len);

/* Record an op refused for range (past the end) with ENOSPC (counted in out_of_range, kept in the
 * recent refused list with this thread's requester). */
void sfs_stats_out_of_range(struct sfs_stats *st, enum sfs_io_op op, uint64_t off, uint64_t len);

/* Record a read refused with EIO for a bad or damaged sector (a media error, fail.h): kept in
 * the recent refused list with this thread's requester; the failure state counts it. */
void sfs_stats_media_error(struct sfs_stats *st, enum sfs_io_op op, uint64_t off, uint64_t len);

/* Record a flush (fsync/fdatasync) that took lat_ns. */
void sfs_stats_flush(struct sfs_stats *st, uint64_t lat_ns);

/* Add ns to the time the device model held requests of class c back (included in their latency). */
void sfs_stats_model_delay(struct sfs_stats *st, enum sfs_lat_class c, uint64_t ns);

/* Record a discard of len bytes. */
void sfs_stats_discard(struct sfs_stats *st, uint64_t len);

/* Record a write-zeroes request of len bytes. */
void sfs_stats_write_zeroes(struct sfs_stats *st, uint64_t len);

/* Add bytes zeroed by lazy zeroing or zero-range to zeroed_bytes. */
void sfs_stats_zeroed(struct sfs_stats *st, uint64_t bytes);

/* Add bytes of request data copied through a bounce buffer (a buffer O_DIRECT cannot take). */
void sfs_stats_bounced(struct sfs_stats *st, uint64_t bytes);

/* Sum the shards into snap, with the elapsed time, reset generation and process identity;
 * a snapshot that would overlap a reset is taken again, so it is all before or all after it. */
void sfs_stats_snapshot(const struct sfs_stats *st, struct sfs_stats_snap *snap);

/* Copy the recent refused and rmw lists into out, newest first; like a snapshot, all from before
 * or all from after any reset. */
void sfs_stats_recent(const struct sfs_stats *st, struct sfs_stats_recent *out);

/* Percentile q (0..1) of a latency class from a snapshot, in nanoseconds (0 when empty). */
uint64_t sfs_stats_percentile(const struct sfs_stats_snap *snap, enum sfs_lat_class c, double q);

/* Size-histogram bucket of an I/O length. */
unsigned sfs_stats_size_bucket(uint64_t len);

/* Latency-histogram bucket of a value in ns, and the lower bound of a bucket. */
unsigned sfs_stats_lat_bucket(uint64_t ns);
uint64_t sfs_stats_lat_bucket_low(unsigned b);

/* Render the text file for people into a malloc'd NUL-terminated string (*out, *len); 0 or -ENOMEM. */
int sfs_stats_render_text(const struct sfs_stats_snap *snap, const struct sfs_stats_info *info,
			  char **out, size_t *len);

/* Render the JSON file into a malloc'd NUL-terminated string; 0 or -ENOMEM. */
int sfs_stats_render_json(const struct sfs_stats_snap *snap, const struct sfs_stats_info *info,
			  char **out, size_t *len);

/* The keys of the JSON file's histograms and latency classes (render.c), which
 * sfs_stats_parse_json reads back. */
extern const char *const sfs_stats_size_labels[SFS_SIZE_NBUCKET];
extern const char *const sfs_stats_align_labels[SFS_ALIGN_NCLASS];
extern const char *const sfs_stats_lat_keys[SFS_LAT_NCLASS];

/* What the JSON file of an image says, read back. */
struct sfs_stats_parsed {
	char name[1024];              /* "name": the image's name as UTF-8 ("?" when absent) */
	uint64_t allocated_blocks, total_blocks;
	struct sfs_stats_snap snap;   /* every counter and histogram; a latency class's sum_ns is
				       * its mean (rounded to the ns) times its count */
};

/* Parse text (len bytes), a JSON file sfs_stats_render_json wrote, into *out.  0; -EPROTO when
 * it has no reset_generation (a daemon older than this reader); -EINVAL when it is not JSON or
 * lacks or mangles a key (err says which). */
int sfs_stats_parse_json(const char *text, size_t len, struct sfs_stats_parsed *out, char *err,
			 size_t errlen);

/* What the JSON file of an image says of its recent lists, read back. */
struct sfs_stats_parsed_recent {
	char name[1024];                  /* as in struct sfs_stats_parsed */
	struct sfs_stats_recent recent;   /* each entry's time_ns, op, off, len, pid, comm, and
					   * (refused) err; an op or error the file names and this
					   * reader does not is SFS_OP_NCLASS or 0, shown as "?" */
};

/* Parse refused_recent and rmw_recent of text (len bytes), a JSON file sfs_stats_render_json
 * wrote, into *out.  0; -EPROTO when it lacks either list (a daemon older than this reader);
 * -EINVAL when it is not JSON or an entry lacks or mangles a key (err says which list). */
int sfs_stats_parse_recent_json(const char *text, size_t len, struct sfs_stats_parsed_recent *out,
				char *err, size_t errlen);

/* The recent lists of the image name, as one compact JSON object, {"image": name,
 * "refused_recent": [...], "rmw_recent": [...]}, the lists as NAME.json holds them, into a
 * malloc'd NUL-terminated string (*out, *len, no newline); 0 or -ENOMEM. */
int sfs_stats_render_recent_json(const char *name, const struct sfs_stats_recent *r, char **out,
				 size_t *len);

/* How the stats name the error of a refused I/O: "EINVAL", "ENOSPC", "EIO", "?" for any other. */
const char *sfs_stats_refusal_name(int err);

/* How the stats show a wall-clock time, ns since the epoch: "YYYY-MM-DDTHH:MM:SS.uuuuuuZ"
 * (ISO 8601, UTC; "?.uuuuuuZ" when it cannot be told) into buf of len bytes; returns buf. */
const char *sfs_stats_iso_time(uint64_t ns, char *buf, size_t len);

#endif
