/* SPDX-License-Identifier: MIT */
/*
 * stripes.h - every stripe lock of an image taken at once, in order, and
 * released in reverse: what a change of the whole image (a grow, a trim,
 * a new format, the record that it is all zeroed) holds so that no
 * request is under way in it meanwhile.
 */
#ifndef SFS_IMG_STRIPES_H
#define SFS_IMG_STRIPES_H

#include <pthread.h>

#include "internal.h"

static inline void sfs_img_lock_stripes(struct sfs_image *im)
{
	for (int i = 0; i < SFS_IMG_NSTRIPES; i++)
		pthread_mutex_lock(&im->stripe[i]);
}

static inline void sfs_img_unlock_stripes(struct sfs_image *im)
{
	for (int i = SFS_IMG_NSTRIPES - 1; i >= 0; i--)
		pthread_mutex_unlock(&im->stripe[i]);
}

#endif
