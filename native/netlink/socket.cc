#include "socket.h"

#include <errno.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

#include <climits>
#include <cstring>

#include "netns.h"
#include "conversation.h"

namespace nl {

namespace {

int GetIntOpt(int fd, int level, int name) {
  int v = 0;
  socklen_t l = sizeof v;
  getsockopt(fd, level, name, &v, &l);
  return v;
}

}  // namespace

Status NetlinkSocket::Open(const SocketOptions& opts, std::unique_ptr<NetlinkSocket>& out) {
  int fd = -1;
  if (opts.netns.empty()) {
    fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, opts.protocol);
    if (fd < 0) return Status::Errno(errno, "socket", "AF_NETLINK");
  } else {
    Status st = SocketInNamespace(opts.netns, opts.protocol, &fd);
    if (!st.ok()) return st;
  }
  std::unique_ptr<NetlinkSocket> s(new NetlinkSocket(fd, opts));
  if (!s->rx_.Map()) return Status::Errno(ENOMEM, "mmap", "the socket's receive buffers");
  Status st = s->Configure();
  if (!st.ok()) return st;
  out = std::move(s);
  return Status::Ok();
}

NetlinkSocket::NetlinkSocket(int fd, const SocketOptions& opts)
    : fd_(fd), opts_(opts) {}

NetlinkSocket::~NetlinkSocket() {
  if (fd_ >= 0) close(fd_);
}

Status NetlinkSocket::Configure() {
  // Raise the buffers: FORCE works with CAP_NET_ADMIN and ignores rmem_max;
  // without it we keep whatever the plain option grants.
  if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &opts_.rcvbuf, sizeof(int)) < 0)
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &opts_.rcvbuf, sizeof(int));
  if (setsockopt(fd_, SOL_SOCKET, SO_SNDBUFFORCE, &opts_.sndbuf, sizeof(int)) < 0)
    setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &opts_.sndbuf, sizeof(int));
  rcvbuf_ = GetIntOpt(fd_, SOL_SOCKET, SO_RCVBUF);
  sndbuf_ = GetIntOpt(fd_, SOL_SOCKET, SO_SNDBUF);

  const int one = 1;
  // Errors carry the kernel's explanation, and do not echo our whole request
  // back (a large batch of failures would otherwise flood the buffer).
  setsockopt(fd_, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof one);
  setsockopt(fd_, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one);

  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) < 0)
    return Status::Errno(errno, "bind", "netlink socket");
  socklen_t len = sizeof local;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &len) < 0)
    return Status::Errno(errno, "getsockname", "netlink socket");
  port_id_ = local.nl_pid;
  return Status::Ok();
}

Status NetlinkSocket::Transact(Batch& batch) {
  Status st = Conversation(*this, batch, tx_).Run();
  tx_.clear();
  if (tx_.capacity() > (8u << 20)) Bytes().swap(tx_);
  return st;
}

Status NetlinkSocket::Transact(std::vector<Exchange>& batch) {
  ExchangeBatch b(batch);
  return Transact(b);
}

size_t NetlinkSocket::ReleaseIdleBuffers() {
  size_t bytes = rx_.GiveBack();
  // A batch of a few changes stays well under this; a resync's thousands
  // of requests do not, and their buffer would be held until the next one.
  constexpr size_t kKeepTx = 256u << 10;
  if (tx_.capacity() > kKeepTx) {
    bytes += tx_.capacity();
    Bytes().swap(tx_);
  }
  return bytes;
}

bool NetlinkSocket::GrowSendBuffer(size_t bytes) {
  // The kernel takes a datagram of up to the send buffer less its own
  // overhead; 64 bytes covers it.
  const size_t need = bytes + 64;
  if (need <= static_cast<size_t>(sndbuf_)) return true;
  if (need > INT_MAX / 2) return false;
  const int want = static_cast<int>(need);
  if (setsockopt(fd_, SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof want) < 0)
    setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &want, sizeof want);
  sndbuf_ = GetIntOpt(fd_, SOL_SOCKET, SO_SNDBUF);
  return need <= static_cast<size_t>(sndbuf_);
}

uint32_t NetlinkSocket::TakeSequence(size_t n) {
  const uint32_t first = next_seq_;
  next_seq_ += static_cast<uint32_t>(n);
  return first;
}

Status NetlinkSocket::Send(const Bytes& bytes, size_t messages) {
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  iovec iov{const_cast<uint8_t*>(bytes.data()), bytes.size()};
  msghdr msg{};
  msg.msg_name = &kernel;
  msg.msg_namelen = sizeof kernel;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  for (;;) {
    ssize_t n = sendmsg(fd_, &msg, 0);
    LiveCounters::Add(counters_->sendmsg_calls, 1);
    if (n >= 0) break;
    if (errno == EINTR) continue;
    return Status::Errno(errno, "sendmsg", std::to_string(messages) + " messages");
  }
  LiveCounters::Add(counters_->messages_sent, messages);
  return Status::Ok();
}

Status NetlinkSocket::Receive(MessageSink& sink, bool* progressed) {
  constexpr size_t kSlots = ReceiveSlots::kSlots;
  mmsghdr msgs[kSlots];
  iovec iov[kSlots];
  sockaddr_nl from[kSlots];
  // ENOBUFS is reported before the answers that did fit in the buffer:
  // those are still queued, and are read before the overflow is returned,
  // so that only the requests whose answers were dropped are left unknown.
  Status overflow;
  for (;;) {
    for (size_t i = 0; i < kSlots; i++) {
      iov[i] = {rx_.slot(i), ReceiveSlots::kSlotSize};
      std::memset(&msgs[i], 0, sizeof msgs[i]);
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_name = &from[i];
      msgs[i].msg_hdr.msg_namelen = sizeof from[i];
    }
    int n = recvmmsg(fd_, msgs, kSlots, MSG_DONTWAIT, nullptr);
    LiveCounters::Add(counters_->recv_calls, 1);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return overflow;
      if (errno == ENOBUFS && overflow.ok()) {
        overflow = Status::Errno(ENOBUFS, "recvmmsg",
                                 "the kernel dropped replies: the receive buffer overflowed, so whether the "
                                 "requests without an answer were applied is unknown (read the state back)");
        continue;
      }
      return Status::Errno(errno, "recvmmsg");
    }
    if (n == 0) return overflow;
    rx_.Filled(static_cast<size_t>(n));
    if (drop_replies_) continue;
    *progressed = true;
    for (int i = 0; i < n; i++) {
      if (from[i].nl_pid != 0) continue;  // only the kernel talks to us
      if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC)
        return Status::Errno(EMSGSIZE, "recvmmsg", "a reply was larger than the receive buffer");
      parts_.clear();
      std::string err;
      if (!SplitMessages(rx_.slot(i), msgs[i].msg_len, parts_, err))
        return Status::Errno(EBADMSG, "recvmmsg", err);
      for (const Message& m : parts_) {
        LiveCounters::Add(counters_->messages_received, 1);
        sink.OnMessage(m);
      }
    }
    if (static_cast<size_t>(n) < kSlots && overflow.ok()) return Status::Ok();
  }
}

Status NetlinkSocket::Wait(int timeout_ms) {
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) < 0 && errno != EINTR) return Status::Errno(errno, "poll");
  return Status::Ok();
}

}  // namespace nl
