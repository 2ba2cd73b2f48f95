// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the config loader: the text parser (both policies)
 * and the binary path, then the checks and the kernel spec, on any input.
 * Beyond "no crash, no leak, no UB" it checks one property: whatever the
 * text parser accepts serializes and decodes again.
 *
 * Built and run by tools/fuzz/run, which reads these lines:
 * fuzz-sources: user/lib/textpb.c user/lib/config.c user/lib/syscalls.c
 * fuzz-gen: user/lib/syscalls_table.sh
 * fuzz-protos: config
 * fuzz-seeds: user/tests/configs
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "textpb.h"

static void text_roundtrip(const uint8_t *data, size_t size, unsigned int flags)
{
	struct textpb_error err = { 0 };
	ProtobufCMessage *m, *back;
	uint8_t *buf;
	size_t len;

	m = textpb_parse_ex(&perfetto__protos__trace_config__descriptor,
			    (const char *)data, size, flags, &err);
	textpb_error_free(&err);
	if (!m)
		return;
	len = protobuf_c_message_get_packed_size(m);
	buf = malloc(len + 1);
	if (!buf)
		abort();
	protobuf_c_message_pack(m, buf);
	back = protobuf_c_message_unpack(&perfetto__protos__trace_config__descriptor,
					 NULL, len, buf);
	if (!back)
		abort();	/* we produced bytes protobuf-c cannot read */
	protobuf_c_message_free_unpacked(back, NULL);
	protobuf_c_message_free_unpacked(m, NULL);
	free(buf);
}

static void load(const uint8_t *data, size_t size, enum pbt_config_format fmt)
{
	struct pbt_session_spec spec;
	struct pbt_config c;
	char err[512];

	if (!pbt_config_parse(data, size, "fuzz", fmt, &c, err, sizeof(err)))
		pbt_config_to_spec(&c, &spec, NULL, 2, err, sizeof(err));
	pbt_config_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	text_roundtrip(data, size, 0);
	text_roundtrip(data, size, TEXTPB_STRICT);
	load(data, size, PBT_CONFIG_TEXT);
	load(data, size, PBT_CONFIG_BINARY);
	return 0;
}
