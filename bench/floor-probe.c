/*
 * bench/floor-probe.c: the floor for programming IPVS over netlink.
 *
 *   floor-probe MESSAGES_FILE [BATCH]
 *
 * MESSAGES_FILE holds complete IPVS generic netlink requests back to back
 * (written by bench/ipvs.mjs with the addon's own encoder, so these are the
 * very messages Ipvs.apply sends). The probe resolves the IPVS family id,
 * then sends them BATCH (default 4096) per sendmsg over one socket, with
 * NLM_F_ACK only on the last of each batch (the kernel still reports every
 * error), and reads until that ack. Nothing else: no parsing, no results.
 * Prints "ok N errors E sendmsg S recv R" and exits 0 if E == 0.
 *
 *   floor-probe --dump
 *
 * The floor for reading: one service dump, then one destination dump per
 * service, each sent alone (the kernel serves one dump per socket at a
 * time) and read until NLMSG_DONE with recvmmsg; nothing is decoded but
 * each service's identity. Prints "dump services S destinations D sendmsg
 * X recv Y".
 */
#define _GNU_SOURCE
#include <linux/genetlink.h>
#include <linux/ip_vs.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static char rx[1 << 20];
static long nsend, nrecv;

/* Reads until the ack (or error) for seq arrives; counts the errors seen. */
static int wait_ack(int fd, unsigned seq, long *errors, unsigned short *family) {
  for (;;) {
    ssize_t n = recv(fd, rx, sizeof rx, 0);
    nrecv++;
    if (n < 0) { perror("recv"); exit(2); }
    for (struct nlmsghdr *h = (void *)rx; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_type == NLMSG_ERROR) {
        int err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
        if (err) (*errors)++;
        if (h->nlmsg_seq == seq) return err;
      } else if (family && h->nlmsg_type == GENL_ID_CTRL) {
        struct nlattr *a = (void *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);
        int left = h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
        for (; left >= (int)sizeof *a && a->nla_len >= sizeof *a; left -= NLA_ALIGN(a->nla_len),
             a = (void *)((char *)a + NLA_ALIGN(a->nla_len)))
          if (a->nla_type == CTRL_ATTR_FAMILY_ID) *family = *(unsigned short *)(a + 1);
      }
    }
  }
}

/* An attribute's header, in a message being built. */
static char *put_attr(char *p, unsigned short type, const void *data, unsigned short len) {
  struct nlattr *a = (void *)p;
  a->nla_type = type;
  a->nla_len = NLA_HDRLEN + len;
  memcpy(p + NLA_HDRLEN, data, len);
  return p + NLA_ALIGN(a->nla_len);
}

/* Reads one dump to its NLMSG_DONE; calls each(h) for every data message. */
static long read_dump(int fd, void (*each)(struct nlmsghdr *)) {
  static struct mmsghdr mm[64];
  static struct iovec iov[64];
  static char bufs[64][32768];
  long messages = 0;
  for (;;) {
    for (int i = 0; i < 64; i++) {
      iov[i].iov_base = bufs[i];
      iov[i].iov_len = sizeof bufs[i];
      memset(&mm[i], 0, sizeof mm[i]);
      mm[i].msg_hdr.msg_iov = &iov[i];
      mm[i].msg_hdr.msg_iovlen = 1;
    }
    /* MSG_WAITFORONE: block for the first datagram only, then take what is there. */
    int n = recvmmsg(fd, mm, 64, MSG_WAITFORONE, NULL);
    nrecv++;
    if (n < 0) { perror("recvmmsg"); exit(2); }
    for (int i = 0; i < n; i++) {
      int len = mm[i].msg_len;
      for (struct nlmsghdr *h = (void *)bufs[i]; NLMSG_OK(h, (unsigned)len); h = NLMSG_NEXT(h, len)) {
        if (h->nlmsg_type == NLMSG_DONE) return messages;
        if (h->nlmsg_type == NLMSG_ERROR) { fprintf(stderr, "dump refused\n"); exit(2); }
        messages++;
        if (each) each(h);
      }
    }
  }
}

/* The identities the service dump returned: the attributes of each service nest that name it. */
static char (*keys)[64];
static unsigned short *key_len;
static long nkeys, cap_keys;

static void keep_service(struct nlmsghdr *h) {
  struct nlattr *top = (void *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);
  if (top->nla_type != (IPVS_CMD_ATTR_SERVICE | NLA_F_NESTED) && top->nla_type != IPVS_CMD_ATTR_SERVICE) return;
  if (nkeys == cap_keys) {
    cap_keys = cap_keys ? cap_keys * 2 : 1024;
    keys = realloc(keys, cap_keys * sizeof *keys);
    key_len = realloc(key_len, cap_keys * sizeof *key_len);
  }
  char *out = keys[nkeys];
  int left = top->nla_len - NLA_HDRLEN;
  for (struct nlattr *a = (void *)((char *)top + NLA_HDRLEN); left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN;
       left -= NLA_ALIGN(a->nla_len), a = (void *)((char *)a + NLA_ALIGN(a->nla_len))) {
    int t = a->nla_type & NLA_TYPE_MASK;
    if (t == IPVS_SVC_ATTR_AF || t == IPVS_SVC_ATTR_PROTOCOL || t == IPVS_SVC_ATTR_ADDR || t == IPVS_SVC_ATTR_PORT ||
        t == IPVS_SVC_ATTR_FWMARK)
      out = put_attr(out, t, a + 1, a->nla_len - NLA_HDRLEN);
  }
  key_len[nkeys] = out - keys[nkeys];
  nkeys++;
}

static int dump_all(int fd, unsigned short family) {
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  char msg[256];
  unsigned seq = 100;
  /* The services. */
  struct nlmsghdr *h = (void *)msg;
  struct genlmsghdr *g = NLMSG_DATA(h);
  memset(msg, 0, sizeof msg);
  h->nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN;
  h->nlmsg_type = family;
  h->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  h->nlmsg_seq = ++seq;
  g->cmd = IPVS_CMD_GET_SERVICE;
  g->version = IPVS_GENL_VERSION;
  if (sendto(fd, msg, h->nlmsg_len, 0, (void *)&kernel, sizeof kernel) < 0) { perror("sendto"); return 2; }
  nsend++;
  read_dump(fd, keep_service);
  /* Each service's destinations. */
  long dests = 0;
  for (long i = 0; i < nkeys; i++) {
    memset(msg, 0, sizeof msg);
    h->nlmsg_type = family;
    h->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    h->nlmsg_seq = ++seq;
    g->cmd = IPVS_CMD_GET_DEST;
    g->version = IPVS_GENL_VERSION;
    struct nlattr *nest = (void *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);
    nest->nla_type = IPVS_CMD_ATTR_SERVICE | NLA_F_NESTED;
    nest->nla_len = NLA_HDRLEN + key_len[i];
    memcpy((char *)nest + NLA_HDRLEN, keys[i], key_len[i]);
    h->nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + NLA_ALIGN(nest->nla_len);
    if (sendto(fd, msg, h->nlmsg_len, 0, (void *)&kernel, sizeof kernel) < 0) { perror("sendto"); return 2; }
    nsend++;
    dests += read_dump(fd, NULL);
  }
  printf("dump services %ld destinations %ld sendmsg %ld recv %ld\n", nkeys, dests, nsend, nrecv);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: floor-probe MESSAGES_FILE [BATCH] | floor-probe --dump\n"); return 2; }
  const int dump = strcmp(argv[1], "--dump") == 0;
  long batch = argc > 2 ? atol(argv[2]) : 4096;
  FILE *f = dump ? NULL : fopen(argv[1], "rb");
  struct stat st = {0};
  if (!dump && (!f || fstat(fileno(f), &st))) { perror(argv[1]); return 2; }
  char *buf = malloc(st.st_size + 1);
  if (!dump && fread(buf, 1, st.st_size, f) != (size_t)st.st_size) { perror("read"); return 2; }

  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
  int big = 16 << 20, one = 1;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
  setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one);
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};

  /* CTRL_CMD_GETFAMILY "IPVS" */
  struct { struct nlmsghdr n; struct genlmsghdr g; struct nlattr a; char name[8]; } q = {
      .n = {.nlmsg_len = sizeof q, .nlmsg_type = GENL_ID_CTRL, .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK, .nlmsg_seq = 1},
      .g = {.cmd = CTRL_CMD_GETFAMILY, .version = 1},
      .a = {.nla_len = sizeof(struct nlattr) + 5, .nla_type = CTRL_ATTR_FAMILY_NAME},
      .name = "IPVS"};
  unsigned short family = 0;
  long errors = 0;
  if (sendto(fd, &q, sizeof q, 0, (void *)&kernel, sizeof kernel) < 0) { perror("sendto"); return 2; }
  nsend++;
  if (wait_ack(fd, 1, &errors, &family) || !family) { fprintf(stderr, "no IPVS family\n"); return 2; }
  if (dump) return dump_all(fd, family);

  /* Patch type, flags and seq in place, then send BATCH messages per sendmsg. */
  unsigned seq = 1;
  long count = 0;
  for (char *p = buf, *end = buf + st.st_size; p < end;) {
    char *start = p;
    struct nlmsghdr *last = NULL;
    for (long k = 0; k < batch && p < end; k++, count++) {
      last = (struct nlmsghdr *)p;
      last->nlmsg_type = family;
      last->nlmsg_flags = NLM_F_REQUEST;
      last->nlmsg_seq = ++seq;
      last->nlmsg_pid = 0;
      p += NLMSG_ALIGN(last->nlmsg_len);
    }
    last->nlmsg_flags |= NLM_F_ACK;
    struct iovec iov = {start, p - start};
    struct msghdr m = {.msg_name = &kernel, .msg_namelen = sizeof kernel, .msg_iov = &iov, .msg_iovlen = 1};
    if (sendmsg(fd, &m, 0) < 0) { perror("sendmsg"); return 2; }
    nsend++;
    wait_ack(fd, seq, &errors, NULL);
  }
  printf("ok %ld errors %ld sendmsg %ld recv %ld\n", count, errors, nsend, nrecv);
  return errors != 0;
}
