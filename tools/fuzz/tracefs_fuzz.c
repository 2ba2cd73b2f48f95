// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the tracefs format parser (user/lib/tracefs.c) and
 * the native numbering on its result: no crash, leak or UB on any input,
 * and whatever it accepts is a layout the kernel can be sent: at most
 * PBTRACE_TP_MAX_FIELDS fields, named, each proto id at most
 * PBTRACE_TP_MAX_PROTO_ID and used once, common_* fields unwritten.
 *
 * Built and run by tools/fuzz/run, which reads these lines:
 * fuzz-sources: user/lib/tracefs.c user/lib/tp_native.c
 * fuzz-protos: config trace
 * fuzz-seeds: tools/fuzz/tracefs_seeds
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracefs.h"

static void check(const struct pbt_tp_layout *l)
{
	uint32_t seen = 0;
	uint16_t i;

	if (l->nr_fields > PBTRACE_TP_MAX_FIELDS)
		abort();
	for (i = 0; i < l->nr_fields; i++) {
		const struct pbt_tpf *f = &l->fields[i];

		if (!f->name[0] || f->proto_id > PBTRACE_TP_MAX_PROTO_ID ||
		    f->offset + f->size > UINT16_MAX ||
		    (f->proto_id && (seen & (1u << f->proto_id))) ||
		    (f->proto_id && !strncmp(f->name, "common_", 7)) ||
		    !f->kind || f->kind > PBTRACE_TPF_BYTES)
			abort();
		seen |= f->proto_id ? 1u << f->proto_id : 0;
	}
}

/* The event name the input's "name: " line gives, so that most inputs
 * get past the name check. */
static void input_name(const uint8_t *data, size_t size, char *name, size_t len)
{
	const char *p = memmem(data, size, "name: ", 6);
	size_t n = 0;

	snprintf(name, len, "e");
	if (!p)
		return;
	p += 6;
	while ((const uint8_t *)p + n < data + size && n + 1 < len &&
	       p[n] != '\n' && p[n])
		n++;
	if (n) {
		memcpy(name, p, n);
		name[n] = '\0';
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pbt_tp_layout l;
	char name[PBTRACE_NAME_MAX], err[512];

	input_name(data, size, name, sizeof(name));
	if (pbt_tracefs_parse((const char *)data, size, "g", name, &l, err,
			      sizeof(err)) >= 0) {
		check(&l);
		pbt_tp_native_ids(&l);
		if (l.nr_fields > PBTRACE_TP_MAX_FIELDS)
			abort();
	}
	return 0;
}
