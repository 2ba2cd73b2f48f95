// SPDX-License-Identifier: GPL-2.0
/*
 * ftrace filter expressions -> a checked program over a tracepoint's record
 * (filter.h says what the language and the program are).
 *
 * The compiler is ftrace's own algorithm (kernel/trace/trace_events_filter.c,
 * predicate_parse()), so that a filter keeps what ftrace keeps: one pass over
 * the text emits one comparison per predicate, in order, each with a branch
 * "if the result is @when go to @next"; && and || patch the branches of
 * earlier comparisons when the operator's right side is complete, a stack
 * of one byte per open parenthesis holds the pending operators and the
 * '!'s in force. Two passes over the program then shorten chains of
 * branches and fold the '!'s into @when. No recursion, no allocation: the
 * program is the caller's, the stack is PBT_FILTER_MAX_DEPTH bytes.
 */
#include "filter.h"

#define STK_INVERT	1	/* a '!' is in force at this level */
#define STK_AND		2	/* an && waits for its right side */
#define STK_OR		4	/* an || waits for its right side */
#define TOK_GLOB	100	/* "~" while parsing; becomes a PBT_FOP_STR_* */

struct fparse {
	const char *s;
	const struct pbt_tp_layout *lay;
	struct pbt_filter_prog *prog;
	struct pbt_filter_err *err;
	uint8_t inv[PBT_FILTER_MAX_INSNS];	/* '!'s in force, per comparison */
};

enum fclass { FC_NONE, FC_NUM, FC_STR };

static bool f_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool f_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool f_alnum(char c)
{
	return f_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int skip_space(const char *s, int pos)
{
	while (f_space(s[pos]))
		pos++;
	return pos;
}

/* ---- error messages: pieces appended, cut to fit --------------------- */

static size_t f_strnlen(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

static void err_addn(struct pbt_filter_err *e, const char *s, size_t n)
{
	size_t len = f_strnlen(e->msg, sizeof(e->msg) - 1);

	while (n-- && *s && len + 1 < sizeof(e->msg))
		e->msg[len++] = *s++;
	e->msg[len] = '\0';
}

static int fail3(struct fparse *p, int pos, const char *a, const char *b,
		 size_t blen, const char *c)
{
	p->err->pos = pos;
	p->err->msg[0] = '\0';
	err_addn(p->err, a, PBT_FILTER_ERR_MAX);
	if (b)
		err_addn(p->err, b, blen < 40 ? blen : 40);
	if (c)
		err_addn(p->err, c, PBT_FILTER_ERR_MAX);
	return -1;
}

static int fail(struct fparse *p, int pos, const char *msg)
{
	return fail3(p, pos, msg, NULL, 0, NULL);
}

/* ---- fields ------------------------------------------------------------ */

static enum fclass field_class(const struct pbt_filter_field *f)
{
	switch (f->kind) {
	case PBTRACE_TPF_INT:
		if (f->size == 1 || f->size == 2 || f->size == 4 ||
		    f->size == 8)
			return FC_NUM;
		return FC_NONE;
	case PBTRACE_TPF_CHARS:
		return f->size ? FC_STR : FC_NONE;
	case PBTRACE_TPF_DATA_LOC_STR:
	case PBTRACE_TPF_REL_LOC_STR:
		return f->size == 4 ? FC_STR : FC_NONE;
	}
	return FC_NONE;
}

static const struct pbt_tpf *find_field(const struct pbt_tp_layout *lay,
					const char *name, size_t len)
{
	unsigned int i, n = lay->nr_fields;

	if (n > PBTRACE_TP_MAX_FIELDS)
		n = PBTRACE_TP_MAX_FIELDS;
	for (i = 0; i < n; i++) {
		const struct pbt_tpf *f = &lay->fields[i];

		if (len < sizeof(f->name) && !strncmp(f->name, name, len) &&
		    f->name[len] == '\0')
			return f;
	}
	return NULL;
}

/* The index in prog->fields of @tpf, added if new; -1 if full. */
static int prog_field(struct pbt_filter_prog *prog, const struct pbt_tpf *tpf)
{
	struct pbt_filter_field f = {
		.offset = tpf->offset, .size = tpf->size,
		.kind = tpf->kind, .is_signed = !!tpf->is_signed,
	};
	unsigned int i;

	for (i = 0; i < prog->nr_fields; i++)
		if (!memcmp(&prog->fields[i], &f, sizeof(f)))
			return i;
	if (prog->nr_fields >= PBTRACE_TP_MAX_FIELDS)
		return -1;
	prog->fields[prog->nr_fields] = f;
	return prog->nr_fields++;
}

/* ---- numbers: kstrtoull/kstrtoll with base 0, as ftrace parses them --- */

static int digit_val(char c)
{
	if (f_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 99;
}

static int parse_u64(const char *s, int len, uint64_t *v)
{
	unsigned int base = 10;
	uint64_t x = 0;
	int i = 0;

	if (len >= 1 && s[0] == '0') {
		base = 8;
		if (len >= 3 && (s[1] == 'x' || s[1] == 'X') &&
		    digit_val(s[2]) < 16) {
			base = 16;
			i = 2;
		}
	}
	if (i >= len)
		return -1;
	for (; i < len; i++) {
		unsigned int d = digit_val(s[i]);

		if (d >= base)
			return -1;
		if (x > (~0ull - d) / base)
			return -2;
		x = x * base + d;
	}
	*v = x;
	return 0;
}

static uint64_t cut(uint64_t v, unsigned int size)
{
	return size >= 8 ? v : v & ((1ull << (size * 8)) - 1);
}

/* A number for @f at @pos; its end, or -1. */
static int parse_number(struct fparse *p, int pos,
			const struct pbt_filter_field *f, uint64_t *val)
{
	const char *s = p->s;
	int end = pos + (s[pos] == '-');
	bool neg = s[pos] == '-';
	uint64_t u;
	int r;

	while (f_alnum(s[end]))
		end++;
	if (neg && !f->is_signed)
		return fail(p, pos, "negative number for an unsigned field");
	r = parse_u64(s + pos + neg, end - pos - neg, &u);
	if (r == -2)
		return fail(p, pos, "number out of the range of 64 bits");
	if (r < 0)
		return fail3(p, pos, "bad number '", s + pos, end - pos,
			     "': decimal, 0x hex or 0 octal");
	if (f->is_signed && u > (neg ? 1ull << 63 : ~0ull >> 1))
		return fail(p, pos, "number out of the range of a signed field");
	*val = cut(neg ? -u : u, f->size);
	return end;
}

/* ---- strings: ftrace's filter_parse_regex() for ~ ---------------------- */

static uint8_t glob_kind(const char **pat, int *len, uint8_t *negate)
{
	const char *s = *pat;
	int i, n = *len;
	uint8_t op = PBT_FOP_STR_FULL;

	if (n && s[0] == '!') {
		*negate = 1;
		s++;
		n--;
	}
	*pat = s;
	*len = n;
	if (n && f_digit(s[0]))
		return PBT_FOP_STR_FULL;
	for (i = 0; i < n; i++) {
		if (s[i] == '[' || s[i] == '?' || s[i] == '\\')
			return PBT_FOP_STR_GLOB;
		if (s[i] != '*')
			continue;
		if (!i) {
			op = PBT_FOP_STR_END;
			continue;
		}
		if (i != n - 1)		/* a * inside: a full glob */
			return PBT_FOP_STR_GLOB;
		op = op == PBT_FOP_STR_END ? PBT_FOP_STR_MIDDLE : PBT_FOP_STR_FRONT;
		n = i;
	}
	if (n && s[0] == '*') {
		s++;
		n--;
	}
	*pat = s;
	*len = n;
	return op;
}

/* A quoted string at @pos for comparison @op: TOK_GLOB, EQ or NE. */
static int parse_string(struct fparse *p, int pos, int op,
			struct pbt_filter_insn *in)
{
	struct pbt_filter_prog *prog = p->prog;
	const char *s = p->s, *pat = s + pos + 1;
	int end = pos + 1, len;

	while (s[end] && s[end] != s[pos])
		end++;
	if (!s[end])
		return fail(p, pos, "the string has no closing quote");
	len = end - pos - 1;
	if (len > PBT_FILTER_STR_MAX)
		return fail(p, pos, "string longer than 255 bytes");
	in->op = PBT_FOP_STR_FULL;
	in->negate = op == PBT_FOP_NE;
	if (op == TOK_GLOB)
		in->op = glob_kind(&pat, &len, &in->negate);
	if ((size_t)prog->strs_len + len + 1 > sizeof(prog->strs))
		return fail(p, pos, "strings longer than the expression");
	in->str_off = prog->strs_len;
	in->str_len = len;
	memcpy(prog->strs + prog->strs_len, pat, len);
	prog->strs[prog->strs_len + len] = '\0';
	prog->strs_len += len + 1;
	return end + 1;
}

/* ---- one comparison: field op value ------------------------------------ */

static const struct {
	const char *text;
	int op;		/* enum pbt_filter_op, or TOK_GLOB */
} fops[] = {		/* "<=" before "<": the first that matches wins */
	{ "~", TOK_GLOB }, { "!=", PBT_FOP_NE }, { "==", PBT_FOP_EQ },
	{ "<=", PBT_FOP_LE }, { "<", PBT_FOP_LT }, { ">=", PBT_FOP_GE },
	{ ">", PBT_FOP_GT }, { "&", PBT_FOP_BAND }, { NULL, 0 }
};

static int parse_op(const char *s, int pos, int *op)
{
	unsigned int i;

	for (i = 0; fops[i].text; i++) {
		size_t n = strlen(fops[i].text);

		if (!strncmp(s + pos, fops[i].text, n)) {
			*op = fops[i].op;
			return pos + n;
		}
	}
	return -1;
}

/* The value after "field op": a number or a quoted string, by the field. */
static int parse_value(struct fparse *p, int pos, int op_pos, int op,
		       const struct pbt_filter_field *f,
		       struct pbt_filter_insn *in)
{
	char c = p->s[pos];

	if (c == '"' || c == '\'') {
		if (field_class(f) != FC_STR && op == TOK_GLOB)
			return fail(p, op_pos, "'~' needs a string field");
		if (field_class(f) != FC_STR)
			return fail(p, pos,
				    "a number field takes a number, not a string");
		if (op != TOK_GLOB && op != PBT_FOP_EQ && op != PBT_FOP_NE)
			return fail(p, op_pos,
				    "strings compare with ==, != or ~ only");
		return parse_string(p, pos, op, in);
	}
	if (f_digit(c) || c == '-') {
		if (field_class(f) == FC_STR)
			return fail(p, pos,
				    "a string field takes a quoted string");
		if (op == TOK_GLOB)
			return fail(p, op_pos, "'~' needs a string field");
		in->op = op;
		return parse_number(p, pos, f, &in->val);
	}
	return fail(p, pos, "expected a number or a quoted string");
}

/* "field op value" at @pos into @in; the position after it, or -1. */
static int parse_cmp(struct fparse *p, int pos, struct pbt_filter_insn *in)
{
	const char *s = p->s;
	const struct pbt_tpf *tpf;
	int start = pos, op, op_pos, idx;

	while (f_alnum(s[pos]) || s[pos] == '_')
		pos++;
	if (pos == start)
		return fail(p, pos, s[pos] ? "expected a field name, '(' or '!'" :
			    "the expression ends where a comparison should be");
	tpf = find_field(p->lay, s + start, pos - start);
	if (!tpf)
		return fail3(p, start, "unknown field '", s + start,
			     pos - start, "'");
	if (s[pos] == '.')
		return fail(p, pos, "field suffixes (.ustring, ...) are not supported");
	idx = prog_field(p->prog, tpf);
	if (idx < 0)
		return fail(p, start, "too many fields in one filter");
	in->field = idx;
	if (field_class(&p->prog->fields[idx]) == FC_NONE)
		return fail3(p, start, "field '", s + start, pos - start,
			     "' is neither a number nor a string");
	op_pos = skip_space(s, pos);
	pos = parse_op(s, op_pos, &op);
	if (pos < 0)
		return fail(p, op_pos,
			    "expected an operator: ==, !=, <, <=, >, >=, & or ~");
	pos = skip_space(s, pos);
	return parse_value(p, pos, op_pos, op, &p->prog->fields[idx], in);
}

/* ---- the program's branches -------------------------------------------- */

/*
 * Comparison @n completes the right side of an operator whose left side
 * ended at the comparison @n's branch names: that one now branches (when
 * its result is @when) past @n's own test, and @n takes over the chain.
 * Until the passes below, next = the index of the comparison whose test a
 * branch continues with, plus one (0: none).
 */
static void patch(struct pbt_filter_prog *prog, int n, int when)
{
	struct pbt_filter_insn *in = prog->insns;
	int t = in[n].next - 1;

	if (t < 0)	/* never: an operator always has a left side */
		return;
	in[n].next = in[t].next;
	in[t].when = when;
	in[t].next = n + 1;
}

/* After && || ) or the end; 1: a comparison follows, 0: done, -1 error. */
static int after_cmp(struct fparse *p, int *posp, uint8_t *stk, int *top,
		     int n, int *invert)
{
	const char *s = p->s;
	int pos;
	char c;

	for (;;) {
		pos = skip_space(s, *posp);
		c = s[pos];
		if ((c == '&' || c == '|') && s[pos + 1] == c)
			pos += 2;
		else if (c == ')' && *top)
			pos++;
		else if (c == ')')
			return fail(p, pos, "')' without '('");
		else if (c)
			return fail(p, pos, "expected &&, ||, ')' or the end");
		*posp = pos;
		*invert = stk[*top] & STK_INVERT;
		if (stk[*top] & STK_AND) {
			patch(p->prog, n - 1, *invert);
			stk[*top] &= ~STK_AND;
		}
		if (c == '&') {
			stk[*top] |= STK_AND;
			return 1;
		}
		if (stk[*top] & STK_OR) {
			patch(p->prog, n - 1, !*invert);
			stk[*top] &= ~STK_OR;
		}
		if (c == '|') {
			stk[*top] |= STK_OR;
			return 1;
		}
		if (!c)
			return 0;
		(*top)--;
	}
}

/* The first pass: the text into comparisons and their first branches. */
static int first_pass(struct fparse *p)
{
	uint8_t stk[PBT_FILTER_MAX_DEPTH + 1] = { 0 };
	int open_pos[PBT_FILTER_MAX_DEPTH + 1];
	int pos = 0, top = 0, invert = 0, n = 0, r;
	const char *s = p->s;

	for (;;) {
		pos = skip_space(s, pos);
		if (s[pos] == '(') {
			if (top == PBT_FILTER_MAX_DEPTH)
				return fail(p, pos, "more than 16 nested '('");
			stk[++top] = invert;
			open_pos[top] = pos++;
			continue;
		}
		if (s[pos] == '!' && s[pos + 1] != '=' && s[pos + 1] != '~') {
			invert = !invert;
			pos++;
			continue;
		}
		if (!s[pos] && !n && !top && !invert)
			return fail(p, pos, "empty filter");
		if (n == PBT_FILTER_MAX_INSNS)
			return fail(p, pos, "more than 128 comparisons");
		memset(&p->prog->insns[n], 0, sizeof(p->prog->insns[n]));
		p->inv[n] = invert;
		p->prog->insns[n].next = n;	/* the one before, plus one */
		pos = parse_cmp(p, pos, &p->prog->insns[n]);
		if (pos < 0)
			return -1;
		n++;
		r = after_cmp(p, &pos, stk, &top, n, &invert);
		if (r < 0)
			return -1;
		if (!r)
			break;
	}
	if (top)
		return fail(p, open_pos[top], "'(' without ')'");
	return n;
}

int pbt_filter_compile(const char *expr, const struct pbt_tp_layout *layout,
		       struct pbt_filter_prog *prog, struct pbt_filter_err *err)
{
	struct fparse p = { .s = expr, .lay = layout, .prog = prog, .err = err };
	struct pbt_filter_insn *in = prog->insns;
	int n, i;

	prog->nr_insns = 0;
	prog->nr_fields = 0;
	prog->strs_len = 0;
	err->pos = 0;
	err->msg[0] = '\0';
	if (f_strnlen(expr, PBTRACE_TP_FILTER_MAX) >= PBTRACE_TP_FILTER_MAX)
		return fail(&p, PBTRACE_TP_FILTER_MAX - 1,
			    "filter longer than 1023 bytes");
	n = first_pass(&p);
	if (n < 0) {
		prog->nr_insns = 0;
		return -1;
	}
	/* The last comparison decides: false goes to "no match". */
	in[n - 1].next = n + 1;
	in[n - 1].when = 0;
	/* A branch into a test it would pass too goes where that one goes. */
	for (i = n - 2; i >= 0; i--) {
		int t = in[i].next - 1;

		if (t > i && t < n && in[i].when == in[t].when)
			in[i].next = in[t].next;
	}
	/* A '!' in force inverts the comparison: branch on the other result. */
	for (i = 0; i < n; i++)
		in[i].when ^= p.inv[i];
	prog->nr_insns = n;
	if (pbt_filter_verify(prog)) {
		prog->nr_insns = 0;
		return fail(&p, 0, "internal error: the program does not verify");
	}
	return 0;
}

/* ---- the verifier ------------------------------------------------------ */

static int verify_insn(const struct pbt_filter_prog *prog, unsigned int i)
{
	const struct pbt_filter_insn *in = &prog->insns[i];
	enum fclass fc;

	if (in->field >= prog->nr_fields || in->when > 1 || in->negate > 1)
		return -1;
	if (in->next <= i || in->next > prog->nr_insns + 1)
		return -1;
	fc = field_class(&prog->fields[in->field]);
	if (in->op >= PBT_FOP_EQ && in->op <= PBT_FOP_BAND)
		return fc == FC_NUM ? 0 : -1;
	if (in->op < PBT_FOP_STR_FULL || in->op >= PBT_FOP_MAX || fc != FC_STR)
		return -1;
	if ((size_t)in->str_off + in->str_len >= prog->strs_len ||
	    prog->strs[in->str_off + in->str_len] != '\0' ||
	    memchr(prog->strs + in->str_off, '\0', in->str_len))
		return -1;
	return 0;
}

int pbt_filter_verify(const struct pbt_filter_prog *prog)
{
	unsigned int i;

	if (prog->nr_insns > PBT_FILTER_MAX_INSNS ||
	    prog->nr_fields > PBTRACE_TP_MAX_FIELDS ||
	    prog->strs_len > sizeof(prog->strs))
		return -1;
	for (i = 0; i < prog->nr_fields; i++)
		if (field_class(&prog->fields[i]) == FC_NONE)
			return -1;
	for (i = 0; i < prog->nr_insns; i++)
		if (verify_insn(prog, i))
			return -1;
	return 0;
}

/* ---- the cost: what the matcher may do on one record ------------------- */

static uint64_t insn_cost(const struct pbt_filter_prog *prog,
			  const struct pbt_filter_insn *in)
{
	const struct pbt_filter_field *f = &prog->fields[in->field];
	uint64_t str = f->kind == PBTRACE_TPF_CHARS ? f->size : PBT_FILTER_LOC_MAX;

	switch (in->op) {
	case PBT_FOP_STR_FULL:
	case PBT_FOP_STR_FRONT:
	case PBT_FOP_STR_END:	/* load_str()'s memchr, then a memcmp */
		return str + in->str_len + 1;
	case PBT_FOP_STR_MIDDLE:
	case PBT_FOP_STR_GLOB:
		return ((uint64_t)in->str_len + 1) * str;
	}
	return 1;
}

uint64_t pbt_filter_cost(const struct pbt_filter_prog *prog)
{
	uint64_t cost = 0;
	unsigned int i;

	for (i = 0; i < prog->nr_insns && i < PBT_FILTER_MAX_INSNS; i++)
		cost += insn_cost(prog, &prog->insns[i]);
	return cost;
}

/* ---- the matcher: runs in the probe ------------------------------------ */

static bool load_int(const struct pbt_filter_field *f, const uint8_t *rec,
		     size_t size, uint64_t *v)
{
	uint8_t b8;
	uint16_t b16;
	uint32_t b32;

	if ((size_t)f->offset + f->size > size)
		return false;
	switch (f->size) {
	case 1:
		memcpy(&b8, rec + f->offset, 1);
		*v = b8;
		break;
	case 2:
		memcpy(&b16, rec + f->offset, 2);
		*v = b16;
		break;
	case 4:
		memcpy(&b32, rec + f->offset, 4);
		*v = b32;
		break;
	default:
		memcpy(v, rec + f->offset, 8);
	}
	return true;
}

static int64_t sext(uint64_t v, unsigned int size)
{
	unsigned int shift = 64 - size * 8;

	return (int64_t)(v << shift) >> shift;
}

static bool match_num(const struct pbt_filter_insn *in,
		      const struct pbt_filter_field *f, uint64_t x)
{
	int64_t a = sext(x, f->size), b = sext(in->val, f->size);
	bool lt = f->is_signed ? a < b : x < in->val;

	switch (in->op) {
	case PBT_FOP_EQ:
		return x == in->val;
	case PBT_FOP_NE:
		return x != in->val;
	case PBT_FOP_LT:
		return lt;
	case PBT_FOP_LE:
		return lt || x == in->val;
	case PBT_FOP_GT:
		return !lt && x != in->val;
	case PBT_FOP_GE:
		return !lt;
	default:
		return x & in->val;
	}
}

/* The string field's bytes in the record, up to its NUL; false if outside. */
static bool load_str(const struct pbt_filter_field *f, const uint8_t *rec,
		     size_t size, const char **str, size_t *len)
{
	size_t start = f->offset, n = f->size;
	const char *nul;
	uint32_t loc;

	if (start + n > size)
		return false;
	if (f->kind != PBTRACE_TPF_CHARS) {
		memcpy(&loc, rec + f->offset, 4);
		start = loc & 0xffff;
		if (f->kind == PBTRACE_TPF_REL_LOC_STR)
			start += f->offset + 4;
		n = loc >> 16;
		if (start + n > size)
			return false;
	}
	*str = (const char *)rec + start;
	nul = memchr(*str, '\0', n);
	*len = nul ? (size_t)(nul - *str) : n;
	return true;
}

/* lib/glob.c's rules: * ? [a-z] [!a] \x; the string ends at @slen. */
static bool glob_match_n(const char *pat, const char *str, size_t slen)
{
	const char *back_pat = NULL;
	size_t s = 0, back_s = 0;

	for (;;) {
		unsigned char c = s < slen ? str[s] : '\0';
		unsigned char d = *pat++;
		bool match = false, inverted;
		const char *cl;
		unsigned char a, b;

		s++;
		switch (d) {
		case '?':
			if (!c)
				return false;
			continue;
		case '*':
			if (!*pat)
				return true;
			back_pat = pat;
			back_s = --s;
			continue;
		case '[':
			/* lib/glob.c lets [!x] match the end: fnmatch does not */
			if (!c)
				return false;
			inverted = *pat == '!';
			cl = pat + inverted;
			a = *cl++;
			do {
				b = a;
				if (!a)
					goto literal;
				if (cl[0] == '-' && cl[1] != ']') {
					b = cl[1];
					if (!b)
						goto literal;
					cl += 2;
				}
				match |= a <= c && c <= b;
			} while ((a = *cl++) != ']');
			if (match == inverted)
				goto backtrack;
			pat = cl;
			continue;
		case '\\':
			d = *pat++;
			break;
		}
literal:
		if (c == d) {
			if (!d)
				return true;
			continue;
		}
backtrack:
		if (!c || !back_pat)
			return false;
		pat = back_pat;
		s = ++back_s;
	}
}

static bool match_str(const struct pbt_filter_insn *in, const char *pat,
		      const char *str, size_t len)
{
	size_t n = in->str_len, i;

	switch (in->op) {
	case PBT_FOP_STR_FULL:
		return len == n && !memcmp(str, pat, n);
	case PBT_FOP_STR_FRONT:
		return len >= n && !memcmp(str, pat, n);
	case PBT_FOP_STR_END:
		return len >= n && !memcmp(str + len - n, pat, n);
	case PBT_FOP_STR_MIDDLE:
		for (i = 0; i + n <= len; i++)
			if (!memcmp(str + i, pat, n))
				return true;
		return false;
	default:
		return glob_match_n(pat, str, len);
	}
}

static bool eval(const struct pbt_filter_prog *prog,
		 const struct pbt_filter_insn *in, const uint8_t *rec,
		 size_t size)
{
	const struct pbt_filter_field *f = &prog->fields[in->field];
	const char *str;
	size_t len;
	uint64_t x;

	if (in->op <= PBT_FOP_BAND)
		return load_int(f, rec, size, &x) && match_num(in, f, x);
	if (!load_str(f, rec, size, &str, &len))
		return false;
	return match_str(in, prog->strs + in->str_off, str, len) != in->negate;
}

bool pbt_filter_match(const struct pbt_filter_prog *prog, const void *rec,
		      size_t rec_size)
{
	unsigned int i = 0, n = prog->nr_insns;

	while (i < n) {
		const struct pbt_filter_insn *in = &prog->insns[i];

		if (eval(prog, in, rec, rec_size) == in->when)
			i = in->next > i ? in->next : n + 1;
		else
			i++;
	}
	return i == n;
}
