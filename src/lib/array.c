// SPDX-License-Identifier: MIT
/* Growing arrays; see array.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/array.h"

#define MIN_CAP 64

int array__grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : MIN_CAP;
	void *tmp;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	tmp = reallocarray(*arr, n, size);
	if (!tmp)
		return -ENOMEM;
	*arr = tmp;
	*cap = n;
	return 0;
}
