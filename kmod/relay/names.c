// SPDX-License-Identifier: GPL-2.0
/*
 * The names table: the names the host gives its guests. The vsock guest
 * of a named CID is that name whatever its HELLO says; a TCP relay with a
 * key of its own must prove that key to use its name. Either way the name
 * is that peer's alone (machines.c says who a relay is).
 *
 * Two sources: endpoint_machines= and endpoint_keys=, module parameters
 * for small setups, fixed while the module is loaded; and the table root
 * loads at run time (PBTRACE_CMD_LOAD_NAMES: tracectl machines load,
 * traced from /etc/pbtrace/machines), which replaces the loaded part and
 * keeps the parameters'. A table of thousands does not fit one netlink
 * nest, so a load comes in pieces: they gather in a staging area, and
 * only the commit makes them the table, whole, under ep_lock. An error in
 * any piece drops the load and leaves the table as it was.
 *
 * The table is an array sorted by name, with an index of its CID entries
 * sorted by CID: every HELLO looks up a name and a CID. Keys are zeroed
 * wherever they are freed, and never leave the kernel.
 */
#include <linux/module.h>
#include <linux/bsearch.h>
#include <linux/sort.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/workqueue.h>
#include <crypto/algapi.h>
#include <net/netlink.h>

#include "compat.h"
#include "endpoint.h"

static char *endpoint_machines;
module_param(endpoint_machines, charp, 0400);
MODULE_PARM_DESC(endpoint_machines, "vsock: CID:NAME,... the machine name of each CID, whatever its HELLO says; no other peer may use it");
/* Keys: perm 0, never shown in sysfs; the string is zeroed once parsed. */
static char *endpoint_keys;
module_param(endpoint_keys, charp, 0);
MODULE_PARM_DESC(endpoint_keys, "TCP: NAME:HEX,... the key the relay of each name must prove instead of relay_key");

struct ep_cid_ref {
	u32 cid;
	u32 index;			/* into e[] */
};

struct ep_names {
	u32 nr, nr_cids;
	struct ep_cid_ref *by_cid;	/* sorted by CID */
	struct ep_name e[];		/* sorted by name */
};

/* A load being put together (PBTRACE_CMD_LOAD_NAMES), under ep_lock. */
struct ep_load {
	u32 id;				/* 0: none */
	u32 portid;			/* the socket that began it */
	u32 nr, cap;
	struct ep_name *e;
};

u64 ep_names_gen;
static struct ep_names *ep_names;	/* NULL: no names */
static struct ep_name *ep_params;	/* the module parameters' */
static u32 ep_nr_params;
static u32 ep_serial;			/* the last key's peer serial */
static bool ep_names_up;		/* after init, before exit */
static struct ep_load ep_load;
static u32 ep_load_ids;
static u32 ep_load_closed;		/* portid whose socket closed */

static void ep_entries_free(struct ep_name *e, u32 n)
{
	if (e)
		kvfree_sensitive(e, (size_t)n * sizeof(*e));
}

static void ep_table_free(struct ep_names *t)
{
	if (!t)
		return;
	kvfree(t->by_cid);
	kvfree_sensitive(t, struct_size(t, e, t->nr));
}

/*
 * A name the host gives: 1 to PBTRACE_NAME_MAX - 1 printable characters
 * without spaces (the file's separator), ',' (the parameters') or '@' (the
 * host's own NAME@PEER), and not what a config means by "host" or "*".
 */
static bool ep_name_ok(const char *p, size_t n)
{
	size_t i;

	if (!n || n >= PBTRACE_NAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (p[i] <= 0x20 || p[i] > 0x7e || p[i] == ',' || p[i] == '@')
			return false;
	return !((n == strlen(PBTRACE_MACHINE_HOST) &&
		  !memcmp(p, PBTRACE_MACHINE_HOST, n)) ||
		 (n == strlen(PBTRACE_MACHINE_ANY) &&
		  !memcmp(p, PBTRACE_MACHINE_ANY, n)));
}

static int ep_name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ep_name *)a)->name,
		      ((const struct ep_name *)b)->name);
}

static int ep_name_key_cmp(const void *key, const void *elt)
{
	return strcmp(key, ((const struct ep_name *)elt)->name);
}

static int ep_cid_cmp(const void *a, const void *b)
{
	u32 x = ((const struct ep_cid_ref *)a)->cid;
	u32 y = ((const struct ep_cid_ref *)b)->cid;

	return x < y ? -1 : x > y;
}

const struct ep_name *ep_name_find(const char *name)
{
	const struct ep_names *t = ep_names;

	lockdep_assert_held(&ep_lock);
	return t ? bsearch(name, t->e, t->nr, sizeof(t->e[0]),
			   ep_name_key_cmp) : NULL;
}

const struct ep_name *ep_cid_find(u32 cid)
{
	const struct ep_names *t = ep_names;
	struct ep_cid_ref key = { .cid = cid };
	const struct ep_cid_ref *r;

	lockdep_assert_held(&ep_lock);
	if (!t)
		return NULL;
	r = bsearch(&key, t->by_cid, t->nr_cids, sizeof(key), ep_cid_cmp);
	return r ? &t->e[r->index] : NULL;
}

u32 ep_names_count(void)
{
	u32 n;

	mutex_lock(&ep_lock);
	n = ep_names ? ep_names->nr : 0;
	mutex_unlock(&ep_lock);
	return n;
}

/* Where @e came from, for a message: "line 7", "endpoint_machines=". */
static const char *ep_origin(const struct ep_name *e, char *buf, size_t n)
{
	if (!e->line)
		return e->kind == EP_NAME_CID ? "endpoint_machines=" :
						"endpoint_keys=";
	snprintf(buf, n, "line %u", e->line);
	return buf;
}

static bool ep_same(const struct ep_name *a, const struct ep_name *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == EP_NAME_CID)
		return a->cid == b->cid;
	return a->key.len == b->key.len &&
	       !crypto_memneq(a->key.b, b->key.b, a->key.len);
}

/*
 * Two entries of one name, @a before @b: an error, unless one is the
 * module parameters' and the other the same (then @drop says which goes).
 */
static int ep_name_twice(const struct ep_name *a, const struct ep_name *b,
			 int *drop, struct netlink_ext_ack *extack)
{
	const struct ep_name *loaded = a->line ? a : b, *other = a->line ? b : a;
	char x[24], y[24];

	if (!a->line != !b->line && ep_same(a, b)) {
		*drop = loaded == a ? 0 : 1;
		return 0;
	}
	PBT_ERR_MSG_ATTR_FMT(extack, NULL,
			     "a name is given twice: keep one (the kernel log names both lines)",
			     "%s: %s is named twice (%s too)",
			     ep_origin(loaded, x, sizeof(x)), loaded->name,
			     ep_origin(other, y, sizeof(y)));
	pr_info("pbtrace: names: %s: %s is named twice (%s too)\n",
		ep_origin(loaded, x, sizeof(x)), loaded->name,
		ep_origin(other, y, sizeof(y)));
	return -EEXIST;
}

/* Sorts @t's names and drops the loaded copies of parameters' entries. */
static int ep_table_names(struct ep_names *t, struct netlink_ext_ack *extack)
{
	u32 i, out = 0;
	int drop, ret;

	sort(t->e, t->nr, sizeof(t->e[0]), ep_name_cmp, NULL);
	for (i = 0; i < t->nr; i++) {
		if (out && !strcmp(t->e[out - 1].name, t->e[i].name)) {
			ret = ep_name_twice(&t->e[out - 1], &t->e[i], &drop,
					    extack);
			if (ret)
				return ret;
			if (!drop)
				t->e[out - 1] = t->e[i];
			memzero_explicit(&t->e[i], sizeof(t->e[i]));
			continue;
		}
		if (out != i) {
			t->e[out] = t->e[i];
			memzero_explicit(&t->e[i], sizeof(t->e[i]));
		}
		out++;
	}
	t->nr = out;
	return 0;
}

static int ep_table_cids(struct ep_names *t, struct netlink_ext_ack *extack)
{
	const struct ep_name *a, *b;
	char x[24], y[24];
	u32 i, n = 0;

	for (i = 0; i < t->nr; i++)
		n += t->e[i].kind == EP_NAME_CID;
	t->by_cid = kvmalloc_array(max(n, 1u), sizeof(*t->by_cid), GFP_KERNEL);
	if (!t->by_cid)
		return -ENOMEM;
	for (i = 0; i < t->nr; i++)
		if (t->e[i].kind == EP_NAME_CID)
			t->by_cid[t->nr_cids++] = (struct ep_cid_ref){
				.cid = t->e[i].cid, .index = i };
	sort(t->by_cid, n, sizeof(*t->by_cid), ep_cid_cmp, NULL);
	for (i = 1; i < n; i++) {
		if (t->by_cid[i - 1].cid != t->by_cid[i].cid)
			continue;
		a = &t->e[t->by_cid[i - 1].index];
		b = &t->e[t->by_cid[i].index];
		if (!a->line || (b->line && b->line > a->line))
			swap(a, b);	/* a: a loaded one, the later line */
		PBT_ERR_MSG_ATTR_FMT(extack, NULL,
				     "a CID is another name's already: one name per CID",
				     "%s: CID %u is %s's already (%s)",
				     ep_origin(a, x, sizeof(x)), a->cid, b->name,
				     ep_origin(b, y, sizeof(y)));
		return -EEXIST;
	}
	return 0;
}

/*
 * A key keeps its peer serial while its name and its bytes stay: a relay
 * keeps its machine across a reload that did not change it.
 */
static void ep_table_serials(struct ep_names *t)
{
	const struct ep_name *old;
	u32 i;

	for (i = 0; i < t->nr; i++) {
		if (t->e[i].kind != EP_NAME_KEY || t->e[i].serial)
			continue;
		old = ep_name_find(t->e[i].name);
		t->e[i].serial = old && ep_same(old, &t->e[i]) ? old->serial :
				 ++ep_serial;
	}
}

/* The table of the parameters' names and @nr loaded ones, checked. */
static struct ep_names *ep_table_build(const struct ep_name *loaded, u32 nr,
				       struct netlink_ext_ack *extack)
{
	struct ep_names *t;
	int ret;

	t = kvzalloc(struct_size(t, e, ep_nr_params + nr), GFP_KERNEL);
	if (!t)
		return ERR_PTR(-ENOMEM);
	t->nr = ep_nr_params + nr;
	if (ep_nr_params)
		memcpy(t->e, ep_params, ep_nr_params * sizeof(t->e[0]));
	if (nr)
		memcpy(t->e + ep_nr_params, loaded, nr * sizeof(t->e[0]));
	ret = ep_table_names(t, extack);
	if (!ret)
		ret = ep_table_cids(t, extack);
	if (ret) {
		/* nr may have shrunk: the rest was zeroed as it was dropped */
		ep_table_free(t);
		return ERR_PTR(ret);
	}
	ep_table_serials(t);
	return t;
}

/* Make @t the table; online machines it takes a name from are closed. */
static u32 ep_table_set(struct ep_names *t)
{
	struct ep_names *old = ep_names;
	u32 evicted;

	ep_names = t;
	ep_names_gen++;
	evicted = ep_machines_recheck();
	ep_table_free(old);
	return evicted;
}

/* ---- the module parameters ---- */

static int ep_params_add(const struct ep_name *e)
{
	struct ep_name *n;

	n = kvmalloc_array(ep_nr_params + 1, sizeof(*n), GFP_KERNEL);
	if (!n)
		return -ENOMEM;
	if (ep_nr_params)
		memcpy(n, ep_params, ep_nr_params * sizeof(*n));
	n[ep_nr_params] = *e;
	ep_entries_free(ep_params, ep_nr_params);
	ep_params = n;
	ep_nr_params++;
	return 0;
}

/* endpoint_machines=CID:NAME,... */
static int ep_parse_machines(void)
{
	const char *p = endpoint_machines;
	struct ep_name e;
	unsigned int cid;
	size_t len;
	int n;

	for (; p && *p; p += len + !!p[len]) {
		len = strcspn(p, ",");
		memset(&e, 0, sizeof(e));
		n = 0;
		if (sscanf(p, "%u:%n", &cid, &n) != 1 || n < 2 ||
		    p[n - 1] != ':' || !ep_name_ok(p + n, len - n)) {
			pr_err("pbtrace: endpoint_machines=%s: want CID:NAME, comma-separated (a name is 1 to %d printable characters, no space, ',' or '@', not \"host\")\n",
			       endpoint_machines, PBTRACE_NAME_MAX - 1);
			return -EINVAL;
		}
		memcpy(e.name, p + n, len - n);
		e.cid = cid;
		e.kind = EP_NAME_CID;
		if (ep_params_add(&e))
			return -ENOMEM;
	}
	return 0;
}

/* endpoint_keys=NAME:HEX,... (the keys are not echoed) */
static int ep_parse_keys(void)
{
	const char *p = endpoint_keys, *colon;
	struct ep_name e;
	size_t len;
	int ret = 0, i = 0;

	for (; p && *p && !ret; p += len + !!p[len]) {
		len = strcspn(p, ",");
		colon = memchr(p, ':', len);
		memset(&e, 0, sizeof(e));
		i++;
		if (!colon || !ep_name_ok(p, colon - p) ||
		    pbt_key_parse(&e.key, colon + 1, p + len - colon - 1)) {
			pr_err("pbtrace: endpoint_keys: entry %d: want NAME:HEX, comma-separated, keys of 32 to %d hex digits\n",
			       i, 2 * PBT_KEY_MAX);
			ret = -EINVAL;
			break;
		}
		memcpy(e.name, p, colon - p);
		e.kind = EP_NAME_KEY;
		e.serial = ++ep_serial;
		ret = ep_params_add(&e);
	}
	memzero_explicit(&e, sizeof(e));
	if (endpoint_keys)
		memzero_explicit(endpoint_keys, strlen(endpoint_keys));
	return ret;
}

int ep_names_init(void)
{
	struct ep_names *t;
	int ret;

	ret = ep_parse_machines();
	if (!ret)
		ret = ep_parse_keys();
	if (ret)
		return ret;
	mutex_lock(&ep_lock);
	t = ep_table_build(NULL, 0, NULL);
	if (IS_ERR(t)) {
		ret = PTR_ERR(t);
		if (ret == -EEXIST)
			pr_err("pbtrace: endpoint_machines, endpoint_keys: a name or a CID is given twice\n");
	} else {
		ep_table_set(t);
		ep_names_up = true;
	}
	mutex_unlock(&ep_lock);
	return ret;
}

/* ---- loads at run time ---- */

static void ep_load_drop(void)
{
	ep_entries_free(ep_load.e, ep_load.cap);
	memset(&ep_load, 0, sizeof(ep_load));
}

/* The staging area for @n more entries. */
static int ep_load_room(u32 n, struct netlink_ext_ack *extack)
{
	struct ep_name *e;
	u32 cap;

	if (ep_load.nr + n > PBTRACE_MAX_NAMES) {
		NL_SET_ERR_MSG(extack, "more than 16384 names: the table holds no more");
		return -E2BIG;
	}
	if (ep_load.nr + n <= ep_load.cap)
		return 0;
	cap = max3(ep_load.nr + n, 2 * ep_load.cap, 64u);
	cap = min_t(u32, cap, PBTRACE_MAX_NAMES);
	e = kvcalloc(cap, sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	if (ep_load.nr)
		memcpy(e, ep_load.e, ep_load.nr * sizeof(*e));
	ep_entries_free(ep_load.e, ep_load.cap);
	ep_load.e = e;
	ep_load.cap = cap;
	return 0;
}

static int ep_load_add(const struct pbt_name_entry *in,
		       struct netlink_ext_ack *extack)
{
	struct ep_name *e = &ep_load.e[ep_load.nr];
	size_t len = strlen(in->name);

	if (!ep_name_ok(in->name, len)) {
		PBT_ERR_MSG_ATTR_FMT(extack, NULL,
				     "a name is 1 to 63 printable characters, no space, ',' or '@'",
				     "line %u: a name is 1 to 63 printable characters, no space, ',' or '@'",
				     in->line);
		return -EINVAL;
	}
	if (!in->key == !in->has_cid) {
		PBT_ERR_MSG_ATTR_FMT(extack, NULL,
				     "a name needs a CID or a key, not both",
				     "line %u: %s needs a CID or a key, not both",
				     in->line, in->name);
		return -EINVAL;
	}
	if (in->key && (in->key_len < 16 || in->key_len > PBT_KEY_MAX)) {
		PBT_ERR_MSG_ATTR_FMT(extack, NULL,
				     "a name's key is not 16 to 64 bytes",
				     "line %u: the key of %s is not 16 to 64 bytes",
				     in->line, in->name);
		return -EINVAL;
	}
	if (!in->key && in->cid == VMADDR_CID_ANY) {
		PBT_ERR_MSG_ATTR_FMT(extack, NULL,
				     "CID 4294967295 means any CID, not a guest's: name a guest's CID",
				     "line %u: CID %u means any CID, not a guest's",
				     in->line, in->cid);
		return -EINVAL;
	}
	memset(e, 0, sizeof(*e));
	memcpy(e->name, in->name, len);
	e->line = in->line ? in->line : ep_load.nr + 1;
	if (in->key) {
		e->kind = EP_NAME_KEY;
		e->key.len = in->key_len;
		memcpy(e->key.b, in->key, in->key_len);
	} else {
		e->kind = EP_NAME_CID;
		e->cid = in->cid;
	}
	ep_load.nr++;
	return 0;
}

static int ep_load_piece(const struct pbt_name_entry *e, u32 n,
			 struct netlink_ext_ack *extack)
{
	u32 i;
	int ret;

	ret = ep_load_room(n, extack);
	for (i = 0; !ret && i < n; i++)
		ret = ep_load_add(&e[i], extack);
	return ret;
}

static int ep_load_commit(struct pbt_names_result *res,
			  struct netlink_ext_ack *extack)
{
	struct ep_names *t;

	t = ep_table_build(ep_load.e, ep_load.nr, extack);
	if (IS_ERR(t))
		return PTR_ERR(t);
	res->evicted = ep_table_set(t);
	res->count = t->nr;
	atomic_inc(&ep_stats.names_loaded);
	atomic_add(res->evicted, &ep_stats.evicted);
	pr_info("pbtrace: names: %u loaded, %u in the table, %u online machines disconnected\n",
		ep_load.nr, t->nr, res->evicted);
	return 0;
}

/* Which load a piece belongs to: a new one, or the one it names. */
static int ep_load_find(u32 portid, u32 *id, struct netlink_ext_ack *extack)
{
	if (!*id) {
		ep_load_drop();
		ep_load.id = ++ep_load_ids ? ep_load_ids : ++ep_load_ids;
		ep_load.portid = portid;
		*id = ep_load.id;
		return 0;
	}
	if (ep_load.id == *id && ep_load.portid == portid)
		return 0;
	NL_SET_ERR_MSG(extack, "this load is gone (another began, it failed, or its socket closed): load again");
	return -ESTALE;
}

int pbt_names_load(u32 portid, const struct pbt_name_entry *e, u32 n,
		   bool commit, struct pbt_names_result *res,
		   struct netlink_ext_ack *extack)
{
	int ret;

	mutex_lock(&ep_lock);
	if (!ep_names_up) {
		mutex_unlock(&ep_lock);
		NL_SET_ERR_MSG(extack, "pbtrace is loading or unloading: try again");
		return -EAGAIN;
	}
	ret = ep_load_find(portid, &res->id, extack);
	if (!ret)
		ret = ep_load_piece(e, n, extack);
	if (!ret && commit)
		ret = ep_load_commit(res, extack);
	if (ret || commit)
		ep_load_drop();		/* failed: nothing changed */
	mutex_unlock(&ep_lock);
	return ret;
}

/* A piece the caller could not even parse ends its load too. */
void pbt_names_abort(u32 portid, u32 id)
{
	mutex_lock(&ep_lock);
	if (id && ep_load.id == id && ep_load.portid == portid)
		ep_load_drop();
	mutex_unlock(&ep_lock);
}

/* The socket that began a load closed: its keys go now, not at the next. */
static void ep_load_closed_fn(struct work_struct *w)
{
	mutex_lock(&ep_lock);
	if (ep_load.id && ep_load.portid == READ_ONCE(ep_load_closed))
		ep_load_drop();
	mutex_unlock(&ep_lock);
}

static DECLARE_WORK(ep_load_closed_work, ep_load_closed_fn);

void pbt_names_socket_closed(u32 portid)
{
	/* Read without the lock: a stale portid only costs a look. */
	if (!READ_ONCE(ep_load.id) || READ_ONCE(ep_load.portid) != portid)
		return;
	WRITE_ONCE(ep_load_closed, portid);
	schedule_work(&ep_load_closed_work);
}

/* Entry @i of the table, in name order, into @v; false past the end. */
bool pbt_names_get(u32 i, struct pbt_name_view *v, u64 *gen)
{
	const struct ep_name *e;
	bool ok;

	mutex_lock(&ep_lock);
	*gen = ep_names_gen;
	ok = ep_names && i < ep_names->nr;
	if (ok) {
		e = &ep_names->e[i];
		strscpy(v->name, e->name, sizeof(v->name));
		v->cid = e->cid;
		v->line = e->line;
		v->flags = (e->kind == EP_NAME_KEY ? PBTRACE_NAME_KEYED : 0) |
			   (e->line ? 0 : PBTRACE_NAME_PARAM);
	}
	mutex_unlock(&ep_lock);
	return ok;
}

void ep_names_exit(void)
{
	mutex_lock(&ep_lock);
	ep_names_up = false;
	ep_load_drop();
	ep_table_free(ep_names);
	ep_names = NULL;
	ep_entries_free(ep_params, ep_nr_params);
	ep_params = NULL;
	ep_nr_params = 0;
	mutex_unlock(&ep_lock);
	cancel_work_sync(&ep_load_closed_work);
}
