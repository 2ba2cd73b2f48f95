// SPDX-License-Identifier: GPL-2.0
/*
 * tracectl symbolize FILE: names for the user frames of FILE's stack
 * samples, appended as Perfetto ModuleSymbols packets (symbolize.h), what
 * traced does when it finishes a file with stacks. For a file recorded
 * elsewhere, or after the binaries were rebuilt with symbols.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>

#include "tracectl.h"
#include "symbolize.h"
#include "writer.h"

/* FILE's bytes, mapped; NULL and a message if it cannot be read. */
static void *map_file(const char *path, size_t *len, int *mapped)
{
	struct stat sb;
	void *p;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb)) {
		errf("cannot read %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	*len = (size_t)sb.st_size;
	p = *len ? pbt_file_bytes(fd, *len, mapped) : NULL;
	close(fd);
	if (!p) {
		errf("cannot read %s: %s", path, *len ? strerror(errno) : "empty file");
		return NULL;
	}
	return p;
}

int cmd_symbolize(int argc, char **argv)
{
	struct pbt_writer w = { .fd = -1 };
	struct pbt_sym_stats st;
	uint8_t *out = NULL;
	size_t len, out_len;
	char err[512];
	int ret, mapped;
	void *data;

	if (argc != 2 || argv[1][0] == '-')
		return usage_error("symbolize wants exactly one FILE");
	data = map_file(argv[1], &len, &mapped);
	if (!data)
		return EXIT_FAIL;
	ret = pbt_symbolize(data, len, &out, &out_len, &st, err, sizeof(err));
	pbt_file_bytes_free(data, len, mapped);
	if (ret) {
		errf("%s: %s", argv[1], err);
		return EXIT_FAIL;
	}
	if (out_len &&
	    (pbt_writer_open(&w, argv[1], 1, 0, err, sizeof(err)) < 0 ||
	     pbt_writer_write(&w, out, out_len, err, sizeof(err)) < 0 ||
	     pbt_writer_sync(&w) < 0)) {
		errf("%s: appending the symbols: %s", argv[1], err);
		pbt_writer_close(&w);
		free(out);
		return EXIT_FAIL;
	}
	pbt_writer_close(&w);
	free(out);
	printf("%s: %u of %u user frames named, in %u binaries", argv[1],
	       st.named, st.frames, st.modules);
	if (st.unreadable)
		printf(" (%u not readable here: not there, or no 64-bit ELF)",
		       st.unreadable);
	printf("\n");
	return EXIT_OK;
}
