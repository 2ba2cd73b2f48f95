/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The only headers the protobuf encoder needs, from the kernel or from libc,
 * so that pb.h compiles unchanged into pbtrace.ko and into host unit tests.
 */
#ifndef _PBTRACE_PB_TYPES_H
#define _PBTRACE_PB_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#else
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdbool.h>
#endif

#endif /* _PBTRACE_PB_TYPES_H */
