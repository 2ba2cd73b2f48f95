// SPDX-License-Identifier: GPL-2.0
/*
 * The machines file (user/lib/machines_file.c): what a good file gives,
 * every bad line refused with its number and what to do, a key never in
 * a message, duplicates by name and by CID, and the modes a file with
 * keys may have (real files in a temporary directory). Prints TAP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "machines_file.h"
#include "tap.h"

#define KEY "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

static int parse(const char *text, struct pbt_names_file *f, char *err,
		 size_t n)
{
	err[0] = '\0';
	return pbt_names_parse(text, strlen(text), "m", f, err, n);
}

static void test_good(void)
{
	static const char text[] =
		"# a comment\n"
		"\n"
		"cid 5 web1\n"
		"  cid\t6\tdb1   # trailing comment\r\n"
		"key web2 " KEY "\n"
		"key WEB3 00112233445566778899AABBCCDDEEFF#no space before it\n"
		"cid 0 zero\n"
		"cid 4294967294 last";
	struct pbt_names_file f;
	char err[256];
	int r = parse(text, &f, err, sizeof(err));

	tap(!r && f.n == 6 && f.nr_keys == 2, "a good file: 6 names, 2 keys (%d: %s)",
	    r, err);
	if (r)
		return;
	tap(!strcmp(f.e[0].name, "web1") && f.e[0].cid == 5 && !f.e[0].key_len &&
	    f.e[0].line == 3 && !strcmp(f.e[1].name, "db1") && f.e[1].cid == 6 &&
	    f.e[1].line == 4,
	    "cid lines: name, CID and line number (tabs, CR and a comment after)");
	tap(!strcmp(f.e[2].name, "web2") && f.e[2].key_len == 32 &&
	    f.e[2].key[0] == 0 && f.e[2].key[31] == 0x1f && f.e[2].line == 5,
	    "a key line: 64 hex digits are 32 bytes");
	tap(!strcmp(f.e[3].name, "WEB3") && f.e[3].key_len == 16 &&
	    f.e[3].key[10] == 0xaa && f.e[3].key[15] == 0xff,
	    "upper-case hex, a comment right after the key");
	tap(f.e[4].cid == 0 && f.e[5].cid == 4294967294u && f.e[5].line == 8,
	    "CIDs 0 and 4294967294; a last line without its newline");
	pbt_names_file_free(&f);
	tap(!f.e && !f.n, "freed");
	r = parse("# nothing\n\n   \n", &f, err, sizeof(err));
	tap(!r && !f.n, "a file of comments is an empty table (%d)", r);
	pbt_names_file_free(&f);
}

static void test_bad(void)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "cid 5 web1\ncdi 6 db1\n", "m:2: 'cdi' is not an entry: want 'cid CID NAME' or 'key NAME HEX'" },
		{ "cid 5\n", "m:1: 'cid' wants a CID and a name" },
		{ "cid 5 web1 extra\n", "m:1: 'cid' wants a CID and a name" },
		{ "cid 5x web1\n", "m:1: '5x' is not a CID" },
		{ "cid -1 web1\n", "m:1: '-1' is not a CID" },
		{ "cid 4294967295 web1\n", "m:1: '4294967295' is not a CID" },
		{ "cid 99999999999 web1\n", "m:1: '99999999999' is not a CID" },
		{ "\n\ncid 3 web@1\n", "m:3: 'web@1' is not a name" },
		{ "cid 3 a,b\n", "m:1: 'a,b' is not a name" },
		{ "cid 3 host\n", "m:1: 'host' is not a name" },
		{ "cid 3 *\n", "m:1: '*' is not a name" },
		{ "cid 3 0123456789012345678901234567890123456789012345678901234567890123\n",
		  "is not a name: 1 to 63 printable characters" },
		{ "key web2\n", "m:1: 'key' wants a name and a key" },
		{ "key web2 0011\n", "m:1: the key of web2 is not 32 to 128 hex digits" },
		{ "key web2 " KEY "0\n", "m:1: the key of web2 is not 32 to 128 hex digits" },
		{ "key web2 " KEY KEY KEY KEY "00\n", "m:1: the key of web2 is not 32 to 128 hex digits" },
		{ "key web2 00112233445566778899aabbccddeefg\n", "m:1: the key of web2 is not 32" },
		{ "cid 5 web1\ncid 6 db1\nkey web1 " KEY "\n", "m:3: web1 is named twice (line 1 too)" },
		{ "cid 5 web1\n# x\ncid 5 db1\n", "m:3: CID 5 is web1's already (line 1)" },
		{ "cid 5 web1\nab\0cd\n", "m:2: a NUL byte" },
	};
	struct pbt_names_file f;
	char err[256];
	size_t i;
	int r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i].text);

		if (strstr(cases[i].want, "NUL"))
			len = 16;	/* past the NUL */
		err[0] = '\0';
		r = pbt_names_parse(cases[i].text, len, "m", &f, err, sizeof(err));
		tap(r == -EINVAL && strstr(err, cases[i].want) && !f.e && !f.n,
		    "refused: %s (%d)", err, r);
	}
}

/* The key, or any run of its digits, in no message. */
static void test_key_not_shown(void)
{
	static const char *const texts[] = {
		"key web2 " KEY "zz\n",		/* a bad key */
		"key " KEY " web2\n",		/* swapped */
		KEY "\n",			/* a key alone */
		"cid " KEY " web2\n",
		"cid 5 " KEY "0000000000000000000000000000000000000000000000000000000000000000000000\n",
	};
	struct pbt_names_file f;
	char err[512];
	size_t i;
	int r;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		r = parse(texts[i], &f, err, sizeof(err));
		tap(r == -EINVAL && !strstr(err, "0102030405"),
		    "no key digits in: %s", err);
	}
}

static void test_long(void)
{
	size_t n = 20000 * 20, len = 0, i;
	struct pbt_names_file f;
	char *text = malloc(n), err[256];
	int r;

	if (!text)
		return;
	for (i = 0; i < PBTRACE_MAX_NAMES; i++)
		len += (size_t)sprintf(text + len, "cid %zu g%zu\n", i + 3, i);
	r = pbt_names_parse(text, len, "m", &f, err, sizeof(err));
	tap(!r && f.n == PBTRACE_MAX_NAMES && f.e[PBTRACE_MAX_NAMES - 1].line == PBTRACE_MAX_NAMES,
	    "%d names, the most the module holds (%d: %s)", PBTRACE_MAX_NAMES, r,
	    r ? err : "");
	pbt_names_file_free(&f);
	len += (size_t)sprintf(text + len, "cid 1 one-too-many\n");
	r = pbt_names_parse(text, len, "m", &f, err, sizeof(err));
	tap(r == -EINVAL && strstr(err, "m:16385: more than 16384 names"),
	    "one more: %s", err);
	memset(text, 'x', 1100);
	text[1100] = '\n';
	r = pbt_names_parse(text, 1101, "m", &f, err, sizeof(err));
	tap(r == -EINVAL && strstr(err, "m:1: longer than 1023 bytes"),
	    "a line too long: %s", err);
	free(text);
}

static int write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	fclose(f);
	return chmod(path, mode);
}

static void test_modes(void)
{
	char dir[] = "/tmp/machines_file_test.XXXXXX", path[64], err[512];
	struct pbt_names_file f;
	struct stat st;
	int r;

	if (!mkdtemp(dir)) {
		tap(false, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/machines", dir);
	write_file(path, "cid 5 web1\nkey web2 " KEY "\n", 0600);
	r = pbt_names_file_read(path, &f, err, sizeof(err));
	tap(!r && f.n == 2 && f.nr_keys == 1, "mode 0600 with a key: read (%d)", r);
	pbt_names_file_free(&f);
	chmod(path, 0640);
	r = pbt_names_file_read(path, &f, err, sizeof(err));
	tap(r == -EPERM && strstr(err, "mode 0640 lets others read its keys: chmod 600") &&
	    !f.n, "mode 0640 with a key: refused: %s", err);
	chmod(path, 0604);
	r = pbt_names_file_read(path, &f, err, sizeof(err));
	tap(r == -EPERM && strstr(err, "lets others read its keys"),
	    "mode 0604 with a key: refused");
	write_file(path, "cid 5 web1\n", 0644);
	r = pbt_names_file_read(path, &f, err, sizeof(err));
	tap(!r && f.n == 1, "mode 0644 without keys: read (%d)", r);
	pbt_names_file_free(&f);
	chmod(path, 0664);
	r = pbt_names_file_read(path, &f, err, sizeof(err));
	tap(r == -EPERM && strstr(err, "mode 0664 lets others change it") &&
	    strstr(err, "chmod go-w"), "group-writable: refused: %s", err);
	chmod(path, 0646);
	r = pbt_names_file_read(path, &f, err, sizeof(err));
	tap(r == -EPERM, "writable by others: refused");
	unlink(path);
	r = pbt_names_file_read(path, &f, err, sizeof(err));
	tap(r == -ENOENT && strstr(err, "No such file"), "missing: -ENOENT: %s", err);
	r = pbt_names_file_read(dir, &f, err, sizeof(err));
	tap(r < 0 && !f.n, "a directory: refused (%d: %s)", r, err);
	/* Another owner, without having to be one: the check itself. */
	memset(&st, 0, sizeof(st));
	st.st_mode = S_IFREG | 0600;
	st.st_uid = 1234;
	r = pbt_names_check_mode(&st, false, 0, "x", err, sizeof(err));
	tap(r == -EPERM && strstr(err, "belongs to uid 1234"),
	    "a file of another user: refused: %s", err);
	r = pbt_names_check_mode(&st, true, 1234, "x", err, sizeof(err));
	tap(!r, "the reader's own file, mode 0600: taken");
	rmdir(dir);
}

int main(void)
{
	test_good();
	test_bad();
	test_key_not_shown();
	test_long();
	test_modes();
	printf("1..%d\n", nr_tests);
	return nr_failed ? 1 : 0;
}
