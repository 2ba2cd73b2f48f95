/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Protobuf text format parser driven by protobuf-c descriptors.
 *
 * It fills any protobuf-c message from its text form (what protoc
 * --encode reads and Perfetto's .pbtx configs use), so a field added to
 * proto/config.proto is accepted without new parsing code.
 *
 * Accepted: `name: value`, `name { ... }`, `name: { ... }`, `name < ... >`,
 * `#` comments, optional `,` or `;` after a field, repeated fields by
 * repetition or `name: [a, b]`, enums by name or number, strings in '"' or
 * '\'' with C escapes (\n \t \xhh \ooo \uXXXX ...) and adjacent literals
 * concatenated, bools true/false/True/False/t/f/1/0, decimal, hex (0x) and
 * octal (0) integers range-checked per field type, floats (inf, nan, 1e3,
 * 1.5f), bytes.
 *
 * Policy (docs/config.md):
 *  - a field name the descriptor does not know is a WARNING, not an error:
 *    the name is probably a real Perfetto field outside pbtrace's subset.
 *    Its value (scalar, list or nested block) is syntax-checked and
 *    skipped. With TEXTPB_STRICT it is an error instead.
 *  - a syntax error, a bad value, a non-repeated field set twice or a
 *    missing required field is an ERROR with line and column.
 */
#ifndef PBT_TEXTPB_H
#define PBT_TEXTPB_H

#include <stddef.h>
#include <protobuf-c/protobuf-c.h>

#define TEXTPB_MSG_MAX 256
#define TEXTPB_MAX_WARNINGS 64
#define TEXTPB_MAX_DEPTH 64

/* Unknown field names are errors rather than warnings. */
#define TEXTPB_STRICT 0x1

struct textpb_diag {
	unsigned int line, col;		/* 1-based; 0 when not known */
	char msg[TEXTPB_MSG_MAX];
};

/* Where a value was written in the text: the value's token for scalars,
 * the field name for messages (their '{' inside a [list]). index: element
 * of a repeated field, else 0. */
struct textpb_pos {
	const ProtobufCMessage *msg;
	const ProtobufCFieldDescriptor *field;
	size_t index;
	unsigned int line, col;
};

struct textpb_error {
	unsigned int line, col;		/* of the error; 0 when none */
	char msg[TEXTPB_MSG_MAX];	/* "" when none */
	/* Warnings, in input order; malloc'd, free with textpb_error_free. */
	struct textpb_diag *warnings;
	size_t nr_warnings;
	size_t nr_warnings_dropped;	/* beyond TEXTPB_MAX_WARNINGS */
	/* Positions of every value set, for errors found after parsing. */
	struct textpb_pos *pos;
	size_t nr_pos;
};

/*
 * Parses text[0..len) as a message of type d. Returns the message (free
 * with protobuf_c_message_free_unpacked(msg, NULL)) or NULL with err->line,
 * err->col and err->msg set. err->warnings is filled in both cases; call
 * textpb_error_free(err) when done with them.
 */
ProtobufCMessage *textpb_parse(const ProtobufCMessageDescriptor *d,
			       const char *text, size_t len,
			       struct textpb_error *err);
ProtobufCMessage *textpb_parse_ex(const ProtobufCMessageDescriptor *d,
				  const char *text, size_t len,
				  unsigned int flags, struct textpb_error *err);

void textpb_error_free(struct textpb_error *err);

/*
 * Line and column where field `name` of message m (element index) was set
 * in the parsed text, so checks made after parsing can point at it.
 * Returns 0, or -1 when not known (binary input, or not set).
 */
int textpb_find_pos(const struct textpb_error *err, const ProtobufCMessage *m,
		    const char *name, size_t index,
		    unsigned int *line, unsigned int *col);

/* Appends a warning (also used by config.c for its own checks). */
void textpb_warn(struct textpb_error *err, unsigned int line,
		 unsigned int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* PBT_TEXTPB_H */
