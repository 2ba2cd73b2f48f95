// SPDX-License-Identifier: GPL-2.0
/*
 * traced: the machines file (user/lib/machines_file.h) into the module's
 * names table, at start and on SIGHUP, as sshd rereads its config. A
 * missing file at the default path is no error: most hosts name no guest.
 * A bad file changes nothing (the kernel keeps the table it has) and is
 * logged with its line; traced goes on either way.
 */
#include "traced.h"
#include "machines_file.h"

void load_machines(const char *path, bool given)
{
	struct pbt_names_file f;
	uint32_t count, evicted;
	char err[512];
	int ret;

	ret = pbt_names_file_read(path, &f, err, sizeof(err));
	if (ret == -ENOENT && !given) {
		logmsg(LOG_INFO, "no %s: the module's names table stays as it is", path);
		return;
	}
	if (ret) {
		logmsg(LOG_ERR, "%s; the names table stays as it was", err);
		return;
	}
	ret = pbt_nl_load_names(nl, f.e, f.n, 0, &count, &evicted);
	if (ret)
		logmsg(LOG_ERR, "%s: loading it: %s; the names table stays as it was",
		       path, pbt_nl_error(nl));
	else
		logmsg(evicted ? LOG_WARNING : LOG_INFO,
		       "%s: %zu names loaded (%zu with a key), the table holds %u; %u online machines disconnected (a name or key of theirs changed)",
		       path, f.n, f.nr_keys, count, evicted);
	pbt_names_file_free(&f);
}
