// A subscription to a netlink family's multicast groups (conntrack events,
// nf_tables' ruleset changes), read on a thread of its own so the
// JavaScript thread never waits on the socket. A subclass says what one
// message becomes in its queue; the owner is woken once when the queue
// stops being empty and takes it whole.
//
// A slow consumer never makes the queue grow without bound: past
// `max_queued` items the thread stops reading, the kernel's socket buffer
// fills, and the kernel drops messages. It says so (ENOBUFS) on the next
// read, which becomes an overrun in the queue at the place the messages
// went missing: a gap is always announced, never silent.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "socket.h"

namespace nl {

class MulticastReader {
 public:
  using Wake = std::function<void()>;
  virtual ~MulticastReader();
  MulticastReader(const MulticastReader&) = delete;
  MulticastReader& operator=(const MulticastReader&) = delete;

  // Stops the thread and closes the socket. Idempotent; a subclass's
  // destructor calls it before its queue goes.
  void Stop();

 protected:
  // `what` names the stream in errors ("conntrack events").
  MulticastReader(size_t max_queued, Wake wake, std::string what);

  // Opens the socket (in the options' namespace), joins `groups` and starts
  // reading. `no_group_hint` is added to a refused join's error.
  Status Start(const SocketOptions& socket, const std::vector<int>& groups, const std::string& no_group_hint);

  // On the reader thread, with mu_ held: one message from the kernel into
  // the queue; false (and `why`) ends the stream with EBADMSG.
  virtual bool Queue(const Message& m, std::string& why) = 0;
  // On the reader thread, with mu_ held: the kernel dropped messages here.
  virtual void QueueOverrun() = 0;
  // With mu_ held: how many items wait.
  virtual size_t Queued() const = 0;

  // For the subclass's take, with mu_ held, after moving its queue out:
  // the stream's error (set once the socket failed, and kept), and room
  // for the reader again.
  Status Taken();

  std::mutex mu_;  // guards the subclass's queue, error_ and woken_

 private:
  void Run();
  // Reads what the socket holds; false when the stream must end.
  bool Drain(uint8_t* buf, size_t size);
  // With mu_ held: whether the owner is to be woken (once until it takes).
  bool ShouldWake();
  void Fail(Status st);

  size_t max_queued_;
  Wake wake_;
  std::string what_;
  std::unique_ptr<NetlinkSocket> sock_;
  int stop_fd_ = -1;  // eventfd: written to stop the reader
  std::thread thread_;
  std::condition_variable room_;
  Status error_;
  bool woken_ = false;
  std::atomic<bool> stopping_{false};
};

}  // namespace nl
