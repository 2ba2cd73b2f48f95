// SPDX-License-Identifier: GPL-2.0
/*
 * Protobuf text format -> protobuf-c message, from descriptors alone.
 *
 * A hand-written tokenizer (protoc's token classes: identifier, integer,
 * float, string, symbol) feeds a recursive descent parser that writes
 * each value at the offset the field descriptor gives. Messages are built
 * so that protobuf_c_message_free_unpacked() can free them at any point,
 * which keeps error paths to a single free.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "textpb.h"

#define MEMBER(type, msg, off) (*(type *)((char *)(msg) + (off)))

enum tok_kind { T_EOF, T_IDENT, T_INT, T_FLOAT, T_STRING, T_SYMBOL };

struct tok {
	enum tok_kind kind;
	const char *s;		/* into the input */
	size_t len;
	unsigned int line, col;
};

struct parser {
	const char *p, *end;
	unsigned int line, col;	/* of p */
	struct tok t;		/* current token */
	unsigned int flags;
	unsigned int vline, vcol;	/* where the value being parsed starts */
	struct textpb_error *err;
	bool failed;
};

/* Where a non-repeated field was first set, to report "set twice". */
struct seen {
	unsigned int line, col;
};

static void verror(struct parser *ps, unsigned int line, unsigned int col,
		   const char *fmt, va_list ap)
{
	if (ps->failed)
		return;	/* the first error is the one worth reading */
	ps->failed = true;
	ps->err->line = line;
	ps->err->col = col;
	vsnprintf(ps->err->msg, sizeof(ps->err->msg), fmt, ap);
}

static __attribute__((format(printf, 4, 5)))
int error_at(struct parser *ps, unsigned int line, unsigned int col,
	     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(ps, line, col, fmt, ap);
	va_end(ap);
	return -1;
}

/* Error at the current token. */
static __attribute__((format(printf, 2, 3)))
int error(struct parser *ps, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(ps, ps->t.line, ps->t.col, fmt, ap);
	va_end(ap);
	return -1;
}

void textpb_warn(struct textpb_error *err, unsigned int line,
		 unsigned int col, const char *fmt, ...)
{
	struct textpb_diag *d;
	va_list ap;

	if (err->nr_warnings >= TEXTPB_MAX_WARNINGS) {
		err->nr_warnings_dropped++;
		return;
	}
	d = realloc(err->warnings, (err->nr_warnings + 1) * sizeof(*d));
	if (!d) {
		err->nr_warnings_dropped++;
		return;
	}
	err->warnings = d;
	d += err->nr_warnings++;
	d->line = line;
	d->col = col;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
}

void textpb_error_free(struct textpb_error *err)
{
	free(err->warnings);
	err->warnings = NULL;
	err->nr_warnings = 0;
	err->nr_warnings_dropped = 0;
	free(err->pos);
	err->pos = NULL;
	err->nr_pos = 0;
}

int textpb_find_pos(const struct textpb_error *err, const ProtobufCMessage *m,
		    const char *name, size_t index,
		    unsigned int *line, unsigned int *col)
{
	size_t i;

	for (i = 0; i < err->nr_pos; i++) {
		const struct textpb_pos *p = &err->pos[i];

		if (p->msg == m && p->index == index &&
		    !strcmp(p->field->name, name)) {
			*line = p->line;
			*col = p->col;
			return 0;
		}
	}
	return -1;
}

/* Positions grow by doubling: one per value in the input. */
static int record_pos(struct parser *ps, const ProtobufCMessage *m,
		      const ProtobufCFieldDescriptor *f,
		      unsigned int line, unsigned int col)
{
	struct textpb_error *err = ps->err;
	struct textpb_pos *p = err->pos;
	size_t n = err->nr_pos;

	if (!(n & (n - 1))) {	/* 0, 1, 2, 4, ...: full */
		p = realloc(p, (n ? 2 * n : 1) * sizeof(*p));
		if (!p)
			return error(ps, "out of memory");
		err->pos = p;
	}
	p[n].msg = m;
	p[n].field = f;
	p[n].index = f->label == PROTOBUF_C_LABEL_REPEATED ?
		     MEMBER(size_t, m, f->quantifier_offset) - 1 : 0;
	p[n].line = line;
	p[n].col = col;
	err->nr_pos++;
	return 0;
}

/* ---- tokenizer ---- */

static void advance(struct parser *ps)
{
	if (*ps->p == '\n') {
		ps->line++;
		ps->col = 1;
	} else {
		ps->col++;
	}
	ps->p++;
}

static void skip_space(struct parser *ps)
{
	while (ps->p < ps->end) {
		char c = *ps->p;

		if (c == '#') {
			while (ps->p < ps->end && *ps->p != '\n')
				advance(ps);
		} else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
			   c == '\v' || c == '\f') {
			advance(ps);
		} else {
			break;
		}
	}
}

static bool is_ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* A number token is everything protoc would glue into one: digits,
 * letters (hex, suffix, or a mistake we report), '.', and a sign right
 * after an exponent 'e' of a non-hex number. */
static int lex_number(struct parser *ps)
{
	const char *s = ps->p;
	bool hex = ps->end - s > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	bool isfloat = false;

	while (ps->p < ps->end) {
		char c = *ps->p;

		if (c == '.') {
			isfloat = true;
		} else if (!hex && (c == 'e' || c == 'E')) {
			isfloat = true;
			advance(ps);
			if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
				advance(ps);
			continue;
		} else if (!hex && (c == 'f' || c == 'F')) {
			isfloat = true;
		} else if (!is_ident_char(c)) {
			break;
		}
		advance(ps);
	}
	ps->t.kind = isfloat ? T_FLOAT : T_INT;
	return 0;
}

static int lex_string(struct parser *ps)
{
	char quote = *ps->p;

	advance(ps);
	while (ps->p < ps->end && *ps->p != quote) {
		if (*ps->p == '\n')
			break;
		if (*ps->p == '\\' && ps->end - ps->p > 1 && ps->p[1] != '\n')
			advance(ps);
		advance(ps);
	}
	if (ps->p >= ps->end || *ps->p != quote)
		return error(ps, "unterminated string: close it with %c on the same line",
			     quote);
	advance(ps);
	ps->t.kind = T_STRING;
	return 0;
}

/* Moves to the next token; 0 or -1 after an error. */
static int next(struct parser *ps)
{
	char c;

	skip_space(ps);
	ps->t.s = ps->p;
	ps->t.line = ps->line;
	ps->t.col = ps->col;
	ps->t.len = 0;
	if (ps->p >= ps->end) {
		ps->t.kind = T_EOF;
		return 0;
	}
	c = *ps->p;
	if (is_ident_start(c)) {
		while (ps->p < ps->end && is_ident_char(*ps->p))
			advance(ps);
		ps->t.kind = T_IDENT;
	} else if (isdigit((unsigned char)c) ||
		   (c == '.' && ps->end - ps->p > 1 &&
		    isdigit((unsigned char)ps->p[1]))) {
		lex_number(ps);
	} else if (c == '"' || c == '\'') {
		if (lex_string(ps))
			return -1;
	} else if (isprint((unsigned char)c)) {
		advance(ps);
		ps->t.kind = T_SYMBOL;
	} else {
		return error(ps, "unexpected byte 0x%02x: a text config is printable text",
			     (unsigned char)c);
	}
	ps->t.len = (size_t)(ps->p - ps->t.s);
	return 0;
}

static bool is_sym(const struct parser *ps, char c)
{
	return ps->t.kind == T_SYMBOL && ps->t.s[0] == c;
}

static bool is_word(const struct parser *ps, const char *w)
{
	return ps->t.kind == T_IDENT && strlen(w) == ps->t.len &&
	       !memcmp(ps->t.s, w, ps->t.len);
}

/* The current token for messages, quoted and cut to a readable length. */
static const char *tok_str(const struct parser *ps, char *buf, size_t n)
{
	if (ps->t.kind == T_EOF)
		return "end of input";
	snprintf(buf, n, "'%.*s'", ps->t.len > 40 ? 40 : (int)ps->t.len,
		 ps->t.s);
	return buf;
}

static int expect_sym(struct parser *ps, char c, const char *why)
{
	char b[64];

	if (!is_sym(ps, c))
		return error(ps, "expected '%c' %s, got %s", c, why,
			     tok_str(ps, b, sizeof(b)));
	return next(ps);
}

/* ---- value conversion ---- */

static int digit_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 99;
}

/* Decimal, 0x hex or 0 octal, as protoc reads them. -1 if the token is
 * not an integer, -2 on overflow of 64 bits. */
static int tok_to_u64(const struct tok *t, uint64_t *out)
{
	const char *s = t->s, *e = t->s + t->len;
	unsigned int base = 10;
	uint64_t v = 0;

	if (t->kind != T_INT)
		return -1;
	if (e - s > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (s == e)
			return -1;
	} else if (e - s > 1 && s[0] == '0') {
		base = 8;
	}
	for (; s < e; s++) {
		unsigned int d = (unsigned int)digit_val(*s);

		if (d >= base)
			return -1;
		if (v > (UINT64_MAX - d) / base)
			return -2;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

static const char *type_name(ProtobufCType type)
{
	switch (type) {
	case PROTOBUF_C_TYPE_INT32: return "int32";
	case PROTOBUF_C_TYPE_SINT32: return "sint32";
	case PROTOBUF_C_TYPE_SFIXED32: return "sfixed32";
	case PROTOBUF_C_TYPE_INT64: return "int64";
	case PROTOBUF_C_TYPE_SINT64: return "sint64";
	case PROTOBUF_C_TYPE_SFIXED64: return "sfixed64";
	case PROTOBUF_C_TYPE_UINT32: return "uint32";
	case PROTOBUF_C_TYPE_FIXED32: return "fixed32";
	case PROTOBUF_C_TYPE_UINT64: return "uint64";
	case PROTOBUF_C_TYPE_FIXED64: return "fixed64";
	case PROTOBUF_C_TYPE_FLOAT: return "float";
	case PROTOBUF_C_TYPE_DOUBLE: return "double";
	case PROTOBUF_C_TYPE_BOOL: return "bool";
	case PROTOBUF_C_TYPE_ENUM: return "enum";
	case PROTOBUF_C_TYPE_STRING: return "string";
	case PROTOBUF_C_TYPE_BYTES: return "bytes";
	case PROTOBUF_C_TYPE_MESSAGE: return "message";
	}
	return "?";
}

/* Bounds of an integer type, as magnitude limits for each sign. */
static void int_limits(ProtobufCType type, uint64_t *pos_max, uint64_t *neg_max)
{
	switch (type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		*pos_max = INT32_MAX;
		*neg_max = (uint64_t)INT32_MAX + 1;
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		*pos_max = UINT32_MAX;
		*neg_max = 0;
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		*pos_max = UINT64_MAX;
		*neg_max = 0;
		break;
	default:	/* the 64-bit signed types */
		*pos_max = INT64_MAX;
		*neg_max = (uint64_t)INT64_MAX + 1;
		break;
	}
}

/* Optional '-' then an integer token; leaves the token after it. */
static int parse_int(struct parser *ps, ProtobufCType type, uint64_t *bits)
{
	unsigned int line = ps->t.line, col = ps->t.col;
	uint64_t mag, pos_max, neg_max;
	bool neg = false;
	char b[64];
	int r;

	if (is_sym(ps, '-')) {
		neg = true;
		if (next(ps))
			return -1;
	}
	r = tok_to_u64(&ps->t, &mag);
	if (r == -1)
		return error_at(ps, line, col, "expected integer (%s), got %s",
				type_name(type), tok_str(ps, b, sizeof(b)));
	int_limits(type, &pos_max, &neg_max);
	if (r == -2 || (!neg && mag > pos_max) || (neg && mag > neg_max))
		return error_at(ps, line, col, "value out of range for %s: %s%.*s",
				type_name(type), neg ? "-" : "",
				(int)ps->t.len, ps->t.s);
	*bits = neg ? (uint64_t)0 - mag : mag;
	return next(ps);
}

static bool word_ieq(const struct tok *t, const char *w)
{
	return t->kind == T_IDENT && strlen(w) == t->len &&
	       !strncasecmp(t->s, w, t->len);
}

static int parse_double(struct parser *ps, double *out)
{
	unsigned int line = ps->t.line, col = ps->t.col;
	bool neg = false;
	char buf[128], *end, b[64];
	uint64_t u;
	size_t n;

	if (is_sym(ps, '-')) {
		neg = true;
		if (next(ps))
			return -1;
	}
	if (word_ieq(&ps->t, "inf") || word_ieq(&ps->t, "infinity")) {
		*out = INFINITY;
	} else if (word_ieq(&ps->t, "nan")) {
		*out = NAN;
	} else if (tok_to_u64(&ps->t, &u) == 0) {
		*out = (double)u;
	} else if (ps->t.kind == T_FLOAT && ps->t.len < sizeof(buf)) {
		n = ps->t.len;
		if (ps->t.s[n - 1] == 'f' || ps->t.s[n - 1] == 'F')
			n--;
		memcpy(buf, ps->t.s, n);
		buf[n] = '\0';
		errno = 0;
		*out = strtod(buf, &end);
		if (n == 0 || *end)
			return error_at(ps, line, col, "invalid number %s",
					tok_str(ps, b, sizeof(b)));
	} else {
		return error_at(ps, line, col, "expected number, got %s",
				tok_str(ps, b, sizeof(b)));
	}
	if (neg)
		*out = -*out;
	return next(ps);
}

static int parse_bool(struct parser *ps, protobuf_c_boolean *out)
{
	char b[64];

	if (is_word(ps, "true") || is_word(ps, "True") || is_word(ps, "t") ||
	    (ps->t.kind == T_INT && ps->t.len == 1 && ps->t.s[0] == '1'))
		*out = 1;
	else if (is_word(ps, "false") || is_word(ps, "False") ||
		 is_word(ps, "f") ||
		 (ps->t.kind == T_INT && ps->t.len == 1 && ps->t.s[0] == '0'))
		*out = 0;
	else
		return error(ps, "expected true or false, got %s",
			     tok_str(ps, b, sizeof(b)));
	return next(ps);
}

static int parse_enum(struct parser *ps, const ProtobufCFieldDescriptor *f,
		      int *out)
{
	const ProtobufCEnumDescriptor *ed = f->descriptor;
	const ProtobufCEnumValue *v;
	unsigned int line = ps->t.line, col = ps->t.col;
	char names[160] = "", b[64];
	const char *what = tok_str(ps, b, sizeof(b));
	uint64_t bits;
	size_t i, n = 0;

	if (ps->t.kind == T_IDENT) {
		char name[128];

		snprintf(name, sizeof(name), "%.*s", (int)ps->t.len, ps->t.s);
		v = protobuf_c_enum_descriptor_get_value_by_name(ed, name);
		if (v)
			return *out = v->value, next(ps);
	} else if (is_sym(ps, '-') || ps->t.kind == T_INT) {
		if (parse_int(ps, PROTOBUF_C_TYPE_INT32, &bits))
			return -1;
		snprintf(b, sizeof(b), "%d", (int)(int32_t)bits);
		v = protobuf_c_enum_descriptor_get_value(ed, (int)(int32_t)bits);
		if (v)
			return *out = v->value, 0;
	}
	for (i = 0; i < ed->n_values; i++) {
		n += (size_t)snprintf(names + n, n < sizeof(names) ? sizeof(names) - n : 0,
				      "%s%s", i ? ", " : "", ed->values[i].name);
	}
	return error_at(ps, line, col,
			"unknown value %s for enum %s field '%s'; expected one of %s",
			what, ed->name, f->name, names);
}

static int unescape_char(const char **sp, const char *e, char **op)
{
	const char *s = *sp;
	unsigned long cp = 0;
	int i, n;

	switch (*s) {
	case 'n': *(*op)++ = '\n'; break;
	case 't': *(*op)++ = '\t'; break;
	case 'r': *(*op)++ = '\r'; break;
	case 'a': *(*op)++ = '\a'; break;
	case 'b': *(*op)++ = '\b'; break;
	case 'f': *(*op)++ = '\f'; break;
	case 'v': *(*op)++ = '\v'; break;
	case '\\': case '\'': case '"': case '?': *(*op)++ = *s; break;
	case 'x': case 'X':
		for (i = 0; i < 2 && s + 1 < e && digit_val(s[1]) < 16; i++)
			cp = cp * 16 + (unsigned long)digit_val(*++s);
		if (!i)
			return -1;
		*(*op)++ = (char)cp;
		break;
	case 'u': case 'U':
		n = *s == 'u' ? 4 : 8;
		for (i = 0; i < n; i++) {
			if (s + 1 >= e || digit_val(s[1]) >= 16)
				return -1;
			cp = cp * 16 + (unsigned long)digit_val(*++s);
		}
		if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return -1;
		/* UTF-8 */
		if (cp < 0x80) {
			*(*op)++ = (char)cp;
		} else if (cp < 0x800) {
			*(*op)++ = (char)(0xc0 | (cp >> 6));
			*(*op)++ = (char)(0x80 | (cp & 0x3f));
		} else if (cp < 0x10000) {
			*(*op)++ = (char)(0xe0 | (cp >> 12));
			*(*op)++ = (char)(0x80 | ((cp >> 6) & 0x3f));
			*(*op)++ = (char)(0x80 | (cp & 0x3f));
		} else {
			*(*op)++ = (char)(0xf0 | (cp >> 18));
			*(*op)++ = (char)(0x80 | ((cp >> 12) & 0x3f));
			*(*op)++ = (char)(0x80 | ((cp >> 6) & 0x3f));
			*(*op)++ = (char)(0x80 | (cp & 0x3f));
		}
		break;
	default:
		if (*s < '0' || *s > '7')
			return -1;
		cp = (unsigned long)(*s - '0');
		for (i = 1; i < 3 && s + 1 < e && s[1] >= '0' && s[1] <= '7'; i++)
			cp = cp * 8 + (unsigned long)(*++s - '0');
		*(*op)++ = (char)cp;
	}
	*sp = s + 1;
	return 0;
}

/* One or more adjacent string literals, unescaped into a malloc'd buffer
 * (NUL-terminated; *len excludes the NUL). */
static int parse_string(struct parser *ps, char **out, size_t *len)
{
	char *buf = NULL, *o, *nb, b[64];
	size_t cap = 0, used = 0;

	if (ps->t.kind != T_STRING)
		return error(ps, "expected string in quotes, got %s",
			     tok_str(ps, b, sizeof(b)));
	while (ps->t.kind == T_STRING) {
		const char *s = ps->t.s + 1, *e = ps->t.s + ps->t.len - 1;

		/* Unescaping never grows a literal beyond 2 bytes per input
		 * byte (\uXXXX: 6 -> 3, \U: 10 -> 4, others shrink). */
		cap = used + ps->t.len * 2 + 1;
		nb = realloc(buf, cap);
		if (!nb) {
			free(buf);
			return error(ps, "out of memory");
		}
		buf = nb;
		o = buf + used;
		while (s < e) {
			if (*s != '\\') {
				*o++ = *s++;
				continue;
			}
			s++;
			if (unescape_char(&s, e, &o)) {
				free(buf);
				return error(ps, "invalid escape sequence in string");
			}
		}
		used = (size_t)(o - buf);
		if (next(ps)) {
			free(buf);
			return -1;
		}
	}
	buf[used] = '\0';
	*out = buf;
	*len = used;
	return 0;
}

/* ---- storing into messages ---- */

static size_t elt_size(ProtobufCType type)
{
	switch (type) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	default:
		return 4;
	}
}

/* Where the next value of field f goes: a new array slot for repeated
 * fields (the count already includes it, zeroed), else the member. */
static void *slot(struct parser *ps, ProtobufCMessage *m,
		  const ProtobufCFieldDescriptor *f)
{
	size_t sz = elt_size(f->type);
	size_t *n;
	char *arr;

	if (f->label != PROTOBUF_C_LABEL_REPEATED)
		return (char *)m + f->offset;
	n = &MEMBER(size_t, m, f->quantifier_offset);
	arr = realloc(MEMBER(void *, m, f->offset), (*n + 1) * sz);
	if (!arr) {
		error(ps, "out of memory");
		return NULL;
	}
	memset(arr + *n * sz, 0, sz);
	MEMBER(void *, m, f->offset) = arr;
	return arr + (*n)++ * sz;
}

/* Marks an optional or oneof field present. */
static void set_present(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
		MEMBER(uint32_t, m, f->quantifier_offset) = f->id;
	else if (f->label == PROTOBUF_C_LABEL_OPTIONAL &&
		 f->type != PROTOBUF_C_TYPE_STRING &&
		 f->type != PROTOBUF_C_TYPE_MESSAGE)
		MEMBER(protobuf_c_boolean, m, f->quantifier_offset) = 1;
}

static int parse_message_body(struct parser *ps, ProtobufCMessage *m,
			      char closer, unsigned int depth);

static int parse_submessage(struct parser *ps, ProtobufCMessage *m,
			    const ProtobufCFieldDescriptor *f, unsigned int depth)
{
	const ProtobufCMessageDescriptor *sd = f->descriptor;
	ProtobufCMessage *sub, **dst;
	char closer, b[64];

	if (!is_sym(ps, '{') && !is_sym(ps, '<'))
		return error(ps, "expected '{' to start message field '%s', got %s",
			     f->name, tok_str(ps, b, sizeof(b)));
	closer = is_sym(ps, '{') ? '}' : '>';
	sub = calloc(1, sd->sizeof_message);
	if (!sub)
		return error(ps, "out of memory");
	sd->message_init(sub);
	dst = slot(ps, m, f);
	if (!dst) {
		free(sub);
		return -1;
	}
	*dst = sub;	/* owned by m from here on */
	set_present(m, f);
	if (record_pos(ps, m, f, ps->vline, ps->vcol) || next(ps))
		return -1;
	return parse_message_body(ps, sub, closer, depth + 1);
}

static int parse_scalar(struct parser *ps, ProtobufCMessage *m,
			const ProtobufCFieldDescriptor *f)
{
	uint64_t bits = 0;
	double d = 0;
	protobuf_c_boolean bv = 0;
	int ev = 0;
	char *str = NULL;
	size_t len = 0;
	unsigned int line = ps->t.line, col = ps->t.col;
	void *dst;

	switch (f->type) {
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_DOUBLE:
		if (parse_double(ps, &d))
			return -1;
		break;
	case PROTOBUF_C_TYPE_BOOL:
		if (parse_bool(ps, &bv))
			return -1;
		break;
	case PROTOBUF_C_TYPE_ENUM:
		if (parse_enum(ps, f, &ev))
			return -1;
		break;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
		if (parse_string(ps, &str, &len))
			return -1;
		if (f->type == PROTOBUF_C_TYPE_STRING && strlen(str) != len) {
			free(str);
			return error_at(ps, line, col,
					"string field '%s' contains a NUL byte; remove the \\0 escape",
					f->name);
		}
		break;
	case PROTOBUF_C_TYPE_MESSAGE:
		return error(ps, "internal: message field '%s' as scalar", f->name);
	default:
		if (parse_int(ps, f->type, &bits))
			return -1;
	}

	dst = slot(ps, m, f);
	if (!dst) {
		free(str);
		return -1;
	}
	set_present(m, f);
	if (record_pos(ps, m, f, line, col)) {
		if (f->type == PROTOBUF_C_TYPE_STRING)
			*(char **)dst = str;	/* freed with m */
		else
			free(str);
		return -1;
	}
	switch (f->type) {
	case PROTOBUF_C_TYPE_FLOAT:
		*(float *)dst = (float)d;
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		*(double *)dst = d;
		break;
	case PROTOBUF_C_TYPE_BOOL:
		*(protobuf_c_boolean *)dst = bv;
		break;
	case PROTOBUF_C_TYPE_ENUM:
		*(int *)dst = ev;
		break;
	case PROTOBUF_C_TYPE_STRING:
		*(char **)dst = str;
		break;
	case PROTOBUF_C_TYPE_BYTES:
		((ProtobufCBinaryData *)dst)->data = (uint8_t *)str;
		((ProtobufCBinaryData *)dst)->len = len;
		break;
	default:
		if (elt_size(f->type) == 4)
			*(uint32_t *)dst = (uint32_t)bits;
		else
			*(uint64_t *)dst = bits;
	}
	return 0;
}

/* One value or a "[...]" list of them for a known field; the ':' (if
 * any) is already consumed. */
static int parse_value(struct parser *ps, ProtobufCMessage *m,
		       const ProtobufCFieldDescriptor *f, unsigned int depth)
{
	bool msg = f->type == PROTOBUF_C_TYPE_MESSAGE;

	if (!is_sym(ps, '['))
		return msg ? parse_submessage(ps, m, f, depth) :
			     parse_scalar(ps, m, f);
	if (f->label != PROTOBUF_C_LABEL_REPEATED)
		return error(ps, "field '%s' is not repeated: give one value, not a [list]",
			     f->name);
	if (next(ps))
		return -1;
	if (is_sym(ps, ']'))
		return next(ps);
	for (;;) {
		ps->vline = ps->t.line;	/* a list element: its own '{' */
		ps->vcol = ps->t.col;
		if (msg ? parse_submessage(ps, m, f, depth) :
			  parse_scalar(ps, m, f))
			return -1;
		if (is_sym(ps, ']'))
			return next(ps);
		if (expect_sym(ps, ',', "between list values"))
			return -1;
	}
}

/* ---- skipping fields pbtrace does not know ---- */

static int skip_message_body(struct parser *ps, char closer, unsigned int depth);

static int skip_one_value(struct parser *ps, bool colon, unsigned int depth)
{
	char b[64];

	if (is_sym(ps, '{') || is_sym(ps, '<')) {
		char closer = is_sym(ps, '{') ? '}' : '>';

		if (next(ps))
			return -1;
		return skip_message_body(ps, closer, depth + 1);
	}
	if (!colon)
		return error(ps, "expected ':' or '{' after the field name, got %s",
			     tok_str(ps, b, sizeof(b)));
	if (ps->t.kind == T_STRING) {
		while (ps->t.kind == T_STRING)
			if (next(ps))
				return -1;
		return 0;
	}
	if (is_sym(ps, '-') && next(ps))
		return -1;
	if (ps->t.kind != T_IDENT && ps->t.kind != T_INT &&
	    ps->t.kind != T_FLOAT)
		return error(ps, "expected a value, got %s",
			     tok_str(ps, b, sizeof(b)));
	return next(ps);
}

static int skip_value(struct parser *ps, unsigned int depth)
{
	bool colon = is_sym(ps, ':');

	if (colon && next(ps))
		return -1;
	if (!colon || !is_sym(ps, '['))
		return skip_one_value(ps, colon, depth);
	if (next(ps))
		return -1;
	if (is_sym(ps, ']'))
		return next(ps);
	for (;;) {
		if (skip_one_value(ps, true, depth))
			return -1;
		if (is_sym(ps, ']'))
			return next(ps);
		if (expect_sym(ps, ',', "between list values"))
			return -1;
	}
}

/* "[foo.bar]" or "[type.googleapis.com/x.Y]": extensions and Any, which
 * pbtrace's subset has none of. Leaves the token after ']'. */
static int skip_bracket_name(struct parser *ps)
{
	char b[64];

	if (next(ps))
		return -1;
	while (ps->t.kind == T_IDENT || is_sym(ps, '.') || is_sym(ps, '/'))
		if (next(ps))
			return -1;
	if (!is_sym(ps, ']'))
		return error(ps, "expected ']' to end the extension name, got %s",
			     tok_str(ps, b, sizeof(b)));
	return next(ps);
}

static int skip_message_body(struct parser *ps, char closer, unsigned int depth)
{
	char b[64];

	if (depth > TEXTPB_MAX_DEPTH)
		return error(ps, "messages nested deeper than %d levels",
			     TEXTPB_MAX_DEPTH);
	for (;;) {
		if (is_sym(ps, closer))
			return next(ps);
		if (ps->t.kind == T_EOF)
			return error(ps, "expected '%c' before end of input", closer);
		if (is_sym(ps, '[')) {
			if (skip_bracket_name(ps))
				return -1;
		} else if (ps->t.kind == T_IDENT) {
			if (next(ps))
				return -1;
		} else {
			return error(ps, "expected field name, got %s",
				     tok_str(ps, b, sizeof(b)));
		}
		if (skip_value(ps, depth))
			return -1;
		if ((is_sym(ps, ',') || is_sym(ps, ';')) && next(ps))
			return -1;
	}
}

/* ---- known fields ---- */

/* Edit distance, for "did you mean". Names are short; a row suffices. */
static size_t distance(const char *a, size_t an, const char *b)
{
	size_t bn = strlen(b), row[64], i, j, diag, tmp;

	if (an >= 64 || bn >= 64)
		return 64;
	for (j = 0; j <= bn; j++)
		row[j] = j;
	for (i = 1; i <= an; i++) {
		diag = row[0];
		row[0] = i;
		for (j = 1; j <= bn; j++) {
			tmp = row[j];
			row[j] = diag + (a[i - 1] != b[j - 1]);
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			if (tmp + 1 < row[j])
				row[j] = tmp + 1;
			diag = tmp;
		}
	}
	return row[bn];
}

static const char *closest_field(const ProtobufCMessageDescriptor *d,
				 const char *name, size_t len)
{
	const char *best = NULL;
	size_t best_d = 3, i, dist;	/* suggest within 2 edits */

	for (i = 0; i < d->n_fields; i++) {
		/* Two edits only with the same first letter, so that a real
		 * Perfetto field like vmstat_counters is not "corrected" to
		 * stat_counters. */
		dist = distance(name, len, d->fields[i].name);
		if (dist == 2 && name[0] != d->fields[i].name[0])
			continue;
		if (dist < best_d && dist < len) {
			best_d = dist;
			best = d->fields[i].name;
		}
	}
	return best;
}

static int unknown_field(struct parser *ps, const ProtobufCMessageDescriptor *d,
			 unsigned int depth)
{
	const char *close = closest_field(d, ps->t.s, ps->t.len);
	char hint[128] = "";
	struct tok name = ps->t;

	if (close)
		snprintf(hint, sizeof(hint), "; did you mean '%s'?", close);
	if (ps->flags & TEXTPB_STRICT)
		return error(ps, "unknown field '%.*s' in %s%s", (int)name.len,
			     name.s, d->name, hint);
	textpb_warn(ps->err, name.line, name.col,
		    "field '%.*s' in %s at %u:%u is not implemented by pbtrace; ignored%s",
		    (int)name.len, name.s, d->name, name.line, name.col, hint);
	if (next(ps))
		return -1;
	return skip_value(ps, depth);
}

static int parse_field(struct parser *ps, ProtobufCMessage *m,
		       struct seen *seen, unsigned int depth)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	const ProtobufCFieldDescriptor *f;
	struct tok name = ps->t;
	char buf[128], b[64];
	struct seen *s;

	if (is_sym(ps, '[')) {
		textpb_warn(ps->err, name.line, name.col,
			    "extension or Any field in %s at %u:%u is not implemented by pbtrace; ignored",
			    d->name, name.line, name.col);
		if (skip_bracket_name(ps))
			return -1;
		return skip_value(ps, depth);
	}
	if (ps->t.kind != T_IDENT)
		return error(ps, "expected field name, got %s",
			     tok_str(ps, b, sizeof(b)));
	snprintf(buf, sizeof(buf), "%.*s", (int)name.len, name.s);
	f = protobuf_c_message_descriptor_get_field_by_name(d, buf);
	if (!f || strlen(buf) != name.len)
		return unknown_field(ps, d, depth);

	if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
	    MEMBER(uint32_t, m, f->quantifier_offset) &&
	    MEMBER(uint32_t, m, f->quantifier_offset) != f->id)
		return error(ps, "field '%s' is in a oneof with a field already set; set only one",
			     f->name);
	s = &seen[f - d->fields];
	if (f->label != PROTOBUF_C_LABEL_REPEATED && s->line)
		return error(ps, "field '%s' is set twice (first at %u:%u) but is not repeated",
			     f->name, s->line, s->col);
	s->line = name.line;
	s->col = name.col;
	ps->vline = name.line;	/* messages are located by their field name */
	ps->vcol = name.col;
	if (next(ps))
		return -1;
	if (is_sym(ps, ':')) {
		if (next(ps))
			return -1;
	} else if (f->type != PROTOBUF_C_TYPE_MESSAGE) {
		return error(ps, "expected ':' after field name '%s', got %s",
			     f->name, tok_str(ps, b, sizeof(b)));
	}
	return parse_value(ps, m, f, depth);
}

static int check_required(struct parser *ps, const ProtobufCMessage *m,
			  const struct seen *seen)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	unsigned int i;

	for (i = 0; i < d->n_fields; i++)
		if (d->fields[i].label == PROTOBUF_C_LABEL_REQUIRED &&
		    !seen[i].line)
			return error(ps, "required field '%s' of %s is missing",
				     d->fields[i].name, d->name);
	return 0;
}

/* Fields up to `closer` ('}' or '>', or 0 for end of input), consumed. */
static int parse_message_body(struct parser *ps, ProtobufCMessage *m,
			      char closer, unsigned int depth)
{
	struct seen *seen;
	int r = 0;

	if (depth > TEXTPB_MAX_DEPTH)
		return error(ps, "messages nested deeper than %d levels",
			     TEXTPB_MAX_DEPTH);
	seen = calloc(m->descriptor->n_fields + 1, sizeof(*seen));
	if (!seen)
		return error(ps, "out of memory");
	for (;;) {
		if (closer && is_sym(ps, closer)) {
			r = next(ps);
			break;
		}
		if (ps->t.kind == T_EOF) {
			if (closer)
				r = error(ps, "expected '%c' to close %s before end of input",
					  closer, m->descriptor->name);
			break;
		}
		r = parse_field(ps, m, seen, depth);
		if (!r && (is_sym(ps, ',') || is_sym(ps, ';')))
			r = next(ps);
		if (r)
			break;
	}
	if (!r)
		r = check_required(ps, m, seen);
	free(seen);
	return r;
}

ProtobufCMessage *textpb_parse_ex(const ProtobufCMessageDescriptor *d,
				  const char *text, size_t len,
				  unsigned int flags, struct textpb_error *err)
{
	struct parser ps = {
		.p = text, .end = text + len, .line = 1, .col = 1,
		.flags = flags, .err = err,
	};
	ProtobufCMessage *m;

	err->line = err->col = 0;
	err->msg[0] = '\0';
	/* Editors on some systems start UTF-8 files with a byte order mark. */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		ps.p += 3;
	m = calloc(1, d->sizeof_message);
	if (!m) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return NULL;
	}
	d->message_init(m);
	if (next(&ps) || parse_message_body(&ps, m, 0, 0)) {
		protobuf_c_message_free_unpacked(m, NULL);
		return NULL;
	}
	return m;
}

ProtobufCMessage *textpb_parse(const ProtobufCMessageDescriptor *d,
			       const char *text, size_t len,
			       struct textpb_error *err)
{
	return textpb_parse_ex(d, text, len, 0, err);
}
