/* SPDX-License-Identifier: MIT */
/*
 * test_xattrval.c - unit tests of core/mount/xattrval.c: the
 * user.sectorfs.* attributes of an image.
 *
 * Each value as text from a sidecar (the sector format only for a pair
 * that has a name), -ENODATA for a name outside the prefix or unknown
 * under it, -ERANGE for a buffer too small; the list listxattr gives;
 * which keys may be set; a value given to setxattr cut at its newline.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "contract/names.h"
#include "mount/xattrval.h"

static struct sfs_sidecar sidecar(uint32_t lss, uint32_t pss, enum sfs_prov prov, uint64_t block)
{
	struct sfs_sidecar sc;

	sfs_sidecar_defaults(&sc);
	sc.size = 1 << 30;
	sc.lss = lss;
	sc.pss = pss;
	sc.prov = prov;
	sc.block_size = block;
	return sc;
}

static void expect_value(const struct sfs_sidecar *sc, const char *name, const char *want)
{
	char buf[SFS_XATTR_VALUE_MAX];
	int n = sfs_xattr_value(sc, name, buf, sizeof(buf));

	cr_expect_eq(n, (int)strlen(want), "%s: %d, not %zu", name, n, strlen(want));
	if (n >= 0)
		cr_expect_str_eq(buf, want, "%s", name);
}

Test(xattrval, values_of_each_format)
{
	static const struct {
		uint32_t lss, pss;
		enum sfs_prov prov;
		uint64_t block;
		const char *want[5];   /* the values of keys[] */
	} formats[] = {
		{ 512, 512, SFS_PROV_THIN, 1 << 20, { "512", "512", "512n", "thin", "1048576" } },
		{ 512, 4096, SFS_PROV_ZEROEDTHICK, 64 << 20, { "512", "4096", "512e", "zeroedthick", "67108864" } },
		{ 4096, 4096, SFS_PROV_EAGERZEROEDTHICK, 4096, { "4096", "4096", "4kn", "eagerzeroedthick", "4096" } },
	};
	static const char *const keys[5] = {
		SFS_XATTR_PREFIX "logical_sector_size", SFS_XATTR_PREFIX "physical_sector_size",
		SFS_XATTR_PREFIX "sector", SFS_XATTR_PREFIX "provisioning", SFS_XATTR_PREFIX "block_size",
	};

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		struct sfs_sidecar sc = sidecar(formats[i].lss, formats[i].pss, formats[i].prov, formats[i].block);

		for (size_t k = 0; k < 5; k++)
			expect_value(&sc, keys[k], formats[i].want[k]);
	}
}

Test(xattrval, a_sector_pair_without_a_name_has_no_sector)
{
	struct sfs_sidecar sc = sidecar(1024, 4096, SFS_PROV_THIN, 1 << 20);
	char buf[SFS_XATTR_VALUE_MAX];

	cr_expect_eq(sfs_xattr_value(&sc, SFS_XATTR_PREFIX "sector", buf, sizeof(buf)), -ENODATA);
	expect_value(&sc, SFS_XATTR_PREFIX "logical_sector_size", "1024");
}

Test(xattrval, names_that_are_not_ours)
{
	struct sfs_sidecar sc = sidecar(512, 512, SFS_PROV_THIN, 1 << 20);
	char buf[SFS_XATTR_VALUE_MAX];
	static const char *const others[] = {
		"security.selinux", "system.posix_acl_access", "user.sectorfs", "user.sectorfs.",
		"user.sectorfs.size", "user.sectorfs.sector.x", "user.other.sector", "logical_sector_size",
	};

	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		cr_expect_eq(sfs_xattr_value(&sc, others[i], buf, sizeof(buf)), -ENODATA, "%s", others[i]);
	cr_expect_null(sfs_xattr_key("security.selinux"));
	cr_expect_null(sfs_xattr_key("user.sectorfs"));
	cr_expect_str_eq(sfs_xattr_key("user.sectorfs.sector"), "sector");
	cr_expect_str_eq(sfs_xattr_key("user.sectorfs."), "");
}

Test(xattrval, a_buffer_too_small_is_erange)
{
	struct sfs_sidecar sc = sidecar(512, 512, SFS_PROV_EAGERZEROEDTHICK, 1 << 20);
	char buf[17];

	/* "eagerzeroedthick" is 16 bytes: it needs 17 with its NUL */
	cr_expect_eq(sfs_xattr_value(&sc, SFS_XATTR_PREFIX "provisioning", buf, 16), -ERANGE);
	cr_expect_eq(sfs_xattr_value(&sc, SFS_XATTR_PREFIX "provisioning", buf, 17), 16);
	cr_expect_str_eq(buf, "eagerzeroedthick");
	cr_expect_eq(sfs_xattr_value(&sc, SFS_XATTR_PREFIX "logical_sector_size", buf, 3), -ERANGE);
	cr_expect_eq(sfs_xattr_value(&sc, SFS_XATTR_PREFIX "logical_sector_size", buf, 4), 3);
}

Test(xattrval, the_list)
{
	size_t len;
	const char *names = sfs_xattr_names(&len);
	struct sfs_sidecar sc = sidecar(512, 4096, SFS_PROV_THIN, 1 << 20);
	unsigned count = 0, failures = 0;

	/* every entry NUL-terminated, each one an attribute with a value */
	cr_assert_gt(len, 0);
	cr_assert_eq(names[len - 1], '\0');
	for (size_t off = 0; off < len; off += strlen(names + off) + 1) {
		char buf[SFS_XATTR_VALUE_MAX];
		bool w;

		if (sfs_xattr_failure(sfs_xattr_key(names + off), &w))
			failures++;
		else
			cr_expect_gt(sfs_xattr_value(&sc, names + off, buf, sizeof(buf)), 0, "%s", names + off);
		count++;
	}
	cr_expect_eq(count, 10);
	cr_expect_eq(failures, 5, "power, power_seed, power_cut_policy, bad_sectors, atomic_write_unit");
}

Test(xattrval, failure_keys)
{
	bool w;

	cr_expect(sfs_xattr_failure("power", &w) && w);
	cr_expect(sfs_xattr_failure("power_seed", &w) && w);
	cr_expect(sfs_xattr_failure("power_cut_policy", &w) && w);
	cr_expect(sfs_xattr_failure("bad_sectors", &w) && w);
	cr_expect(sfs_xattr_failure("atomic_write_unit", &w) && !w);
	cr_expect_not(sfs_xattr_failure("sector", &w));
	cr_expect_not(sfs_xattr_failure("powers", &w));
	cr_expect_not(sfs_xattr_failure("", &w));
}

Test(xattrval, settable_keys)
{
	cr_expect(sfs_xattr_settable("sector"));
	cr_expect(sfs_xattr_settable("provisioning"));
	cr_expect(sfs_xattr_settable("block_size"));
	cr_expect_not(sfs_xattr_settable("logical_sector_size"));
	cr_expect_not(sfs_xattr_settable("physical_sector_size"));
	cr_expect_not(sfs_xattr_settable(""));
	cr_expect_not(sfs_xattr_settable("sectors"));
}

Test(xattrval, a_value_given_to_setxattr)
{
	char out[SFS_XATTR_VALUE_MAX];
	char big[SFS_XATTR_VALUE_MAX];

	cr_expect_eq(sfs_xattr_parse("4kn\n", 4, out, sizeof(out)), 0);
	cr_expect_str_eq(out, "4kn");
	cr_expect_eq(sfs_xattr_parse("thinXXXX", 4, out, sizeof(out)), 0);   /* not NUL-terminated */
	cr_expect_str_eq(out, "thin");
	cr_expect_eq(sfs_xattr_parse("a\nb", 3, out, sizeof(out)), 0);
	cr_expect_str_eq(out, "a");
	cr_expect_eq(sfs_xattr_parse("", 0, out, sizeof(out)), 0);
	cr_expect_str_eq(out, "");
	memset(big, 'x', sizeof(big));
	cr_expect_eq(sfs_xattr_parse(big, sizeof(out) - 1, out, sizeof(out)), 0);
	cr_expect_eq(strlen(out), sizeof(out) - 1);
	cr_expect_eq(sfs_xattr_parse(big, sizeof(out), out, sizeof(out)), -EINVAL);
}
