// SPDX-License-Identifier: GPL-2.0
/*
 * tracectl machines: the endpoint's relayed machines and the names it
 * gives them (docs/multi-machine.md, "Names and keys"). Root's: guests'
 * names, kernels and CIDs are.
 *
 *   tracectl machines               the machine table, a line each
 *   tracectl machines names         the names table (never a key)
 *   tracectl machines load [FILE]   load FILE (default /etc/pbtrace/machines)
 */
#define _GNU_SOURCE
#include "tracectl.h"
#include "machines_file.h"

static int fail_nl(struct pbt_nl *nl, int err, const char *what)
{
	errf("%s: %s", what, pbt_nl_error(nl));
	if (err == -EPERM) {
		errf("not permitted: relayed machines' names, keys and CIDs are root's (CAP_SYS_ADMIN)");
		return EXIT_PERM;
	}
	return EXIT_FAIL;
}

static void hex(char *out, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void flags_text(char *out, size_t n, uint32_t f)
{
	snprintf(out, n, "%s%s%s%s", f & PBTRACE_EPM_TCP ? "tcp" : "vsock",
		 f & PBTRACE_EPM_PINNED ? ",pinned" : "",
		 f & PBTRACE_EPM_RENAMED ? ",renamed" : "",
		 f & PBTRACE_EPM_RETIRED ? ",retired" : "");
}

/*
 * One line a machine, "key=value" (grep and awk take them), the fields of
 * the old endpoint_stats lines first.
 */
static void print_machine(const struct pbt_endpoint_machine_info *e)
{
	const struct pbtrace_endpoint_machine *m = &e->m;
	char hint[33], flags[48];

	hex(hint, m->hint, sizeof(m->hint));
	flags_text(flags, sizeof(flags), m->flags);
	printf("machine %u name=%s sysname=%s release=%s arch=%s cpus=%u ram_mb=%llu cid=%u online=%u connects=%u pings=%llu rtt_ns=%llu offset_ns=%lld hint=%s peer=\"%s\" claimed=%s flags=%s offline_s=%llu\n",
	       m->machine_id, e->name, e->sysname, e->release, e->arch,
	       m->num_cpus, (unsigned long long)(m->ram_bytes >> 20), m->cid,
	       m->online, m->connects, (unsigned long long)m->pings,
	       (unsigned long long)m->rtt_ns, (long long)m->offset_ns, hint,
	       e->peer, e->claimed, flags,
	       (unsigned long long)(m->offline_ns / 1000000000ull));
}

static int list_machines(struct pbt_nl *nl)
{
	struct pbt_endpoint_machine_info *v;
	size_t n, i, online = 0;
	int ret;

	ret = pbt_nl_list_machines(nl, &v, &n);
	if (ret)
		return fail_nl(nl, ret, "listing the machines");
	for (i = 0; i < n; i++)
		online += v[i].m.online;
	printf("machines: %zu (%zu online, %zu offline)\n", n, online,
	       n - online);
	for (i = 0; i < n; i++)
		print_machine(&v[i]);
	free(v);
	return EXIT_OK;
}

/* The online machine of @name, or NULL. */
static const struct pbt_endpoint_machine_info *
online_as(const struct pbt_endpoint_machine_info *v, size_t n,
	  const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].m.online && !strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

static int list_names(struct pbt_nl *nl)
{
	struct pbt_endpoint_machine_info *m = NULL;
	const struct pbt_endpoint_machine_info *on;
	struct pbt_name_info *v;
	size_t n, nm = 0, i, params = 0;
	char what[32], from[32];
	int ret;

	ret = pbt_nl_list_names(nl, &v, &n);
	if (ret)
		return fail_nl(nl, ret, "listing the names");
	if (pbt_nl_list_machines(nl, &m, &nm))
		nm = 0;		/* the names still, without where they are */
	for (i = 0; i < n; i++)
		params += !!(v[i].flags & PBTRACE_NAME_PARAM);
	printf("names: %zu (%zu from module parameters, %zu loaded)\n", n,
	       params, n - params);
	for (i = 0; i < n; i++) {
		if (v[i].flags & PBTRACE_NAME_KEYED)
			snprintf(what, sizeof(what), "key");
		else
			snprintf(what, sizeof(what), "cid %u", v[i].cid);
		if (v[i].flags & PBTRACE_NAME_PARAM)
			snprintf(from, sizeof(from), "%s",
				 v[i].flags & PBTRACE_NAME_KEYED ?
				 "endpoint_keys=" : "endpoint_machines=");
		else
			snprintf(from, sizeof(from), "line %u", v[i].line);
		on = online_as(m, nm, v[i].name);
		if (on)
			printf("%-20s %-12s %-20s online: machine %u, %s\n",
			       v[i].name, what, from, on->m.machine_id, on->peer);
		else
			printf("%-20s %-12s %-20s offline\n", v[i].name, what,
			       from);
	}
	free(v);
	free(m);
	return EXIT_OK;
}

static int load(struct pbt_nl *nl, const char *path)
{
	struct pbt_names_file f;
	uint32_t count, evicted;
	size_t n, keys;
	char err[512];
	int ret;

	ret = pbt_names_file_read(path, &f, err, sizeof(err));
	if (ret) {
		errf("%s", err);
		return ret == -ENOENT ? EXIT_FAIL : EXIT_BAD_CONFIG;
	}
	n = f.n;
	keys = f.nr_keys;
	ret = pbt_nl_load_names(nl, f.e, f.n, 0, &count, &evicted);
	pbt_names_file_free(&f);
	if (ret) {
		/* The kernel names the entry by its line: say the file. */
		errf("%s: loading it: %s; the table is as it was", path,
		     pbt_nl_error(nl));
		return ret == -EPERM ? fail_nl(nl, ret, "loading") :
		       ret == -EINVAL || ret == -EEXIST || ret == -E2BIG ?
		       EXIT_BAD_CONFIG : EXIT_FAIL;
	}
	printf("%s: %zu names loaded (%zu with a key); the table holds %u; %u online machine%s disconnected (a name or key of theirs changed)\n",
	       path, n, keys, count, evicted, evicted == 1 ? "" : "s");
	return EXIT_OK;
}

int cmd_machines(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *sub, *path = PBT_MACHINES_FILE;
	struct pbt_nl *nl;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == OPT_HELP)
			return usage(stdout), EXIT_OK;
		return usage_error("bad option");
	}
	sub = optind < argc ? argv[optind++] : "list";
	if (!strcmp(sub, "load") && optind < argc)
		path = argv[optind++];
	if (strcmp(sub, "list") && strcmp(sub, "names") && strcmp(sub, "load"))
		return usage_error("machines wants list, names or load [FILE], not '%s'",
				   sub);
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	nl = open_nl(&ret);
	if (!nl)
		return ret;
	if (!strcmp(sub, "load"))
		ret = load(nl, path);
	else if (!strcmp(sub, "names"))
		ret = list_names(nl);
	else
		ret = list_machines(nl);
	pbt_nl_close(nl);
	return ret;
}
