/* SPDX-License-Identifier: MIT */
/*
 * image_test.h - the tests' view of an image: what the unit tests look at
 * that image.h does not offer, as nothing in fs/ or tools/ needs it.
 */
#ifndef SFS_IMAGE_TEST_H
#define SFS_IMAGE_TEST_H

#include <stdbool.h>

#include "image.h"

/* Are im's descriptors open now (always without a cache)?  A hint unless pinned. */
bool sfs_image_resident(struct sfs_image *im);

/* Have the stats been made (the image had I/O, or sfs_image_stats was called), live or packed? */
bool sfs_image_has_stats(struct sfs_image *im);

#endif
