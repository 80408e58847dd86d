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
// the skb truesize of an ack or error, plus a data reply for gets, plus an
// echo of the request for families (ipset) that echo it in their own error
// messages. (A dump's parts are sent only while the buffer has room.)
uint32_t ReplyCost(RequestKind kind, size_t request_size) {
  return static_cast<uint32_t>(1024 + (kind == RequestKind::kGet ? 8192 : 0) + request_size);
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

ExchangeBatch::ExchangeBatch(std::vector<Exchange>& xs) : xs_(xs) {}

RequestKind ExchangeBatch::Encode(size_t i, Bytes& out) {
  const Exchange& x = xs_[i];
  out.insert(out.end(), x.request.begin(), x.request.end());
  return x.dump ? RequestKind::kDump : x.expects_data ? RequestKind::kGet : RequestKind::kPlain;
}

void ExchangeBatch::OnData(size_t i, const Message& m) {
  xs_[i].replies.emplace_back(m.payload - NLMSG_HDRLEN, m.payload + m.payload_len);
}

void ExchangeBatch::OnDone(size_t i, const Outcome& o) {
  Exchange& x = xs_[i];
  x.done = true;
  x.error = o.error;
  x.ext_message = o.message;
  x.ext_offset = o.offset;
  x.dump_retries = o.dump_retries;
  if (o.error && o.echo) x.error_echo.assign(o.echo, o.echo + o.echo_len);
}

Status NetlinkSocket::Transact(std::vector<Exchange>& batch) {
  ExchangeBatch b(batch);
  return Transact(b);
}

size_t NetlinkSocket::IndexOf(uint32_t seq) const {
  if (restarted_ && seq == restart_seq_) return open_dump_;
  const uint32_t rel = seq - base_seq_;  // wraps around with the counter
  if (rel < next_ && rel >= done_) return rel;
  return SIZE_MAX;
}

Status NetlinkSocket::SendNext(Batch& batch, bool* sent) {
  *sent = false;
  // Half the receive buffer is our budget for unread answers; the kernel
  // drops (ENOBUFS) past the whole of it. A transaction goes whole.
  const size_t budget = opts_.test_ignore_budget || transaction_ ? SIZE_MAX / 2 : static_cast<size_t>(rcvbuf_) / 2;
  const size_t max_send = transaction_ ? SIZE_MAX / 2
                          : static_cast<size_t>(sndbuf_) > 4096 ? static_cast<size_t>(sndbuf_) - 1024 : 4096;
  const size_t first = next_;
  size_t last_at = 0;  // offset of the last message in tx_
  size_t prev_at = 0;  // and of the one before it
  RequestKind last_kind = RequestKind::kPlain;
  tx_.clear();
  while (next_ < count_) {
    const size_t at = tx_.size();
    const RequestKind kind = batch.Encode(next_, tx_);
    const size_t len = tx_.size() - at;
    if (len < NLMSG_HDRLEN) {
      tx_.resize(at);
      return Status::Errno(EINVAL, "netlink", "request " + std::to_string(next_) + " is shorter than a header");
    }
    tx_.resize(at + Align4(len), 0);
    const uint32_t cost = ReplyCost(kind, len);
    // Whatever does not fit waits for the next sendmsg (and is encoded
    // again then). The first request always goes once nothing is in flight.
    const bool full = tx_.size() > max_send || reserved_ + cost > budget;
    if (full && (next_ > first || reserved_ > 0)) {
      tx_.resize(at);
      break;
    }
    nlmsghdr h;
    std::memcpy(&h, tx_.data() + at, sizeof h);
    h.nlmsg_len = static_cast<uint32_t>(len);
    h.nlmsg_flags |= NLM_F_REQUEST;
    // Dumps and gets are answered with data anyway; a plain request asks
    // for an ack only when it is the last of its sendmsg (set below).
    if (kind != RequestKind::kPlain) h.nlmsg_flags |= NLM_F_ACK;
    if (kind == RequestKind::kDump) h.nlmsg_flags |= NLM_F_DUMP;
    h.nlmsg_seq = base_seq_ + static_cast<uint32_t>(next_);
    h.nlmsg_pid = port_id_;
    std::memcpy(tx_.data() + at, &h, sizeof h);
    in_flight_cost_.push_back(cost);
    reserved_ += cost;
    prev_at = last_at;
    last_at = at;
    last_kind = kind;
    next_++;
    if (kind == RequestKind::kDump) {
      // One dump per socket at a time: nothing follows it until it is done.
      open_dump_ = next_ - 1;
      dump_interrupted_ = false;
      dump_retries_ = 0;
      restarted_ = false;
      dump_message_.assign(tx_.begin() + at, tx_.begin() + at + len);
      break;
    }
  }
  if (next_ == first) return Status::Ok();
  if (transaction_ && !FitSendBuffer(tx_.size())) {
    // Nothing went out: take the requests back, so they end as not sent.
    while (next_ > first) {
      reserved_ -= std::min<size_t>(reserved_, in_flight_cost_.back());
      in_flight_cost_.pop_back();
      next_--;
    }
    return Status::Errno(EMSGSIZE, "sendmsg",
                         "a transaction of " + std::to_string(tx_.size()) +
                             " bytes does not fit the socket's send buffer (" + std::to_string(sndbuf_) +
                             " bytes); split it");
  }
  // The last change of a transaction asks for the ack (END is never acked
  // by older kernels); otherwise the last plain request does.
  const size_t ack_at = transaction_ ? prev_at : last_at;
  if (transaction_ || last_kind == RequestKind::kPlain) {
    nlmsghdr h;
    std::memcpy(&h, tx_.data() + ack_at, sizeof h);
    h.nlmsg_flags |= NLM_F_ACK;
    std::memcpy(tx_.data() + ack_at, &h, sizeof h);
  }
  Status st = SendTx(next_ - first);
  *sent = st.ok();
  return st;
}

Status NetlinkSocket::SendTx(size_t messages) {
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  iovec iov{tx_.data(), tx_.size()};
  msghdr msg{};
  msg.msg_name = &kernel;
  msg.msg_namelen = sizeof kernel;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  for (;;) {
    ssize_t n = sendmsg(fd_, &msg, 0);
    counters_.sendmsg_calls++;
    if (n >= 0) break;
    if (errno == EINTR) continue;
    return Status::Errno(errno, "sendmsg", std::to_string(messages) + " messages");
  }
  counters_.messages_sent += messages;
  return Status::Ok();
}

bool NetlinkSocket::FitSendBuffer(size_t bytes) {
  // The kernel takes a datagram of up to its send buffer less 32 bytes.
  const size_t need = bytes + 64;
  if (need <= static_cast<size_t>(sndbuf_)) return true;
  if (need > INT_MAX / 2) return false;
  const int want = static_cast<int>(need);
  if (setsockopt(fd_, SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof want) < 0)
    setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &want, sizeof want);
  sndbuf_ = GetIntOpt(fd_, SOL_SOCKET, SO_SNDBUF);
  return need <= static_cast<size_t>(sndbuf_);
}

void NetlinkSocket::CancelTransaction(Batch& batch) {
  Outcome o;
  o.error = ECANCELED;
  o.message = "not applied: the kernel refused the transaction as a whole";
  while (done_ < next_) Finish(batch, o);
}

Status NetlinkSocket::Resend(const Bytes& message, uint32_t seq) {
  tx_ = message;
  nlmsghdr h;
  std::memcpy(&h, tx_.data(), sizeof h);
  h.nlmsg_seq = seq;
  std::memcpy(tx_.data(), &h, sizeof h);
  return SendTx(1);
}

void NetlinkSocket::Finish(Batch& batch, const Outcome& o) {
  const size_t i = done_++;
  reserved_ -= std::min<size_t>(reserved_, in_flight_cost_.front());
  in_flight_cost_.pop_front();
  if (open_dump_ == i) open_dump_ = SIZE_MAX;
  batch.OnDone(i, o);
}

void NetlinkSocket::SettleBefore(Batch& batch, size_t index) {
  static const Outcome kSuccess;
  while (done_ < index) Finish(batch, kSuccess);
}

void NetlinkSocket::Dispatch(Batch& batch, const Message& m) {
  counters_.messages_received++;
  // Sequence and port checks: anything not addressed to us, or answering a
  // request we are not waiting for, is ignored rather than misattributed.
  if (m.hdr.nlmsg_pid != port_id_ && m.hdr.nlmsg_pid != 0) return;
  const size_t index = IndexOf(m.hdr.nlmsg_seq);
  if (index == SIZE_MAX) return;
  // Anything about this request means the kernel is done with every
  // earlier one: those that did not fail succeeded.
  SettleBefore(batch, index);

  if (m.hdr.nlmsg_type == NLMSG_ERROR) {
    ErrorReply e;
    std::string perr;
    Outcome o;
    if (!ParseError(m, e, perr)) {
      o.error = EBADMSG;
      o.message = perr;
    } else {
      o.error = e.error;
      o.message = std::move(e.message);
      o.offset = e.offset;
      o.echo = e.echo;
      o.echo_len = e.echo_len;
    }
    if (index == open_dump_) o.dump_retries = dump_retries_;
    // For a dump, an ack only follows an error; a plain request is finished.
    Finish(batch, o);
    if (transaction_ && index == 0 && o.error) CancelTransaction(batch);
    static const Outcome kEnd;
    if (transaction_ && index + 2 == count_) Finish(batch, kEnd);
    return;
  }
  if (index == open_dump_ && (m.hdr.nlmsg_flags & NLM_F_DUMP_INTR)) dump_interrupted_ = true;
  if (m.hdr.nlmsg_type == NLMSG_DONE) {
    int err = 0;
    if (m.payload_len >= sizeof(int)) std::memcpy(&err, m.payload, sizeof err);
    const bool dump = index == open_dump_;
    if (dump && err == 0 && dump_interrupted_ && dump_retries_ < opts_.max_dump_retries) {
      // The table changed while it was being read: read it again.
      dump_retries_++;
      counters_.dumps_restarted++;
      dump_interrupted_ = false;
      batch.OnRestart(index);
      restart_pending_ = true;
      return;
    }
    Outcome o;
    if (!ErrnoOf(err, o.error)) {
      o.error = EBADMSG;
      o.message = "NLMSG_DONE with errno INT_MIN";
    }
    if (dump) {
      o.dump_retries = dump_retries_;
      if (o.error == 0 && dump_interrupted_) {
        o.error = EINTR;
        o.message = "dump interrupted " + std::to_string(dump_retries_) + " times by concurrent changes";
      }
    }
    Finish(batch, o);
    return;
  }
  if (m.hdr.nlmsg_type < NLMSG_MIN_TYPE) return;  // NOOP / OVERRUN
  batch.OnData(index, m);
}

Status NetlinkSocket::Receive(Batch& batch, bool* progressed) {
  mmsghdr msgs[kSlots];
  iovec iov[kSlots];
  sockaddr_nl from[kSlots];
  std::vector<Message> parts;
  // ENOBUFS is reported before the answers that did fit in the buffer:
  // those are still queued, and are read before the overflow is returned,
  // so that only the requests whose answers were dropped are left unknown.
  Status overflow;
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
    if (drop_replies_) continue;
    *progressed = true;
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
    if (static_cast<size_t>(n) < kSlots && overflow.ok()) return Status::Ok();
  }
}

Status NetlinkSocket::Transact(Batch& batch) {
  count_ = batch.size();
  transaction_ = batch.IsTransaction();
  next_ = done_ = 0;
  base_seq_ = next_seq_;
  next_seq_ += static_cast<uint32_t>(count_) + 1;
  in_flight_cost_.clear();
  reserved_ = 0;
  open_dump_ = SIZE_MAX;
  restart_pending_ = restarted_ = false;
  // The timeout counts time without progress. The clock is read only when
  // the loop is about to wait: reading it after every send and receive
  // cost two system calls per dump where there is no vDSO (the sandbox).
  bool waiting = false;
  std::chrono::steady_clock::time_point wait_started;

  Status failure;
  if (transaction_ && count_ < 3)
    failure = Status::Errno(EINVAL, "netlink", "a transaction needs a change between its BEGIN and END");
  while (failure.ok() && done_ < count_) {
    if (restart_pending_) {
      // Send an interrupted dump again, under a fresh sequence number.
      restart_pending_ = false;
      restart_seq_ = next_seq_++;
      restarted_ = true;
      Status st = Resend(dump_message_, restart_seq_);
      if (!st.ok()) { failure = st; break; }
    }
    // Send as much as the budget allows, unless a dump is in flight.
    if (open_dump_ == SIZE_MAX && next_ < count_) {
      bool sent = false;
      Status st = SendNext(batch, &sent);
      if (!st.ok()) { failure = st; break; }
      if (sent) waiting = false;
    }

    bool progressed = false;
    Status st = Receive(batch, &progressed);
    if (!st.ok()) { failure = st; break; }
    if (progressed) {
      waiting = false;
      continue;
    }
    // Nothing to read yet. If we could still send, loop; else wait.
    if (done_ == count_) break;
    if (restart_pending_) continue;
    const bool can_send = open_dump_ == SIZE_MAX && next_ < count_ && reserved_ == 0;
    if (can_send) continue;
    const auto now = std::chrono::steady_clock::now();
    if (!waiting) {
      waiting = true;
      wait_started = now;
    }
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - wait_started).count();
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
    // Whatever was not answered ends with the conversation's failure: a
    // request that went out may or may not have been applied; one that did
    // not go out was not. The caller replaces the socket.
    Outcome lost;
    lost.error = failure.err;
    lost.message = failure.message;
    lost.where = failure.where.c_str();
    Outcome unsent = lost;
    unsent.sent = false;
    unsent.message = "not sent, so not applied: the conversation broke first (" + failure.message + ")";
    while (done_ < count_) {
      if (done_ >= next_) {
        // Never sent: account as if in flight, so Finish stays in order.
        in_flight_cost_.push_back(0);
        next_++;
        Finish(batch, unsent);
      } else {
        Finish(batch, lost);
      }
    }
  }
  in_flight_cost_.clear();
  tx_.clear();
  if (tx_.capacity() > (8u << 20)) Bytes().swap(tx_);
  return failure;
}

}  // namespace nl
