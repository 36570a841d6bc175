/* SPDX-License-Identifier: MIT */
/*
 * test_image_atomic.c - unit tests of core/image/io.c, part three: a sector
 * written is never read half written.
 *
 * With buffered backing I/O (SFS_IMAGE_BUFFERED) a reader racing a writer
 * of one sector (512n, 4kn; 512e in logical and in whole physical
 * sectors, read in logical ones) sees the old or the new contents, never
 * a mix, over 200,000 reads.  The range lock that gives it is seen from
 * outside, through a gate this file puts in the backing I/O (it defines
 * pread and pwrite, as test_faults.c does, and holds one call at a chosen
 * offset until the test opens the gate), so that a request sits in the
 * middle of its transfer:
 *   - where a transfer can go through the page cache, a read of a sector
 *     whose write is held waits for it; where every transfer is O_DIRECT
 *     it does not (no range lock is taken);
 *   - a read waits for a held writer of its range; writes, discards,
 *     write-zeroes and allocations wait for a held reader; requests beside
 *     the held range go on, beside it and beside the request waiting for
 *     it; and the read after the wait sees the held write.
 * Each test gets its own store directory (mkdtemp).
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "fixtures/image_fixture.h"

/* ---- the gate in the backing I/O ---- */

static struct {
	pthread_mutex_t lk;
	pthread_cond_t cv;
	char armed;             /* 'r': hold the next pread, 'w': the next pwrite, covering at; 0: none */
	uint64_t at;
	bool held;              /* a call is held */
	bool open;              /* and may go on */
} gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, false, false };

/* Hold the next pread ('r') or pwrite ('w') whose range covers byte at. */
static void gate_arm(char which, uint64_t at)
{
	pthread_mutex_lock(&gate.lk);
	gate.armed = which;
	gate.at = at;
	gate.held = gate.open = false;
	pthread_mutex_unlock(&gate.lk);
}

/* Wait (up to 10 s) until a call is held. */
static bool gate_until_held(void)
{
	for (int i = 0; i < 10000; i++) {
		bool h;

		pthread_mutex_lock(&gate.lk);
		h = gate.held;
		pthread_mutex_unlock(&gate.lk);
		if (h)
			return true;
		usleep(1000);
	}
	return false;
}

static void gate_open(void)
{
	pthread_mutex_lock(&gate.lk);
	gate.open = true;
	pthread_cond_broadcast(&gate.cv);
	pthread_mutex_unlock(&gate.lk);
}

/* A pread or pwrite of n bytes at off passes here first. */
static void gate_pass(char which, size_t n, off_t off)
{
	pthread_mutex_lock(&gate.lk);
	if (gate.armed == which && (uint64_t)off <= gate.at && gate.at < (uint64_t)off + n) {
		gate.armed = 0;
		gate.held = true;
		pthread_cond_broadcast(&gate.cv);
		while (!gate.open)
			pthread_cond_wait(&gate.cv, &gate.lk);
	}
	pthread_mutex_unlock(&gate.lk);
}

/* Under -D_FILE_OFFSET_BITS=64 (as core is built) the calls are to pread64 and pwrite64. */
static void *libc_fn(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);

	if (!p)
		abort();
	return p;
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	static ssize_t (*real)(int, void *, size_t, off_t);

	if (!real)
		real = (ssize_t (*)(int, void *, size_t, off_t))libc_fn("pread64");
	gate_pass('r', n, off);
	return real(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);

	if (!real)
		real = (ssize_t (*)(int, const void *, size_t, off_t))libc_fn("pwrite64");
	gate_pass('w', n, off);
	return real(fd, buf, n, off);
}

/* ---- the race ---- */

/* One writer alternates two patterns over [off, off+wsize); the test
 * reads rsize pieces of it in turn and counts the reads that are neither. */
struct tear {
	struct sfs_image *im;
	uint64_t off;
	size_t wsize, rsize;
	unsigned char *pat[2];
	atomic_int stop;
	long writes, rc;
};

static void *tear_writer(void *arg)
{
	struct tear *t = arg;

	for (int k = 1; !atomic_load_explicit(&t->stop, memory_order_relaxed); k ^= 1) {
		if (sfs_image_write(t->im, t->pat[k], t->wsize, t->off) != (ssize_t)t->wsize) {
			t->rc = -EIO;
			break;
		}
		t->writes++;
	}
	return NULL;
}

struct tear_case {
	uint32_t lss, pss;
	size_t wsize, rsize;
};

ParameterizedTestParameters(image, buffered_sector_writes_are_atomic_to_readers)
{
	static struct tear_case c[] = {
		{ 512, 512, 512, 512 },       /* 512n: a logical sector */
		{ 512, 4096, 4096, 512 },     /* 512e: a physical sector, read in logical ones */
		{ 512, 4096, 512, 512 },      /* 512e: a logical sector */
		{ 4096, 4096, 4096, 4096 },   /* 4kn */
	};

	return cr_make_param_array(struct tear_case, c, sizeof(c) / sizeof(c[0]));
}

ParameterizedTest(struct tear_case *c, image, buffered_sector_writes_are_atomic_to_readers)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_EAGERZEROEDTHICK, c->lss, c->pss, SIZE, BS, true);
	struct tear t = { .off = 3 * BS + 4096, .wsize = c->wsize, .rsize = c->rsize };
	long reads = 0, torn = 0, seen[2] = { 0, 0 };
	unsigned char *buf = malloc(c->rsize);
	pthread_t th;

	t.im = open_flags(&sc, SFS_IMAGE_STATS | SFS_IMAGE_BUFFERED);
	cr_assert_not_null(buf);
	for (int k = 0; k < 2; k++) {
		t.pat[k] = malloc(c->wsize);
		cr_assert_not_null(t.pat[k]);
		fill(t.pat[k], c->wsize, t.off, 7 + (unsigned)k);
	}
	cr_assert_eq(sfs_image_write(t.im, t.pat[0], c->wsize, t.off), (ssize_t)c->wsize);
	cr_assert_eq(pthread_create(&th, NULL, tear_writer, &t), 0);
	for (; reads < 200000; reads++) {
		size_t at = (size_t)reads % (c->wsize / c->rsize) * c->rsize;

		cr_assert_eq(sfs_image_read(t.im, buf, c->rsize, t.off + at), (ssize_t)c->rsize);
		if (!memcmp(buf, t.pat[0] + at, c->rsize))
			seen[0]++;
		else if (!memcmp(buf, t.pat[1] + at, c->rsize))
			seen[1]++;
		else
			torn++;
	}
	atomic_store(&t.stop, 1);
	pthread_join(th, NULL);
	cr_expect_eq(t.rc, 0);
	cr_expect_eq(torn, 0, "%s, %zu-byte writes, %zu-byte reads: %ld of %ld reads torn (%ld writes)",
		     sfs_sector_name(c->lss, c->pss), c->wsize, c->rsize, torn, reads, t.writes);
	cr_expect(seen[0] && seen[1], "the reader saw only one pattern (%ld, %ld): the writer did not race it",
		  seen[0], seen[1]);
	cr_expect_eq(sfs_image_close(t.im), 0);
	free(t.pat[0]);
	free(t.pat[1]);
	free(buf);
}

/* ---- when the range lock is taken ---- */

/* The direct I/O offset alignment of the backing file (what the image
 * reads from statx), 4096 where statx does not say, 0 without O_DIRECT. */
static unsigned dio_offset_align(void)
{
	int fd = openat(ts.fd, NAME, O_RDWR | O_DIRECT | O_CLOEXEC);
	struct statx stx;
	unsigned a = 4096;

	if (fd < 0)
		return 0;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 && (stx.stx_mask & STATX_DIOALIGN))
		a = stx.stx_dio_offset_align;
	close(fd);
	return a;
}

/* A request in a thread of its own, made while the gate holds another one. */
enum op { OP_READ, OP_WRITE, OP_DISCARD, OP_ZERO, OP_ALLOC };

struct call {
	struct sfs_image *im;
	enum op op;
	uint64_t off;
	size_t len;
	unsigned char *buf;
	atomic_int started, done;
	long rc;
	pthread_t th;
};

static void *call_main(void *arg)
{
	struct call *c = arg;

	atomic_store(&c->started, 1);
	switch (c->op) {
	case OP_READ: c->rc = sfs_image_read(c->im, c->buf, c->len, c->off); break;
	case OP_WRITE: c->rc = sfs_image_write(c->im, c->buf, c->len, c->off); break;
	case OP_DISCARD: c->rc = sfs_image_discard(c->im, c->off, c->len); break;
	case OP_ZERO: c->rc = sfs_image_write_zeroes(c->im, c->off, c->len); break;
	case OP_ALLOC: c->rc = sfs_image_allocate(c->im, c->off, c->len); break;
	}
	atomic_store(&c->done, 1);
	return NULL;
}

static void call_start(struct call *c)
{
	cr_assert_eq(pthread_create(&c->th, NULL, call_main, c), 0);
	while (!atomic_load(&c->started))
		usleep(100);
}

/* Does c end within ms milliseconds? */
static bool call_ends_within(struct call *c, int ms)
{
	for (int i = 0; i < ms; i++) {
		if (atomic_load(&c->done))
			return true;
		usleep(1000);
	}
	return atomic_load(&c->done);
}

/* With the write of one logical sector at off held in its transfer, does a read of it wait? */
static bool read_waits_for_a_held_write(struct sfs_image *im, uint32_t lss, uint64_t off)
{
	unsigned char *w = malloc(lss), *r = malloc(lss);
	struct call a = { .im = im, .op = OP_WRITE, .off = off, .len = lss, .buf = w };
	struct call b = { .im = im, .op = OP_READ, .off = off, .len = lss, .buf = r };
	bool waited;

	cr_assert(w && r);
	memset(w, 0x3c, lss);
	cr_assert_eq(sfs_image_write(im, w, lss, off), (ssize_t)lss, "the block allocated first");
	gate_arm('w', off);
	call_start(&a);
	cr_assert(gate_until_held(), "the write did not reach the backing file");
	call_start(&b);
	waited = !call_ends_within(&b, 200);
	gate_open();
	pthread_join(a.th, NULL);
	pthread_join(b.th, NULL);
	cr_expect_eq(a.rc, (long)lss);
	cr_expect_eq(b.rc, (long)lss);
	free(w);
	free(r);
	return waited;
}

Test(image, range_lock_only_where_a_transfer_can_be_buffered)
{
	static const uint32_t sec[3][2] = { { 512, 512 }, { 512, 4096 }, { 4096, 4096 } };

	for (int i = 0; i < 3; i++) {
		struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, sec[i][0], sec[i][1], SIZE, BS, true);
		const char *d = sfs_sector_name(sec[i][0], sec[i][1]);
		struct sfs_image *im = open_flags(&sc, SFS_IMAGE_STATS | SFS_IMAGE_BUFFERED);
		unsigned align;
		bool waited;

		cr_expect(read_waits_for_a_held_write(im, sec[i][0], 2 * BS), "%s, buffered: no range lock", d);
		cr_assert_eq(sfs_image_close(im), 0);
		im = open_flags(&sc, SFS_IMAGE_STATS);
		align = dio_offset_align();
		waited = read_waits_for_a_held_write(im, sec[i][0], 2 * BS);
		if (!sfs_image_direct(im))
			cr_expect(waited, "%s, no O_DIRECT here: no range lock", d);
		else if (sec[i][0] % align)
			cr_expect(waited, "%s on a filesystem with %u-byte direct I/O: no range lock", d, align);
		else
			cr_expect(!waited, "%s, every transfer O_DIRECT (%u-byte alignment): "
				  "requests take a range lock they do not need", d, align);
		cr_assert_eq(sfs_image_close(im), 0);
		cr_assert_eq(unlinkat(ts.fd, NAME, 0), 0);
		cr_assert_eq(unlinkat(ts.statefd, NAME ".map", 0), 0);
	}
}

static const char *op_name(enum op op)
{
	static const char *names[] = { "read", "write", "discard", "write_zeroes", "allocate" };

	return names[op];
}

Test(image, buffered_requests_wait_for_a_conflicting_range)
{
	struct sfs_sidecar sc = sidecar(SFS_PROV_THIN, 512, 4096, SIZE, BS, true);
	struct sfs_image *im = open_flags(&sc, SFS_IMAGE_STATS | SFS_IMAGE_BUFFERED);
	unsigned char *model = new_model(SIZE);
	const uint64_t off = 2 * BS + 4096;           /* the held request covers [off + 512, off + 1024) */
	unsigned char other[512], held_buf[512];

	put(im, model, 0, 4 * BS, 1);
	for (enum op op = OP_READ; op <= OP_ALLOC; op++) {
		struct call c = { .im = im, .op = op, .off = off, .len = 4096 };
		/* a read waits for a writer; everything else for a reader */
		struct call h = { .im = im, .op = op == OP_READ ? OP_WRITE : OP_READ, .off = off + 512,
				  .len = 512, .buf = held_buf };

		c.buf = malloc(c.len);
		cr_assert_not_null(c.buf);
		fill(c.buf, c.len, off, 10 + op);
		fill(held_buf, sizeof(held_buf), off + 512, 30 + op);
		gate_arm(h.op == OP_WRITE ? 'w' : 'r', off + 512);
		call_start(&h);
		cr_assert(gate_until_held(), "%s: the held request did not reach the backing file", op_name(op));
		call_start(&c);
		cr_expect(!call_ends_within(&c, 50), "%s returned while the range was held", op_name(op));
		/* beside the held range and the waiting request: a write and reads go on */
		put(im, model, off + 4096, 512, 20 + op);
		cr_expect_eq(sfs_image_read(im, other, 512, off - 512), 512, "a read beside the held range");
		cr_expect_eq(sfs_image_read(im, other, 512, off + 4096), 512, "a read beside the held range");
		cr_expect_eq(first_diff(other, model + off + 4096, 512), 512);
		gate_open();
		pthread_join(h.th, NULL);
		pthread_join(c.th, NULL);
		cr_expect(atomic_load(&c.done));
		cr_expect_eq(h.rc, 512, "the held %s: %ld", op_name(h.op), h.rc);
		if (h.op == OP_WRITE)
			memcpy(model + off + 512, held_buf, sizeof(held_buf));
		else
			cr_expect_eq(first_diff(held_buf, model + off + 512, 512), 512, "the held read");
		cr_expect_eq(c.rc, op <= OP_WRITE ? 4096 : 0, "%s: %ld", op_name(op), c.rc);
		if (op == OP_WRITE)
			memcpy(model + off, c.buf, c.len);
		else if (op == OP_DISCARD || op == OP_ZERO)
			memset(model + off, 0, c.len);
		else if (op == OP_READ)
			cr_expect_eq(first_diff(c.buf, model + off, c.len), c.len, "the read after the wait");
		free(c.buf);
	}
	expect_model(im, model, 0, SIZE, "after the waits");
	cr_expect_eq(sfs_image_close(im), 0);
	free(model);
}
