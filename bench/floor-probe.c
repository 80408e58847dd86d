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
 */
#define _GNU_SOURCE
#include <linux/genetlink.h>
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

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: floor-probe MESSAGES_FILE [BATCH]\n"); return 2; }
  long batch = argc > 2 ? atol(argv[2]) : 4096;
  FILE *f = fopen(argv[1], "rb");
  struct stat st;
  if (!f || fstat(fileno(f), &st)) { perror(argv[1]); return 2; }
  char *buf = malloc(st.st_size);
  if (fread(buf, 1, st.st_size, f) != (size_t)st.st_size) { perror("read"); return 2; }

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
