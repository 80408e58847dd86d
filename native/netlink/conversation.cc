#include "conversation.h"

#include <errno.h>
#include <linux/netlink.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace nl {

namespace {

// The answer to one request may take this much of the receive buffer:
// the skb truesize of an ack or error, plus a data reply for gets, plus an
// echo of the request for families (ipset) that echo it in their own error
// messages. (A dump's parts are sent only while the buffer has room.)
uint32_t ReplyCost(RequestKind kind, size_t request_size) {
  return static_cast<uint32_t>(1024 + (kind == RequestKind::kGet ? 8192 : 0) + request_size);
}

}  // namespace

Conversation::Conversation(NetlinkSocket& socket, Batch& batch, Bytes& tx)
    : socket_(socket), batch_(batch), tx_(tx), count_(batch.size()), transaction_(batch.IsTransaction()) {
  base_seq_ = socket_.TakeSequence(count_ + 1);
}

Status Conversation::Run() {
  const int timeout_ms = socket_.options().timeout_ms;
  // The timeout counts time without progress. The clock is read only when
  // the loop is about to wait: reading it after every send and receive
  // cost two system calls per dump where there is no vDSO (the sandbox).
  bool waiting = false;
  std::chrono::steady_clock::time_point wait_started;

  Status failure;
  if (transaction_ && count_ < 3)
    failure = Status::Errno(EINVAL, "netlink", "a transaction needs a change between its BEGIN and END");
  // Once the handle is being closed nothing more is sent; what went out is
  // still read to its end (each keeps its true outcome), then the rest ends
  // as not sent. An interrupted dump is not read again.
  bool closing = false;
  while (failure.ok() && done_ < count_) {
    closing = closing || socket_.close_requested();
    if (closing && (done_ == next_ || restart_pending_)) {
      failure = Status::Errno(EBADF, "close", "the handle was closed while this call was in flight");
      break;
    }
    if (restart_pending_) {
      Status st = ResendDump();
      if (!st.ok()) { failure = st; break; }
    }
    // Send as much as the budget allows, unless a dump is in flight.
    if (!closing && open_dump_ == SIZE_MAX && next_ < count_) {
      bool sent = false;
      Status st = SendNext(&sent);
      if (!st.ok()) { failure = st; break; }
      if (sent) waiting = false;
    }

    bool progressed = false;
    Status st = socket_.Receive(*this, &progressed);
    if (!st.ok()) { failure = st; break; }
    if (progressed) {
      waiting = false;
      continue;
    }
    // Nothing to read yet. If we could still send, loop; else wait.
    if (done_ == count_) break;
    if (restart_pending_) continue;
    const bool can_send = !closing && open_dump_ == SIZE_MAX && next_ < count_ && reserved_ == 0;
    if (can_send) continue;
    const auto now = std::chrono::steady_clock::now();
    if (!waiting) {
      waiting = true;
      wait_started = now;
    }
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - wait_started).count();
    const int left = timeout_ms - static_cast<int>(waited);
    if (left <= 0) {
      failure = Status::Errno(ETIMEDOUT, "recvmmsg",
                              "no reply from the kernel within " + std::to_string(timeout_ms) + " ms");
      break;
    }
    st = socket_.Wait(left);
    if (!st.ok()) { failure = st; break; }
  }
  if (!failure.ok()) FailRemaining(failure);
  return failure;
}

Status Conversation::SendNext(bool* sent) {
  *sent = false;
  // Half the receive buffer is our budget for unread answers; the kernel
  // drops (ENOBUFS) past the whole of it. A transaction goes whole.
  const size_t rcvbuf = static_cast<size_t>(socket_.rcvbuf());
  const size_t sndbuf = static_cast<size_t>(socket_.sndbuf());
  const size_t budget = socket_.options().test_ignore_budget || transaction_ ? SIZE_MAX / 2 : rcvbuf / 2;
  const size_t max_send = transaction_ ? SIZE_MAX / 2 : sndbuf > 4096 ? sndbuf - 1024 : 4096;
  const size_t first = next_;
  size_t last_at = 0;  // offset of the last message in tx_
  size_t prev_at = 0;  // and of the one before it
  RequestKind last_kind = RequestKind::kPlain;
  tx_.clear();
  while (next_ < count_) {
    const size_t at = tx_.size();
    const RequestKind kind = batch_.Encode(next_, tx_);
    const size_t len = tx_.size() - at;
    if (len < NLMSG_HDRLEN) {
      tx_.resize(at);
      const size_t bad = next_;
      TakeBack(first);
      return Status::Errno(EINVAL, "netlink", "request " + std::to_string(bad) + " is shorter than a header");
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
    h.nlmsg_pid = socket_.port_id();
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
  if (transaction_ && !socket_.GrowSendBuffer(tx_.size())) {
    TakeBack(first);
    return Status::Errno(EMSGSIZE, "sendmsg",
                         "a transaction of " + std::to_string(tx_.size()) +
                             " bytes does not fit the socket's send buffer (" + std::to_string(socket_.sndbuf()) +
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
  Status st = socket_.Send(tx_, next_ - first);
  *sent = st.ok();
  if (!st.ok()) TakeBack(first);
  return st;
}

void Conversation::TakeBack(size_t first) {
  while (next_ > first) {
    reserved_ -= std::min<size_t>(reserved_, in_flight_cost_.back());
    in_flight_cost_.pop_back();
    next_--;
  }
  if (open_dump_ != SIZE_MAX && open_dump_ >= first) open_dump_ = SIZE_MAX;
}

Status Conversation::ResendDump() {
  restart_pending_ = false;
  restart_seq_ = socket_.TakeSequence(1);
  restarted_ = true;
  tx_ = dump_message_;
  nlmsghdr h;
  std::memcpy(&h, tx_.data(), sizeof h);
  h.nlmsg_seq = restart_seq_;
  std::memcpy(tx_.data(), &h, sizeof h);
  return socket_.Send(tx_, 1);
}

void Conversation::Finish(const Outcome& o) {
  const size_t i = done_++;
  reserved_ -= std::min<size_t>(reserved_, in_flight_cost_.front());
  in_flight_cost_.pop_front();
  if (open_dump_ == i) open_dump_ = SIZE_MAX;
  batch_.OnDone(i, o);
}

void Conversation::CancelTransaction() {
  Outcome o;
  o.error = ECANCELED;
  o.message = "not applied: the kernel refused the transaction as a whole";
  while (done_ < next_) Finish(o);
}

void Conversation::SettleBefore(size_t index) {
  static const Outcome kSuccess;
  while (done_ < index) Finish(kSuccess);
}

void Conversation::FailRemaining(const Status& failure) {
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
      Finish(unsent);
    } else {
      Finish(lost);
    }
  }
}

}  // namespace nl
