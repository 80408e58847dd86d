/*
 * bench/address-probe.c: the floor for binding service addresses to a link
 * (what the proxy does for every ClusterIP on kube-ipvs0).
 *
 *   address-probe IFINDEX ADDRESSES_FILE [BATCH]
 *
 * ADDRESSES_FILE holds one IPv4 address per line. Each becomes the very
 * RTM_NEWADDR the library sends (NLM_F_CREATE|NLM_F_EXCL, ifaddrmsg with
 * prefix 32, scope 0, flags 0; IFA_LOCAL and IFA_ADDRESS, as `ip addr add`
 * sends them), BATCH (default 4096) per sendmsg over one NETLINK_ROUTE
 * socket, NLM_F_ACK on the last of each batch only (errors are reported
 * anyway), reading until that ack. Nothing else.
 * Prints "ok N errors E sendmsg S recv R" and exits 0 if E == 0.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct req {
  struct nlmsghdr n;
  struct ifaddrmsg ifa;
  struct rtattr local;
  struct in_addr local_addr;
  struct rtattr address;
  struct in_addr address_addr;
};

static char rx[1 << 20];
static long nsend, nrecv;

static void wait_ack(int fd, unsigned seq, long *errors) {
  for (;;) {
    ssize_t n = recv(fd, rx, sizeof rx, 0);
    nrecv++;
    if (n < 0) { perror("recv"); exit(2); }
    for (struct nlmsghdr *h = (void *)rx; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_type != NLMSG_ERROR) continue;
      int err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
      if (err) {
        if (*errors < 3) fprintf(stderr, "address-probe: seq %u: %s\n", h->nlmsg_seq, strerror(-err));
        (*errors)++;
      }
      if (h->nlmsg_seq == seq) return;
    }
  }
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: address-probe IFINDEX ADDRESSES_FILE [BATCH]\n"); return 2; }
  int ifindex = atoi(argv[1]);
  long batch = argc > 3 ? atol(argv[3]) : 4096;
  FILE *f = fopen(argv[2], "r");
  if (!f) { perror(argv[2]); return 2; }
  long cap = 1024, count = 0;
  struct req *reqs = malloc(cap * sizeof *reqs);
  char line[64];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = 0;
    if (!line[0]) continue;
    if (count == cap) reqs = realloc(reqs, (cap *= 2) * sizeof *reqs);
    struct req *r = &reqs[count];
    memset(r, 0, sizeof *r);
    if (inet_pton(AF_INET, line, &r->local_addr) != 1) { fprintf(stderr, "not an IPv4 address: %s\n", line); return 2; }
    r->address_addr = r->local_addr;
    r->n.nlmsg_len = sizeof *r;
    r->n.nlmsg_type = RTM_NEWADDR;
    r->n.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL;
    r->ifa.ifa_family = AF_INET;
    r->ifa.ifa_prefixlen = 32;
    r->ifa.ifa_index = ifindex;
    r->local.rta_len = RTA_LENGTH(sizeof(struct in_addr));
    r->local.rta_type = IFA_LOCAL;
    r->address.rta_len = RTA_LENGTH(sizeof(struct in_addr));
    r->address.rta_type = IFA_ADDRESS;
    count++;
  }

  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  int big = 16 << 20, one = 1;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
  setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one);
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};

  long errors = 0;
  unsigned seq = 0;
  for (long i = 0; i < count;) {
    long end = i + batch < count ? i + batch : count;
    for (long k = i; k < end; k++) {
      reqs[k].n.nlmsg_seq = ++seq;
      reqs[k].n.nlmsg_flags &= ~NLM_F_ACK;
    }
    reqs[end - 1].n.nlmsg_flags |= NLM_F_ACK;
    struct iovec iov = {&reqs[i], (end - i) * sizeof *reqs};
    struct msghdr m = {.msg_name = &kernel, .msg_namelen = sizeof kernel, .msg_iov = &iov, .msg_iovlen = 1};
    if (sendmsg(fd, &m, 0) < 0) { perror("sendmsg"); return 2; }
    nsend++;
    wait_ack(fd, seq, &errors);
    i = end;
  }
  printf("ok %ld errors %ld sendmsg %ld recv %ld\n", count - errors, errors, nsend, nrecv);
  return errors != 0;
}
