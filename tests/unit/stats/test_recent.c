/* SPDX-License-Identifier: MIT */
/*
 * test_recent.c - unit tests of core/stats/recent.c and of the recent lists in
 * core/stats/stats.c and core/stats/render.c.
 *
 * The requester is per thread; command names come from /proc/PID/comm at
 * the moment of recording (a name changed later, a task that is gone and
 * a descriptor cached for it), the ring keeps the newest 64 in order and
 * forgets at clear, concurrent writers never leave a torn entry for a
 * concurrent reader, and the stats record refused and read-modify-write
 * I/Os there, clear them at reset and render them as JSON and text.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "stats/recent.h"
#include "util/clock.h"
#include "stats/stats.h"

static int32_t my_tid(void)
{
	return (int32_t)syscall(SYS_gettid);
}

static void set_name(const char *name)
{
	cr_assert_eq(prctl(PR_SET_NAME, name, 0, 0, 0), 0);
}

static struct sfs_recent *ring(void)
{
	struct sfs_recent *r = calloc(1, sizeof(*r));

	cr_assert_not_null(r);
	return r;
}

/* ---- requester and command names ---- */

Test(recent, requester_is_per_thread_and_recorded)
{
	struct sfs_recent *r = ring();
	struct sfs_recent_io v[SFS_RECENT_MAX];

	set_name("sfs-req-a");
	sfs_recent_add(r, SFS_OP_READ, 1, 2, EINVAL);         /* before any requester is named */
	sfs_requester_set(my_tid());
	sfs_recent_add(r, SFS_OP_DISCARD, 4096, 100, ENOSPC);
	sfs_requester_set(-5);
	sfs_recent_add(r, SFS_OP_WRITE, 8192, 512, 0);

	cr_assert_eq(sfs_recent_list(r, v), 3);
	cr_assert_eq(v[0].op, SFS_OP_WRITE);
	cr_assert_eq(v[0].pid, 0, "a pid that is not positive names nobody");
	cr_assert_str_eq(v[0].comm, "");
	cr_assert_eq(v[1].op, SFS_OP_DISCARD);
	cr_assert_eq(v[1].off, 4096);
	cr_assert_eq(v[1].len, 100);
	cr_assert_eq(v[1].err, ENOSPC);
	cr_assert_eq(v[1].pid, my_tid());
	cr_assert_str_eq(v[1].comm, "sfs-req-a");
	cr_assert_eq(v[2].op, SFS_OP_READ);
	cr_assert_eq(v[2].pid, 0, "no requester until one is named");
	cr_assert_str_eq(v[2].comm, "", "no requester, no command name");
	cr_assert_geq(v[1].time_ns, v[2].time_ns);
	cr_assert_gt(v[2].time_ns, (uint64_t)time(NULL) * 1000000000u - 3600ull * 1000000000u,
		     "time is CLOCK_REALTIME");
	free(r);
}

/* The name at the moment of recording: a later change of name (as an exec makes) shows in the
 * next entry, not in the one already recorded, although the descriptor stays cached. */
Test(recent, comm_is_read_when_recorded)
{
	struct sfs_recent *r = ring();
	struct sfs_recent_io v[SFS_RECENT_MAX];
	char comm[SFS_COMM_LEN];

	sfs_requester_set(my_tid());
	set_name("first-name");
	sfs_recent_add(r, SFS_OP_WRITE, 0, 512, 0);
	set_name("second-name");
	sfs_recent_add(r, SFS_OP_WRITE, 512, 512, 0);
	cr_assert_eq(sfs_recent_list(r, v), 2);
	cr_assert_str_eq(v[1].comm, "first-name");
	cr_assert_str_eq(v[0].comm, "second-name");
	set_name("fifteen-chars-x");
	cr_assert_eq(sfs_comm_of(my_tid(), comm), 0);
	cr_assert_str_eq(comm, "fifteen-chars-x", "the longest name a process can set, without the newline");
	free(r);
}

/* A task that is gone has no name, even through the descriptor cached while it lived. */
Test(recent, comm_of_a_task_that_is_gone)
{
	char comm[SFS_COMM_LEN];
	int fds[2], st;
	pid_t pid;
	char c;

	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_NAME, "sfs-child", 0, 0, 0);
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	cr_assert_eq(read(fds[0], &c, 1), 1);
	cr_assert_eq(sfs_comm_of(pid, comm), 0);       /* now cached for this thread */
	cr_assert_str_eq(comm, "sfs-child");
	kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert_eq(sfs_comm_of(pid, comm), -ESRCH, "a reaped task has no name");
	cr_assert_str_eq(comm, "");
	cr_assert_eq(sfs_comm_of(0, comm), -ESRCH);
	close(fds[0]);
	close(fds[1]);
}

/* ---- the ring ---- */

Test(recent, keeps_the_newest_64_in_order_and_clears)
{
	struct sfs_recent *r = ring();
	struct sfs_recent_io v[SFS_RECENT_MAX];
	size_t n;

	cr_assert_eq(sfs_recent_list(r, v), 0, "a zeroed ring is empty");
	for (uint64_t i = 0; i < 100; i++)
		sfs_recent_add(r, SFS_OP_WRITE, i * 512, 512, EINVAL);
	n = sfs_recent_list(r, v);
	cr_assert_eq(n, SFS_RECENT_MAX);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(v[i].off, (99 - i) * 512, "entry %zu: offset %lu", i, (unsigned long)v[i].off);
	sfs_recent_clear(r);
	cr_assert_eq(sfs_recent_list(r, v), 0, "cleared");
	sfs_recent_add(r, SFS_OP_WRITE_ZEROES, 7, 8, 0);
	cr_assert_eq(sfs_recent_list(r, v), 1, "only what came after the clear");
	cr_assert_eq(v[0].off, 7);
	cr_assert_str_eq(sfs_io_op_name(v[0].op), "write_zeroes");
	cr_assert_str_eq(sfs_io_op_name(99), "?");
	free(r);
}

/* Writers and a reader at once: every listed entry is whole (its length is a checksum of its
 * offset and pid), and entries come newest first (each writer's offsets go down). */
#define NWRITER 6
#define PER_WRITER 20000

struct race {
	struct sfs_recent *r;
	int id;
	volatile int *stop;
	unsigned long torn, disorder, lists;
};

static uint64_t check_of(uint64_t off, int32_t pid)
{
	return (off * 0x9E3779B97F4A7C15ull) ^ (uint64_t)pid;
}

static void *writer(void *p)
{
	struct race *w = p;

	sfs_requester_set(1000 + w->id);
	for (uint64_t i = 0; i < PER_WRITER; i++) {
		uint64_t off = ((uint64_t)w->id << 32) | i;

		sfs_recent_add(w->r, SFS_OP_WRITE, off, check_of(off, 1000 + w->id), 0);
	}
	return NULL;
}

static void *reader(void *p)
{
	struct race *rd = p;
	struct sfs_recent_io *v = malloc(SFS_RECENT_MAX * sizeof(*v));

	cr_assert_not_null(v);
	while (!*rd->stop) {
		size_t n = sfs_recent_list(rd->r, v);
		uint64_t last[NWRITER];

		for (int k = 0; k < NWRITER; k++)
			last[k] = UINT64_MAX;
		for (size_t i = 0; i < n; i++) {
			int id = (int)(v[i].off >> 32);

			if (id < 0 || id >= NWRITER || v[i].len != check_of(v[i].off, v[i].pid) ||
			    v[i].pid != 1000 + id) {
				rd->torn++;
				continue;
			}
			if ((v[i].off & 0xffffffffu) >= last[id])
				rd->disorder++;
			last[id] = v[i].off & 0xffffffffu;
		}
		rd->lists++;
	}
	free(v);
	return NULL;
}

Test(recent, concurrent_writers_never_tear_an_entry)
{
	struct sfs_recent *r = ring();
	struct sfs_recent_io v[SFS_RECENT_MAX];
	pthread_t wt[NWRITER], rt;
	struct race w[NWRITER], rd = { 0 };
	volatile int stop = 0;

	rd.r = r;
	rd.stop = &stop;
	cr_assert_eq(pthread_create(&rt, NULL, reader, &rd), 0);
	for (int i = 0; i < NWRITER; i++) {
		w[i] = (struct race){ .r = r, .id = i, .stop = &stop };
		cr_assert_eq(pthread_create(&wt[i], NULL, writer, &w[i]), 0);
	}
	for (int i = 0; i < NWRITER; i++)
		pthread_join(wt[i], NULL);
	stop = 1;
	pthread_join(rt, NULL);
	cr_assert_eq(rd.torn, 0, "%lu torn entries in %lu lists", rd.torn, rd.lists);
	cr_assert_eq(rd.disorder, 0, "%lu entries out of order in %lu lists", rd.disorder, rd.lists);
	cr_assert_gt(rd.lists, 0);
	cr_assert_eq(sfs_recent_list(r, v), SFS_RECENT_MAX, "all published once the writers are done");
	free(r);
}

/* ---- in the stats ---- */

Test(recent_stats, refused_and_rmw_recorded_then_reset)
{
	struct sfs_stats *st = NULL;
	struct sfs_stats_recent *rc = malloc(sizeof(*rc));

	cr_assert_not_null(rc);
	cr_assert_eq(sfs_stats_new_at(sfs_stats_next_generation(), sfs_now_ns(), &st), 0);
	set_name("sfs-stats-t");
	sfs_requester_set(my_tid());
	sfs_stats_misaligned(st, SFS_OP_READ, 100, 512);
	sfs_stats_out_of_range(st, SFS_OP_DISCARD, 1 << 20, 4096);
	sfs_stats_write(st, 512, 512, 1000, false, true);
	sfs_stats_write(st, 4096, 4096, 1000, false, false);     /* no rmw: not listed */
	sfs_stats_recent(st, rc);
	cr_assert_eq(rc->nrefused, 2);
	cr_assert_eq(rc->refused[0].op, SFS_OP_DISCARD);
	cr_assert_eq(rc->refused[0].err, ENOSPC);
	cr_assert_eq(rc->refused[0].off, 1 << 20);
	cr_assert_eq(rc->refused[1].op, SFS_OP_READ);
	cr_assert_eq(rc->refused[1].err, EINVAL);
	cr_assert_eq(rc->nrmw, 1);
	cr_assert_eq(rc->rmw[0].off, 512);
	cr_assert_str_eq(rc->rmw[0].comm, "sfs-stats-t");
	sfs_stats_reset(st);
	sfs_stats_recent(st, rc);
	cr_assert_eq(rc->nrefused + rc->nrmw, 0, "reset clears both lists");
	sfs_stats_free(st);
	free(rc);
}

static struct sfs_stats_info info_with(const struct sfs_stats_recent *rc)
{
	return (struct sfs_stats_info){
		.name = "disk",
		.geom = { .size = 1 << 30, .lss = 512, .pss = 4096, .block_size = 1 << 20 },
		.prov = SFS_PROV_THIN, .zero_offload = true, .direct = true,
		.allocated_blocks = 1, .total_blocks = 1024, .recent = rc,
	};
}

Test(recent_stats, rendered_as_json_and_text)
{
	struct sfs_stats *st = NULL;
	struct sfs_stats_snap *s = malloc(sizeof(*s));
	struct sfs_stats_recent *rc = malloc(sizeof(*rc));
	struct sfs_stats_info info;
	json_error_t jerr;
	json_t *o, *a, *e;
	char *out = NULL;
	size_t len;

	cr_assert(s && rc);
	cr_assert_eq(sfs_stats_new_at(sfs_stats_next_generation(), sfs_now_ns(), &st), 0);
	set_name("we ird\001name");
	sfs_requester_set(my_tid());
	for (int i = 0; i < 7; i++)
		sfs_stats_misaligned(st, SFS_OP_WRITE, 1000 + (uint64_t)i, 512);
	sfs_requester_set(0);
	sfs_stats_write(st, 512, 512, 1000, true, true);
	sfs_stats_snapshot(st, s);
	sfs_stats_recent(st, rc);
	info = info_with(rc);

	cr_assert_eq(sfs_stats_render_json(s, &info, &out, &len), 0);
	o = json_loads(out, 0, &jerr);
	cr_assert_not_null(o, "%s", jerr.text);
	a = json_object_get(o, "refused_recent");
	cr_assert_eq(json_array_size(a), 7);
	e = json_array_get(a, 0);
	cr_assert_eq(json_integer_value(json_object_get(e, "offset")), 1006, "newest first");
	cr_assert_eq(json_integer_value(json_object_get(e, "length")), 512);
	cr_assert_str_eq(json_string_value(json_object_get(e, "op")), "write");
	cr_assert_str_eq(json_string_value(json_object_get(e, "error")), "EINVAL");
	cr_assert_str_eq(json_string_value(json_object_get(e, "reason")), "misaligned");
	cr_assert_eq(json_integer_value(json_object_get(e, "pid")), my_tid());
	cr_assert_str_eq(json_string_value(json_object_get(e, "comm")), "we ird\001name");
	cr_assert(json_is_integer(json_object_get(e, "time_ns")));
	cr_assert_eq(strlen(json_string_value(json_object_get(e, "time"))), 27, "YYYY-MM-DDTHH:MM:SS.uuuuuuZ");
	a = json_object_get(o, "rmw_recent");
	cr_assert_eq(json_array_size(a), 1);
	e = json_array_get(a, 0);
	cr_assert_eq(json_integer_value(json_object_get(e, "pid")), 0);
	cr_assert_null(json_object_get(e, "error"), "an rmw write was not refused");
	json_decref(o);
	free(out);

	cr_assert_eq(sfs_stats_render_text(s, &info, &out, &len), 0);
	cr_assert_not_null(strstr(out, "refused I/Os (newest 5 of the 7 kept;"), "%s", out);
	cr_assert_not_null(strstr(out, " 1006       512 EINVAL "), "%s", out);
	cr_assert_null(strstr(out, " 1001       512 "), "only 5 rows in the text:\n%s", out);
	cr_assert_not_null(strstr(out, "we\\ ird\\001name"), "the command escaped as ls -b does:\n%s", out);
	cr_assert_not_null(strstr(out, "read-modify-write writes (1, newest first)"), "%s", out);
	free(out);

	info.recent = NULL;
	cr_assert_eq(sfs_stats_render_text(s, &info, &out, &len), 0);
	cr_assert_not_null(strstr(out, "refused I/Os: none"), "%s", out);
	free(out);
	sfs_stats_free(st);
	free(s);
	free(rc);
}
