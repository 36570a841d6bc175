/* SPDX-License-Identifier: MIT */
/*
 * stripes.h - every stripe lock of an image taken at once, in order, and
 * released in reverse: what a change of the whole image (a grow, a trim,
 * a new format, the record that it is all zeroed) holds so that no
 * request is under way in it meanwhile.
 */
#ifndef SFS_IMAGE_STRIPES_H
#define SFS_IMAGE_STRIPES_H

#include <pthread.h>

#include "internal.h"

static inline void image_lock_stripes(struct sfs_image *im)
{
	for (int i = 0; i < IMAGE_NSTRIPES; i++)
		pthread_mutex_lock(&im->stripe[i]);
}

static inline void image_unlock_stripes(struct sfs_image *im)
{
	for (int i = IMAGE_NSTRIPES - 1; i >= 0; i--)
		pthread_mutex_unlock(&im->stripe[i]);
}

#endif
