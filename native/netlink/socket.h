// The netlink socket core shared by every family (generic netlink for IPVS,
// nfnetlink for ipset, rtnetlink for links and addresses).
//
// A NetlinkSocket is used by one thread at a time (its owner serializes
// calls); all calls block, so they must run off the JavaScript thread.
// Transact() pipelines a whole batch: requests are packed into as few
// sendmsg calls as the socket buffers allow, acks are drained with recvmmsg
// as they arrive, and each request gets its own result, matched by sequence
// number. Dumps are collected whole and retried when the kernel marks them
// interrupted (NLM_F_DUMP_INTR).
//
// Only the last plain request of each sendmsg asks for an ack. The kernel
// runs the messages of one sendmsg in order, in the sender's context, and
// answers a failure whether or not an ack was asked for; so once a later
// request is answered, every earlier one without an error has succeeded.
// A 100,000-request batch then costs the kernel ~100 acks, not 100,000
// (each an skb to allocate, queue and copy out), and us as many fewer reads.
//
// Requests are encoded by the caller just before they are sent, into one
// buffer reused for every sendmsg, and answers are handed back as they
// arrive: memory stays proportional to what is in flight, never to the
// batch. (Touching fresh memory is what a large batch otherwise spends
// most of its time on.)
//
// Transactions (nfnetlink batches: NFNL_MSG_BATCH_BEGIN, the changes,
// NFNL_MSG_BATCH_END, as nf_tables takes its changes) differ in three ways.
// The kernel applies BEGIN..END only when they arrive in one datagram, so a
// transaction is never split: the send buffer grows to fit it (as nft
// does), and one that cannot fit fails with EMSGSIZE before anything is
// sent. The kernel answers BEGIN and END only with an error (kernels before
// 6.10 never ack them), so the ack is asked of the last change instead: its
// answer ends the transaction, and END is finished with it. And an error on
// BEGIN (a stale generation id, a commit that failed) is about the whole
// transaction: nothing of it was applied, and every request not yet answered
// ends with ECANCELED (acks the kernel still sends for them are ignored).
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "attribute.h"
#include "message.h"
#include "status.h"

namespace nl {

enum class RequestKind : uint8_t {
  kPlain,  // answered only by an ack or an error
  kGet,    // answered by a data message, then an ack
  kDump,   // NLM_F_DUMP: data messages until NLMSG_DONE
};

// How one request ended.
struct Outcome {
  int error = 0;             // positive errno from the kernel, 0 on success
  std::string message;       // extended-ack text, or why the conversation broke
  int32_t offset = -1;       // extended-ack attribute offset
  const uint8_t* echo = nullptr;  // the echoed request in an error (valid during OnDone only)
  size_t echo_len = 0;
  int dump_retries = 0;      // how often an interrupted dump was read again
  // Set when the conversation broke (timeout, ENOBUFS, a failed system
  // call) before this request was answered: `where` names the step and
  // `message` is ours, not the kernel's. `sent` says whether the request
  // went out (its fate unknown) or not (it was not applied).
  const char* where = nullptr;
  bool sent = true;
};

// The caller's side of a batch. Transact asks for each request when it is
// about to send it, and reports what comes back as it arrives. Requests
// are sent, and completed, in index order.
class Batch {
 public:
  virtual ~Batch() = default;
  virtual size_t size() const = 0;
  // Appends request `i` (one complete message) to `out`. The socket sets
  // its flags, sequence number and port id. May be asked again for the
  // same `i` when it did not fit the previous sendmsg.
  virtual RequestKind Encode(size_t i, Bytes& out) = 0;
  // A data message answering request `i` (a get's reply, a dump's part).
  virtual void OnData(size_t i, const Message& m) = 0;
  // The dump of request `i` is read again from the start: forget what
  // OnData delivered for it.
  virtual void OnRestart(size_t i) {}
  // Request `i` is finished. Called exactly once per request.
  virtual void OnDone(size_t i, const Outcome& o) = 0;
  // True when the batch is one transaction (see above): request 0 is
  // NFNL_MSG_BATCH_BEGIN, the last is NFNL_MSG_BATCH_END, every one between
  // is a plain change, and there is at least one.
  virtual bool IsTransaction() const { return false; }
};

// One request and everything the kernel said about it: the whole batch in
// memory, for small batches (family lookups, ipset commands, links).
struct Exchange {
  Bytes request;             // a complete message; seq and port id are set on send
  bool dump = false;         // NLM_F_DUMP request: collect until NLMSG_DONE
  bool expects_data = false; // a "get" that answers with a data message

  // Results.
  bool done = false;
  int error = 0;             // positive errno from the kernel, 0 on success
  std::string ext_message;   // extended-ack text
  int32_t ext_offset = -1;   // extended-ack attribute offset
  Bytes error_echo;          // the echoed request in an error (if not capped)
  std::vector<Bytes> replies;  // data messages, in arrival order
  int dump_retries = 0;      // how often an interrupted dump was restarted
};

// A batch held as Exchanges, for callers that build it whole.
class ExchangeBatch : public Batch {
 public:
  explicit ExchangeBatch(std::vector<Exchange>& xs);
  size_t size() const override { return xs_.size(); }
  RequestKind Encode(size_t i, Bytes& out) override;
  void OnData(size_t i, const Message& m) override;
  void OnRestart(size_t i) override { xs_[i].replies.clear(); }
  void OnDone(size_t i, const Outcome& o) override;

 private:
  std::vector<Exchange>& xs_;
};

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

  SocketCounters& operator+=(const SocketCounters& o) {
    sendmsg_calls += o.sendmsg_calls;
    recv_calls += o.recv_calls;
    messages_sent += o.messages_sent;
    messages_received += o.messages_received;
    dumps_restarted += o.dumps_restarted;
    return *this;
  }
};

class NetlinkSocket {
 public:
  static Status Open(const SocketOptions& opts, std::unique_ptr<NetlinkSocket>& out);
  ~NetlinkSocket();
  NetlinkSocket(const NetlinkSocket&) = delete;
  NetlinkSocket& operator=(const NetlinkSocket&) = delete;

  // Sends every request of the batch and reports each one's outcome. A
  // non-ok Status means the conversation broke (timeout, ENOBUFS, socket
  // error): requests that were answered keep their outcome, every other one
  // ends with that errno, and the socket should be replaced.
  Status Transact(Batch& batch);
  // The same for a batch held as Exchanges.
  Status Transact(std::vector<Exchange>& batch);

  // Fault injection for tests: the socket reads and discards every reply,
  // as if the kernel never answered, so timeouts can be shown honestly.
  void set_drop_replies(bool v) { drop_replies_ = v; }

  uint32_t port_id() const { return port_id_; }
  int fd() const { return fd_; }
  const SocketCounters& counters() const { return counters_; }
  int rcvbuf() const { return rcvbuf_; }
  int sndbuf() const { return sndbuf_; }

 private:
  NetlinkSocket(int fd, const SocketOptions& opts);
  Status Configure();
  // Encodes and sends the next requests that fit; false when none did.
  Status SendNext(Batch& batch, bool* sent);
  Status Resend(const Bytes& message, uint32_t seq);
  // Raises the send buffer so one datagram of `bytes` fits (transactions).
  bool FitSendBuffer(size_t bytes);
  // Ends a transaction whose BEGIN the kernel refused: the rest was not applied.
  void CancelTransaction(Batch& batch);
  // One sendmsg of tx_, holding `messages` messages.
  Status SendTx(size_t messages);
  Status Receive(Batch& batch, bool* progressed);
  void Dispatch(Batch& batch, const Message& m);
  // Finishes request `done_` (the oldest in flight).
  void Finish(Batch& batch, const Outcome& o);
  // Every request before `index` without an answer succeeded.
  void SettleBefore(Batch& batch, size_t index);
  // The request a sequence number belongs to, or SIZE_MAX.
  size_t IndexOf(uint32_t seq) const;

  int fd_ = -1;
  SocketOptions opts_;
  uint32_t port_id_ = 0;
  uint32_t next_seq_ = 1;
  bool drop_replies_ = false;
  int rcvbuf_ = 0;
  int sndbuf_ = 0;
  SocketCounters counters_;

  // recvmmsg buffers: many slots so one call drains many answers.
  static constexpr size_t kSlots = 64;
  static constexpr size_t kSlotSize = 64 * 1024;
  std::unique_ptr<uint8_t[]> rx_;
  // The messages of one sendmsg, back to back; reused.
  Bytes tx_;

  // Per-Transact state. Requests [done_, next_) are in flight; request i
  // went out with sequence number base_seq_ + i (an interrupted dump is
  // sent again under restart_seq_). in_flight_cost_ holds, oldest first,
  // the receive-buffer space each one's answer may take.
  size_t count_ = 0;
  bool transaction_ = false;
  size_t next_ = 0;
  size_t done_ = 0;
  uint32_t base_seq_ = 0;
  std::deque<uint32_t> in_flight_cost_;
  size_t reserved_ = 0;
  // The dump in flight (one per socket at a time), if any.
  size_t open_dump_ = SIZE_MAX;
  bool dump_interrupted_ = false;
  int dump_retries_ = 0;
  bool restart_pending_ = false;
  uint32_t restart_seq_ = 0;
  bool restarted_ = false;  // the open dump runs under restart_seq_
  Bytes dump_message_;      // its request, to send again
};

}  // namespace nl
