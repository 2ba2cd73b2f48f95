// SPDX-License-Identifier: GPL-2.0
/* traced: names for the user frames of stack samples, when a file ends. */
#include "traced.h"

/* Names for the user frames of a file with stacks (symbolize.h), read
 * back from the file. The binaries are opened as the session's owner: the
 * file names no function of a binary its owner could not read. */
void write_symbols(struct session *s)
{
	struct pbt_sym_stats st;
	struct owner_creds c;
	uint8_t *out = NULL;
	size_t out_len = 0;
	char err[512];
	int ret, mapped;
	void *data;

	if (!s->stacks || s->failed || s->w.fd < 0 || !s->w.size)
		return;
	data = pbt_file_bytes(s->w.fd, s->w.size, &mapped);
	if (!data) {
		logmsg(LOG_WARNING, "session %u: reading %s back to name its user frames: %s; run 'tracectl symbolize %s'",
		       s->id, s->w.path, strerror(errno), s->w.path);
		return;
	}
	ret = be_owner(s, &c, err, sizeof(err));
	if (!ret) {
		ret = pbt_symbolize(data, s->w.size, &out, &out_len, &st, err,
				    sizeof(err));
		be_self(&c);
	}
	pbt_file_bytes_free(data, s->w.size, mapped);
	if (ret) {
		logmsg(LOG_WARNING, "session %u: naming user frames: %s; run 'tracectl symbolize %s'",
		       s->id, err, s->w.path);
		return;
	}
	if (out_len)
		emit_bytes(s, out, out_len, 0);
	free(out);
	logmsg(LOG_INFO, "session %u (%s): %u of %u user frames named, in %u binaries (%u not readable)",
	       s->id, s->name, st.named, st.frames, st.modules, st.unreadable);
}
