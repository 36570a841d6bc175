/* SPDX-License-Identifier: MIT */
/*
 * spike.c - latency spikes (spike.h): which requests spike, and by how
 * much (the key's object is read in contract/failkeys.c).
 */
#include "spike.h"

#include "util/prng.h"

bool sfs_spike_on(const struct sfs_spike *s)
{
	return s->extra_ns && (s->every || s->probability > 0);
}

uint64_t sfs_spike_extra_ns(const struct sfs_spike *s, uint64_t n)
{
	if (!s->extra_ns)
		return 0;
	if (s->every && (n + 1) % s->every == 0)
		return s->extra_ns;
	if (s->probability > 0 && sfs_draw_unit(sfs_draw(s->seed, n, SFS_SPIKE_STREAM)) < s->probability)
		return s->extra_ns;
	return 0;
}
