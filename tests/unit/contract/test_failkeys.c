/* SPDX-License-Identifier: MIT */
/*
 * test_failkeys.c - the failure keys' values and rules (core/contract/failkeys.c):
 * the write cache's defaults, the rules of its keys, the policy's text,
 * and the latency_spike object.
 *
 * Proves: atomic_write_unit defaults to the physical sector and
 * rmw_power_safe to physical = logical; write_cache_size,
 * atomic_write_unit and atomic_write_boundary are held to their rules,
 * each refusal naming the file and the key; the cache modes and the power
 * cut policies read and print back; the latency_spike object's rules are
 * enforced with the file and key named, and probability 0 never spikes.
 */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include <criterion/criterion.h>

#include "contract/failkeys.h"
#include "model/spike.h"

/* A volatile cache of 1 MiB on a 512e disk. */
static struct sfs_wc_config cfg_512e(void)
{
	struct sfs_wc_config c;

	sfs_wc_config_default(&c, 512, 4096);
	c.mode = SFS_WC_VOLATILE;
	c.size = 1 << 20;
	return c;
}

Test(failkeys, write_cache)
{
	struct sfs_wc_config c = cfg_512e();
	struct sfs_wc_cut cut = { 0 };
	char err[256], buf[64];
	enum sfs_wc_mode m;

	cr_expect_eq(c.awu, 4096, "atomic_write_unit defaults to the physical sector");
	cr_expect(!c.rmw_power_safe, "rmw_power_safe defaults to false on 512e");
	sfs_wc_config_default(&c, 4096, 4096);
	cr_expect(c.rmw_power_safe, "... and to true where physical = logical");
	cr_expect_eq(c.size, 32u << 20);
	c = cfg_512e();
	cr_expect_eq(sfs_wc_config_check(&c, "d.json", err, sizeof(err)), 0);
	c.awu = 256;
	cr_expect_eq(sfs_wc_config_check(&c, "d.json", err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "d.json: key 'atomic_write_unit': must be a power of two from the logical sector (512) to 64K");
	c.awu = 128 << 10;
	cr_expect_eq(sfs_wc_config_check(&c, "d.json", err, sizeof(err)), -EINVAL);
	c.awu = 3 << 10;
	cr_expect_eq(sfs_wc_config_check(&c, "d.json", err, sizeof(err)), -EINVAL);
	c.awu = 16 << 10;
	c.awb = 8 << 10;
	cr_expect_eq(sfs_wc_config_check(&c, "d.json", err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "d.json: key 'atomic_write_boundary': must be a power of two of at least atomic_write_unit (16384)");
	c.awb = 64 << 10;
	cr_expect_eq(sfs_wc_config_check(&c, "d.json", err, sizeof(err)), 0);
	c.size = 1024;
	cr_expect_eq(sfs_wc_config_check(&c, "d.json", err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "d.json: key 'write_cache_size': must be from 4K to 1T");
	cr_expect_eq(sfs_wc_parse_mode("volatile", &m), 0);
	cr_expect_eq(m, SFS_WC_VOLATILE);
	cr_expect_eq(sfs_wc_parse_mode("writeback", &m), -EINVAL);
	cr_expect_eq(sfs_wc_parse_policy("random:0.25", &cut, err, sizeof(err)), 0);
	cr_expect(cut.policy == SFS_WC_RANDOM && cut.p == 0.25);
	sfs_wc_format_policy(&cut, buf, sizeof(buf));
	cr_expect_str_eq(buf, "random:0.25");
	cr_expect_eq(sfs_wc_parse_policy("random", &cut, err, sizeof(err)), 0);
	cr_expect_eq(cut.p, 0.5);
	cr_expect_eq(sfs_wc_parse_policy("keep-all", &cut, err, sizeof(err)), 0);
	cr_expect_eq(cut.policy, SFS_WC_KEEP_ALL);
	cr_expect_eq(sfs_wc_parse_policy("random:1.5", &cut, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "power cut policy 'random:1.5': P must be a number from 0 to 1");
	cr_expect_eq(sfs_wc_parse_policy("random:nan", &cut, err, sizeof(err)), -EINVAL);
	cr_expect_eq(sfs_wc_parse_policy("lose-some", &cut, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "power cut policy 'lose-some': expected lose-all, keep-all, random or random:P");
}

static int parse(const char *text, struct sfs_spike *s, char *err, size_t errlen)
{
	json_error_t je;
	json_t *v = json_loads(text, 0, &je);
	int rc;

	cr_assert_not_null(v, "%s", je.text);
	rc = sfs_spike_parse(v, "p.json", "latency_spike", s, err, errlen);
	json_decref(v);
	return rc;
}

Test(failkeys, latency_spike)
{
	static const struct { const char *text, *msg; } bad[] = {
		{ "[1]", "p.json: key 'latency_spike': expected {\"probability\": P or \"every\": N, \"extra_us\": US}" },
		{ "{\"every\": 10}", "p.json: key 'latency_spike': extra_us is required" },
		{ "{\"extra_us\": 10}", "p.json: key 'latency_spike': probability or every is required" },
		{ "{\"every\": 0, \"extra_us\": 10}", "p.json: key 'latency_spike': every must be an integer >= 1" },
		{ "{\"every\": 1.5, \"extra_us\": 10}", "p.json: key 'latency_spike': every must be an integer >= 1" },
		{ "{\"probability\": 1.5, \"extra_us\": 10}", "p.json: key 'latency_spike': probability must be from 0 to 1" },
		{ "{\"probability\": \"high\", \"extra_us\": 10}", "p.json: key 'latency_spike': probability must be from 0 to 1" },
		{ "{\"every\": 2, \"extra_us\": 0}",
		  "p.json: key 'latency_spike': extra_us must be a number > 0 and at most 60000000 (60 s)" },
		{ "{\"every\": 2, \"extra_us\": 60000001}",
		  "p.json: key 'latency_spike': extra_us must be a number > 0 and at most 60000000 (60 s)" },
		{ "{\"every\": 2, \"extra_us\": 1e12}",
		  "p.json: key 'latency_spike': extra_us must be a number > 0 and at most 60000000 (60 s)" },
		{ "{\"every\": 2, \"extra_us\": 5, \"seed\": -1}", "p.json: key 'latency_spike': seed must be an integer >= 0" },
		{ "{\"every\": 2, \"extra_us\": 5, \"when\": 1}", "p.json: key 'latency_spike': unknown key 'when'" },
	};
	struct sfs_spike s;
	char err[256];

	cr_assert_eq(parse("{\"probability\": 0.001, \"extra_us\": 50000, \"seed\": 7}", &s, err, sizeof(err)), 0, "%s",
		     err);
	cr_expect(s.probability == 0.001 && s.every == 0 && s.extra_ns == 50000000 && s.seed == 7);
	cr_assert_eq(parse("{\"every\": 1000, \"extra_us\": 20000.5}", &s, err, sizeof(err)), 0, "%s", err);
	cr_expect(s.every == 1000 && s.extra_ns == 20000500 && s.probability == 0);
	cr_assert_eq(parse("{\"probability\": 0, \"extra_us\": 1}", &s, err, sizeof(err)), 0, "%s", err);
	cr_expect(!sfs_spike_on(&s), "probability 0 is allowed and never spikes");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_expect_eq(parse(bad[i].text, &s, err, sizeof(err)), -EINVAL, "%s", bad[i].text);
		cr_expect_str_eq(err, bad[i].msg);
	}
}
