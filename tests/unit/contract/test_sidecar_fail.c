/* SPDX-License-Identifier: MIT */
/*
 * test_sidecar_fail.c - the failure keys of a sidecar
 * (core/contract/sidecar.c, doc/failures.md): write_cache,
 * write_cache_size, atomic_write_unit, atomic_write_boundary,
 * rmw_power_safe, power_cut_policy and latency_spike.
 *
 * Proves:
 *   - each key is read in every form it takes (names, sizes as integers
 *     or strings, booleans, the policy's forms, the spike's object), and a
 *     sidecar without them is as before: no failure key set, the dump
 *     unchanged;
 *   - the dump writes back exactly the keys the file gave, so a sidecar
 *     the daemon rewrites (a resize, a new format) keeps them, and the
 *     dump parses back to the same values;
 *   - each bad value is refused naming the file, the key and the reason,
 *     the rules between keys included (a unit below the logical sector,
 *     a boundary below the unit, a cache below 4K);
 *   - an option's text sets the keys as a sidecar would, except the
 *     spike, which only a file can give.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "contract/sidecar.h"

#define FNAME "disk.json"

static int parse(const char *json, struct sfs_sidecar *sc, char *err, size_t errlen)
{
	return sfs_sidecar_parse(json, strlen(json), FNAME, sc, err, errlen);
}

/* Parse json, which must be good. */
static struct sfs_sidecar good(const char *json)
{
	struct sfs_sidecar sc;
	char err[512] = "";

	cr_assert_eq(parse(json, &sc, err, sizeof(err)), 0, "%s: %s", json, err);
	return sc;
}

Test(fail_keys, absent_means_none_and_dump_unchanged)
{
	struct sfs_sidecar sc = good("{\"size\": \"1M\", \"sector\": \"512e\"}");
	char *text = sfs_sidecar_dump(&sc);

	cr_expect_eq(sc.fail.have, 0);
	cr_assert_not_null(text);
	cr_expect_null(strstr(text, "write_cache"), "%s", text);
	cr_expect_null(strstr(text, "atomic"), "%s", text);
	cr_expect_null(strstr(text, "spike"), "%s", text);
	free(text);
}

Test(fail_keys, every_key_read)
{
	struct sfs_sidecar sc = good("{\"size\": \"1M\", \"sector\": \"512e\", \"write_cache\": \"volatile\", "
				     "\"write_cache_size\": \"8M\", \"atomic_write_unit\": \"16K\", "
				     "\"atomic_write_boundary\": 65536, \"rmw_power_safe\": true, "
				     "\"power_cut_policy\": \"random:0.25\", "
				     "\"latency_spike\": {\"every\": 100, \"extra_us\": 1500, \"seed\": 7}}");

	cr_expect_eq(sc.fail.mode, SFS_WC_VOLATILE);
	cr_expect_eq(sc.fail.cache_size, 8u << 20);
	cr_expect_eq(sc.fail.awu, 16384);
	cr_expect_eq(sc.fail.awb, 65536);
	cr_expect(sc.fail.rmw_power_safe);
	cr_expect_eq(sc.fail.cut.policy, SFS_WC_RANDOM);
	cr_expect_float_eq(sc.fail.cut.p, 0.25, 1e-12);
	cr_expect_eq(sc.fail.spike.every, 100);
	cr_expect_eq(sc.fail.spike.extra_ns, 1500000);
	cr_expect_eq(sc.fail.spike.seed, 7);
	cr_expect_eq(sc.fail.have, SFS_HAVE_FAIL_KEYS);
}

Test(fail_keys, config_takes_defaults_from_the_geometry)
{
	struct sfs_sidecar sc = good("{\"size\": \"1M\", \"sector\": \"512e\", \"write_cache\": \"volatile\"}");
	struct sfs_wc_config c;
	struct sfs_wc_cut cut;

	sfs_sidecar_fail_config(&sc, &c, &cut);
	cr_expect_eq(c.mode, SFS_WC_VOLATILE);
	cr_expect_eq(c.size, 32u << 20);
	cr_expect_eq(c.lss, 512);
	cr_expect_eq(c.pss, 4096);
	cr_expect_eq(c.awu, 4096);
	cr_expect_eq(c.awb, 0);
	cr_expect(!c.rmw_power_safe);
	cr_expect_eq(cut.policy, SFS_WC_LOSE_ALL);
	cr_expect_eq(cut.seed, 0);

	sc = good("{\"size\": \"1M\", \"sector\": \"4kn\"}");
	sfs_sidecar_fail_config(&sc, &c, &cut);
	cr_expect_eq(c.mode, SFS_WC_NONE);
	cr_expect_eq(c.awu, 4096);
	cr_expect(c.rmw_power_safe);
}

Test(fail_keys, dump_keeps_exactly_the_keys_given)
{
	const char *json = "{\"size\": \"1M\", \"sector\": \"512e\", \"write_cache\": \"volatile\", "
			   "\"rmw_power_safe\": false, \"power_cut_policy\": \"keep-all\", "
			   "\"latency_spike\": {\"probability\": 0.5, \"extra_us\": 2.5}}";
	struct sfs_sidecar sc = good(json), back;
	char *text = sfs_sidecar_dump(&sc);
	char err[512] = "";

	cr_assert_not_null(text);
	cr_expect_not_null(strstr(text, "\"write_cache\": \"volatile\""), "%s", text);
	cr_expect_not_null(strstr(text, "\"rmw_power_safe\": false"), "%s", text);
	cr_expect_not_null(strstr(text, "\"power_cut_policy\": \"keep-all\""), "%s", text);
	cr_expect_null(strstr(text, "write_cache_size"), "%s", text);
	cr_expect_null(strstr(text, "atomic_write_unit"), "%s", text);
	cr_assert_eq(parse(text, &back, err, sizeof(err)), 0, "%s\n%s", err, text);
	cr_expect_eq(back.fail.have, sc.fail.have);
	cr_expect_eq(back.fail.mode, SFS_WC_VOLATILE);
	cr_expect_eq(back.fail.cut.policy, SFS_WC_KEEP_ALL);
	cr_expect_float_eq(back.fail.spike.probability, 0.5, 1e-12);
	cr_expect_eq(back.fail.spike.extra_ns, 2500);
	free(text);
}

Test(fail_keys, random_policy_round_trips)
{
	struct sfs_sidecar sc = good("{\"size\": 4096, \"write_cache\": \"volatile\", \"power_cut_policy\": \"random\"}"), back;
	char *text = sfs_sidecar_dump(&sc);

	cr_assert_not_null(text);
	cr_assert_eq(parse(text, &back, NULL, 0), 0, "%s", text);
	cr_expect_eq(back.fail.cut.policy, SFS_WC_RANDOM);
	cr_expect_float_eq(back.fail.cut.p, 0.5, 1e-12);
	free(text);
}

struct bad_case {
	char json[256];
	char key[32];
	char word[64];
};

ParameterizedTestParameters(fail_keys, bad)
{
	static struct bad_case cases[] = {
		{ "{\"size\": 4096, \"write_cache\": \"writeback\"}", "write_cache", "none or volatile" },
		{ "{\"size\": 4096, \"write_cache\": true}", "write_cache", "a string" },
		{ "{\"size\": 4096, \"write_cache_size\": \"2K\"}", "write_cache_size", "from 4K to 1T" },
		{ "{\"size\": 4096, \"write_cache_size\": \"2T\"}", "write_cache_size", "from 4K to 1T" },
		{ "{\"size\": 4096, \"write_cache_size\": \"lots\"}", "write_cache_size", "not a valid size" },
		{ "{\"size\": 4096, \"sector\": \"4kn\", \"atomic_write_unit\": 512}", "atomic_write_unit",
		  "logical sector (4096)" },
		{ "{\"size\": 4096, \"atomic_write_unit\": 3000}", "atomic_write_unit", "power of two" },
		{ "{\"size\": 4096, \"atomic_write_unit\": \"128K\"}", "atomic_write_unit", "to 64K" },
		{ "{\"size\": 4096, \"atomic_write_unit\": 8192, \"atomic_write_boundary\": 4096}",
		  "atomic_write_boundary", "at least atomic_write_unit" },
		{ "{\"size\": 4096, \"rmw_power_safe\": \"yes\"}", "rmw_power_safe", "true or false" },
		{ "{\"size\": 4096, \"power_cut_policy\": \"lose-some\"}", "power_cut_policy", "lose-all, keep-all" },
		{ "{\"size\": 4096, \"power_cut_policy\": \"random:2\"}", "power_cut_policy", "from 0 to 1" },
		{ "{\"size\": 4096, \"latency_spike\": {\"every\": 10}}", "latency_spike", "extra_us is required" },
		{ "{\"size\": 4096, \"latency_spike\": 5}", "latency_spike", "expected" },
	};

	return cr_make_param_array(struct bad_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_case *c, fail_keys, bad)
{
	struct sfs_sidecar sc;
	char err[512] = "", want[64];

	cr_expect_eq(parse(c->json, &sc, err, sizeof(err)), -EINVAL, "%s", c->json);
	snprintf(want, sizeof(want), FNAME ": key '%s': ", c->key);
	cr_expect(strncmp(err, want, strlen(want)) == 0, "%s: got '%s'", c->json, err);
	cr_expect_not_null(strstr(err, c->word), "%s: got '%s'", c->json, err);
}

Test(fail_keys, options_set_them_as_a_file_would)
{
	struct sfs_sidecar_draft d;
	struct sfs_sidecar sc;
	char err[256] = "";

	sfs_sidecar_draft_init(&d, NULL);
	cr_assert_eq(sfs_sidecar_draft_set(&d, "write_cache", "volatile", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sfs_sidecar_draft_set(&d, "write_cache_size", "1M", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sfs_sidecar_draft_set(&d, "rmw_power_safe", "true", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sfs_sidecar_draft_set(&d, "power_cut_policy", "random:0.1", err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(sfs_sidecar_draft_set(&d, "latency_spike", "{}", err, sizeof(err)), -EINVAL);
	cr_expect_not_null(strstr(err, "only in a sidecar file"), "%s", err);
	cr_assert_eq(sfs_sidecar_draft_done(&d, false, "-o", &sc, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(sc.fail.mode, SFS_WC_VOLATILE);
	cr_expect_eq(sc.fail.cache_size, 1u << 20);
	cr_expect(sc.fail.rmw_power_safe);
	cr_expect_float_eq(sc.fail.cut.p, 0.1, 1e-12);
}
