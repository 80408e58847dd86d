/*
 * bench/kernel-cost-probe.c: what the running kernel charges for the three
 * things the IPVS benchmarks pay for most, each timed for at least
 * SECONDS of wall time, and a stretch of plain computation for scale, so a
 * sandbox's distortion is measured in the run that reports it rather than
 * quoted from an earlier one:
 *   - a system call that does nothing (getpid, through syscall(2): no vDSO,
 *     no library cache),
 *   - a fresh page (first write to anonymous memory: fault, zeroing, mapping),
 *   - a generic netlink round trip (the controller's family lookup of
 *     "nlctrl", which every kernel with netlink answers: a request, a reply),
 *   - a million steps of a random-number generator, no system call at all
 *     (user code: native in user-mode-linux, emulated under QEMU-TCG).
 * Prints one line: getpid_us X page_us Y genl_us Z compute_us W
 * (microseconds each; W per million steps).
 *
 *   kernel-cost-probe [SECONDS]   (default 0.5 per measure)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "kernel-cost-probe: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Calls in rounds of 1,000 until the time is up; microseconds per call. */
static double getpid_cost(double seconds)
{
	long calls = 0;
	double start = now(), end;
	do {
		for (int i = 0; i < 1000; i++)
			syscall(SYS_getpid);
		calls += 1000;
		end = now();
	} while (end - start < seconds);
	return (end - start) * 1e6 / calls;
}

/* 16 MiB at a time, one write per page, unmapped again; microseconds per page. */
static double page_cost(double seconds)
{
	const size_t size = 16 << 20;
	long page = sysconf(_SC_PAGESIZE), pages = 0;
	double spent = 0;
	while (spent < seconds) {
		char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			die("mmap");
		double start = now();
		for (size_t off = 0; off < size; off += page)
			p[off] = 1;
		spent += now() - start;
		pages += size / page;
		munmap(p, size);
	}
	return spent * 1e6 / pages;
}

/* CTRL_CMD_GETFAMILY for "nlctrl" and its one reply, repeated; microseconds per round trip. */
static double genl_cost(double seconds)
{
	struct {
		struct nlmsghdr n;
		struct genlmsghdr g;
		struct nlattr a;
		char name[8];
	} req;
	char reply[8192];
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		die("socket(NETLINK_GENERIC)");
	struct sockaddr_nl local = { .nl_family = AF_NETLINK };
	if (bind(fd, (struct sockaddr *)&local, sizeof(local)) < 0)
		die("bind");
	memset(&req, 0, sizeof(req));
	req.n.nlmsg_len = sizeof(req);
	req.n.nlmsg_type = GENL_ID_CTRL;
	req.n.nlmsg_flags = NLM_F_REQUEST;
	req.g.cmd = CTRL_CMD_GETFAMILY;
	req.g.version = 1;
	req.a.nla_len = NLA_HDRLEN + sizeof("nlctrl");
	req.a.nla_type = CTRL_ATTR_FAMILY_NAME;
	memcpy(req.name, "nlctrl", sizeof("nlctrl"));
	long trips = 0;
	double start = now(), end;
	do {
		for (int i = 0; i < 100; i++) {
			req.n.nlmsg_seq = (unsigned)++trips;
			if (send(fd, &req, sizeof(req), 0) < 0)
				die("send");
			ssize_t got = recv(fd, reply, sizeof(reply), 0);
			if (got < (ssize_t)sizeof(struct nlmsghdr))
				die("recv");
			struct nlmsghdr *h = (struct nlmsghdr *)reply;
			if (h->nlmsg_type == NLMSG_ERROR) {
				errno = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
				die("the family lookup");
			}
		}
		end = now();
	} while (end - start < seconds);
	close(fd);
	return (end - start) * 1e6 / trips;
}

/* Rounds of a million xorshift steps; microseconds per round. The result is
 * stored where the compiler must keep it, so the loop cannot be left out. */
static volatile unsigned long long sink;
static double compute_cost(double seconds)
{
	unsigned long long x = 88172645463325252ULL;
	long rounds = 0;
	double start = now(), end;
	do {
		for (int i = 0; i < 1000000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		rounds++;
		end = now();
	} while (end - start < seconds);
	sink = x;
	return (end - start) * 1e6 / rounds;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.5;
	if (!(seconds > 0)) {
		fprintf(stderr, "usage: kernel-cost-probe [SECONDS]\n");
		return 2;
	}
	double g = getpid_cost(seconds);
	double p = page_cost(seconds);
	double n = genl_cost(seconds);
	double c = compute_cost(seconds);
	printf("getpid_us %.4f page_us %.4f genl_us %.4f compute_us %.1f\n", g, p, n, c);
	return 0;
}
