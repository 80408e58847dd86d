#include "fake_kernel.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

namespace fuzz {

namespace {

struct FakeSocket {
  int index;
  uint32_t port_id;
  std::vector<uint32_t> seqs;  // every request sent on it, in order
};

struct Kernel {
  const uint8_t* script = nullptr;
  size_t len = 0;
  size_t at = 0;
  KernelConfig config;
  std::map<int, FakeSocket> sockets;  // by fd
  int opened = 0;
  int sendmsg_calls = 0;
  std::vector<Sent> sent;
};

Kernel& K() {
  static Kernel* k = new Kernel;  // never destroyed: used until exit
  return *k;
}

FakeSocket* Fake(int fd) {
  auto it = K().sockets.find(fd);
  return it == K().sockets.end() ? nullptr : &it->second;
}

template <typename F>
F Real(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (!p) Broken(std::string("fake kernel: no libc ") + name);
  return reinterpret_cast<F>(p);
}

// The next script entry, without consuming it.
struct Entry {
  uint8_t ctl = 0;
  const uint8_t* data = nullptr;
  size_t len = 0;
  size_t next = 0;  // script offset after it
};

bool Peek(Entry& e) {
  const Kernel& k = K();
  if (k.at >= k.len) return false;
  e.ctl = k.script[k.at];
  size_t at = k.at + 1;
  size_t n = 0;
  if (k.len - at >= 2) {
    n = k.script[at] | (k.script[at + 1] << 8);
    at += 2;
  } else {
    at = k.len;
  }
  if (n > k.len - at) n = k.len - at;  // a cut-off entry keeps what is there
  e.data = k.script + at;
  e.len = n;
  e.next = at + n;
  return true;
}

// Patches sequence numbers and port ids of the messages in a delivered
// datagram (see fake_kernel.h); stops where the lengths stop making sense,
// leaving the rest for the socket's own checks.
void Patch(uint8_t* d, size_t len, const FakeSocket& s) {
  size_t at = 0;
  while (len - at >= NLMSG_HDRLEN) {
    nlmsghdr h;
    std::memcpy(&h, d + at, sizeof h);
    if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len - at) return;
    const uint32_t latest = s.seqs.empty() ? 0 : s.seqs.back();
    if (h.nlmsg_seq == 0) {
      h.nlmsg_seq = latest;
    } else if (h.nlmsg_seq <= 0xffff) {
      const size_t k = h.nlmsg_seq - 1;
      h.nlmsg_seq = k < s.seqs.size() ? s.seqs[k] : latest + static_cast<uint32_t>(k - s.seqs.size() + 1);
    }
    if (h.nlmsg_pid == 0) h.nlmsg_pid = s.port_id;
    std::memcpy(d + at, &h, sizeof h);
    // The last message may lack its padding: never step past the end.
    const size_t step = NLMSG_ALIGN(h.nlmsg_len);
    if (step >= len - at) return;
    at += step;
  }
}

int ErrnoOf(const Entry& e) {
  static const int kErrnos[] = {EAGAIN, EINTR, ENOBUFS, EBADF};
  return kErrnos[(e.len ? e.data[0] : 0) % 4];
}

int FakeRecv(FakeSocket& s, mmsghdr* msgs, unsigned vlen) {
  Kernel& k = K();
  Entry e;
  unsigned n = 0;
  while (n < vlen && Peek(e)) {
    if (n > 0 && (!(e.ctl & kSameBurst) || (e.ctl & kErrno))) break;
    k.at = e.next;
    if (e.ctl & kErrno) {
      errno = ErrnoOf(e);
      return -1;
    }
    msghdr& h = msgs[n].msg_hdr;
    Require(h.msg_iovlen == 1, "recvmmsg: one buffer per message");
    const size_t room = h.msg_iov[0].iov_len;
    const size_t copied = e.len < room ? e.len : room;
    uint8_t* buf = static_cast<uint8_t*>(h.msg_iov[0].iov_base);
    std::memcpy(buf, e.data, copied);
    if (!(e.ctl & kRaw)) Patch(buf, copied, s);
    msgs[n].msg_len = static_cast<unsigned>(copied);
    h.msg_flags = (e.ctl & kTrunc) || e.len > room ? MSG_TRUNC : 0;
    if (h.msg_name && h.msg_namelen >= sizeof(sockaddr_nl)) {
      sockaddr_nl from{};
      from.nl_family = AF_NETLINK;
      from.nl_pid = (e.ctl & kForeign) ? 4242 : 0;
      std::memcpy(h.msg_name, &from, sizeof from);
      h.msg_namelen = sizeof from;
    }
    n++;
  }
  if (n == 0) {
    errno = EAGAIN;  // nothing more will ever come
    return -1;
  }
  return static_cast<int>(n);
}

ssize_t FakeSend(FakeSocket& s, const msghdr* msg) {
  Kernel& k = K();
  const int call = ++k.sendmsg_calls;
  if (call == k.config.fail_sendmsg_at && k.config.sendmsg_errno) {
    errno = k.config.sendmsg_errno;
    return -1;
  }
  Require(msg->msg_iovlen == 1, "sendmsg: one buffer");
  const uint8_t* d = static_cast<const uint8_t*>(msg->msg_iov[0].iov_base);
  const size_t len = msg->msg_iov[0].iov_len;
  Require(len >= NLMSG_HDRLEN, "sendmsg: at least one message");
  size_t at = 0;
  const size_t first = k.sent.size();
  while (at < len) {
    Require(len - at >= NLMSG_HDRLEN, "sendmsg: no bytes after the last message");
    nlmsghdr h;
    std::memcpy(&h, d + at, sizeof h);
    Require(h.nlmsg_len >= NLMSG_HDRLEN && h.nlmsg_len <= len - at, "sendmsg: message length in bounds");
    Require(NLMSG_ALIGN(h.nlmsg_len) <= len - at || at + h.nlmsg_len == len,
            "sendmsg: messages padded to 4 bytes");
    Require(h.nlmsg_flags & NLM_F_REQUEST, "sendmsg: NLM_F_REQUEST on every request");
    Require(h.nlmsg_pid == s.port_id, "sendmsg: our port id on every request");
    if (k.sent.size() > first)
      Require(h.nlmsg_seq == k.sent.back().seq + 1, "sendmsg: consecutive sequence numbers in a sendmsg");
    // An interrupted dump is sent again under a fresh number too.
    Require(std::find(s.seqs.begin(), s.seqs.end(), h.nlmsg_seq) == s.seqs.end(),
            "sendmsg: a sequence number is never reused on a socket");
    Sent x;
    x.socket = s.index;
    x.type = h.nlmsg_type;
    x.flags = h.nlmsg_flags;
    x.seq = h.nlmsg_seq;
    x.genl_cmd = h.nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN ? d[at + NLMSG_HDRLEN] : 0;
    x.sendmsg_call = call;
    x.last = false;
    x.bytes.assign(d + at, d + at + h.nlmsg_len);
    k.sent.push_back(std::move(x));
    s.seqs.push_back(h.nlmsg_seq);
    at += NLMSG_ALIGN(h.nlmsg_len);
  }
  k.sent.back().last = true;
  Require(k.sent.back().flags & NLM_F_ACK, "sendmsg: the last message asks for an ack");
  for (size_t i = first; i + 1 < k.sent.size(); i++)
    Require(!(k.sent[i].flags & NLM_F_DUMP), "sendmsg: a dump is the last message of its sendmsg");
  return static_cast<ssize_t>(len);
}

}  // namespace

void KernelReset(const uint8_t* script, size_t len, const KernelConfig& config) {
  Kernel& k = K();
  k.sockets.clear();  // their descriptors were closed by their owners
  k.script = script;
  k.len = len;
  k.at = 0;
  k.config = config;
  k.opened = 0;
  k.sendmsg_calls = 0;
  k.sent.clear();
}

bool KernelHasMore() { return K().at < K().len; }
const std::vector<Sent>& KernelSent() { return K().sent; }
int KernelSockets() { return K().opened; }

void AppendEntry(std::vector<uint8_t>& script, uint8_t ctl, const uint8_t* data, size_t len) {
  script.push_back(ctl);
  script.push_back(static_cast<uint8_t>(len));
  script.push_back(static_cast<uint8_t>(len >> 8));
  script.insert(script.end(), data, data + len);
}

void Broken(const std::string& what) {
  std::fprintf(stderr, "invariant broken: %s\n", what.c_str());
  std::abort();
}

}  // namespace fuzz

using fuzz::Fake;
using fuzz::K;
using fuzz::Real;

extern "C" {

int socket(int domain, int type, int protocol) noexcept {
  if (domain != AF_NETLINK) return Real<int (*)(int, int, int)>("socket")(domain, type, protocol);
  // A real descriptor (so close() and poll() behave), which never has data.
  const int fd = eventfd(0, (type & SOCK_CLOEXEC) ? EFD_CLOEXEC : 0);
  if (fd < 0) return fd;
  fuzz::Kernel& k = K();
  k.sockets[fd] = fuzz::FakeSocket{k.opened, 0x7000u + static_cast<uint32_t>(k.opened), {}};
  k.opened++;
  return fd;
}

int setsockopt(int fd, int level, int name, const void* value, socklen_t len) noexcept {
  if (!Fake(fd))
    return Real<int (*)(int, int, int, const void*, socklen_t)>("setsockopt")(fd, level, name, value, len);
  return 0;
}

int getsockopt(int fd, int level, int name, void* __restrict value, socklen_t* __restrict len) noexcept {
  if (!Fake(fd))
    return Real<int (*)(int, int, int, void*, socklen_t*)>("getsockopt")(fd, level, name, value, len);
  int v = 0;
  if (level == SOL_SOCKET && name == SO_RCVBUF) v = K().config.rcvbuf;
  if (level == SOL_SOCKET && name == SO_SNDBUF) v = K().config.sndbuf;
  if (*len < sizeof v) {
    errno = EINVAL;
    return -1;
  }
  std::memcpy(value, &v, sizeof v);
  *len = sizeof v;
  return 0;
}

int bind(int fd, const sockaddr* addr, socklen_t len) noexcept {
  if (!Fake(fd)) return Real<int (*)(int, const sockaddr*, socklen_t)>("bind")(fd, addr, len);
  return 0;
}

int getsockname(int fd, sockaddr* __restrict addr, socklen_t* __restrict len) noexcept {
  fuzz::FakeSocket* s = Fake(fd);
  if (!s) return Real<int (*)(int, sockaddr*, socklen_t*)>("getsockname")(fd, addr, len);
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  local.nl_pid = s->port_id;
  std::memcpy(addr, &local, *len < sizeof local ? *len : sizeof local);
  *len = sizeof local;
  return 0;
}

ssize_t sendmsg(int fd, const msghdr* msg, int flags) {
  fuzz::FakeSocket* s = Fake(fd);
  if (!s) return Real<ssize_t (*)(int, const msghdr*, int)>("sendmsg")(fd, msg, flags);
  return fuzz::FakeSend(*s, msg);
}

int recvmmsg(int fd, mmsghdr* msgs, unsigned int vlen, int flags, timespec* timeout) {
  fuzz::FakeSocket* s = Fake(fd);
  if (!s) return Real<int (*)(int, mmsghdr*, unsigned, int, timespec*)>("recvmmsg")(fd, msgs, vlen, flags, timeout);
  return fuzz::FakeRecv(*s, msgs, vlen);
}

int poll(pollfd* fds, nfds_t n, int timeout) {
  if (n == 1 && Fake(fds[0].fd)) {
    // The script never delivers later than now: waiting is a timeout.
    fds[0].revents = 0;
    return 0;
  }
  return Real<int (*)(pollfd*, nfds_t, int)>("poll")(fds, n, timeout);
}

}  // extern "C"
