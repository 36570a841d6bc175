/* SPDX-License-Identifier: MIT */
/*
 * test_sidecar.c - unit tests of core/contract/sidecar.c: the NAME.json contract.
 *
 * Good sidecars in every accepted form, bad ones with the errno and the
 * message they must give (file, key, reason), the checks of load() on a
 * real directory (symlink, FIFO, oversized, missing), and the round trips
 * save -> load and dump -> parse.  Each test that touches the filesystem
 * gets its own mkdtemp directory, emptied and removed by the fixture.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "contract/sidecar.h"

#define FNAME "disk.json"
#define KiB 1024ull
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)
#define TiB (1024 * GiB)

static int parse(const char *json, struct sfs_sidecar *sc, char *err, size_t errlen)
{
	return sfs_sidecar_parse(json, strlen(json), FNAME, sc, err, errlen);
}

/* ---- good sidecars ---- */

/*
 * Criterion re-executes the test binary for each parameter, so a parameter
 * must not hold pointers into the parent: the texts are arrays in place.
 */
struct good_case {
	char json[256];
	uint64_t size;
	uint32_t lss, pss;
	enum sfs_prov prov;
	uint64_t block_size;
	bool zero_offload;
};

ParameterizedTestParameters(parse, good)
{
	static struct good_case cases[] = {
		/* size forms, defaults applied */
		{ "{\"size\": 1073741824}", GiB, 512, 512, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": 0}", 0, 512, 512, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": \"512\"}", 512, 512, 512, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": \"64K\"}", 64 * KiB, 512, 512, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": \"100M\"}", 100 * MiB, 512, 512, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": \"8G\"}", 8 * GiB, 512, 512, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": \"2T\"}", 2 * TiB, 512, 512, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": \"4KiB\"}", 4 * KiB, 512, 512, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": \"1MB\"}", MiB, 512, 512, SFS_PROV_THIN, MiB, true },
		/* the largest disks: 2^30 blocks of the block size */
		{ "{\"size\": 1125899906842624}", 1024 * TiB, 512, 512, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": \"1024T\"}", 1024 * TiB, 512, 512, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": \"512G\", \"block_size\": 512}", 512 * GiB, 512, 512, SFS_PROV_THIN, 512, true },
		{ "{\"size\": \"65536T\", \"block_size\": \"64M\"}", SFS_SIZE_MAX, 512, 512, SFS_PROV_THIN,
		  64 * MiB, true },
		/* named sector formats, case-insensitive */
		{ "{\"size\": \"1G\", \"sector\": \"512n\"}", GiB, 512, 512, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": \"1G\", \"sector\": \"512e\"}", GiB, 512, 4096, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": \"1G\", \"sector\": \"4kn\"}", GiB, 4096, 4096, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": \"1G\", \"sector\": \"4KN\"}", GiB, 4096, 4096, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": \"1G\", \"sector\": \"512E\"}", GiB, 512, 4096, SFS_PROV_THIN, MiB, true },
		/* explicit sector sizes */
		{ "{\"size\": \"1G\", \"logical_sector_size\": 1024, \"physical_sector_size\": 8192}",
		  GiB, 1024, 8192, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": \"1G\", \"logical_sector_size\": 65536, \"physical_sector_size\": 65536}",
		  GiB, 65536, 65536, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": \"1G\", \"physical_sector_size\": 512, \"logical_sector_size\": 512}",
		  GiB, 512, 512, SFS_PROV_THIN, MiB, true },
		/* provisioning modes */
		{ "{\"size\": \"1G\", \"provisioning\": \"thin\"}", GiB, 512, 512, SFS_PROV_THIN, MiB, true },
		{ "{\"size\": \"1G\", \"provisioning\": \"zeroedthick\"}",
		  GiB, 512, 512, SFS_PROV_ZEROEDTHICK, MiB, true },
		{ "{\"size\": \"1G\", \"provisioning\": \"eagerzeroedthick\"}",
		  GiB, 512, 512, SFS_PROV_EAGERZEROEDTHICK, MiB, true },
		/* block_size as string and integer, at both limits */
		{ "{\"size\": \"1G\", \"block_size\": \"4M\"}", GiB, 512, 512, SFS_PROV_THIN, 4 * MiB, true },
		{ "{\"size\": \"1G\", \"block_size\": 65536}", GiB, 512, 512, SFS_PROV_THIN, 64 * KiB, true },
		{ "{\"size\": \"1G\", \"block_size\": \"64M\"}", GiB, 512, 512, SFS_PROV_THIN, 64 * MiB, true },
		{ "{\"size\": \"1G\", \"sector\": \"4kn\", \"block_size\": 4096}",
		  GiB, 4096, 4096, SFS_PROV_THIN, 4 * KiB, true },
		/* zero_offload */
		{ "{\"size\": \"1G\", \"zero_offload\": false}", GiB, 512, 512, SFS_PROV_THIN, MiB, false },
		{ "{\"size\": \"1G\", \"zero_offload\": true}", GiB, 512, 512, SFS_PROV_THIN, MiB, true },
		/* everything at once, the SPEC example, whitespace and key order free */
		{ "{\n  \"size\": \"8G\",\n  \"sector\": \"4kn\",\n  \"provisioning\": \"thin\",\n"
		  "  \"block_size\": \"1M\",\n  \"zero_offload\": true\n}\n",
		  8 * GiB, 4096, 4096, SFS_PROV_THIN, MiB, true },
		{ "{\"zero_offload\":false,\"block_size\":\"2M\",\"provisioning\":\"zeroedthick\","
		  "\"sector\":\"512e\",\"size\":\"3G\"}",
		  3 * GiB, 512, 4096, SFS_PROV_ZEROEDTHICK, 2 * MiB, false },
	};

	return cr_make_param_array(struct good_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct good_case *c, parse, good)
{
	struct sfs_sidecar sc;
	char err[256] = "";

	cr_assert_eq(parse(c->json, &sc, err, sizeof(err)), 0, "%s: %s", c->json, err);
	cr_expect_eq(sc.size, c->size, "%s", c->json);
	cr_expect_eq(sc.lss, c->lss, "%s", c->json);
	cr_expect_eq(sc.pss, c->pss, "%s", c->json);
	cr_expect_eq(sc.prov, c->prov, "%s", c->json);
	cr_expect_eq(sc.block_size, c->block_size, "%s", c->json);
	cr_expect_eq(sc.zero_offload, c->zero_offload, "%s", c->json);
	cr_expect_eq(sfs_sidecar_validate(&sc, FNAME, err, sizeof(err)), 0, "%s", err);
}

Test(parse, defaults)
{
	struct sfs_sidecar sc;

	sfs_sidecar_defaults(&sc);
	cr_expect_eq(sc.size, 0);
	cr_expect_eq(sc.lss, 512);
	cr_expect_eq(sc.pss, 512);
	cr_expect_eq(sc.prov, SFS_PROV_THIN);
	cr_expect_eq(sc.block_size, SFS_BLOCK_DEFAULT);
	cr_expect(sc.zero_offload);
}

Test(parse, text_need_not_be_nul_terminated)
{
	const char text[] = "{\"size\": 4096}garbage";
	struct sfs_sidecar sc;

	cr_assert_eq(sfs_sidecar_parse(text, 14, FNAME, &sc, NULL, 0), 0);
	cr_expect_eq(sc.size, 4096);
}

/* ---- bad sidecars ---- */

struct bad_case {
	char json[128];
	int rc;
	char key[32];           /* the key the message must name ("" for none) */
	char word[32];          /* a word of the reason */
	bool whole;             /* a fault of the file as a whole, not of one key */
};

/*
 * A case of one key at fault (the message starts by naming the key), and one
 * of the file as a whole. Most key cases are refused with EINVAL and have a
 * size of 4096: KEY4K takes the other keys' JSON, ONE a single other key and
 * its JSON value, SECTORS the two sector sizes.
 */
#define KEY(json, rc, key, word) { json, rc, key, word, false }
#define WHOLE(json, rc, key, word) { json, rc, key, word, true }
#define KEY4K(keys, key, word) KEY("{\"size\": 4096, " keys "}", -EINVAL, key, word)
#define ONE(key, value, word) KEY4K("\"" key "\": " value, key, word)
#define SECTORS(lss, pss, key, word) \
	KEY4K("\"logical_sector_size\": " #lss ", \"physical_sector_size\": " #pss, key, word)

ParameterizedTestParameters(parse, bad)
{
	static struct bad_case cases[] = {
		/* ---- one key at fault ---- */
		/* size */
		KEY("{}", -EINVAL, "size", "missing"),
		KEY("{\"sector\": \"4kn\"}", -EINVAL, "size", "missing"),
		KEY("{\"size\": true}", -EINVAL, "size", "boolean"),
		KEY("{\"size\": null}", -EINVAL, "size", "null"),
		KEY("{\"size\": 1.5}", -EINVAL, "size", "real"),
		KEY("{\"size\": 4096.0}", -EINVAL, "size", "real"),
		KEY("{\"size\": 1e9}", -EINVAL, "size", "real"),
		KEY("{\"size\": [4096]}", -EINVAL, "size", "array"),
		KEY("{\"size\": -512}", -EINVAL, "size", "negative"),
		KEY("{\"size\": \"\"}", -EINVAL, "size", "valid size"),
		KEY("{\"size\": \"8X\"}", -EINVAL, "size", "valid size"),
		KEY("{\"size\": \"1.5G\"}", -EINVAL, "size", "valid size"),
		KEY("{\"size\": \"-1G\"}", -EINVAL, "size", "valid size"),
		KEY("{\"size\": \"+1G\"}", -EINVAL, "size", "valid size"),
		KEY("{\"size\": \" 8G\"}", -EINVAL, "size", "valid size"),
		KEY("{\"size\": \"8 G\"}", -EINVAL, "size", "valid size"),
		KEY("{\"size\": \"8P\"}", -EINVAL, "size", "valid size"),
		KEY("{\"size\": \"99999999999999999999\"}", -ERANGE, "size", "too large"),
		KEY("{\"size\": \"8388608T\"}", -ERANGE, "size", "too large"),
		KEY("{\"size\": \"4194305T\"}", -EFBIG, "size", "maximum"),
		KEY("{\"size\": 9223372036854775807}", -EFBIG, "size", "maximum"),
		KEY("{\"size\": 4611686018427387904}", -EFBIG, "size", "maximum"),
		KEY("{\"size\": \"65537T\", \"block_size\": \"64M\"}", -EFBIG, "size", "maximum 65536 TiB"),
		KEY("{\"size\": 1125899906843136}", -EFBIG, "size", "1024 TiB for a block size of 1 M"),
		KEY("{\"size\": \"4T\", \"block_size\": \"2K\"}", -EFBIG, "size",
		    "2 TiB for a block size of 2 KiB"),
		KEY("{\"size\": 1000}", -EINVAL, "size", "multiple"),
		KEY("{\"size\": \"3K\", \"sector\": \"4kn\"}", -EINVAL, "size", "multiple"),
		KEY("{\"size\": 2048, \"logical_sector_size\": 4096, \"physical_sector_size\": 4096}", -EINVAL, "size", "multiple"),
		/* sector */
		ONE("sector", "\"520n\"", "unknown"),
		ONE("sector", "\"\"", "unknown"),
		ONE("sector", "512", "string"),
		KEY4K("\"sector\": \"4kn\", \"logical_sector_size\": 4096", "sector", "combined"),
		KEY4K("\"physical_sector_size\": 4096, \"sector\": \"512e\"", "sector", "combined"),
		/* logical_sector_size, physical_sector_size */
		KEY4K("\"logical_sector_size\": 512", "physical_sector_size", "missing"),
		KEY4K("\"physical_sector_size\": 4096", "logical_sector_size", "missing"),
		SECTORS(1000, 4096, "logical_sector_size", "power of two"),
		SECTORS(256, 4096, "logical_sector_size", "512"),
		SECTORS(1099511627776, 4096, "logical_sector_size", "65536"),
		SECTORS(-4096, 4096, "logical_sector_size", "negative"),
		SECTORS("4K", 4096, "logical_sector_size", "integer"),
		SECTORS(512, 131072, "physical_sector_size", "65536"),
		SECTORS(512, 0, "physical_sector_size", "power of two"),
		SECTORS(4096, 512, "physical_sector_size", "smaller"),
		SECTORS(512, 4096.5, "physical_sector_size", "integer"),
		/* provisioning */
		ONE("provisioning", "\"thick\"", "unknown"),
		ONE("provisioning", "\"THIN\"", "unknown"),
		ONE("provisioning", "0", "string"),
		/* block_size */
		ONE("block_size", "3000", "power of two"),
		ONE("block_size", "0", "power of two"),
		ONE("block_size", "\"128M\"", "maximum"),
		KEY4K("\"block_size\": \"2K\", \"sector\": \"4kn\"", "block_size", "smaller"),
		ONE("block_size", "256", "smaller"),
		ONE("block_size", "\"1 M\"", "valid size"),
		ONE("block_size", "false", "boolean"),
		/* zero_offload */
		ONE("zero_offload", "\"yes\"", "true or false"),
		ONE("zero_offload", "1", "true or false"),
		ONE("zero_offload", "null", "true or false"),
		/* unknown keys */
		ONE("sise", "4096", "unknown key"),
		KEY("{\"Size\": 4096}", -EINVAL, "Size", "unknown key"),
		ONE("", "1", "unknown key"),
		/* ---- the file as a whole ---- */
		WHOLE("", -EINVAL, "", "JSON error"),
		WHOLE("{", -EINVAL, "", "line 1"),
		WHOLE("{\"size\": 4096,}", -EINVAL, "", "JSON error"),
		WHOLE("{\"size\": 4096} x", -EINVAL, "", "end of file expected"),
		WHOLE("{\"size\": 4096}{}", -EINVAL, "", "end of file expected"),
		WHOLE("{\"size\": 4096,\n \"size\": 8192}", -EINVAL, "size", "duplicate"),
		WHOLE("{\"size\": 99999999999999999999}", -ERANGE, "", "too big"),
		WHOLE("[{\"size\": 4096}]", -EINVAL, "", "not a JSON object"),
		WHOLE("42", -EINVAL, "", "JSON error"),
		WHOLE("\"8G\"", -EINVAL, "", "JSON error"),
		WHOLE("{'size': 4096}", -EINVAL, "", "JSON error"),
		WHOLE("{\"size\": \"\\u0000\"}", -EINVAL, "", "JSON error"),
	};

	return cr_make_param_array(struct bad_case, cases, sizeof(cases) / sizeof(cases[0]));
}

/*
 * c->json is refused with c->rc, the output untouched, and a message that
 * starts with head and then says c->word; when head does not name c->key,
 * the message names it somewhere (if it is not "").
 */
static void expect_refused(const struct bad_case *c, const char *head, bool head_names_key)
{
	struct sfs_sidecar sc = { .size = 12345 };
	char err[512] = "";

	cr_expect_eq(parse(c->json, &sc, err, sizeof(err)), c->rc, "%s: %s", c->json, err);
	cr_expect_eq(strncmp(err, head, strlen(head)), 0, "%s: '%s' should start '%s'",
		     c->json, err, head);
	cr_expect(strstr(err + strlen(head), c->word), "%s: '%s' should say '%s'",
		  c->json, err, c->word);
	if (!head_names_key && c->key[0])
		cr_expect(strstr(err, c->key), "'%s' should name '%s'", err, c->key);
	cr_expect_eq(sc.size, 12345, "%s: output written on error", c->json);
}

ParameterizedTest(struct bad_case *c, parse, bad)
{
	char head[128];

	if (c->whole)
		snprintf(head, sizeof(head), FNAME ": ");
	else
		snprintf(head, sizeof(head), FNAME ": key '%s': ", c->key);
	expect_refused(c, head, !c->whole);
}

Test(parse, invalid_json_gives_line_and_column)
{
	struct sfs_sidecar sc;
	char err[256];

	cr_assert_eq(parse("{\n  \"size\": 4096\n  \"sector\": \"4kn\"\n}", &sc, err, sizeof(err)),
		     -EINVAL);
	cr_expect(strstr(err, "line 3, column"), "%s", err);
}

Test(parse, error_buffer_is_optional_and_bounded)
{
	struct sfs_sidecar sc;
	char err[12];

	cr_expect_eq(parse("{\"size\": 1000}", &sc, NULL, 0), -EINVAL);
	memset(err, 'x', sizeof(err));
	cr_expect_eq(parse("{\"size\": 1000}", &sc, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "disk.json: ");
}

/* ---- names and validate ---- */

Test(names, provisioning)
{
	enum sfs_prov p;

	cr_expect_str_eq(sfs_prov_name(SFS_PROV_THIN), "thin");
	cr_expect_str_eq(sfs_prov_name(SFS_PROV_ZEROEDTHICK), "zeroedthick");
	cr_expect_str_eq(sfs_prov_name(SFS_PROV_EAGERZEROEDTHICK), "eagerzeroedthick");
	cr_expect_null(sfs_prov_name((enum sfs_prov)3));
	cr_expect_eq(sfs_prov_parse("eagerzeroedthick", &p), 0);
	cr_expect_eq(p, SFS_PROV_EAGERZEROEDTHICK);
	cr_expect_eq(sfs_prov_parse("thick", &p), -EINVAL);
	cr_expect_eq(sfs_prov_parse("", &p), -EINVAL);
}

Test(names, sector)
{
	uint32_t lss = 0, pss = 0;

	cr_expect_str_eq(sfs_sector_name(512, 512), "512n");
	cr_expect_str_eq(sfs_sector_name(512, 4096), "512e");
	cr_expect_str_eq(sfs_sector_name(4096, 4096), "4kn");
	cr_expect_null(sfs_sector_name(1024, 8192));
	cr_expect_null(sfs_sector_name(4096, 512));
	cr_expect_eq(sfs_sector_parse("512E", &lss, &pss), 0);
	cr_expect_eq(lss, 512);
	cr_expect_eq(pss, 4096);
	cr_expect_eq(sfs_sector_parse("4k", &lss, &pss), -EINVAL);
}

static void expect_invalid_as(const struct sfs_sidecar *sc, int want, const char *key, const char *word)
{
	char err[256] = "", head[128];

	snprintf(head, sizeof(head), FNAME ": key '%s': ", key);
	cr_expect_eq(sfs_sidecar_validate(sc, FNAME, err, sizeof(err)), want, "%s", err);
	cr_expect_eq(strncmp(err, head, strlen(head)), 0, "'%s' should start '%s'", err, head);
	cr_expect(strstr(err, word), "'%s' should say '%s'", err, word);
}

static void expect_invalid(const struct sfs_sidecar *sc, const char *key, const char *word)
{
	expect_invalid_as(sc, -EINVAL, key, word);
}

Test(validate, each_rule)
{
	struct sfs_sidecar sc;

	sfs_sidecar_defaults(&sc);
	cr_expect_eq(sfs_sidecar_validate(&sc, FNAME, NULL, 0), 0);
	sc.size = 1000;
	expect_invalid(&sc, "size", "multiple");
	sc.size = SFS_SIZE_MAX + 512;
	expect_invalid_as(&sc, -EFBIG, "size", "maximum");
	sc.size = 1024 * TiB + 512;
	expect_invalid_as(&sc, -EFBIG, "size", "maximum 1024 TiB for a block size of 1 MiB");
	sc.size = 1024 * TiB;
	cr_expect_eq(sfs_sidecar_validate(&sc, FNAME, NULL, 0), 0, "the largest disk of 1 MiB blocks");
	sfs_sidecar_defaults(&sc);
	sc.lss = 768;
	expect_invalid(&sc, "logical_sector_size", "power of two");
	sc.lss = 4096;
	sc.pss = 512;
	expect_invalid(&sc, "physical_sector_size", "smaller");
	sc.pss = 1u << 17;
	expect_invalid(&sc, "physical_sector_size", "65536");
	sfs_sidecar_defaults(&sc);
	sc.block_size = 128 * MiB;
	expect_invalid(&sc, "block_size", "maximum");
	sc.block_size = 3 * KiB;
	expect_invalid(&sc, "block_size", "power of two");
	sfs_sidecar_defaults(&sc);
	sc.prov = (enum sfs_prov)7;
	expect_invalid(&sc, "provisioning", "provisioning mode");
}

Test(validate, same_message_as_parse)
{
	struct sfs_sidecar sc;
	char e1[256], e2[256];

	cr_assert_eq(parse("{\"size\": 4096, \"block_size\": 2048, \"sector\": \"512e\"}",
			   &sc, e1, sizeof(e1)), -EINVAL);
	sfs_sidecar_defaults(&sc);
	sc.size = 4096;
	sc.pss = 4096;
	sc.block_size = 2048;
	cr_assert_eq(sfs_sidecar_validate(&sc, FNAME, e2, sizeof(e2)), -EINVAL);
	cr_expect_str_eq(e1, e2);
}

/* ---- dump -> parse ---- */

static void expect_same(const struct sfs_sidecar *a, const struct sfs_sidecar *b)
{
	cr_expect_eq(a->size, b->size);
	cr_expect_eq(a->lss, b->lss);
	cr_expect_eq(a->pss, b->pss);
	cr_expect_eq(a->prov, b->prov);
	cr_expect_eq(a->block_size, b->block_size);
	cr_expect_eq(a->zero_offload, b->zero_offload);
}

static void dump_parse(const struct sfs_sidecar *sc, const char *must, const char *must_not)
{
	struct sfs_sidecar back;
	char err[256] = "";
	char *text = sfs_sidecar_dump(sc);

	cr_assert_not_null(text);
	cr_expect(strstr(text, must), "%s should contain %s", text, must);
	if (must_not)
		cr_expect_null(strstr(text, must_not), "%s should not contain %s", text, must_not);
	cr_assert_eq(sfs_sidecar_parse(text, strlen(text), FNAME, &back, err, sizeof(err)), 0,
		     "%s: %s", text, err);
	free(text);
	expect_same(&back, sc);
}

Test(dump, explicit_pair_round_trips)
{
	struct sfs_sidecar sc = {
		.size = 10 * GiB, .lss = 1024, .pss = 8192,
		.prov = SFS_PROV_ZEROEDTHICK, .block_size = 8192, .zero_offload = false,
	};

	dump_parse(&sc, "\"physical_sector_size\": 8192", "\"sector\"");
}

Test(dump, named_format_round_trips)
{
	struct sfs_sidecar sc = {
		.size = SFS_SIZE_MAX, .lss = 512, .pss = 4096,
		.prov = SFS_PROV_EAGERZEROEDTHICK, .block_size = 64 * MiB, .zero_offload = true,
	};

	dump_parse(&sc, "\"sector\": \"512e\"", "logical_sector_size");
}

Test(dump, writes_integers_and_all_keys)
{
	struct sfs_sidecar sc;
	char *text;

	sfs_sidecar_defaults(&sc);
	sc.size = 8 * GiB;
	text = sfs_sidecar_dump(&sc);
	cr_assert_not_null(text);
	cr_expect_str_eq(text, "{\n  \"size\": 8589934592,\n  \"sector\": \"512n\",\n"
			 "  \"provisioning\": \"thin\",\n  \"block_size\": 1048576,\n"
			 "  \"zero_offload\": true\n}");
	free(text);
}

Test(dump, refuses_unknown_provisioning)
{
	struct sfs_sidecar sc;

	sfs_sidecar_defaults(&sc);
	sc.prov = (enum sfs_prov)9;
	errno = 0;
	cr_expect_null(sfs_sidecar_dump(&sc));
	cr_expect_eq(errno, EINVAL);
}

/* ---- load and save on a real directory ---- */

struct tmpdir {
	char path[64];
	int fd;
};

static struct tmpdir tmp;

static void rm_tree(int dfd)
{
	DIR *d = fdopendir(openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dfd, e->d_name, 0) < 0 && errno == EISDIR) {
			int sub = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY);

			if (sub >= 0) {
				rm_tree(sub);
				close(sub);
			}
			unlinkat(dfd, e->d_name, AT_REMOVEDIR);
		}
	}
	closedir(d);
}

static void tmp_setup(void)
{
	strcpy(tmp.path, "/tmp/test_sidecar.XXXXXX");
	cr_assert_not_null(mkdtemp(tmp.path));
	tmp.fd = open(tmp.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(tmp.fd, 0);
}

static void tmp_teardown(void)
{
	rm_tree(tmp.fd);
	close(tmp.fd);
	rmdir(tmp.path);
}

static void put_file(const char *name, const char *text, size_t len)
{
	int fd = openat(tmp.fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
}

/* Names in the directory other than . and .., joined by spaces. */
static void list_dir(char *buf, size_t len)
{
	DIR *d = fdopendir(openat(tmp.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	struct dirent *e;

	buf[0] = '\0';
	cr_assert_not_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s ", e->d_name);
	closedir(d);
}

static void expect_load_error(const char *name, int rc, const char *word)
{
	struct sfs_sidecar sc = { .size = 12345 };
	char err[256] = "";

	cr_expect_eq(sfs_sidecar_load(tmp.fd, name, &sc, err, sizeof(err)), rc, "%s", err);
	cr_expect(strstr(err, name), "'%s' should name %s", err, name);
	cr_expect(strstr(err, word), "'%s' should say '%s'", err, word);
	cr_expect_eq(sc.size, 12345);
}

TestSuite(load, .init = tmp_setup, .fini = tmp_teardown, .timeout = 10);

Test(load, regular_file)
{
	const char *text = "{\"size\": \"8G\", \"sector\": \"4kn\"}\n";
	struct sfs_sidecar sc;
	char err[256] = "";

	put_file(FNAME, text, strlen(text));
	cr_assert_eq(sfs_sidecar_load(tmp.fd, FNAME, &sc, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(sc.size, 8 * GiB);
	cr_expect_eq(sc.lss, 4096);
}

Test(load, bad_content_names_the_file)
{
	const char *text = "{\"size\": 1000}";

	put_file("bad.json", text, strlen(text));
	expect_load_error("bad.json", -EINVAL, "key 'size': 1000 is not a multiple");
}

Test(load, symlink_refused)
{
	const char *text = "{\"size\": 4096}";

	put_file("real.json", text, strlen(text));
	cr_assert_eq(symlinkat("real.json", tmp.fd, FNAME), 0);
	expect_load_error(FNAME, -ELOOP, "symbolic link");
}

Test(load, fifo_refused_without_blocking, .timeout = 5)
{
	cr_assert_eq(mkfifoat(tmp.fd, FNAME, 0644), 0);
	expect_load_error(FNAME, -EINVAL, "not a regular file");
}

Test(load, directory_refused)
{
	cr_assert_eq(mkdirat(tmp.fd, FNAME, 0755), 0);
	expect_load_error(FNAME, -EINVAL, "not a regular file");
}

Test(load, socket_refused)
{
	cr_assert_eq(mknodat(tmp.fd, FNAME, S_IFSOCK | 0644, 0), 0);
	expect_load_error(FNAME, -EINVAL, "not a regular file");
}

Test(load, one_mib_refused)
{
	int fd = openat(tmp.fd, FNAME, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 1 << 20), 0);
	close(fd);
	expect_load_error(FNAME, -EFBIG, "larger than 64 KiB");
}

Test(load, limit_is_64_kib)
{
	char *text = malloc(SFS_SIDECAR_MAX_BYTES + 1);
	struct sfs_sidecar sc;
	char err[256] = "";
	int n = snprintf(text, SFS_SIDECAR_MAX_BYTES, "{\"size\": 4096}");

	cr_assert_not_null(text);
	memset(text + n, ' ', SFS_SIDECAR_MAX_BYTES + 1 - (size_t)n);
	put_file("max.json", text, SFS_SIDECAR_MAX_BYTES);
	put_file("over.json", text, SFS_SIDECAR_MAX_BYTES + 1);
	free(text);
	cr_expect_eq(sfs_sidecar_load(tmp.fd, "max.json", &sc, err, sizeof(err)), 0, "%s", err);
	expect_load_error("over.json", -EFBIG, "64 KiB");
}

Test(load, missing_file)
{
	expect_load_error("nope.json", -ENOENT, "No such file");
}

/* ---- save -> load ---- */

static void save_load(const char *name, const struct sfs_sidecar *sc)
{
	struct sfs_sidecar back;
	char err[256] = "";

	cr_assert_eq(sfs_sidecar_save(tmp.fd, name, -1, sc), 0);
	cr_assert_eq(sfs_sidecar_load(tmp.fd, name, &back, err, sizeof(err)), 0, "%s", err);
	expect_same(&back, sc);
}

TestSuite(save, .init = tmp_setup, .fini = tmp_teardown, .timeout = 10);

Test(save, round_trips_and_leaves_no_temp)
{
	struct sfs_sidecar sc;
	char names[256];

	sfs_sidecar_defaults(&sc);
	sc.size = 8 * GiB;
	save_load(FNAME, &sc);
	list_dir(names, sizeof(names));
	cr_expect_str_eq(names, FNAME " ");
}

Test(save, overwrites_and_round_trips_explicit_pair)
{
	struct sfs_sidecar sc = {
		.size = 3 * GiB, .lss = 1024, .pss = 8192,
		.prov = SFS_PROV_EAGERZEROEDTHICK, .block_size = 2 * MiB, .zero_offload = false,
	};

	put_file(FNAME, "old", 3);
	save_load(FNAME, &sc);
	sc.size = 4 * GiB;
	sc.prov = SFS_PROV_ZEROEDTHICK;
	save_load(FNAME, &sc);
}

Test(save, file_ends_with_newline)
{
	struct sfs_sidecar sc;
	char buf[512];
	ssize_t n;
	int fd;

	sfs_sidecar_defaults(&sc);
	cr_assert_eq(sfs_sidecar_save(tmp.fd, FNAME, -1, &sc), 0);
	fd = openat(tmp.fd, FNAME, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	cr_assert_gt(n, 1);
	cr_expect_eq(buf[n - 1], '\n');
}

Test(save, into_subdirectory)
{
	struct sfs_sidecar sc;

	sfs_sidecar_defaults(&sc);
	sc.size = GiB;
	cr_assert_eq(mkdirat(tmp.fd, "sub", 0755), 0);
	save_load("sub/" FNAME, &sc);
}

Test(save, invalid_sidecar_writes_nothing)
{
	struct sfs_sidecar sc;
	char names[256];

	sfs_sidecar_defaults(&sc);
	sc.size = 1000;
	cr_expect_eq(sfs_sidecar_save(tmp.fd, FNAME, -1, &sc), -EINVAL);
	list_dir(names, sizeof(names));
	cr_expect_str_eq(names, "");
}

Test(save, failed_rename_removes_temp)
{
	struct sfs_sidecar sc;
	char names[256];

	sfs_sidecar_defaults(&sc);
	cr_assert_eq(mkdirat(tmp.fd, FNAME, 0755), 0);
	cr_expect_eq(sfs_sidecar_save(tmp.fd, FNAME, -1, &sc), -EISDIR);
	list_dir(names, sizeof(names));
	cr_expect_str_eq(names, FNAME " ");
}

Test(save, temporary_file_in_tmpdir_and_no_file_ever_reused)
{
	struct sfs_sidecar sc;
	char names[256], victim[64], old[64], buf[16];
	int sub, fd;
	ssize_t n;

	sfs_sidecar_defaults(&sc);
	sc.size = GiB;
	cr_assert_eq(mkdirat(tmp.fd, "state", 0700), 0);
	sub = openat(tmp.fd, "state", O_RDONLY | O_DIRECTORY);
	cr_assert_geq(sub, 0);
	/* files named as temporary files were once named, and as they are named now */
	snprintf(old, sizeof(old), FNAME ".tmp.%ld", (long)getpid());
	put_file(old, "users", 5);
	snprintf(victim, sizeof(victim), ".tmp.%ld.1", (long)getpid());
	fd = openat(sub, victim, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "mine", 4), 4);
	close(fd);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(sfs_sidecar_save(tmp.fd, FNAME, sub, &sc), 0);
	list_dir(names, sizeof(names));
	cr_expect(strstr(names, FNAME " ") != NULL, "%s", names);
	cr_expect(strstr(names, old) != NULL, "%s", names);
	fd = openat(tmp.fd, old, O_RDONLY);
	cr_assert_geq(fd, 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	cr_expect_eq(n, 5);
	fd = openat(sub, victim, O_RDONLY);
	cr_assert_geq(fd, 0, "a file of the temporary directory was replaced");
	n = read(fd, buf, sizeof(buf));
	close(fd);
	cr_expect(n == 4 && memcmp(buf, "mine", 4) == 0);
	/* nothing else left in the temporary directory */
	{
		DIR *d = fdopendir(dup(sub));
		struct dirent *de;
		int others = 0;

		cr_assert_not_null(d);
		while ((de = readdir(d)))
			if (de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
						     strcmp(de->d_name, victim)))
				others++;
		closedir(d);
		cr_expect_eq(others, 0);
	}
	close(sub);
}

/* ---- the sidecar against the recorded geometry: one comparison for daemon and tools ---- */

Test(diff, says_what_differs)
{
	struct sfs_geom rec = { 1 << 20, 4096, 4096, 65536 };
	struct sfs_sidecar sc;

	sfs_sidecar_defaults(&sc);
	sc.size = rec.size;
	sc.lss = sc.pss = 4096;
	sc.block_size = 65536;
	sc.prov = SFS_PROV_ZEROEDTHICK;
	cr_expect_eq(sfs_sidecar_diff(&sc, &rec, SFS_PROV_ZEROEDTHICK), 0u);
	cr_expect_eq(sfs_sidecar_diff(&sc, &rec, SFS_PROV_THIN), (unsigned)SFS_DIFF_PROV);
	sc.pss = 8192;
	sc.block_size = 1 << 20;
	sc.size = rec.size / 2;
	cr_expect_eq(sfs_sidecar_diff(&sc, &rec, SFS_PROV_ZEROEDTHICK),
		     (unsigned)(SFS_DIFF_SECTOR | SFS_DIFF_BLOCK | SFS_DIFF_SMALLER));
	sc.pss = 4096;
	sc.block_size = 65536;
	sc.size = rec.size * 2;
	cr_expect_eq(sfs_sidecar_diff(&sc, &rec, SFS_PROV_ZEROEDTHICK), (unsigned)SFS_DIFF_LARGER);
}

/* ---- options through the key table: the rules of a file, the words of an option ---- */

Test(draft, options_set_keys_as_a_sidecar_would)
{
	struct sfs_sidecar_draft d;
	struct sfs_sidecar sc;
	char err[256];

	sfs_sidecar_draft_init(&d, NULL);
	cr_expect_eq(sfs_sidecar_draft_set(&d, "sector", "4kn", err, sizeof(err)), 0);
	cr_expect_eq(sfs_sidecar_draft_set(&d, "provisioning", "zeroedthick", err, sizeof(err)), 0);
	cr_expect_eq(sfs_sidecar_draft_set(&d, "block_size", "64K", err, sizeof(err)), 0);
	cr_expect_eq(sfs_sidecar_draft_set(&d, "zero_offload", "false", err, sizeof(err)), 0);
	cr_assert_eq(sfs_sidecar_draft_done(&d, false, "-o", &sc, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(sc.lss, 4096);
	cr_expect_eq(sc.pss, 4096);
	cr_expect_eq(sc.prov, SFS_PROV_ZEROEDTHICK);
	cr_expect_eq(sc.block_size, 65536);
	cr_expect(!sc.zero_offload);
	cr_expect_eq(sfs_sidecar_draft_set(&d, "sector", "999n", err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "sector=999n: unknown sector format '999n' (expected 512n, 512e or 4kn)");
	cr_expect_eq(sfs_sidecar_draft_set(&d, "colour", "red", err, sizeof(err)), -ENOENT);
	cr_expect_eq(sfs_sidecar_draft_set(&d, "block_size", "3K", err, sizeof(err)), 0, "a size...");
	cr_expect_eq(sfs_sidecar_draft_done(&d, false, "-o", &sc, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "-o: key 'block_size': 3072 is not a power of two", "...checked as a file's");
	cr_expect_eq(sfs_sidecar_draft_done(&d, true, "x.json", &sc, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "x.json: key 'size': missing (it is required)");
	sfs_sidecar_draft_init(&d, NULL);
	cr_expect_eq(sfs_sidecar_draft_set(&d, "logical_sector_size", "4K", err, sizeof(err)), 0);
	cr_expect_eq(sfs_sidecar_draft_clash(&d), SFS_CLASH_SIZES_APART);
	cr_expect_eq(sfs_sidecar_draft_set(&d, "sector", "512e", err, sizeof(err)), 0);
	cr_expect_eq(sfs_sidecar_draft_clash(&d), SFS_CLASH_SECTOR_AND_SIZES);
}

Test(parse, profile_key)
{
	struct sfs_sidecar sc, back;
	char err[256], *text;

	cr_assert_eq(parse("{\"size\": \"1M\", \"profile\": \"sata-ssd\"}", &sc, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(sc.profile, "sata-ssd");
	text = sfs_sidecar_dump(&sc);
	cr_assert_not_null(text);
	cr_assert_eq(parse(text, &back, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(back.profile, "sata-ssd");
	free(text);
	cr_assert_eq(parse("{\"size\": \"1M\"}", &sc, err, sizeof(err)), 0);
	cr_assert_str_eq(sc.profile, "");
	text = sfs_sidecar_dump(&sc);
	cr_assert_null(strstr(text, "profile"));
	free(text);
	cr_assert_eq(parse("{\"size\": \"1M\", \"profile\": 3}", &sc, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "'profile'"), "%s", err);
	cr_assert_eq(parse("{\"size\": \"1M\", \"profile\": \"\"}", &sc, err, sizeof(err)), -EINVAL);
}
