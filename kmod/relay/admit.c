// SPDX-License-Identifier: GPL-2.0
/*
 * The endpoint: the host's pbtrace.ko accepts relays from its guests
 * (docs/relay-protocol.md). Loaded with endpoint=vsock:PORT, a kthread
 * listens and gives each connection a kthread of its own (receive.c).
 * A connection waits in its listener's pending pool until it proves who
 * it is (pending.c), where a newer one may displace it, so strangers only
 * ever compete with strangers; unload shuts every socket down before it
 * stops a thread.
 *
 * endpoint=vsock:PORT,tcp:ADDR:PORT listens on both.
 */
#include <linux/module.h>
#include <linux/kthread.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/sched/task.h>
#include <linux/sockptr.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "compat.h"
#include "endpoint.h"

static char *endpoint;
module_param(endpoint, charp, 0400);
MODULE_PARM_DESC(endpoint, "accept guest relays on vsock:PORT and/or tcp:[ADDR:]PORT, comma-separated");
static char *endpoint_cids;
module_param(endpoint_cids, charp, 0400);
MODULE_PARM_DESC(endpoint_cids, "vsock: accept only these peer CIDs, comma-separated (default: any)");

DEFINE_MUTEX(ep_lock);			/* ep_conns, the machine table */
static LIST_HEAD(ep_conns);
static struct ep_listener {
	struct socket *sock;
	struct task_struct *task;
	bool tcp;
} ep_listeners[EP_LISTENERS];
static int ep_nr_listeners;
static u32 ep_cids[EP_MAX_CIDS];
static int ep_nr_cids;			/* 0: any CID */

int ep_listening(void)
{
	return ep_nr_listeners;
}

static void ep_conn_free(struct ep_conn *c)
{
	kthread_stop(c->task);
	put_task_struct(c->task);
	sock_release(c->sock);
	pbt_tags_free(&c->tags);
	kvfree(c->scratch);
	kvfree(c->next_seq);
	kvfree(c->rx);
	kfree(c);
}

/*
 * Free the finished connections of @l's kind, or all of them (@l NULL:
 * module exit). A listener reaps only its own: the one it displaced from
 * its pool (pending.c) stays valid until it has shut that one down.
 */
static void ep_reap(const struct ep_listener *l)
{
	struct ep_conn *c, *tmp;
	LIST_HEAD(dead);

	mutex_lock(&ep_lock);
	list_for_each_entry_safe(c, tmp, &ep_conns, node) {
		if (!l || (c->done && c->tcp == l->tcp)) {
			list_move(&c->node, &dead);
			ep_pending_forget(c);
		}
	}
	mutex_unlock(&ep_lock);
	/*
	 * Unload never waits on a guest: shut every socket down first, which
	 * ends a send waiting for the guest's credit and the receive, then
	 * stop the threads (kthread_stop() waits for each).
	 */
	if (!l)
		list_for_each_entry(c, &dead, node)
			kernel_sock_shutdown(c->sock, SHUT_RDWR);
	list_for_each_entry_safe(c, tmp, &dead, node)
		ep_conn_free(c);
}

static void ep_peer(struct ep_conn *c)
{
	struct sockaddr_storage peer = {};
	struct sockaddr_vm *vm = (struct sockaddr_vm *)&peer;

	if (kernel_getpeername(c->sock, (struct sockaddr *)&peer) < 0) {
		strscpy(c->who, "unknown peer", sizeof(c->who));
	} else if (c->tcp) {
		c->addr = ntohl(((struct sockaddr_in *)&peer)->sin_addr.s_addr);
		snprintf(c->who, sizeof(c->who), "%pISpc", &peer);
	} else {
		c->cid = vm->svm_cid;
		snprintf(c->who, sizeof(c->who), "cid %u", c->cid);
	}
}

static bool ep_cid_allowed(u32 cid)
{
	int i;

	for (i = 0; i < ep_nr_cids; i++)
		if (ep_cids[i] == cid)
			return true;
	return !ep_nr_cids;
}

/*
 * Into the pending pool, displacing the oldest stranger there when the
 * pool or the peer's share is full: shut down here, it ends its thread.
 */
static void ep_join(struct ep_conn *c)
{
	struct ep_conn *v;

	mutex_lock(&ep_lock);
	list_add(&c->node, &ep_conns);
	mutex_unlock(&ep_lock);
	v = ep_pending_add(c);
	if (v) {
		pr_info_ratelimited("pbtrace: endpoint: %s is still in its handshake, closing it for %s (endpoint_pending=%u)\n",
				    v->who, c->who, endpoint_pending);
		kernel_sock_shutdown(v->sock, SHUT_RDWR);
	}
}

static void ep_start(struct socket *sock, bool tcp)
{
	struct ep_conn *c;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		goto refuse;
	c->sock = sock;
	c->tcp = tcp;
	ep_peer(c);
	if (!c->tcp && !ep_cid_allowed(c->cid)) {
		atomic_inc(&ep_stats.cid_refused);
		pr_info_ratelimited("pbtrace: endpoint: %s is not in endpoint_cids, closing\n",
				    c->who);
		goto free;
	}
	/* A stranger costs 1 KiB of buffer, not 256 (receive.c grows it). */
	c->rx_size = EP_PENDING_RX;
	c->rx = kvmalloc(c->rx_size, GFP_KERNEL);
	if (!c->rx)
		goto free;
	c->gen = pbt_remote_changes() - 1;	/* look for a session first thing */
	sock->sk->sk_rcvtimeo = EP_POLL_JIFFIES;
	sock->sk->sk_sndtimeo = HZ;
	c->task = kthread_create(ep_conn_thread, c, "pbtrace-ep/%s", c->who);
	if (IS_ERR(c->task))
		goto free_rx;
	get_task_struct(c->task);
	ep_join(c);
	atomic_inc(&ep_stats.accepted);
	wake_up_process(c->task);
	return;

free_rx:
	kvfree(c->rx);
free:
	kfree(c);
refuse:
	atomic_inc(&ep_stats.refused);
	sock_release(sock);
}

static int ep_accept_thread(void *arg)
{
	struct ep_listener *l = arg;
	struct socket *sock;
	int ret;

	while (!kthread_should_stop()) {
		ep_reap(l);
		ret = kernel_accept(l->sock, &sock, 0);
		if (ret == -EAGAIN || ret == -EINTR)
			continue;		/* timeout: check for stop */
		if (ret) {
			schedule_timeout_interruptible(HZ / 10);
			continue;
		}
		ep_reap(l);		/* those that ended while we waited */
		ep_start(sock, l->tcp);
	}
	return 0;
}

/*
 * TCP: a connection that has sent nothing stays out of the accept queue
 * (TCP_DEFER_ACCEPT) for EP_HELLO_SECS, a request socket in the SYN queue
 * of EP_TCP_BACKLOG. A crowd that connects and stays silent (or resets)
 * then costs no thread and waits in no queue ahead of a relay, whose
 * HELLO comes with its first segment: the relays that speak are accepted
 * at once. Past the deferral a silent one is accepted after all, and
 * the pending pool judges it.
 */
static int ep_defer_accept(struct socket *sock)
{
	int secs = EP_HELLO_SECS;

	return sock->ops->setsockopt(sock, SOL_TCP, TCP_DEFER_ACCEPT,
				     KERNEL_SOCKPTR(&secs), sizeof(secs));
}

static int ep_listen(const char *spec)
{
	struct ep_listener *l = &ep_listeners[ep_nr_listeners];
	struct pbt_addr a;
	int ret;

	if (ep_nr_listeners == EP_LISTENERS || pbt_addr_parse(spec, &a) ||
	    (a.family == AF_VSOCK && a.vm.svm_cid != VMADDR_CID_ANY)) {
		pr_err("pbtrace: endpoint: \"%s\": want vsock:PORT or tcp:[ADDR:]PORT, at most one of each\n",
		       spec);
		return -EINVAL;
	}
	l->tcp = a.family == AF_INET;
	/* Keys may come later, from the names table (tracectl machines load). */
	if (l->tcp && !pbt_have_key() && !ep_names_count())
		pr_info("pbtrace: endpoint: %s: no key yet: every relay is refused until relay_key or the names table gives it one\n",
			spec);
	ret = pbt_sock_open(&a, &l->sock);
	if (ret)
		return ret;
	ret = 0;
	if (l->tcp) {
		sock_set_reuseaddr(l->sock->sk);
		ret = ep_defer_accept(l->sock);
	}
	if (!ret)
		ret = kernel_bind(l->sock, (struct pbt_sockaddr *)&a.vm, a.len);
	/*
	 * vsock's accept queue holds a pool's worth: a longer one only
	 * makes a guest wait behind more strangers.
	 */
	if (!ret)
		ret = kernel_listen(l->sock, l->tcp ? EP_TCP_BACKLOG :
						       endpoint_pending);
	if (ret) {
		pr_err("pbtrace: endpoint: %s: cannot listen (%d)\n", spec, ret);
		goto err;
	}
	l->task = kthread_run(ep_accept_thread, l, "pbtrace-ep-%s",
			      l->tcp ? "tcp" : "vsock");
	if (IS_ERR(l->task)) {
		ret = PTR_ERR(l->task);
		goto err;
	}
	ep_nr_listeners++;
	return 0;
err:
	sock_release(l->sock);
	memset(l, 0, sizeof(*l));
	return ret;
}

static int ep_parse_cids(void)
{
	const char *p = endpoint_cids;
	unsigned int cid;
	int n;

	while (p && *p) {
		if (ep_nr_cids == EP_MAX_CIDS ||
		    sscanf(p, "%u%n", &cid, &n) != 1 || (p[n] && p[n] != ','))
			goto bad;
		ep_cids[ep_nr_cids++] = cid;
		p += n + !!p[n];
	}
	return 0;
bad:
	pr_err("pbtrace: endpoint_cids=%s: want up to %d CIDs, comma-separated\n",
	       endpoint_cids, EP_MAX_CIDS);
	return -EINVAL;
}

int pbt_endpoint_init(void)
{
	char spec[64];
	const char *p;
	size_t n;
	int ret;

	/* The names table is there without an endpoint too: loads just work. */
	ret = ep_names_init();
	if (ret || !endpoint || !*endpoint)
		goto out;
	if (endpoint_ping_ms < 100 || endpoint_ping_ms > 10000) {
		pr_err("pbtrace: endpoint_ping_ms=%u: want 100..10000 (a relay silent for %u s is dropped)\n",
		       endpoint_ping_ms, EP_IDLE_SECS);
		ret = -EINVAL;
		goto out;
	}
	ret = ep_pending_init();
	if (!ret)
		ret = pbt_key_init();
	if (!ret)
		ret = ep_parse_cids();
	for (p = endpoint; !ret && *p; p += n + !!p[n]) {
		n = strcspn(p, ",");
		if (n >= sizeof(spec)) {
			ret = -EINVAL;
			break;
		}
		memcpy(spec, p, n);
		spec[n] = 0;
		ret = ep_listen(spec);
	}
out:
	if (ret)
		pbt_endpoint_exit();
	return ret;
}

void pbt_endpoint_exit(void)
{
	int i;

	for (i = 0; i < ep_nr_listeners; i++)
		kthread_stop(ep_listeners[i].task);
	ep_reap(NULL);
	for (i = 0; i < ep_nr_listeners; i++)
		sock_release(ep_listeners[i].sock);
	memset(ep_listeners, 0, sizeof(ep_listeners));
	ep_nr_listeners = 0;
	ep_machines_exit();
}
