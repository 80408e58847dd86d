/*
 * bench/ipvsadm-cost.c: what `ipvsadm -R` pays per rule besides the kernel's
 * IPVS work, on whatever kernel runs it (the host's: no IPVS needed).
 *
 *   ipvsadm-cost [RULES]
 *
 * For every rule ipvsadm (through libnl) opens a new generic netlink
 * socket, sizes and binds it, resolves the IPVS family by name, sends the
 * command, reads the answer and its ack, and closes the socket: some 16
 * system calls (strace of ipvsadm -R, bench/ipvs.mjs). This does the same
 * calls in the same order, with the controller's own family ("nlctrl", on
 * every kernel) standing in for IPVS both in the lookup and as the command,
 * so the kernel answers each request with a reply and an ack as it would,
 * minus the IPVS add itself. Prints "rules N us_per_rule X cpu_us_per_rule C
 * syscalls_per_rule Y": wall and CPU (user + system) time per rule. On a
 * shared machine the wall time is mostly waiting for a core; the CPU time
 * is the cost.
 */
#define _GNU_SOURCE
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static char rx[1 << 16];
static long calls;

/* CTRL_CMD_GETFAMILY for "nlctrl", with an ack asked for, as libnl's genl_ctrl_resolve sends it. */
static size_t get_family(char *buf, unsigned seq) {
  const char name[] = "nlctrl";
  struct nlmsghdr *h = (void *)buf;
  struct genlmsghdr *g = NLMSG_DATA(h);
  struct nlattr *a = (void *)((char *)g + GENL_HDRLEN);
  memset(buf, 0, 64);
  a->nla_type = CTRL_ATTR_FAMILY_NAME;
  a->nla_len = NLA_HDRLEN + sizeof name;
  memcpy((char *)a + NLA_HDRLEN, name, sizeof name);
  h->nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + NLA_ALIGN(a->nla_len);
  h->nlmsg_type = GENL_ID_CTRL;
  h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  h->nlmsg_seq = seq;
  g->cmd = CTRL_CMD_GETFAMILY;
  g->version = 1;
  return h->nlmsg_len;
}

/* One request and its answer, read as libnl reads it: peek at the size, read the reply, read the ack. */
static void round_trip(int fd, unsigned seq) {
  char req[64];
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  struct iovec iov = {req, get_family(req, seq)};
  struct msghdr msg = {.msg_name = &kernel, .msg_namelen = sizeof kernel, .msg_iov = &iov, .msg_iovlen = 1};
  if (sendmsg(fd, &msg, 0) < 0) { perror("sendmsg"); exit(2); }
  calls++;
  struct iovec riov = {rx, sizeof rx};
  struct msghdr rmsg = {.msg_iov = &riov, .msg_iovlen = 1};
  if (recvmsg(fd, &rmsg, MSG_PEEK | MSG_TRUNC) < 0 || recvmsg(fd, &rmsg, 0) < 0 || recvmsg(fd, &rmsg, 0) < 0) { perror("recvmsg"); exit(2); }
  calls += 3;
}

int main(int argc, char **argv) {
  long rules = argc > 1 ? atol(argv[1]) : 20000;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < rules; i++) {
    time(NULL); /* ipvsadm's own time() per rule (a vDSO call on a real kernel: not counted) */
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
    if (fd < 0) { perror("socket"); return 2; }
    int size = 32768;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    struct sockaddr_nl local = {.nl_family = AF_NETLINK};
    socklen_t len = sizeof local;
    if (bind(fd, (void *)&local, sizeof local) < 0 || getsockname(fd, (void *)&local, &len) < 0) { perror("bind"); return 2; }
    calls += 5;
    round_trip(fd, 1); /* the family lookup */
    round_trip(fd, 2); /* the command */
    close(fd);
    calls++;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double us = (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3;
  double cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
  printf("rules %ld us_per_rule %.3f cpu_us_per_rule %.3f syscalls_per_rule %.1f\n", rules, us / rules, cpu / rules, (double)calls / rules);
  return 0;
}
