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
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "attribute.h"
#include "message.h"
#include "status.h"

namespace nl {

// One request and everything the kernel said about it.
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

struct SocketOptions {
  int protocol = 0;              // NETLINK_GENERIC, NETLINK_NETFILTER, NETLINK_ROUTE
  std::string netns;             // path of a network namespace, empty for ours
  int timeout_ms = 5000;         // how long to wait without any progress
  int rcvbuf = 8 << 20;          // wanted receive buffer (raised with FORCE if allowed)
  int sndbuf = 4 << 20;          // wanted send buffer
  int max_dump_retries = 10;     // restarts of an interrupted dump
  int test_deaf_sockets = 0;     // tests only: this many sockets drop every reply once opened
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

  // Sends every exchange and fills in its result. A non-ok Status means the
  // conversation broke (timeout, ENOBUFS, socket error): exchanges that were
  // answered keep their results, the others are marked with that errno, and
  // the socket should be replaced.
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
  Status SendChunk(std::vector<Exchange>& batch, size_t from, size_t to);
  Status Receive(std::vector<Exchange>& batch, bool* progressed);
  void Dispatch(std::vector<Exchange>& batch, const Message& m);
  void Complete(std::vector<Exchange>& batch, size_t index);

  int fd_ = -1;
  SocketOptions opts_;
  uint32_t port_id_ = 0;
  uint32_t next_seq_ = 1;
  bool drop_replies_ = false;
  int rcvbuf_ = 0;
  int sndbuf_ = 0;
  SocketCounters counters_;

  // recvmmsg buffers: many slots so one call drains many acks.
  static constexpr size_t kSlots = 64;
  static constexpr size_t kSlotSize = 64 * 1024;
  std::unique_ptr<uint8_t[]> rx_;

  // Per-Transact state: which request each in-flight sequence number
  // belongs to, the receive-buffer space their answers may take, and the
  // dump (if any) that must finish before anything else is sent.
  std::unordered_map<uint32_t, size_t> inflight_;
  std::vector<bool> interrupted_;
  size_t reserved_ = 0;
  size_t done_count_ = 0;
  size_t open_dump_ = SIZE_MAX;
  size_t restart_from_ = SIZE_MAX;
};

}  // namespace nl
