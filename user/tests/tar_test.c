// SPDX-License-Identifier: GPL-2.0
/*
 * lib/tar.c on the host (ASan + UBSan in make test), judged by two
 * readers that are not ours: GNU tar (lists and extracts every member, and
 * checks each header's checksum) and Python's tarfile (strict header
 * parsing, ustar format, sizes). Members at and around the block size,
 * a name of exactly 100 bytes (no NUL in the header), a UTF-8 name, an
 * empty member; a size past 11 octal digits (8 GiB: base-256, checked on
 * the header alone); the names the header cannot hold, a member shorter
 * or longer than its header, and a write that fails (/dev/full). Prints
 * TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tar.h"
#include "tap.h"

#define PY "/usr/bin/python3"

static char dir[] = "/tmp/tar_test.XXXXXX";

struct member {
	const char *name;
	size_t size;
};

static const struct member members[] = {
	{ "empty", 0 },
	{ "one", 1 },
	{ "block-1", 511 },
	{ "block", 512 },
	{ "block+1", 513 },
	{ "two blocks and a bit.pftrace", 1100 },
	{ "000-h\xc3\xb4te.pftrace", 70000 },
	/* 100 bytes: fills the name field, no NUL after it */
	{ "n123456789n123456789n123456789n123456789n123456789"
	  "n123456789n123456789n123456789n123456789n12345678x", 3 },
};
#define NR_MEMBERS (sizeof(members) / sizeof(members[0]))

/* Member @i's bytes: a pattern that differs per member and offset. */
static uint8_t byte_of(size_t i, size_t off)
{
	return (uint8_t)(off * 7 + i * 31 + (off >> 9));
}

static int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return rc == -1 ? -1 : WEXITSTATUS(rc);
}

static int write_archive(const char *path)
{
	struct pbt_tar t = { 0 };
	uint8_t buf[4096];
	size_t i, off, n;
	int ret = 0;

	t.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (t.fd < 0)
		return -1;
	for (i = 0; !ret && i < NR_MEMBERS; i++) {
		ret = pbt_tar_begin(&t, members[i].name, members[i].size, 1700000000);
		/* In uneven pieces, as merge writes records. */
		for (off = 0; !ret && off < members[i].size; off += n) {
			n = members[i].size - off;
			if (n > 1000)
				n = 1000 - (off % 3);
			for (size_t k = 0; k < n; k++)
				buf[k] = byte_of(i, off + k);
			ret = pbt_tar_write(&t, buf, n);
		}
		ret = ret || pbt_tar_end(&t);
	}
	ret = ret || pbt_tar_finish(&t);
	if (ret)
		printf("# %s\n", t.err);
	close(t.fd);
	return ret;
}

static int member_ok(size_t i, const char *path)
{
	int fd = open(path, O_RDONLY);
	uint8_t buf[4096];
	size_t off = 0;
	ssize_t n;
	int ok = fd >= 0;

	while (ok && (n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t k = 0; k < n; k++)
			ok &= buf[k] == byte_of(i, off + (size_t)k);
		off += (size_t)n;
	}
	if (fd >= 0)
		close(fd);
	return ok && off == members[i].size;
}

static void test_readers(void)
{
	char path[128], out[128], x[256];
	struct stat st;
	size_t i;
	int ok = 1;

	snprintf(path, sizeof(path), "%s/a.tar", dir);
	snprintf(out, sizeof(out), "%s/x", dir);
	tap(write_archive(path) == 0, "writes %zu members", NR_MEMBERS);
	if (stat(path, &st))
		st.st_size = -1;
	tap(st.st_size > 0 && st.st_size % PBT_TAR_RECORD == 0,
	    "the archive is whole 10240-byte records (%lld bytes)", (long long)st.st_size);
	tap(run("tar -tvf %s > %s/list 2>&1", path, dir) == 0,
	    "GNU tar lists it without a complaint");
	tap(run("mkdir %s && tar -xf %s -C %s", out, path, out) == 0,
	    "GNU tar extracts it (it checks every header's checksum)");
	for (i = 0; i < NR_MEMBERS; i++) {
		snprintf(x, sizeof(x), "%s/%s", out, members[i].name);
		ok &= member_ok(i, x);
	}
	tap(ok, "every member extracted byte for byte, at its size");
	tap(run(PY " -c 'import sys, tarfile\n"
		"t = tarfile.open(sys.argv[1], \"r:\", errorlevel=2)\n"
		"got = [(m.name, m.size, m.mode, m.uid, m.mtime, m.isreg()) for m in t]\n"
		"want = [(n, int(s), 0o644, 0, 1700000000, True) for n, s in zip(sys.argv[2::2], sys.argv[3::2])]\n"
		"sys.exit(0 if got == want else print(got, want) or 1)' %s "
		"empty 0 one 1 block-1 511 block 512 block+1 513 '%s' 1100 '%s' 70000 '%s' 3",
		path, members[5].name, members[6].name, members[7].name) == 0,
	    "Python's tarfile reads every name, size, mode, owner and mtime");
	tap(run(PY " -c 'import sys, tarfile\n"
		"t = tarfile.open(sys.argv[1], \"r:\")\n"
		"sys.exit(0 if t.firstmember.name and all(m.type == tarfile.REGTYPE for m in t) "
		"and t.offset %% 512 == 0 else 1)' %s", path) == 0,
	    "Python's tarfile: regular files only, ends on a block");
	tap(run("head -c 512 %s | " PY " -c 'import sys, tarfile\n"
		"b = sys.stdin.buffer.read()\n"
		"sys.exit(0 if b[257:263] == b\"ustar\\0\" and b[263:265] == b\"00\" else 1)'",
		path) == 0, "the header says ustar, version 00 (POSIX, not GNU's magic)");
}

static void test_large_size(void)
{
	const uint64_t sizes[] = { 077777777777ull, 077777777777ull + 1, 1ull << 40 };
	uint8_t hdr[PBT_TAR_BLOCK];
	char path[128];
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/hdr%zu", dir, i);
		f = fopen(path, "w");
		if (!f || pbt_tar_header(hdr, "big.pftrace", sizes[i], 0) ||
		    fwrite(hdr, 1, sizeof(hdr), f) != sizeof(hdr)) {
			tap(0, "header of a %llu-byte member", (unsigned long long)sizes[i]);
			if (f)
				fclose(f);
			continue;
		}
		fclose(f);
		tap(run(PY " -c 'import sys, tarfile\n"
			"i = tarfile.TarInfo.frombuf(open(sys.argv[1], \"rb\").read(), \"utf-8\", \"strict\")\n"
			"sys.exit(0 if i.size == int(sys.argv[2]) and i.name == \"big.pftrace\" else 1)' %s %llu",
			path, (unsigned long long)sizes[i]) == 0,
		    "a %llu-byte member's header reads back (%s)", (unsigned long long)sizes[i],
		    sizes[i] > 077777777777ull ? "base-256" : "11 octal digits");
	}
}

static void test_refused(void)
{
	char long_name[PBT_TAR_NAME_MAX + 2];
	uint8_t hdr[PBT_TAR_BLOCK];
	struct pbt_tar t = { 0 };

	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	tap(pbt_tar_header(hdr, "", 1, 0) < 0, "an empty name is refused");
	tap(pbt_tar_header(hdr, long_name, 1, 0) < 0, "a 101-byte name is refused");
	tap(pbt_tar_header(hdr, "dir/file", 1, 0) < 0, "a name with '/' is refused");

	t.fd = open("/dev/null", O_WRONLY);
	tap(pbt_tar_begin(&t, "m", 10, 0) == 0 && pbt_tar_write(&t, "12345", 5) == 0 &&
	    pbt_tar_end(&t) < 0 && strstr(t.err, "short by 5"),
	    "a member shorter than its header: an error (%s)", t.err);
	t.err[0] = '\0';
	tap(pbt_tar_begin(&t, "n", 1, 0) < 0 && strstr(t.err, "short by 5"),
	    "and the next member is refused after it");
	close(t.fd);

	memset(&t, 0, sizeof(t));
	t.fd = open("/dev/null", O_WRONLY);
	tap(pbt_tar_begin(&t, "m", 3, 0) == 0 && pbt_tar_write(&t, "12345", 5) < 0,
	    "a member longer than its header: an error (%s)", t.err);
	close(t.fd);

	memset(&t, 0, sizeof(t));
	t.fd = open("/dev/full", O_WRONLY);
	tap(t.fd >= 0 && pbt_tar_begin(&t, "m", 3, 0) < 0 &&
	    strstr(t.err, strerror(ENOSPC)) && strstr(t.err, "byte 0"),
	    "a write that fails says where and why (%s)", t.err);
	if (t.fd >= 0)
		close(t.fd);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		tap(0, "a scratch directory");
		printf("1..%d\n", nr_tests);
		return 1;
	}
	test_readers();
	test_large_size();
	test_refused();
	run("rm -rf %s", dir);
	printf("1..%d\n", nr_tests);
	return nr_failed ? 1 : 0;
}
