// SPDX-License-Identifier: GPL-2.0
/* traced: the output file: records, the size limit, opening as the owner. */
#include "traced.h"

/* --- output ------------------------------------------------------------ */

/* The owner's groups: its login groups if it has a passwd entry, else
 * only its gid (never more than the user has at login). */
static gid_t *owner_groups(uint32_t uid, uint32_t gid, int *n)
{
	struct passwd *pw = getpwuid(uid);
	gid_t *g;

	*n = 0;
	if (pw)
		getgrouplist(pw->pw_name, gid, NULL, n);
	if (*n < 1)
		*n = 1;
	g = calloc((size_t)*n, sizeof(*g));
	if (!g)
		return NULL;
	if (!pw || getgrouplist(pw->pw_name, gid, g, n) < 0) {
		g[0] = gid;
		*n = 1;
	}
	return g;
}

void be_self(struct owner_creds *c)
{
	if (!c->switched)
		return;
	setfsuid(geteuid());
	setfsgid(getegid());
	if (setgroups((size_t)c->nr_saved, c->saved) < 0)
		logmsg(LOG_ERR, "cannot restore traced's groups: %s", strerror(errno));
	free(c->saved);
	c->switched = 0;
}

int be_owner(const struct session *s, struct owner_creds *c,
		    char *err, size_t errlen)
{
	gid_t *groups;
	int n, ok;

	memset(c, 0, sizeof(*c));
	if (s->owner_uid == geteuid())
		return 0;
	c->nr_saved = getgroups(0, NULL);
	c->saved = calloc((size_t)(c->nr_saved > 0 ? c->nr_saved : 1), sizeof(gid_t));
	groups = owner_groups(s->owner_uid, s->owner_gid, &n);
	if (!c->saved || !groups || c->nr_saved < 0 ||
	    getgroups(c->nr_saved, c->saved) < 0) {
		free(c->saved);
		free(groups);
		snprintf(err, errlen, "out of memory taking uid %u's credentials",
			 s->owner_uid);
		return -ENOMEM;
	}
	c->switched = 1;
	ok = setgroups((size_t)n, groups) == 0;
	free(groups);
	setfsgid(s->owner_gid);
	setfsuid(s->owner_uid);
	/* setfsuid() reports no error: ask what it is now (-1 changes nothing). */
	ok = ok && (uint32_t)setfsuid((uid_t)-1) == s->owner_uid &&
	     (uint32_t)setfsgid((gid_t)-1) == s->owner_gid;
	if (ok)
		return 0;
	be_self(c);
	snprintf(err, errlen,
		 "traced (uid %u) cannot take uid %u's credentials to write its session's file: run traced as root",
		 (unsigned int)geteuid(), s->owner_uid);
	return -EPERM;
}

/* pbt_writer_open as the session's owner. */
int open_as_owner(struct session *s, const char *path, int append,
			 char *err, size_t errlen)
{
	struct owner_creds c;
	int ret = be_owner(s, &c, err, errlen);

	if (ret)
		return ret;
	ret = pbt_writer_open(&s->w, path, append, 0, err, errlen);
	be_self(&c);
	if (ret == -EACCES || ret == -EPERM)
		snprintf(err, errlen,
			 "cannot open output %.200s as its owner (uid %u, gid %u): %s; pick a path that user may write",
			 path, s->owner_uid, s->owner_gid, strerror(-ret));
	return ret;
}

/* The session ends early for err: said in the log and, with DESTROY,
 * to whoever waits for the file (tracectl record, stop --wait). */
void set_error(struct session *s, const char *err)
{
	size_t n = strlen(err);

	if (s->error[0])
		return;
	/* Cut to what the kernel passes on (PBTRACE_ERROR_MAX). */
	if (n >= sizeof(s->error))
		n = sizeof(s->error) - 1;
	memcpy(s->error, err, n);
	s->error[n] = '\0';
}

static void fail_with(struct session *s, const char *err, const char *what)
{
	if (s->failed)
		return;
	s->failed = 1;
	set_error(s, err);
	logmsg(LOG_ERR, "session %u (%s): %s; ending the session%s", s->id,
	       s->name, err, what);
}

void fail_session(struct session *s, const char *err)
{
	fail_with(s, err, "");
}

/* Write one record; a record that does not fit the file limit (keeping
 * @reserve bytes) is dropped whole. Returns 0 when written. */
int emit_bytes(struct session *s, const void *p, size_t len,
		      uint64_t reserve)
{
	char err[512];
	int ret;

	if (s->failed || s->w.fd < 0)
		return -EIO;
	if (s->limit && s->w.size + len + reserve > s->limit) {
		if (!s->full)
			logmsg(LOG_NOTICE,
			       "session %u (%s): max_file_size_bytes %llu reached",
			       s->id, s->name, (unsigned long long)s->limit);
		s->full = 1;
		return -EFBIG;
	}
	ret = pbt_writer_write(&s->w, p, len, err, sizeof(err));
	if (ret < 0 && ret != -EFBIG)
		fail_with(s, err, " (the file keeps the whole records written before: a valid trace)");
	return ret;
}

uint64_t file_reserve(const struct session *s)
{
	return s->limit > 4 * FINAL_RESERVE ? FINAL_RESERVE : 0;
}

/* Write a packet traced built; frees it. */
int emit(struct session *s, int built, struct pbt_rec *r)
{
	int ret;

	if (built < 0) {
		logmsg(LOG_WARNING, "session %u: building a packet failed: %s",
		       s->id, strerror(-built));
		return built;
	}
	ret = emit_bytes(s, r->data, r->len, s->closing ? 0 : file_reserve(s));
	free(r->data);
	return ret;
}
