// The netlink socket shared by every family (generic netlink for IPVS,
// nfnetlink for ipset, rtnetlink for links and addresses): opening it (in
// another network namespace if asked), its buffers, and the system calls
// that move datagrams. How a batch is sent over it and its answers matched
// to requests is a Conversation's job (conversation.h).
//
// A NetlinkSocket is used by one thread at a time (its owner serializes
// calls); all calls block, so they must run off the JavaScript thread.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attribute.h"
#include "batch.h"
#include "message.h"
#include "receive_slots.h"
#include "status.h"

namespace nl {

struct SocketOptions {
  int protocol = 0;              // NETLINK_GENERIC, NETLINK_NETFILTER, NETLINK_ROUTE
  std::string netns;             // path of a network namespace, empty for ours
  int timeout_ms = 5000;         // how long to wait without any progress
  int rcvbuf = 8 << 20;          // wanted receive buffer (raised with FORCE if allowed)
  int sndbuf = 4 << 20;          // wanted send buffer
  int max_dump_retries = 10;     // restarts of an interrupted dump
  int test_deaf_sockets = 0;     // tests only: this many sockets drop every reply once opened
  bool test_ignore_budget = false;  // tests only: send without regard to the receive buffer (to show ENOBUFS)
};

// Counters for benchmarks and metrics.
struct SocketCounters {
  uint64_t sendmsg_calls = 0;
  uint64_t recv_calls = 0;
  uint64_t messages_sent = 0;
  uint64_t messages_received = 0;
  uint64_t dumps_restarted = 0;  // interrupted dumps read again
};

// The counters as a socket keeps them. A handle's are read on the
// JavaScript thread (its counters(), the proxy's metrics) while a job
// counts on a worker, and the socket may be replaced meanwhile: so they
// live apart from any one socket (LiveCounters of the handle's channel,
// which each of its sockets counts into) and are atomics. One thread
// counts at a time (the socket's user), so a count is a relaxed load and
// store, never a locked instruction.
class LiveCounters {
 public:
  SocketCounters Read() const {
    return {sendmsg_calls.load(std::memory_order_relaxed), recv_calls.load(std::memory_order_relaxed),
            messages_sent.load(std::memory_order_relaxed), messages_received.load(std::memory_order_relaxed),
            dumps_restarted.load(std::memory_order_relaxed)};
  }
  static void Add(std::atomic<uint64_t>& c, uint64_t n) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::atomic<uint64_t> sendmsg_calls{0};
  std::atomic<uint64_t> recv_calls{0};
  std::atomic<uint64_t> messages_sent{0};
  std::atomic<uint64_t> messages_received{0};
  std::atomic<uint64_t> dumps_restarted{0};
};

// Where Receive() hands each message the kernel sent.
class MessageSink {
 public:
  virtual ~MessageSink() = default;
  virtual void OnMessage(const Message& m) = 0;
};

class NetlinkSocket {
 public:
  static Status Open(const SocketOptions& opts, std::unique_ptr<NetlinkSocket>& out);
  ~NetlinkSocket();
  NetlinkSocket(const NetlinkSocket&) = delete;
  NetlinkSocket& operator=(const NetlinkSocket&) = delete;

  // Sends every request of the batch and reports each one's outcome (see
  // Conversation). A non-ok Status means the conversation broke (timeout,
  // ENOBUFS, socket error): requests that were answered keep their
  // outcome, every other one ends with that errno, and the socket should
  // be replaced.
  Status Transact(Batch& batch);
  // The same for a batch held as Exchanges.
  Status Transact(std::vector<Exchange>& batch);

  // One sendmsg of `bytes`, which hold `messages` messages (counted).
  Status Send(const Bytes& bytes, size_t messages);
  // Reads every datagram queued now, without waiting, and hands each
  // message the kernel sent to `sink`. `progressed` says whether anything
  // was read. A reply dropped for want of buffer space (ENOBUFS) is
  // reported after whatever did fit has been handed over.
  Status Receive(MessageSink& sink, bool* progressed);
  // Waits up to `timeout_ms` for something to read.
  Status Wait(int timeout_ms);
  // Raises the send buffer so that one datagram of `bytes` fits; false
  // when it cannot be made that large.
  bool GrowSendBuffer(size_t bytes);
  // `n` consecutive sequence numbers, never handed out again; the first.
  uint32_t TakeSequence(size_t n);
  void CountDumpRestart() { LiveCounters::Add(counters_->dumps_restarted, 1); }
  // Gives back the receive slots and send buffer a big transaction grew
  // (see ReceiveSlots), for a caller that is idle now; returns the bytes
  // given back. Not while a transaction runs (the owner's lock says so).
  size_t ReleaseIdleBuffers();
  // The receive and send buffers' bytes resident now (tests, diagnostics).
  size_t BufferResidentBytes() const { return rx_.ResidentBytes() + tx_.capacity(); }

  // Fault injection for tests: the socket reads and discards every reply,
  // as if the kernel never answered, so timeouts can be shown honestly.
  void set_drop_replies(bool v) { drop_replies_ = v; }
  // A flag another thread sets to have conversations stop sending (the
  // handle is being closed); its owner outlives the socket.
  void set_close_flag(const std::atomic<bool>* flag) { close_flag_ = flag; }
  bool close_requested() const { return close_flag_ != nullptr && close_flag_->load(std::memory_order_relaxed); }

  const SocketOptions& options() const { return opts_; }
  uint32_t port_id() const { return port_id_; }
  int fd() const { return fd_; }
  // Counts into `c` from now on instead of the socket's own cells; `c`
  // outlives the socket, and no other socket counts into it at the same time.
  void count_into(LiveCounters* c) { counters_ = c; }
  SocketCounters counters() const { return counters_->Read(); }
  int rcvbuf() const { return rcvbuf_; }
  int sndbuf() const { return sndbuf_; }

 private:
  NetlinkSocket(int fd, const SocketOptions& opts);
  Status Configure();

  int fd_ = -1;
  SocketOptions opts_;
  uint32_t port_id_ = 0;
  uint32_t next_seq_ = 1;
  bool drop_replies_ = false;
  const std::atomic<bool>* close_flag_ = nullptr;
  int rcvbuf_ = 0;
  int sndbuf_ = 0;
  LiveCounters own_counters_;
  LiveCounters* counters_ = &own_counters_;

  ReceiveSlots rx_;
  std::vector<Message> parts_;  // one datagram's messages; reused
  // The messages of one sendmsg, back to back; reused by every batch.
  Bytes tx_;
};

}  // namespace nl
