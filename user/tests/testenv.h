/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the config and textpb tests share besides TAP: the directories
 * they work in (user/, Perfetto's schema, a scratch dir), running protoc
 * through the shell and reading its output back.
 */
#ifndef PBT_TESTS_TESTENV_H
#define PBT_TESTS_TESTENV_H

#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char user_dir[PATH_MAX], schema_dir[PATH_MAX], tmp_dir[64];

/*
 * The binary lives in user/build-san/tests/ (or build/): find user/.
 * The scratch dir is /tmp/@name.XXXXXX.
 */
static inline void find_dirs(const char *name)
{
	char exe[PATH_MAX];
	const char *env = getenv("PBTRACE_SCHEMA_DIR");
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0) {
		perror("readlink /proc/self/exe");
		exit(1);
	}
	exe[n] = '\0';
	snprintf(user_dir, sizeof(user_dir), "%s",
		 dirname(dirname(dirname(exe))));
	if (env && *env)
		snprintf(schema_dir, sizeof(schema_dir), "%s", env);
	else
		snprintf(schema_dir, sizeof(schema_dir), "%s/../../shared/perfetto",
			 user_dir);
	snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/%s.XXXXXX", name);
	if (!mkdtemp(tmp_dir)) {
		perror("mkdtemp");
		exit(1);
	}
}

static inline int sh(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* The whole file (up to 1 MiB - 1), NUL-terminated; malloc'd or NULL. */
static inline char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n = 0;

	if (!f)
		return NULL;
	buf = malloc(1 << 20);
	if (buf)
		n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

#endif /* PBT_TESTS_TESTENV_H */
