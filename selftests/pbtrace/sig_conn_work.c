// SPDX-License-Identifier: GPL-2.0
/*
 * A workload with known tracepoint counts for tracectl_generic_test.sh:
 *
 *   sig_conn_work N M
 *
 * forks a child that ignores SIGUSR1 and sends it SIGUSR1 N times (N
 * signal:signal_generate with sig 10 and the child's pid, result 1 =
 * ignored), then makes M loopback TCP connections to a listener of its own
 * (M sock:inet_sock_set_state CLOSE -> SYN_SENT with dport = its port).
 * Prints "child PID port PORT" once done, so the test knows what to count.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int die(const char *what)
{
	perror(what);
	return 1;
}

static int signals(int n, pid_t *out)
{
	int ready[2], i;
	char c;
	pid_t pid;

	if (pipe(ready))
		return die("pipe");
	pid = fork();
	if (pid < 0)
		return die("fork");
	if (!pid) {
		signal(SIGUSR1, SIG_IGN);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	/* Only once the child ignores it: a default SIGUSR1 would kill it. */
	if (read(ready[0], &c, 1) != 1)
		return die("read");
	for (i = 0; i < n; i++)
		if (kill(pid, SIGUSR1))
			return die("kill");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	*out = pid;
	return 0;
}

static int connects(int m, int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int l, c, s, i;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, m + 1) || getsockname(l, (struct sockaddr *)&a, &len))
		return die("listen");
	for (i = 0; i < m; i++) {
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)))
			return die("connect");
		s = accept(l, NULL, NULL);
		if (s < 0)
			return die("accept");
		close(c);
		close(s);
	}
	close(l);
	*port = ntohs(a.sin_port);
	return 0;
}

int main(int argc, char **argv)
{
	pid_t child = 0;
	int port = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: sig_conn_work N M\n");
		return 2;
	}
	if (signals(atoi(argv[1]), &child) || connects(atoi(argv[2]), &port))
		return 1;
	printf("child %d port %d\n", (int)child, port);
	return 0;
}
