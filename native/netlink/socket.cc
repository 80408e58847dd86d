#include "socket.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sched.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
#include <thread>

namespace nl {

namespace {

// The answer to one request may take this much of the receive buffer:
// the skb truesize of an ack, plus a data reply for gets, plus an echo of the
// request for families (ipset) that echo it in their own error messages.
size_t ReplyCost(const Exchange& x) {
  return 1024 + (x.expects_data ? 8192 : 0) + x.request.size();
}

// Creates the socket inside another network namespace. setns() changes only
// the calling thread, so this runs on a throwaway thread: if switching back
// fails, that thread simply ends and no other work ever runs in the wrong
// namespace (the approach of mdlayher/socket's withNetNS).
Status SocketInNamespace(const std::string& path, int protocol, int* fd_out) {
  Status st;
  std::thread t([&] {
    int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (self < 0) {
      st = Status::Errno(errno, "open", "/proc/thread-self/ns/net");
      return;
    }
    int target = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (target < 0) {
      st = Status::Errno(errno, "open", "network namespace " + path);
      close(self);
      return;
    }
    if (setns(target, CLONE_NEWNET) < 0) {
      st = Status::Errno(errno, "setns", "entering network namespace " + path);
      close(target);
      close(self);
      return;
    }
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
    int sock_errno = errno;
    setns(self, CLONE_NEWNET);  // the thread ends next, restored or not
    close(target);
    close(self);
    if (fd < 0) {
      st = Status::Errno(sock_errno, "socket", "AF_NETLINK in " + path);
      return;
    }
    *fd_out = fd;
  });
  t.join();
  return st;
}

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
  Status st = s->Configure();
  if (!st.ok()) return st;
  out = std::move(s);
  return Status::Ok();
}

NetlinkSocket::NetlinkSocket(int fd, const SocketOptions& opts)
    : fd_(fd), opts_(opts), rx_(new uint8_t[kSlots * kSlotSize]) {}

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

Status NetlinkSocket::SendChunk(std::vector<Exchange>& batch, size_t from, size_t to) {
  std::vector<iovec> iov;
  iov.reserve(to - from);
  for (size_t i = from; i < to; i++) {
    Exchange& x = batch[i];
    nlmsghdr h;
    std::memcpy(&h, x.request.data(), sizeof h);
    h.nlmsg_len = static_cast<uint32_t>(x.request.size());
    h.nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
    if (x.dump) h.nlmsg_flags |= NLM_F_DUMP;
    h.nlmsg_seq = next_seq_++;
    if (next_seq_ == 0) next_seq_ = 1;
    h.nlmsg_pid = port_id_;
    std::memcpy(x.request.data(), &h, sizeof h);
    inflight_[h.nlmsg_seq] = i;
    reserved_ += ReplyCost(x);
    iov.push_back({x.request.data(), x.request.size()});
  }
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  msghdr msg{};
  msg.msg_name = &kernel;
  msg.msg_namelen = sizeof kernel;
  msg.msg_iov = iov.data();
  msg.msg_iovlen = iov.size();
  for (;;) {
    ssize_t n = sendmsg(fd_, &msg, 0);
    counters_.sendmsg_calls++;
    if (n >= 0) break;
    if (errno == EINTR) continue;
    return Status::Errno(errno, "sendmsg", std::to_string(to - from) + " messages");
  }
  counters_.messages_sent += to - from;
  return Status::Ok();
}

void NetlinkSocket::Complete(std::vector<Exchange>& batch, size_t index) {
  Exchange& x = batch[index];
  x.done = true;
  done_count_++;
  reserved_ -= std::min(reserved_, ReplyCost(x));
  if (open_dump_ == index) open_dump_ = SIZE_MAX;
}

void NetlinkSocket::Dispatch(std::vector<Exchange>& batch, const Message& m) {
  counters_.messages_received++;
  // Sequence and port checks: anything not addressed to us, or answering a
  // request we are not waiting for, is ignored rather than misattributed.
  if (m.hdr.nlmsg_pid != port_id_ && m.hdr.nlmsg_pid != 0) return;
  auto it = inflight_.find(m.hdr.nlmsg_seq);
  if (it == inflight_.end()) return;
  const size_t index = it->second;
  Exchange& x = batch[index];

  if (m.hdr.nlmsg_type == NLMSG_ERROR) {
    ErrorReply e;
    std::string perr;
    if (!ParseError(m, e, perr)) {
      x.error = EBADMSG;
      x.ext_message = perr;
    } else {
      x.error = e.error;
      x.ext_message = e.message;
      x.ext_offset = e.offset;
      if (e.error && e.echo) x.error_echo.assign(e.echo, e.echo + e.echo_len);
    }
    // For a dump, an ack only follows an error; a plain request is finished.
    inflight_.erase(it);
    Complete(batch, index);
    return;
  }
  if (m.hdr.nlmsg_flags & NLM_F_DUMP_INTR) interrupted_[index] = true;
  if (m.hdr.nlmsg_type == NLMSG_DONE) {
    int err = 0;
    if (m.payload_len >= sizeof(int)) std::memcpy(&err, m.payload, sizeof err);
    inflight_.erase(it);
    if (err == 0 && interrupted_[index] && x.dump_retries < opts_.max_dump_retries) {
      // The table changed while it was being read: read it again.
      x.dump_retries++;
      counters_.dumps_restarted++;
      x.replies.clear();
      interrupted_[index] = false;
      reserved_ -= std::min(reserved_, ReplyCost(x));
      open_dump_ = SIZE_MAX;
      restart_from_ = index;
      return;
    }
    x.error = err < 0 ? -err : err;
    if (x.error == 0 && interrupted_[index]) {
      x.error = EINTR;
      x.ext_message = "dump interrupted " + std::to_string(x.dump_retries) +
                      " times by concurrent changes";
    }
    Complete(batch, index);
    return;
  }
  if (m.hdr.nlmsg_type < NLMSG_MIN_TYPE) return;  // NOOP / OVERRUN
  x.replies.emplace_back(m.payload - NLMSG_HDRLEN, m.payload + m.payload_len);
}

Status NetlinkSocket::Receive(std::vector<Exchange>& batch, bool* progressed) {
  mmsghdr msgs[kSlots];
  iovec iov[kSlots];
  sockaddr_nl from[kSlots];
  for (;;) {
    for (size_t i = 0; i < kSlots; i++) {
      iov[i] = {rx_.get() + i * kSlotSize, kSlotSize};
      std::memset(&msgs[i], 0, sizeof msgs[i]);
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_name = &from[i];
      msgs[i].msg_hdr.msg_namelen = sizeof from[i];
    }
    int n = recvmmsg(fd_, msgs, kSlots, MSG_DONTWAIT, nullptr);
    counters_.recv_calls++;
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::Ok();
      if (errno == ENOBUFS)
        return Status::Errno(ENOBUFS, "recvmmsg",
                             "the kernel dropped replies: the receive buffer overflowed");
      return Status::Errno(errno, "recvmmsg");
    }
    if (n == 0) return Status::Ok();
    if (drop_replies_) continue;
    *progressed = true;
    std::vector<Message> parts;
    for (int i = 0; i < n; i++) {
      if (from[i].nl_pid != 0) continue;  // only the kernel talks to us
      if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC)
        return Status::Errno(EMSGSIZE, "recvmmsg", "a reply was larger than the receive buffer");
      parts.clear();
      std::string err;
      if (!SplitMessages(rx_.get() + i * kSlotSize, msgs[i].msg_len, parts, err))
        return Status::Errno(EBADMSG, "recvmmsg", err);
      for (const Message& m : parts) Dispatch(batch, m);
    }
    if (static_cast<size_t>(n) < kSlots) return Status::Ok();
  }
}

Status NetlinkSocket::Transact(std::vector<Exchange>& batch) {
  inflight_.clear();
  interrupted_.assign(batch.size(), false);
  reserved_ = 0;
  open_dump_ = SIZE_MAX;
  restart_from_ = SIZE_MAX;

  // Half the receive buffer is our budget for unread answers; the kernel
  // drops (ENOBUFS) past the whole of it.
  const size_t budget = static_cast<size_t>(rcvbuf_) / 2;
  const size_t max_send = static_cast<size_t>(sndbuf_) > 4096 ? static_cast<size_t>(sndbuf_) - 1024 : 4096;
  size_t next = 0;
  done_count_ = 0;
  auto last_progress = std::chrono::steady_clock::now();

  Status failure;
  while (true) {
    if (done_count_ == batch.size()) break;

    if (restart_from_ != SIZE_MAX) {
      // Resend an interrupted dump on its own.
      Status st = SendChunk(batch, restart_from_, restart_from_ + 1);
      if (!st.ok()) { failure = st; break; }
      open_dump_ = restart_from_;
      restart_from_ = SIZE_MAX;
    }

    // Send as much as the budget allows. A dump goes last in its chunk and
    // nothing follows it until it is done: one dump per socket at a time.
    if (open_dump_ == SIZE_MAX && next < batch.size()) {
      size_t end = next, bytes = 0, cost = reserved_;
      while (end < batch.size()) {
        const Exchange& x = batch[end];
        const size_t c = ReplyCost(x);
        // One iovec per message: sendmsg refuses more than IOV_MAX (1024)
        // of them with EMSGSIZE.
        if (end > next && (end - next >= static_cast<size_t>(IOV_MAX) ||
                           bytes + x.request.size() > max_send || cost + c > budget))
          break;
        if (end == next && reserved_ > 0 && cost + c > budget) break;
        bytes += x.request.size();
        cost += c;
        end++;
        if (x.dump) break;
      }
      if (end > next) {
        Status st = SendChunk(batch, next, end);
        if (!st.ok()) { failure = st; break; }
        if (batch[end - 1].dump) open_dump_ = end - 1;
        next = end;
        last_progress = std::chrono::steady_clock::now();
      }
    }

    bool progressed = false;
    Status st = Receive(batch, &progressed);
    if (!st.ok()) { failure = st; break; }
    if (progressed) {
      last_progress = std::chrono::steady_clock::now();
      continue;
    }
    // Nothing to read yet. If we could still send, loop; else wait.
    if (done_count_ == batch.size()) break;
    const bool can_send = open_dump_ == SIZE_MAX && next < batch.size() && reserved_ == 0;
    if (can_send) continue;
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - last_progress).count();
    const int left = opts_.timeout_ms - static_cast<int>(waited);
    if (left <= 0) {
      failure = Status::Errno(ETIMEDOUT, "recvmmsg",
                              "no reply from the kernel within " +
                                  std::to_string(opts_.timeout_ms) + " ms");
      break;
    }
    pollfd p{fd_, POLLIN, 0};
    int r = poll(&p, 1, left);
    if (r < 0 && errno != EINTR) { failure = Status::Errno(errno, "poll"); break; }
  }
  if (!failure.ok()) {
    for (Exchange& x : batch) {
      if (x.done) continue;
      x.done = true;
      x.error = failure.err;
      x.ext_message = failure.message;
    }
  }
  inflight_.clear();
  return failure;
}

}  // namespace nl
