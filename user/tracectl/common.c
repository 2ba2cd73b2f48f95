// SPDX-License-Identifier: GPL-2.0
/* tracectl: what every command uses: messages, netlink, durations, the known events, finding a session by name. */
#define _GNU_SOURCE
#include <grp.h>

#include "tracectl.h"

void errf(const char *fmt, ...)
{
	va_list ap;

	fputs("tracectl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("tracectl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see 'tracectl --help')\n", stderr);
	return EXIT_FAIL;
}

/* The module's group= gid (-1: none), which the kernel cannot name. */
static long trace_group(void)
{
	FILE *f = fopen("/sys/module/pbtrace/parameters/group", "re");
	long gid = -1;

	if (f) {
		if (fscanf(f, "%ld", &gid) != 1)
			gid = -1;
		fclose(f);
	}
	return gid;
}

/* The caller is in that group already (egid or a supplementary group). */
static bool in_group(gid_t gid)
{
	int i, n = getgroups(0, NULL);
	gid_t *groups = calloc(n > 0 ? (size_t)n : 1, sizeof(*groups));
	bool found = getegid() == gid;

	if (groups)
		n = getgroups(n, groups);
	for (i = 0; groups && i < n; i++)
		found |= groups[i] == gid;
	free(groups);
	return found;
}

static void explain_perm(void)
{
	long gid = trace_group();
	struct group *gr = gid >= 0 ? getgrgid((gid_t)gid) : NULL;

	if (gid >= 0 && in_group((gid_t)gid)) {
		errf("not permitted: as a member of the pbtrace group you may use only the sessions you created, this machine only, within group_max_kb (docs/security.md)");
		return;
	}
	if (gid < 0) {
		errf("not permitted: pbtrace needs CAP_SYS_ADMIN (CAP_PERFMON to look): run as root, or have pbtrace loaded with group=GID (docs/security.md)");
		return;
	}
	if (gr)
		errf("not permitted: pbtrace needs CAP_SYS_ADMIN or membership in group '%s' (gid %ld): ask an admin to run 'usermod -aG %s USER', then log in again",
		     gr->gr_name, gid, gr->gr_name);
	else
		errf("not permitted: pbtrace needs CAP_SYS_ADMIN or membership in group gid %ld (no name for it here)",
		     gid);
}

/* A netlink failure as an exit code, with the kernel's explanation. */
int nl_fail(struct pbt_nl *nl, int err, const char *what)
{
	errf("%s: %s", what, pbt_nl_error(nl));
	if (err == -EPERM || err == -EACCES) {
		explain_perm();
		return EXIT_PERM;
	}
	return EXIT_FAIL;
}

/*
 * Notifications for waiting on traced. The sessions group needs
 * CAP_SYS_ADMIN (where the kernel can say so): a group member waits by
 * polling GET_SESSION instead, and without traced's reason for an early
 * end, which check_finished() then reads from the file itself.
 */
int subscribe(struct pbt_nl *nl)
{
	int ret = pbt_nl_subscribe(nl);

	if (ret == -EPERM || ret == -EACCES)
		return EXIT_OK;
	if (ret)
		return nl_fail(nl, -EIO, "subscribing to notifications");
	return EXIT_OK;
}

struct pbt_nl *open_nl(int *code)
{
	char err[256];
	struct pbt_nl *nl = pbt_nl_open(err, sizeof(err));

	if (!nl) {
		errf("%s", err);
		*code = errno == ENOENT ? EXIT_NO_MODULE : EXIT_FAIL;
	}
	return nl;
}

uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "500ms", "10s", "2m", "1h", or plain seconds. -1 when malformed. */
long long parse_duration_ms(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -1;
	if (!*end || !strcmp(end, "s"))
		v *= 1000;
	else if (!strcmp(end, "m"))
		v *= 60000;
	else if (!strcmp(end, "h"))
		v *= 3600000;
	else if (strcmp(end, "ms"))
		return -1;
	if (v > 0xffffffffu)
		return -1;
	return (long long)v;
}

int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > 0xffffffffu || *s == '-')
		return -1;
	*out = (uint32_t)v;
	return 0;
}

void fmt_bytes(char *buf, size_t len, double v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned int i = 0;

	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	snprintf(buf, len, i ? "%.1f %s" : "%.0f %s", v, unit[i]);
}

int collect_event(const char *name, int available, void *arg)
{
	struct event_list *l = arg;

	if (l->n < 64) {
		snprintf(l->names[l->n], PBTRACE_NAME_MAX, "%s", name);
		l->available[l->n++] = available;
	}
	return 0;
}

/* 1 available, 0 known but missing in this kernel, -1 unknown. */
int event_state(const struct event_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->names[i], name))
			return l->available[i];
	return -1;
}

static int native_state(const char *name, void *arg)
{
	return event_state(arg, name);
}

static void resolve_warning(const char *line, void *arg)
{
	(void)arg;
	fprintf(stderr, "tracectl: warning: %s\n", line);
}

/*
 * The spec's event names as the kernel takes them: the module's own
 * events stay, any other tracepoint of this kernel (and what globs match)
 * is sent with its tracefs layout (tracepoints.h).
 */
int check_events(const struct event_list *l, struct pbt_session_spec *spec)
{
	char err[1024];

	if (pbt_spec_resolve_events(spec, native_state, resolve_warning,
				    (void *)l, err, sizeof(err))) {
		errf("%s", err);
		return EXIT_BAD_EVENT;
	}
	return EXIT_OK;
}

int find_session(struct pbt_nl *nl, const char *name, uint32_t *id,
		 char *found, size_t len)
{
	struct pbt_session_info *v;
	size_t n, i, hits = 0, relay = 0;
	int ret = pbt_nl_list_sessions(nl, &v, &n);

	if (ret)
		return nl_fail(nl, ret, "listing sessions");
	for (i = 0; i < n; i++) {
		if (name && strcmp(v[i].name, name))
			continue;
		/* The relay's session belongs to the host's session. */
		if (v[i].relay) {
			relay++;
			continue;
		}
		*id = v[i].id;
		snprintf(found, len, "%s", v[i].name);
		hits++;
	}
	pbt_session_infos_free(v, n);
	if (hits == 1)
		return EXIT_OK;
	if (name && relay && !hits)
		errf("session '%s' is this machine's relay recording for its host: it ends with the host's session; stop that one on the host",
		     name);
	else if (name)
		errf("no session named '%s': 'tracectl status' lists them", name);
	else if (!hits)
		errf("no session to stop: 'tracectl status' lists them");
	else
		errf("%zu sessions are live: name one with -n ('tracectl status' lists them)", hits);
	return EXIT_FAIL;
}

/*
 * A session made to wait for its START_TRACING trigger can be described
 * again before it starts: the same options as start, for the session named
 * by -n (or the config's unique_session_name). traced rereads it and
 * writes to the new output.
 */
