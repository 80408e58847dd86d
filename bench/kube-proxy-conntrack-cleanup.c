/*
 * bench/kube-proxy-conntrack-cleanup.c: kube-proxy's stale UDP conntrack
 * cleanup, as its code does it, for the side-by-side benchmark
 * (bench/stale-conntrack.mjs).
 *
 *   kube-proxy-conntrack-cleanup 4|6 SERVICES_FILE
 *
 * SERVICES_FILE has one UDP service per line: its address, then its serving
 * endpoints' addresses, space-separated. What runs is what
 * pkg/proxy/conntrack/cleanup.go (CleanStaleEntries) does with the netlink
 * library it links (vishvananda/netlink, Handle{} without sockets):
 *
 *  1. ListEntries: a dump of the family's whole conntrack table, every
 *     protocol, every entry decoded;
 *  2. the service address -> serving endpoints map;
 *  3. one filter per UDP entry whose original destination is a service
 *     address and whose reply source is not a serving endpoint (protocol,
 *     original destination address, reply source address; since 1.34
 *     upstream also compares the reply's source port, which changes no
 *     verdict here: every endpoint of the benchmark answers from 53);
 *  4. ClearEntries -> ConntrackDeleteFilters: a second dump of the whole
 *     table; for each entry, the filters tried in order until one matches;
 *     a match is deleted with its dumped attributes sent back in an
 *     IPCTNL_MSG_CT_DELETE with NLM_F_ACK, on a socket of its own.
 *
 * Each request, as the library's Execute() does without a shared socket:
 * socket, fcntl (non-blocking), bind, sendto, getsockname, recvfrom with a
 * 64 KiB buffer until the answer is complete, close. The bench's services
 * have no NodePort, so the NodePort map of step 2 stays empty. Decoding
 * here is leaner than Go's (no flow objects), so the CPU time is a floor
 * for kube-proxy's; the system calls and messages are its.
 *
 * Prints one JSON line: entries listed, filters, deleted, messages sent and
 * received, sockets, sendto and recvfrom calls, wall and CPU time.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct flow { unsigned char proto, orig_dst[16], reply_src[16]; };
struct service { unsigned char ip[16]; int nendpoints; unsigned char (*endpoints)[16]; };
struct filter { unsigned char proto, orig_dst[16], reply_src[16]; };

static long sockets, sendtos, recvfroms, sent, received;
static unsigned seq = 1;
static int family;

/* One request on a socket of its own; calls each reply message's payload (dumps) and returns the ack's errno. */
static int execute(void *req, size_t len, void (*each)(const struct nlmsghdr *, void *), void *ctx) {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
  if (fd < 0) { perror("socket"); exit(2); }
  sockets++;
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
  if (bind(fd, (void *)&sa, sizeof sa) < 0) { perror("bind"); exit(2); }
  struct nlmsghdr *h = req;
  h->nlmsg_seq = seq++;
  if (sendto(fd, req, len, 0, (void *)&sa, sizeof sa) < 0) { perror("sendto"); exit(2); }
  sendtos++, sent++;
  socklen_t sl = sizeof sa;
  getsockname(fd, (void *)&sa, &sl);
  static char rb[65536];
  int result = 0;
  for (int done = 0; !done;) {
    ssize_t n = recvfrom(fd, rb, sizeof rb, 0, NULL, NULL);
    recvfroms++;
    if (n < 0) {
      /* Go parks on its poller until readable; the same wait here. */
      fd_set r; FD_ZERO(&r); FD_SET(fd, &r);
      select(fd + 1, &r, NULL, NULL, NULL);
      continue;
    }
    for (struct nlmsghdr *m = (void *)rb; NLMSG_OK(m, (size_t)n); m = NLMSG_NEXT(m, n)) {
      received++;
      if (m->nlmsg_type == NLMSG_DONE) { done = 1; break; }
      if (m->nlmsg_type == NLMSG_ERROR) { result = -((struct nlmsgerr *)NLMSG_DATA(m))->error; done = 1; break; }
      if (each) each(m, ctx);
      if (!(m->nlmsg_flags & NLM_F_MULTI)) { done = 1; break; }
    }
  }
  close(fd);
  return result;
}

static struct nlattr *attr_next(struct nlattr *a) { return (void *)((char *)a + NLA_ALIGN(a->nla_len)); }
#define FOR_ATTRS(a, start, len) \
  for (struct nlattr *a = (void *)(start); (char *)a + sizeof *a <= (char *)(start) + (len) && a->nla_len >= sizeof *a; a = attr_next(a))

/* A tuple's addresses and protocol (CTA_TUPLE_IP, CTA_TUPLE_PROTO). */
static void tuple(struct nlattr *t, unsigned char src[16], unsigned char dst[16], unsigned char *proto) {
  FOR_ATTRS(a, t + 1, t->nla_len - sizeof *t) {
    int type = a->nla_type & NLA_TYPE_MASK;
    if (type == CTA_TUPLE_IP) FOR_ATTRS(b, a + 1, a->nla_len - sizeof *a) {
      int bt = b->nla_type & NLA_TYPE_MASK;
      unsigned char *into = bt == CTA_IP_V4_SRC || bt == CTA_IP_V6_SRC ? src : bt == CTA_IP_V4_DST || bt == CTA_IP_V6_DST ? dst : NULL;
      if (into) { memset(into, 0, 16); memcpy(into, b + 1, b->nla_len - sizeof *b > 16 ? 16 : b->nla_len - sizeof *b); }
    }
    if (type == CTA_TUPLE_PROTO && proto) FOR_ATTRS(b, a + 1, a->nla_len - sizeof *a)
      if ((b->nla_type & NLA_TYPE_MASK) == CTA_PROTO_NUM) *proto = *(unsigned char *)(b + 1);
  }
}

static struct flow parse(const struct nlmsghdr *m) {
  struct flow f = { 0 };
  unsigned char unused[16];
  char *payload = (char *)NLMSG_DATA(m) + sizeof(struct nfgenmsg);
  FOR_ATTRS(a, payload, m->nlmsg_len - NLMSG_HDRLEN - sizeof(struct nfgenmsg)) {
    if ((a->nla_type & NLA_TYPE_MASK) == CTA_TUPLE_ORIG) tuple(a, unused, f.orig_dst, &f.proto);
    if ((a->nla_type & NLA_TYPE_MASK) == CTA_TUPLE_REPLY) tuple(a, f.reply_src, unused, NULL);
  }
  return f;
}

/* The dumped entries: decoded (ListEntries) or kept raw (ConntrackDeleteFilters). */
struct dump { long n, cap; struct flow *flows; struct nlmsghdr **raw; };
static void keep(const struct nlmsghdr *m, void *ctx) {
  struct dump *d = ctx;
  if (d->n == d->cap) {
    d->cap = d->cap ? d->cap * 2 : 1024;
    d->flows = realloc(d->flows, d->cap * sizeof *d->flows);
    d->raw = realloc(d->raw, d->cap * sizeof *d->raw);
  }
  d->flows[d->n] = parse(m);
  d->raw[d->n] = malloc(m->nlmsg_len);
  memcpy(d->raw[d->n], m, m->nlmsg_len);
  d->n++;
}

static void dump_table(struct dump *d) {
  struct { struct nlmsghdr h; struct nfgenmsg g; } req = {
    { sizeof req, (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET, NLM_F_REQUEST | NLM_F_DUMP, 0, 0 },
    { family, NFNETLINK_V0, 0 },
  };
  memset(d, 0, sizeof *d);
  execute(&req, sizeof req, keep, d);
}

static int same(const unsigned char a[16], const unsigned char b[16]) { return memcmp(a, b, 16) == 0; }

static struct service *services;
static long nservices;
static struct service *service_of(const unsigned char ip[16]) {
  /* Go's map: a hash table; here a sorted array searched by halves, the same O(log n) order at worst. */
  long lo = 0, hi = nservices - 1;
  while (lo <= hi) {
    long mid = (lo + hi) / 2;
    int c = memcmp(services[mid].ip, ip, 16);
    if (c == 0) return &services[mid];
    if (c < 0) lo = mid + 1; else hi = mid - 1;
  }
  return NULL;
}
static int by_ip(const void *a, const void *b) { return memcmp(((const struct service *)a)->ip, ((const struct service *)b)->ip, 16); }

static void read_services(const char *file) {
  FILE *in = fopen(file, "r");
  if (!in) { perror(file); exit(2); }
  char line[65536];
  long cap = 0;
  while (fgets(line, sizeof line, in)) {
    if (nservices == cap) services = realloc(services, (cap = cap ? cap * 2 : 1024) * sizeof *services);
    struct service *s = &services[nservices];
    memset(s, 0, sizeof *s);
    int i = 0;
    for (char *w = strtok(line, " \n"); w; w = strtok(NULL, " \n"), i++) {
      unsigned char ip[16] = { 0 };
      if (inet_pton(family, w, ip) != 1) { fprintf(stderr, "%s: not an address: %s\n", file, w); exit(2); }
      if (i == 0) memcpy(s->ip, ip, 16);
      else {
        s->endpoints = realloc(s->endpoints, (s->nendpoints + 1) * sizeof *s->endpoints);
        memcpy(s->endpoints[s->nendpoints++], ip, 16);
      }
    }
    if (i > 0) nservices++;
  }
  fclose(in);
}

static double now_ms(clockid_t c) { struct timespec t; clock_gettime(c, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "4") && strcmp(argv[1], "6"))) { fprintf(stderr, "usage: %s 4|6 SERVICES_FILE\n", argv[0]); return 2; }
  family = argv[1][0] == '4' ? AF_INET : AF_INET6;
  read_services(argv[2]);
  double wall0 = now_ms(CLOCK_MONOTONIC), cpu0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);

  struct dump listed;
  dump_table(&listed);
  qsort(services, nservices, sizeof *services, by_ip);
  struct filter *filters = NULL;
  long nfilters = 0;
  for (long i = 0; i < listed.n; i++) {
    struct flow *f = &listed.flows[i];
    if (f->proto != IPPROTO_UDP) continue;
    struct service *s = service_of(f->orig_dst);
    if (!s) continue;
    int serving = 0;
    for (int e = 0; e < s->nendpoints && !serving; e++) serving = same(s->endpoints[e], f->reply_src);
    if (serving) continue;
    filters = realloc(filters, (nfilters + 1) * sizeof *filters);
    filters[nfilters].proto = IPPROTO_UDP;
    memcpy(filters[nfilters].orig_dst, f->orig_dst, 16);
    memcpy(filters[nfilters].reply_src, f->reply_src, 16);
    nfilters++;
  }

  long deleted = 0, failed = 0;
  if (nfilters > 0) {
    struct dump again;
    dump_table(&again);
    for (long i = 0; i < again.n; i++) {
      struct flow *f = &again.flows[i];
      for (long k = 0; k < nfilters; k++) {
        if (filters[k].proto != f->proto || !same(filters[k].orig_dst, f->orig_dst) || !same(filters[k].reply_src, f->reply_src)) continue;
        /* The dumped message's attributes, sent back as a delete. */
        struct nlmsghdr *raw = again.raw[i];
        raw->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_DELETE;
        raw->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
        raw->nlmsg_pid = 0;
        if (execute(raw, raw->nlmsg_len, NULL, NULL) == 0) { deleted++; break; }
        failed++;
      }
    }
  }
  double wall = now_ms(CLOCK_MONOTONIC) - wall0, cpu = now_ms(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
  printf("{\"listed\":%ld,\"filters\":%ld,\"deleted\":%ld,\"failed\":%ld,\"messagesSent\":%ld,\"messagesReceived\":%ld,"
         "\"sockets\":%ld,\"sendtoCalls\":%ld,\"recvfromCalls\":%ld,\"wallMs\":%.1f,\"cpuMs\":%.1f}\n",
         listed.n, nfilters, deleted, failed, sent, received, sockets, sendtos, recvfroms, wall, cpu);
  return failed ? 1 : 0;
}
