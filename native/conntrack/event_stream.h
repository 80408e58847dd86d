// A subscription to conntrack events (NFNLGRP_CONNTRACK_NEW / _UPDATE /
// _DESTROY) read on a thread of its own, so the JavaScript thread never
// waits on the socket. Decoded, filtered entries queue up as records; the
// owner is woken once when the queue stops being empty and takes it whole.
//
// A slow consumer never makes the queue grow without bound: past
// `max_queued` records the thread stops reading, the kernel's socket
// buffer fills, and the kernel drops events. It says so (ENOBUFS) on the
// next read, which becomes an overrun record in the stream at the place
// the events went missing: a gap is always announced, never silent.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "../netlink/socket.h"
#include "records.h"
#include "types.h"

namespace conntrack {

// The record kind that marks dropped events (beside Event's values).
constexpr uint8_t kOverrunRecord = 4;

struct EventOptions {
  nl::SocketOptions socket;
  uint32_t groups = 0;  // bit (1 << NFNLGRP_CONNTRACK_*) per group
  Filter filter;
  size_t max_queued = 16384;
};

class EventStream {
 public:
  using Wake = std::function<void()>;
  // Opens the socket (in the options' namespace), joins the groups and
  // starts reading. `wake` runs on the reader thread.
  static nl::Status Open(const EventOptions& opts, Wake wake, std::unique_ptr<EventStream>& out);
  ~EventStream();
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  // Everything queued since the last call; `error` is set (and stays set)
  // once the socket failed, after the records read before it.
  void Take(rec::Writer& out, nl::Status& error);
  // Stops the thread and closes the socket. Idempotent.
  void Stop();

 private:
  EventStream(std::unique_ptr<nl::NetlinkSocket> sock, int wake_fd, const EventOptions& opts, Wake wake);
  void Run();
  // Reads what the socket holds; false when the stream must end.
  bool Drain(uint8_t* buf, size_t size);
  void Push(const Entry* e);  // nullptr: an overrun
  void Fail(nl::Status st);

  std::unique_ptr<nl::NetlinkSocket> sock_;
  int stop_fd_;  // eventfd: written to stop the reader
  EventOptions opts_;
  Wake wake_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable room_;
  rec::Writer queue_;
  nl::Status error_;
  bool woken_ = false;
  std::atomic<bool> stopping_{false};
};

}  // namespace conntrack
