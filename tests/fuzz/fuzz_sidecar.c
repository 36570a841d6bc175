/* SPDX-License-Identifier: MIT */
/*
 * fuzz_sidecar.c - libFuzzer target for the sidecar parser (core/contract/sidecar.c).
 *
 * Each input is the raw text of a NAME.json.  It goes to
 * sfs_sidecar_parse() in a buffer of exactly its length (no terminating
 * NUL: the parser takes a length, and ASan catches a read past it), once
 * with a message buffer and once with none.  The properties checked, besides
 * "no crash, no sanitizer report, no leak":
 *
 *   - both calls agree on the return code, which is 0, -EINVAL or -ERANGE;
 *   - a failure fills the message buffer with a NUL-terminated message that
 *     names the file; a success leaves a sidecar that sfs_sidecar_validate()
 *     accepts;
 *   - round trip: sfs_sidecar_dump() of a parsed sidecar parses again to the
 *     same fields, and dumping that gives the same text.
 *
 * Build and run with tests/fuzz/run.sh.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/sidecar.h"

#define FNAME "fuzz.json"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_or_die(const struct sfs_sidecar *a, const struct sfs_sidecar *b, const char *text)
{
	if (a->size == b->size && a->lss == b->lss && a->pss == b->pss && a->prov == b->prov &&
	    a->block_size == b->block_size && a->zero_offload == b->zero_offload)
		return;
	fprintf(stderr, "round trip changed the sidecar:\n"
		"  parsed: size=%llu lss=%u pss=%u prov=%d block=%llu offload=%d\n"
		"  again:  size=%llu lss=%u pss=%u prov=%d block=%llu offload=%d\n"
		"  dump:   %s\n",
		(unsigned long long)a->size, a->lss, a->pss, (int)a->prov,
		(unsigned long long)a->block_size, (int)a->zero_offload,
		(unsigned long long)b->size, b->lss, b->pss, (int)b->prov,
		(unsigned long long)b->block_size, (int)b->zero_offload, text);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sfs_sidecar sc, sc2, sc3;
	char err[512], err2[512];
	char *text, *copy, *text2;
	int rc, rc_noerr;

	/* Exactly size bytes, so that any read past the end is an ASan report. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);

	memset(err, 0x5a, sizeof(err));
	rc = sfs_sidecar_parse(copy, size, FNAME, &sc, err, sizeof(err));
	rc_noerr = sfs_sidecar_parse(copy, size, FNAME, &sc3, NULL, 0);
	free(copy);
	if (rc != rc_noerr) {
		fprintf(stderr, "parse returned %d with a message buffer, %d without\n", rc, rc_noerr);
		abort();
	}
	if (rc != 0 && rc != -EINVAL && rc != -ERANGE && rc != -EFBIG) {
		fprintf(stderr, "parse returned %d (expected 0, -EINVAL, -ERANGE or -EFBIG)\n", rc);
		abort();
	}
	if (rc) {
		if (!memchr(err, '\0', sizeof(err)) || strncmp(err, FNAME ":", strlen(FNAME) + 1) != 0) {
			fprintf(stderr, "error message does not start with the file name: %.*s\n",
				(int)sizeof(err), err);
			abort();
		}
		return 0;
	}
	same_or_die(&sc, &sc3, "(second parse of the same input)");
	if (sfs_sidecar_validate(&sc, FNAME, err, sizeof(err)) != 0) {
		fprintf(stderr, "parsed sidecar does not validate: %s\n", err);
		abort();
	}

	text = sfs_sidecar_dump(&sc);
	if (!text) {
		fprintf(stderr, "dump of a parsed sidecar failed: %s\n", strerror(errno));
		abort();
	}
	rc = sfs_sidecar_parse(text, strlen(text), FNAME, &sc2, err2, sizeof(err2));
	if (rc != 0) {
		fprintf(stderr, "dump does not parse (%d): %s\n  dump: %s\n", rc, err2, text);
		abort();
	}
	same_or_die(&sc, &sc2, text);
	text2 = sfs_sidecar_dump(&sc2);
	if (!text2 || strcmp(text, text2) != 0) {
		fprintf(stderr, "dump is not stable:\n%s\n---\n%s\n", text, text2 ? text2 : "(null)");
		abort();
	}
	free(text2);
	free(text);
	return 0;
}
