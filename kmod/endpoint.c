// SPDX-License-Identifier: GPL-2.0
/*
 * The endpoint: the host's pbtrace.ko accepts relays from its guests
 * (docs/relay-protocol.md). Loaded with endpoint=vsock:PORT, a kthread
 * listens and gives each connection a kthread of its own, so a slow or
 * hostile guest only ever blocks itself, never the host's tracing or
 * another guest. Every byte goes through the core frame parser; a frame it
 * refuses closes that connection and is counted by reason.
 *
 * Each guest gets a small non-zero machine id, kept for its machine-id hint
 * across reconnects. endpoint_stats (a read-only module parameter) shows
 * the counters and the machine table.
 *
 * Not done yet (issue 5): CONTROL to guests for a session that wants them,
 * writing their stamped chunks, system_info and RemoteClockSync packets
 * into the session, TCP with its shared-key handshake, allowed CIDs.
 */
#include <linux/module.h>
#include <linux/kthread.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/sched/task.h>
#include <net/sock.h>

#include "relay.h"
#include "core/frame.h"

static char *endpoint;
module_param(endpoint, charp, 0444);
MODULE_PARM_DESC(endpoint, "accept guest relays on vsock:PORT");

#define EP_MAX_CONNS	16
#define EP_MAX_MACHINES	32
#define EP_IDLE_SECS	30	/* a relay pings every second or so */
#define EP_PING_MS	1000
#define EP_RX_SIZE	(FRAME_HDR_LEN + FRAME_MAX_PAYLOAD)

struct ep_machine {
	u32 id;				/* 0: free slot */
	bool online;
	u8 hint[FRAME_HINT_LEN];
	char name[FRAME_STR_MAX + 1];
	char sysname[FRAME_STR_MAX + 1];
	char release[FRAME_STR_MAX + 1];
	char machine[FRAME_STR_MAX + 1];
	u32 num_cpus;
	u64 ram_bytes;
	u32 cid;
	u32 connects;
	u64 pings;
	u64 rtt_ns;			/* last complete ping round */
	s64 offset_ns;			/* host BOOTTIME - guest BOOTTIME */
};

struct ep_conn {
	struct list_head node;		/* ep_conns, under ep_lock */
	struct task_struct *task;
	struct socket *sock;
	bool done;			/* thread finished; under ep_lock */
	u32 cid;
	struct ep_machine *m;
	struct frame_parser ps;
	u32 tx_seq;
	int bad;			/* FRAME_E_x the parser refused with */
	u64 ping_send[FRAME_NR_CLOCKS];	/* guest t1 of the last PING */
	u64 pong_recv[FRAME_NR_CLOCKS];	/* host t2 */
	u64 pong_reply[FRAME_NR_CLOCKS]; /* host t3 */
	u8 *rx;
	size_t have;
	u8 tx[FRAME_HDR_LEN + 128];
};

static const char * const ep_reason[FRAME_E_NR] = {
	[FRAME_E_MAGIC] = "magic", [FRAME_E_VERSION] = "version",
	[FRAME_E_TYPE] = "type", [FRAME_E_FLAGS] = "flags",
	[FRAME_E_LENGTH] = "length", [FRAME_E_SEQ] = "seq",
	[FRAME_E_DIRECTION] = "direction", [FRAME_E_ORDER] = "order",
	[FRAME_E_PONG] = "pong", [FRAME_E_PAYLOAD] = "payload",
	[FRAME_E_CHUNK] = "chunk", [FRAME_E_TRUSTED] = "trusted",
	[FRAME_E_CLOSED] = "closed",
};

static struct {
	atomic_t accepted, refused, hellos, pings, chunks, goodbyes;
	atomic_t truncated, idle, duplicate, table_full;
	atomic_t bad[FRAME_E_NR];
} ep_stats;

static DEFINE_MUTEX(ep_lock);		/* ep_conns, ep_machines */
static LIST_HEAD(ep_conns);
static unsigned int ep_nr_conns;
static struct ep_machine ep_machines[EP_MAX_MACHINES];
static struct socket *ep_sock;
static struct task_struct *ep_task;

/* ---- machines ---- */

static void copy_str(char *dst, const struct frame_str *s)
{
	memcpy(dst, s->p, s->len);	/* len <= FRAME_STR_MAX: parser */
	dst[s->len] = 0;
}

/*
 * The machine for @h's hint: the same id as last time, else a free slot.
 * A hint already online is refused: one guest, one connection.
 */
static int ep_machine_get(struct ep_conn *c, const struct frame_hello *h)
{
	struct ep_machine *m = NULL;
	int i;

	mutex_lock(&ep_lock);
	for (i = 0; i < EP_MAX_MACHINES; i++) {
		if (ep_machines[i].id &&
		    !memcmp(ep_machines[i].hint, h->hint, FRAME_HINT_LEN)) {
			m = &ep_machines[i];
			break;
		}
	}
	for (i = 0; !m && i < EP_MAX_MACHINES; i++) {
		if (!ep_machines[i].id) {
			m = &ep_machines[i];
			m->id = i + 1;
			memcpy(m->hint, h->hint, FRAME_HINT_LEN);
		}
	}
	if (!m || m->online) {
		mutex_unlock(&ep_lock);
		atomic_inc(m ? &ep_stats.duplicate : &ep_stats.table_full);
		return m ? -EBUSY : -ENOSPC;
	}
	copy_str(m->name, h->name.len ? &h->name : &h->sysname);
	copy_str(m->sysname, &h->sysname);
	copy_str(m->release, &h->release);
	copy_str(m->machine, &h->machine);
	m->num_cpus = h->num_cpus;
	m->ram_bytes = h->ram_bytes;
	m->cid = c->cid;
	m->connects++;
	m->online = true;
	c->m = m;
	mutex_unlock(&ep_lock);
	return 0;
}

/* ---- one connection ---- */

static int ep_send(struct ep_conn *c, struct frame *f)
{
	size_t n;

	f->seq = c->tx_seq;
	n = frame_encode(c->tx, sizeof(c->tx), f);
	if (!n)
		return -EINVAL;
	c->tx_seq++;
	frame_sent(&c->ps, f);
	return pbt_send_all(c->sock, c->tx, n);
}

static int ep_hello(struct ep_conn *c, const struct frame_hello *h)
{
	struct ep_machine *m;
	struct frame f;
	int ret;

	ret = ep_machine_get(c, h);
	if (ret)
		return ret;
	m = c->m;
	atomic_inc(&ep_stats.hellos);
	pr_info("pbtrace: endpoint: cid %u is machine %u \"%s\" (%s %s %s, %u cpus, %llu MiB)\n",
		c->cid, m->id, m->name, m->sysname, m->release, m->machine,
		m->num_cpus, m->ram_bytes >> 20);
	memset(&f, 0, sizeof(f));
	f.type = FRAME_WELCOME;
	f.welcome.machine_id = m->id;
	f.welcome.ping_period_ms = EP_PING_MS;
	return ep_send(c, &f);
}

/*
 * Answer a PING. If it reports when our last PONG arrived (t4), that round
 * is complete: t1 guest send, t2 our receive, t3 our reply, t4 guest
 * receive, each on its own BOOTTIME.
 */
static int ep_ping(struct ep_conn *c, const struct frame_ping *p,
		   const u64 *recv)
{
	const int bt = FRAME_CLK_BOOTTIME;
	struct ep_machine *m = c->m;
	struct frame f;
	s64 t1, t2, t3, t4;

	atomic_inc(&ep_stats.pings);
	if (p->prev_id) {
		t1 = c->ping_send[bt];
		t2 = c->pong_recv[bt];
		t3 = c->pong_reply[bt];
		t4 = p->prev_recv[bt];
		mutex_lock(&ep_lock);
		m->rtt_ns = (t4 - t1) - (t3 - t2);
		m->offset_ns = ((t2 - t1) + (t3 - t4)) / 2;
		mutex_unlock(&ep_lock);
	}
	memset(&f, 0, sizeof(f));
	f.type = FRAME_PONG;
	f.pong.id = p->id;
	memcpy(f.pong.recv, recv, sizeof(f.pong.recv));
	pbt_clocks(f.pong.reply);
	memcpy(c->ping_send, p->send, sizeof(c->ping_send));
	memcpy(c->pong_recv, f.pong.recv, sizeof(c->pong_recv));
	memcpy(c->pong_reply, f.pong.reply, sizeof(c->pong_reply));
	mutex_lock(&ep_lock);
	m->pings++;
	mutex_unlock(&ep_lock);
	return ep_send(c, &f);
}

/* Returns 0 to go on, 1 when the guest said GOODBYE, or -errno. */
static int ep_handle(struct ep_conn *c, const struct frame *f,
		     const u64 *recv)
{
	switch (f->type) {
	case FRAME_HELLO:
		return ep_hello(c, &f->hello);
	case FRAME_PING:
		return ep_ping(c, &f->ping, recv);
	case FRAME_CHUNK:
		/* Needs CONTROL start, which no session sends yet. */
		atomic_inc(&ep_stats.chunks);
		return 0;
	case FRAME_GOODBYE:
		atomic_inc(&ep_stats.goodbyes);
		return 1;
	}
	return -EPROTO;			/* AUTH: no TCP yet */
}

/* Every whole frame at the front of c->rx; keeps the rest. */
static int ep_parse(struct ep_conn *c, const u64 *recv)
{
	size_t off = 0;
	struct frame f;
	int n, ret = 0;

	while (!ret) {
		n = frame_parse(&c->ps, c->rx + off, c->have - off, &f);
		if (n < 0) {
			c->bad = -n;
			ret = -EBADMSG;
		}
		if (n <= 0)
			break;
		ret = ep_handle(c, &f, recv);
		off += n;
	}
	c->have -= off;
	memmove(c->rx, c->rx + off, c->have);
	return ret;
}

static int ep_serve(struct ep_conn *c)
{
	unsigned long idle_end = jiffies + EP_IDLE_SECS * HZ;
	u64 recv[FRAME_NR_CLOCKS];
	struct msghdr msg = {};
	struct kvec vec;
	int ret;

	frame_parser_init(&c->ps, FRAME_ROLE_HOST, false);
	while (!kthread_should_stop()) {
		vec.iov_base = c->rx + c->have;
		vec.iov_len = EP_RX_SIZE - c->have;
		ret = kernel_recvmsg(c->sock, &msg, &vec, 1, vec.iov_len, 0);
		pbt_clocks(recv);
		if (ret == -EAGAIN || ret == -EINTR) {
			if (time_after(jiffies, idle_end)) {
				atomic_inc(&ep_stats.idle);
				return -ETIMEDOUT;
			}
			continue;
		}
		if (ret < 0)
			return ret;
		if (ret == 0) {
			if (c->have)		/* closed inside a frame */
				atomic_inc(&ep_stats.truncated);
			return -ECONNRESET;
		}
		c->have += ret;
		idle_end = jiffies + EP_IDLE_SECS * HZ;
		ret = ep_parse(c, recv);
		if (ret)
			return ret;
	}
	return 0;
}

static int ep_conn_thread(void *arg)
{
	struct ep_conn *c = arg;
	struct frame f;

	ep_serve(c);
	if (c->bad) {
		atomic_inc(&ep_stats.bad[c->bad]);
		pr_info_ratelimited("pbtrace: endpoint: cid %u: %s, closing\n",
				    c->cid, frame_strerror(c->bad));
		memset(&f, 0, sizeof(f));
		f.type = FRAME_GOODBYE;
		f.goodbye.reason = c->bad;
		ep_send(c, &f);
	}
	kernel_sock_shutdown(c->sock, SHUT_RDWR);
	mutex_lock(&ep_lock);
	if (c->m)
		c->m->online = false;
	c->done = true;
	mutex_unlock(&ep_lock);
	return 0;
}

static void ep_conn_free(struct ep_conn *c)
{
	kthread_stop(c->task);
	put_task_struct(c->task);
	sock_release(c->sock);
	kvfree(c->rx);
	kfree(c);
}

/* Free finished connections, or all of them (module exit). */
static void ep_reap(bool all)
{
	struct ep_conn *c, *tmp;
	LIST_HEAD(dead);

	mutex_lock(&ep_lock);
	list_for_each_entry_safe(c, tmp, &ep_conns, node) {
		if (all || c->done) {
			list_move(&c->node, &dead);
			ep_nr_conns--;
		}
	}
	mutex_unlock(&ep_lock);
	list_for_each_entry_safe(c, tmp, &dead, node)
		ep_conn_free(c);
}

static void ep_start(struct socket *sock)
{
	struct sockaddr_vm peer = {};
	struct ep_conn *c;

	if (ep_nr_conns >= EP_MAX_CONNS)	/* only we add: no race */
		goto refuse;
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		goto refuse;
	c->rx = kvmalloc(EP_RX_SIZE, GFP_KERNEL);
	if (!c->rx)
		goto free;
	c->sock = sock;
	sock->sk->sk_rcvtimeo = HZ;
	sock->sk->sk_sndtimeo = HZ;
	if (kernel_getpeername(sock, (struct sockaddr *)&peer) >= 0)
		c->cid = peer.svm_cid;
	c->task = kthread_create(ep_conn_thread, c, "pbtrace-ep/%u", c->cid);
	if (IS_ERR(c->task))
		goto free_rx;
	get_task_struct(c->task);
	mutex_lock(&ep_lock);
	list_add(&c->node, &ep_conns);
	ep_nr_conns++;
	mutex_unlock(&ep_lock);
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
	struct socket *sock;
	int ret;

	while (!kthread_should_stop()) {
		ep_reap(false);
		ret = kernel_accept(ep_sock, &sock, 0);
		if (ret == -EAGAIN || ret == -EINTR)
			continue;		/* timeout: check for stop */
		if (ret) {
			schedule_timeout_interruptible(HZ / 10);
			continue;
		}
		ep_start(sock);
	}
	return 0;
}

/* ---- endpoint_stats ---- */

static int ep_stats_get(char *buf, const struct kernel_param *kp)
{
	struct ep_machine *m;
	int n, i;

	n = sysfs_emit(buf, "listening %d\naccepted %d\nrefused %d\nhellos %d\npings %d\nchunks %d\ngoodbyes %d\ntruncated %d\nidle %d\nduplicate %d\ntable_full %d\n",
		       !!ep_task, atomic_read(&ep_stats.accepted),
		       atomic_read(&ep_stats.refused),
		       atomic_read(&ep_stats.hellos),
		       atomic_read(&ep_stats.pings),
		       atomic_read(&ep_stats.chunks),
		       atomic_read(&ep_stats.goodbyes),
		       atomic_read(&ep_stats.truncated),
		       atomic_read(&ep_stats.idle),
		       atomic_read(&ep_stats.duplicate),
		       atomic_read(&ep_stats.table_full));
	for (i = 1; i < FRAME_E_NR; i++)
		n += sysfs_emit_at(buf, n, "bad_%s %d\n", ep_reason[i],
				   atomic_read(&ep_stats.bad[i]));
	mutex_lock(&ep_lock);
	for (i = 0; i < EP_MAX_MACHINES; i++) {
		m = &ep_machines[i];
		if (!m->id)
			continue;
		n += sysfs_emit_at(buf, n, "machine %u name=%s sysname=%s release=%s arch=%s cpus=%u ram_mb=%llu cid=%u online=%d connects=%u pings=%llu rtt_ns=%llu offset_ns=%lld\n",
				   m->id, m->name, m->sysname, m->release,
				   m->machine, m->num_cpus, m->ram_bytes >> 20,
				   m->cid, m->online, m->connects, m->pings,
				   m->rtt_ns, m->offset_ns);
	}
	mutex_unlock(&ep_lock);
	return n;
}

static const struct kernel_param_ops ep_stats_ops = {
	.get = ep_stats_get,
};
module_param_cb(endpoint_stats, &ep_stats_ops, NULL, 0444);
MODULE_PARM_DESC(endpoint_stats, "endpoint counters and machines (read only)");

/* ---- init/exit ---- */

int pbt_endpoint_init(void)
{
	struct pbt_addr a;
	int ret;

	if (!endpoint || !*endpoint)
		return 0;
	if (pbt_addr_parse(endpoint, &a) || a.family != AF_VSOCK ||
	    a.vm.svm_cid != VMADDR_CID_ANY) {
		pr_err("pbtrace: endpoint=%s: want vsock:PORT (tcp needs the shared-key handshake, not implemented yet)\n",
		       endpoint);
		return -EINVAL;
	}
	ret = pbt_sock_open(&a, &ep_sock);
	if (ret)
		return ret;
	ret = kernel_bind(ep_sock, (struct sockaddr *)&a.vm, a.len);
	if (!ret)
		ret = kernel_listen(ep_sock, EP_MAX_CONNS);
	if (ret) {
		pr_err("pbtrace: endpoint=%s: cannot listen (%d)\n", endpoint,
		       ret);
		goto err;
	}
	ep_task = kthread_run(ep_accept_thread, NULL, "pbtrace-ep");
	if (IS_ERR(ep_task)) {
		ret = PTR_ERR(ep_task);
		ep_task = NULL;
		goto err;
	}
	return 0;
err:
	sock_release(ep_sock);
	ep_sock = NULL;
	return ret;
}

void pbt_endpoint_exit(void)
{
	if (!ep_task)
		return;
	kthread_stop(ep_task);
	ep_task = NULL;
	ep_reap(true);
	sock_release(ep_sock);
	ep_sock = NULL;
}
