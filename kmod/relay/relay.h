/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmod/relay/: the multi-machine transport. A guest's module is a relay
 * (relay.c, relay_session.c, relay_send.c: relay_conn.h), the host's an
 * endpoint (admit.c and the files endpoint.h lists). What both share is
 * here: addresses and whole-buffer socket I/O (sock.c), keys and tags
 * (key.c), and the two sides' init and exit for main.c. The wire protocol
 * itself is core/frame.[ch].
 */
#ifndef _PBTRACE_RELAY_H
#define _PBTRACE_RELAY_H

#include <linux/types.h>
#include <linux/socket.h>
#include <linux/in.h>
#include <linux/vm_sockets.h>

#include "pbtrace.h"

struct socket;
struct frame_parser;
struct frame;

struct pbt_addr {
	int family;				/* AF_VSOCK or AF_INET */
	int len;
	union {
		struct sockaddr_vm vm;
		struct sockaddr_in in;
	};
};

/*
 * "vsock:CID:PORT", "vsock:PORT" (CID any: an endpoint) or
 * "tcp:ADDR:PORT". Returns 0 or -EINVAL.
 */
int pbt_addr_parse(const char *s, struct pbt_addr *a);
int pbt_sock_open(const struct pbt_addr *a, struct socket **res);
/*
 * Give @f the next of our sequence numbers and encode it into @tx; the
 * parser is told what we sent (a START, PING or PONG changes what it
 * accepts next).
 * Returns the frame's length, or 0 if it does not fit in @size.
 */
size_t pbt_frame_out(struct frame_parser *ps, u32 *seq, u8 *tx, size_t size,
		     struct frame *f);
#define PBT_SEND_SECS	10	/* pbt_send_all(): a whole frame, at most */
int pbt_send_all(struct socket *sock, const void *buf, size_t len);
void pbt_clocks(u64 *c);			/* FRAME_NR_CLOCKS values */

/*
 * TCP's shared key (relay_key=HEX, not readable in sysfs) and the proofs
 * of docs/relay-protocol.md, HMAC-SHA256 with the kernel crypto API.
 */
#define PBT_KEY_MAX	64
struct pbt_key {
	u8 b[PBT_KEY_MAX];
	size_t len;
};

int pbt_key_init(void);			/* parse relay_key; first */
bool pbt_have_key(void);
const struct pbt_key *pbt_shared_key(void);	/* relay_key, or NULL */
int pbt_key_parse(struct pbt_key *k, const char *hex, size_t n);
int pbt_proof_host(const struct pbt_key *k, const u8 *relay_nonce,
		   const u8 *host_nonce, u8 *mac);
int pbt_proof_relay(const struct pbt_key *k, const u8 *host_nonce,
		    const u8 *relay_nonce, const u8 *hello, size_t hello_len,
		    u8 *mac);

/*
 * TCP: once AUTH is checked, every frame is tagged (docs/relay-protocol.md,
 * "Tags"): HMAC-SHA256 under a key per direction derived from the key,
 * both nonces and the relay's proof. @tx tags what we send, @rx checks.
 */
struct crypto_shash;
struct kvec;
struct pbt_tags {
	struct crypto_shash *tx, *rx;
};

int pbt_tags_init(struct pbt_tags *t, const struct pbt_key *k,
		  const u8 *host_nonce, const u8 *relay_nonce,
		  const u8 *relay_proof, bool host);
void pbt_tags_free(struct pbt_tags *t);
/* The tag of the frame in @vec (its header first) into @tag. */
int pbt_tag(struct crypto_shash *tfm, const struct kvec *vec, int n,
	    u8 *tag);
/* Tag the @n-byte frame in @tx (FRAME_TAG_LEN bytes to spare): new length or 0. */
size_t pbt_tag_frame(struct crypto_shash *tfm, u8 *tx, size_t n);
/* Is the tagged frame @buf (@len bytes, its tag last) the peer's? */
bool pbt_tag_ok(struct crypto_shash *tfm, const u8 *buf, size_t len);

int pbt_relay_init(void);
void pbt_relay_exit(void);
int pbt_endpoint_init(void);
void pbt_endpoint_exit(void);

/*
 * What the netlink files ask of the endpoint (kmod/relay/machines.c,
 * names.c): its machine table (PBTRACE_CMD_GET_MACHINES) and its names
 * table (PBTRACE_CMD_GET_NAMES, PBTRACE_CMD_LOAD_NAMES), netlink_machines.c;
 * a closed socket's unfinished load, netlink_notify.c. Keys go in, never
 * out.
 */
#define PBT_HELLO_STR	65	/* a HELLO string and its NUL */

struct pbt_endpoint_machine_view {
	struct pbtrace_endpoint_machine m;
	char name[PBT_HELLO_STR];	/* the one it has here */
	char claimed[PBT_HELLO_STR];	/* its HELLO's */
	char peer[PBT_PEER_MAX];
	char sysname[PBT_HELLO_STR], release[PBT_HELLO_STR];
	char arch[PBT_HELLO_STR];
};

/* The machine with the lowest id above *@id, into @v; false: none. */
bool pbt_endpoint_machine_next(u32 *id, struct pbt_endpoint_machine_view *v);

struct pbt_name_entry {
	const char *name;
	bool has_cid;
	u32 cid;
	const u8 *key;			/* NULL: a CID's name */
	u32 key_len;
	u32 line;			/* 0: its place in the load */
};

struct pbt_names_result {
	u32 id;				/* in: the load, 0 to begin one; out */
	u32 count, evicted;		/* after a commit */
};

struct pbt_name_view {
	char name[PBTRACE_NAME_MAX];
	u32 cid, flags, line;		/* flags: PBTRACE_NAME_* */
};

struct netlink_ext_ack;
int pbt_names_load(u32 portid, const struct pbt_name_entry *e, u32 n,
		   bool commit, struct pbt_names_result *res,
		   struct netlink_ext_ack *extack);
void pbt_names_abort(u32 portid, u32 id);
void pbt_names_socket_closed(u32 portid);
bool pbt_names_get(u32 i, struct pbt_name_view *v, u64 *gen);

#endif /* _PBTRACE_RELAY_H */
