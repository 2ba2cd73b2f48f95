// SPDX-License-Identifier: GPL-2.0
/* traced: the kernel's session notifications. */
#include "traced.h"

/* --- notifications ----------------------------------------------------- */

/* The old file's path is the owner's to name: removed as the owner. */
static int unlink_as_owner(const struct session *s, const char *path)
{
	struct owner_creds c;
	char err[256];
	int ret;

	if (be_owner(s, &c, err, sizeof(err)) < 0) {
		logmsg(LOG_WARNING, "session %u (%s): not removing %s: %s",
		       s->id, s->name, path, err);
		return -1;
	}
	ret = unlink(path);
	be_self(&c);
	return ret;
}

/*
 * SET_SESSION: a session not started yet was described anew (tracectl
 * reconfigure). Nothing was recorded, the kernel replaced its buffers
 * (the old mappings now only report -ESTALE): start it over, from the
 * new description, and drop the header-only file of an old output.
 */
static void on_reconfigure(struct session *s)
{
	uint32_t id = s->id;
	char *old = s->w.path ? strdup(s->w.path) : NULL;
	struct session *n;

	logmsg(LOG_NOTICE, "session %u (%s): reconfigured before it started; rereading it",
	       id, s->name);
	s->state = S_DONE;
	free_session(s);
	adopt_id(id, 1);
	n = find_session(id);
	if (old && n && n->w.path && strcmp(old, n->w.path)) {
		if (unlink_as_owner(n, old) == 0)
			logmsg(LOG_NOTICE, "session %u (%s): output now %s; removed %s, which held only the old header",
			       id, n->name, n->w.path, old);
	}
	free(old);
}

static void on_notify(const struct pbt_notify *n)
{
	struct session *s = find_session(n->session_id);

	switch (n->cmd) {
	case PBTRACE_CMD_NEW_SESSION:
		adopt_id(n->session_id, 1);
		break;
	case PBTRACE_CMD_START_SESSION:
		if (!s)
			adopt_id(n->session_id, 1);
		else if (s->state == S_CONFIGURED || s->state == S_WAIT_TRIGGER)
			begin_running(s, 0);
		break;
	case PBTRACE_CMD_SET_SESSION:
		if (s)
			on_reconfigure(s);
		break;
	case PBTRACE_CMD_STOP_SESSION:
		if (s)
			finish_session(s, "stopped");
		break;
	case PBTRACE_CMD_DESTROY_SESSION:
		if (s) {
			logmsg(LOG_WARNING, "session %u (%s) destroyed before traced finished it",
			       s->id, s->name);
			s->state = S_DONE;
			free_session(s);
		}
		break;
	case PBTRACE_CMD_TRIGGER:
		for (s = sessions; s; ) {
			struct session *next = s->next;

			on_trigger(s, n->trigger);
			s = next;
		}
		break;
	default:
		break;
	}
}

int read_notifications(void)
{
	struct pbt_notify n;
	int ret;

	while ((ret = pbt_nl_next_notify(nl, &n)) == 1)
		on_notify(&n);
	if (ret == -ENOBUFS) {
		logmsg(LOG_WARNING, "notifications were lost, re-reading sessions");
		return sync_sessions(1);
	}
	if (ret < 0) {
		logmsg(LOG_ERR, "notification socket: %s", strerror(-ret));
		return -1;
	}
	return 0;
}
