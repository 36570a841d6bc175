/* SPDX-License-Identifier: MIT */
/*
 * crashns.h - the model behind crash-namespace.sh: what each name of the
 * mount may hold after a kill -9 of the daemon.
 *
 * Four threads work through the mount, each on six names of its own
 * (t0-a .. t0-f for thread 0), so a thread has at most one operation in
 * flight and the model of its names is exact.  For every name the model
 * keeps the durable state: absent, or present with a size in 512-byte
 * sectors and, for every sector, a tag saying which data it holds:
 *
 *   tag = W << 20 | sector        W: one write (round, thread, counter),
 *                                  sector: where that write put this sector
 *   TAG_ZERO                       never written (reads as zeros)
 *   TAG_ANY                        unknown (junk was found there once)
 *
 * Every sector written carries its tag, the name and generation it was
 * written under and a filler derived from the tag (pattern.c), so a
 * sector read back says which data it is, or that it is junk.  Since a
 * write W goes to one name only, the same W under two names is data that
 * was duplicated.
 *
 * An operation is a list of steps (create: open O_CREAT|O_EXCL,
 * ftruncate, pwrite, fsync, close); the thread counts the steps that
 * returned.  After the crash, a name may be in the state after the steps
 * that returned or after one more (the one in flight); a write not yet
 * covered by an fsync leaves each of its sectors old or new.  A candidate
 * holds one such state for all six names of a thread, with two allowed
 * tags per sector (a and b, equal where there is no doubt).
 */
#ifndef CRASHNS_H
#define CRASHNS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define NT 4              /* threads */
#define NN 6              /* names per thread */
#define SECT 512          /* logical sector of the images (512n) */
#define MAXS 512          /* at most 256 KiB per image */
#define CREATE_S 128      /* a create makes 64 KiB */
#define TAG_ZERO 0ull
#define TAG_ANY UINT64_MAX
#define TAG_JUNK (UINT64_MAX - 1)   /* only in what was read back */
#define MAXKEYS 512
#define KEYLEN 96

/* The durable state of one name. */
struct nstate {
	bool exists;
	uint32_t nsect;
	uint64_t tag[MAXS];
};

enum opkind { OP_NONE, OP_CREATE, OP_OVERWRITE, OP_GROW, OP_RENAME, OP_REPLACE, OP_NOREPLACE, OP_UNLINK, OP_N };

struct op {
	enum opkind kind;
	int a, b;             /* name indexes: the name, and a rename's target */
	uint32_t off, len;    /* overwrite: sectors */
	uint32_t newsize;     /* grow: sectors */
	uint64_t w;           /* the write's id (create, overwrite) */
	uint32_t gen;         /* generation of name a that the write makes */
	bool target_existed;  /* rename with RENAME_NOREPLACE: EEXIST expected */
	int done;             /* steps that returned */
	bool idle;            /* stopped by the kill between two steps: none in flight */
	int err;              /* errno of a step that failed while the daemon lived, -1 for a
	                         success where a failure was due, else 0 */
};

/* One allowed state of a thread's six names. */
struct cand {
	bool exists[NN];
	uint32_t nsect[NN];
	uint64_t a[NN][MAXS], b[NN][MAXS];
};

/* What was read back through the mount. */
struct found {
	bool exists, unreadable;
	uint32_t nsect;
	uint64_t bytes;       /* st_size, which may be no multiple of SECT or too large */
	uint64_t tag[MAXS];
};

enum kind {
	K_PRESENCE, K_SIZE, K_CONTENT, K_DUP, K_TMPFILE, K_STRAYFILE, K_CHECK_AFTER,
	K_EEXIST, K_PROBE, K_UNOPENABLE, K_LISTING, K_OPERR, K_DAEMON, K_CHECK_BEFORE, K_N
};

/* Everything that lives from one round to the next (the STATE file). */
struct state {
	uint32_t magic;
	uint64_t seed;
	uint32_t round;              /* last round run */
	uint32_t rounds_checked;
	uint32_t fails[K_N];
	uint32_t bad_rounds;         /* rounds with a new failure */
	uint32_t round_found;        /* new failures in this round */
	struct nstate st[NT][NN];    /* before the in-flight operation */
	struct op inflight[NT];
	uint32_t gen[NT][NN];        /* per name: generations of data written under it */
	bool blocked[NT][NN];        /* create refused with EEXIST while absent: not used as a free name */
	uint32_t nkeys;              /* problems that stay (files, check results), reported once */
	char keys[MAXKEYS][KEYLEN];
	uint32_t run_ms, run_ops;    /* of the last run, for the round line */
};

extern const char *const kind_name[K_N], *const kind_id[K_N];
extern const char *const op_name[OP_N];

/* model.c */
void name_of(int t, int i, char *buf, size_t len);
int op_steps(const struct op *op);
const char *step_name(const struct op *op, int step);
void apply(const struct nstate st[NN], const struct op *op, int steps, struct cand *c);
void cand_to_state(const struct cand *c, struct nstate st[NN]);
void describe_op(FILE *f, int t, const struct op *op);
void describe_cand(FILE *f, const struct cand *c, int i);
void describe_found(FILE *f, const struct found *fd);
void describe_tag(char *buf, size_t len, uint64_t tag);
void state_init(struct state *s, uint64_t seed);
int state_load(const char *path, struct state *s);
int state_save(const char *path, const struct state *s);

/* pattern.c */
void fill_sector(unsigned char *p, uint64_t tag, const char *name, uint32_t gen);
uint64_t read_sector(const unsigned char *p);
uint64_t make_w(uint32_t round, int t, uint32_t n);

/* report.c: a failure is printed with the round's header (seed, round, every
 * thread's in-flight operation) before the first one of a phase. */
struct report {
	struct state *s;
	const char *phase;
	bool header_done;
	uint32_t found;              /* failures counted in this phase */
	uint32_t still;              /* lasting problems seen in an earlier round */
	uint32_t nkeys;              /* lasting problems found in this phase */
	char keys[MAXKEYS][KEYLEN];
	const enum kind *owned;      /* kinds whose lasting problems this phase looks for */
	int nowned;
};
void report_init(struct report *r, struct state *s, const char *phase, const enum kind *owned, int nowned);
/* A failure of kind k, printed on stdout and counted; with a key, it is a
 * problem that can stay from round to round (a file, a check result): it
 * counts when first seen, and again only if it comes back after a round
 * without it.  Returns true when it was printed (the caller may add lines
 * of detail), false for a problem already reported. */
__attribute__((format(printf, 4, 5)))
bool problem(struct report *r, enum kind k, const char *key, const char *fmt, ...);
void report_finish(struct report *r);

/* run.c, check.c */
int cmd_run(struct state *s, const char *mnt, int pid, uint32_t round);
int cmd_verify(struct state *s, const char *mnt, const char *store, const char *imgtool);
int cmd_precheck(struct state *s, const char *store, const char *imgtool);
int run_check(const char *imgtool, const char *path, char *out, size_t len);

#endif
