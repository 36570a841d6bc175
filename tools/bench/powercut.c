/* SPDX-License-Identifier: MIT */
/*
 * powercut.c - sectorfs-bench powercut: the seed case of the failure
 * model as a table.
 *
 * Is 512-byte redo safe on a 512e drive across a power loss?  A 512e
 * drive without power-loss protection read-modify-writes its 4 KiB
 * physical sector for each 512-byte write; a cut in the middle can
 * destroy the other seven logical sectors, which the database flushed
 * long before.  Four configurations, each a volatile-cache image of its
 * own (doc/failures.md has the model):
 *
 *   e512-unsafe   512e, rmw_power_safe false, 512-byte redo blocks
 *   e512-safe     512e, rmw_power_safe true,  512-byte redo blocks
 *   k4            4kn,                         4096-byte redo blocks
 *   e512-4k       512e, rmw_power_safe false, 4096-byte redo blocks
 *
 * A round is what tests/mount/powercut-redo.sh does: in a region of its
 * own (starting at a sector drawn from the round's seed), write redo
 * block k with O_DIRECT, fdatasync, next, with the power set to go after
 * a number of writes drawn from the seed (cut-after-writes:N, N from 1 to
 * --max-writes, the policy --policy, random:0.5 by default: the last
 * write, never flushed, is lost in some rounds and kept in others).
 * Then power on, and every block whose fdatasync had returned is read
 * back: lost when it holds other data, unreadable when the read fails
 * with EIO; the cut's report gives the sectors it damaged.
 *
 * --rounds rounds a configuration, --repeat times (new images each time,
 * the configurations in an order that turns by one each repeat), each
 * round's seed drawn from --seed, the repeat, the configuration and the
 * round: the same seed gives the same table.  The figures are the
 * medians over the repeats, with their range.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "powercut.h"
#include "util/prng.h"
#include "util/units.h"

const struct pc_conf pc_confs[PC_NCONF] = {
	{ "e512-unsafe", "512e, rmw_power_safe false, 512 B", "512e unsafe, 512 B", "512e", "false", 512 },
	{ "e512-safe", "512e, rmw_power_safe true, 512 B", "512e safe, 512 B", "512e", "true", 512 },
	{ "k4", "4kn, 4096 B", "4kn, 4096 B", "4kn", NULL, 4096 },
	{ "e512-4k", "512e, rmw_power_safe false, 4096 B", "512e unsafe, 4096 B", "512e", "false", 4096 },
};

static const char powercut_help[] =
	"The seed case of the failure model: redo blocks written with O_DIRECT and an\n"
	"fdatasync after each, the power cut after a number of writes drawn from the seed,\n"
	"then every flushed block read back.  Four configurations, each an image with a\n"
	"volatile write cache: 512e with rmw_power_safe false and 512-byte blocks, the same\n"
	"with rmw_power_safe true, 4kn with 4096-byte blocks, 512e with 4096-byte blocks.\n"
	"Reported: rounds, flushed blocks, rounds with damage, flushed blocks lost (other\n"
	"data) and unreadable (EIO), sectors damaged; medians over the repeats.\n\n"
	"  --rounds N         rounds a configuration and repeat (default 20, at most 1000)\n"
	"  --repeat N         repeats, new images each (default 5, at most 20)\n"
	"  --seed N           the seed every round's is drawn from (default 9000)\n"
	"  --policy P         the cuts' policy (default random:0.5)\n"
	"  --max-writes N     the cut comes after 1 to N writes (default 48)\n"
	"  --store DIR        make the images in DIR and serve it with a daemon of our own\n"
	"                     (default: a temporary store, removed at the end)\n"
	"  --mount MNT        use the running sectorfs mounted at MNT\n"
	"  --daemon PATH      the sectorfs daemon (default: ../fs/sectorfs next to this\n"
	"                     program, else sectorfs in PATH)\n"
	"  --svg FILE         also draw the table as an SVG chart\n"
	"  --json             one JSON object with every figure\n"
	"  -h, --help         this help\n";

struct pcexp {
	struct pc_result res;
	char names[PC_NCONF][64];
	unsigned char *buf, *rbuf;
	struct tool_progress prog;
};

/* user.sectorfs.key of path = value; -1 (printed). */
static int set_attr(const char *path, const char *key, const char *value)
{
	char name[64];

	snprintf(name, sizeof(name), "user.sectorfs.%s", key);
	if (setxattr(path, name, value, strlen(value), 0) < 0) {
		tool_error("%s: cannot set %s to '%s': %s", path, name, value, strerror(errno));
		return -1;
	}
	return 0;
}

static bool power_is_off(const char *path)
{
	char v[16];
	ssize_t n = getxattr(path, "user.sectorfs.power", v, sizeof(v) - 1);

	return n == 3 && memcmp(v, "off", 3) == 0;
}

/* Block k's contents: "k:" repeated. */
static void fill(unsigned char *buf, unsigned bs, unsigned k)
{
	char tag[16];
	int n = snprintf(tag, sizeof(tag), "%u:", k);

	for (unsigned i = 0; i < bs; i++)
		buf[i] = (unsigned char)tag[i % (unsigned)n];
}

/* The sectors damaged and the writes lost by the last cut of image name; -1 (printed). */
static int cut_report(struct pcexp *x, const char *name, long long *damaged, long long *lost)
{
	json_t *j = testbed_stats(x->res.tb, name), *lc;

	if (!j)
		return -1;
	lc = json_object_get(json_object_get(j, "failures"), "last_cut");
	*damaged = json_integer_value(json_object_get(lc, "damaged_sectors"));
	*lost = json_integer_value(json_object_get(lc, "lost_writes"));
	json_decref(j);
	return 0;
}

/* Round r of configuration i in repeat rep on the open image fd (path); -1 (printed). */
static int round_once(struct pcexp *x, int fd, const char *path, unsigned rep, int i, unsigned r)
{
	const struct pc_conf *cf = &pc_confs[i];
	struct pc_counts *pc = &x->res.c[rep][i];
	uint64_t seed = sfs_draw(x->res.seed, rep, (uint64_t)i * PC_MAX_ROUNDS + r) >> 16;
	unsigned n = 1 + (unsigned)(sfs_draw(seed, 1, 0) % x->res.max_writes), k, flushed = 0, lost = 0, bad = 0;
	uint64_t stride = ((uint64_t)x->res.max_writes * cf->block + 4096 + 65535) / 65536 * 65536;
	uint64_t start = r * stride + (sfs_draw(seed, 2, 0) % 8) * 512 / cf->block * cf->block;
	char v[64];
	long long dmg, lostw;

	snprintf(v, sizeof(v), "%" PRIu64, seed);
	if (set_attr(path, "power_seed", v) < 0 || set_attr(path, "power_cut_policy", x->res.policy) < 0)
		return -1;
	snprintf(v, sizeof(v), "cut-after-writes:%u", n);
	if (set_attr(path, "power", v) < 0)
		return -1;
	for (k = 0; k < x->res.max_writes; k++) {
		fill(x->buf, cf->block, k);
		if (pwrite(fd, x->buf, cf->block, (off_t)(start + (uint64_t)k * cf->block)) != (ssize_t)cf->block ||
		    fdatasync(fd) < 0)
			break;
		flushed++;
	}
	if (!power_is_off(path)) {
		tool_error("%s: no power cut after %u writes (round %u)", path, n, r + 1);
		return -1;
	}
	if (set_attr(path, "power", "on") < 0)
		return -1;
	for (k = 0; k < flushed; k++) {
		ssize_t got = pread(fd, x->rbuf, cf->block, (off_t)(start + (uint64_t)k * cf->block));

		if (got < 0 && errno == EIO) {
			bad++;
			continue;
		}
		fill(x->buf, cf->block, k);
		if (got != (ssize_t)cf->block || memcmp(x->buf, x->rbuf, cf->block) != 0)
			lost++;
	}
	if (cut_report(x, x->names[i], &dmg, &lostw) < 0)
		return -1;
	pc->rounds++;
	pc->flushed += flushed;
	pc->lost += lost;
	pc->unreadable += bad;
	pc->damaged_rounds += lost + bad > 0;
	pc->last_lost += lostw > 0;
	pc->damaged_sectors += (uint64_t)dmg;
	return 0;
}

/* Every round of configuration i in repeat rep; 0, 1 interrupted, -1 (printed). */
static int run_conf(struct pcexp *x, unsigned rep, int i)
{
	char path[PATH_MAX + 80];
	struct bench_disk d;
	int rc = 0;

	testbed_path(x->res.tb, x->names[i], path, sizeof(path));
	if (bench_disk_open(&d, path, O_RDWR) < 0)
		return -1;
	x->res.c[rep][i].ran = true;
	for (unsigned r = 0; r < x->res.rounds && !rc; r++) {
		if (tool_interrupted) {
			rc = 1;
			break;
		}
		tool_progress_draw(&x->prog, "powercut: repeat %u of %u, %s: round %u of %u", rep + 1,
				   x->res.repeat, pc_confs[i].label, r + 1, x->res.rounds);
		rc = round_once(x, d.fd, path, rep, i, r);
	}
	bench_disk_close(&d);
	return rc;
}

/* Declare the four images of repeat rep (testbed_repeats); -1 (printed). */
static int declare(struct testbed *tb, void *arg, unsigned rep)
{
	struct pcexp *x = arg;

	for (int i = 0; i < PC_NCONF; i++) {
		const struct pc_conf *cf = &pc_confs[i];
		uint64_t stride = ((uint64_t)x->res.max_writes * cf->block + 4096 + 65535) / 65536 * 65536;
		uint64_t size = (x->res.rounds * stride + (1u << 20) - 1) >> 20;
		char sc[400], rmw[48] = "";

		snprintf(x->names[i], sizeof(x->names[i]), "powercut-%s-%u", cf->name, rep + 1);
		if (cf->rmw)
			snprintf(rmw, sizeof(rmw), ", \"rmw_power_safe\": %s", cf->rmw);
		snprintf(sc, sizeof(sc), "{ \"size\": \"%" PRIu64 "M\", \"sector\": \"%s\", \"provisioning\": "
			 "\"thin\", \"block_size\": \"1M\", \"write_cache\": \"volatile\"%s }\n", size, cf->sector, rmw);
		if (testbed_declare(tb, x->names[i], sc) < 0)
			return -1;
	}
	return 0;
}

enum {
	PC_ROUNDS, PC_REPEAT, PC_SEED, PC_POLICY, PC_MAXW,
};
static const struct tool_opt powercut_opts[] = {
	[PC_ROUNDS] = { "rounds", 0, TOOL_UINT, 1, PC_MAX_ROUNDS, .def = "20" },
	[PC_REPEAT] = { "repeat", 0, TOOL_UINT, 1, PC_MAX_REPEAT, .def = "5" },
	[PC_SEED] = { "seed", 0, TOOL_STRING, .def = "9000" },
	[PC_POLICY] = { "policy", 0, TOOL_STRING, .def = "random:0.5" },
	[PC_MAXW] = { "max-writes", 0, TOOL_UINT, 1, PC_MAX_WRITES, .def = "48" },
	{ NULL },
};

static int check_powercut(const struct tool_cmd *self, struct tool_item *item)
{
	const struct tool_value *o = item->opt;
	struct pc_result *r = &((struct pcexp *)item->data)->res;
	int rc;

	r->rounds = (unsigned)o[PC_ROUNDS].n;
	r->repeat = (unsigned)o[PC_REPEAT].n;
	r->max_writes = (unsigned)o[PC_MAXW].n;
	r->policy = o[PC_POLICY].arg;
	if ((rc = bench_parse_seed(self, o[PC_SEED].arg, &r->seed)) || (rc = bench_check_policy(self, r->policy)))
		return rc;
	return bench_check_testbed(self, item);
}

/* The configurations of repeat rep (testbed_repeats), in an order that turns by one each
 * repeat; 0, 1 interrupted, -1 (printed). */
static int run_repeat(void *arg, unsigned rep)
{
	int r = 0;

	for (int j = 0; j < PC_NCONF && !r; j++)
		r = run_conf(arg, rep, (j + (int)rep) % PC_NCONF);
	return r;
}

/* Every repeat, then the figures; the exit status. */
static int run_all(struct pcexp *x, struct testbed *tb, const struct tool_item *item)
{
	int r = testbed_repeats(tb, x->res.repeat, &x->res.nrep, declare, run_repeat, x);

	return bench_end(&x->prog, r, &x->res.interrupted, &powercut_figures, &x->res, item);
}

static int exec_powercut(const struct tool_cmd *self, struct tool_item *item)
{
	struct testbed *tb = &((struct bench_target *)item->target)->tb;
	struct pcexp *x = item->data;
	int rc = 1;

	(void)self;
	x->res.tb = tb;
	bench_begin(&x->prog);
	x->buf = bench_buf_alloc(4096, 4096);
	x->rbuf = bench_buf_alloc(4096, 4096);
	if (x->buf && x->rbuf)
		rc = run_all(x, tb, item);
	free(x->buf);
	free(x->rbuf);
	return rc;
}

TOOL_CMD(bench_cmd_powercut, "powercut", "[--store DIR | --mount MNT] [options]",
	 "the seed case: flushed redo blocks a power cut loses or damages, 512e against 4kn",
	 .help = powercut_help, .opts = powercut_opts, .target = BENCH_TARGET_TESTBED,
	 .shared = { bench_opts_testbed, bench_opts_daemon, bench_opts_svg, bench_opts_json },
	 .data_size = sizeof(struct pcexp), .check = check_powercut, .exec = exec_powercut);
