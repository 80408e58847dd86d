// A subscription to conntrack events (NFNLGRP_CONNTRACK_NEW / _UPDATE /
// _DESTROY), read as nl::MulticastReader reads (its own thread, a bounded
// queue, dropped events announced): decoded, filtered entries queue up as
// records, and an overrun as a record of its own kind.
#pragma once

#include <memory>

#include "../netlink/multicast.h"
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

class EventStream : public nl::MulticastReader {
 public:
  // Opens the socket (in the options' namespace), joins the groups and
  // starts reading. `wake` runs on the reader thread.
  static nl::Status Open(const EventOptions& opts, Wake wake, std::unique_ptr<EventStream>& out);
  ~EventStream() override;

  // Everything queued since the last call; `error` is set (and stays set)
  // once the socket failed, after the records read before it.
  void Take(rec::Writer& out, nl::Status& error);

 private:
  EventStream(const EventOptions& opts, Wake wake);
  bool Queue(const nl::Message& m, std::string& why) override;
  void QueueOverrun() override;
  size_t Queued() const override { return queue_.count(); }

  Filter filter_;
  rec::Writer queue_;
  Entry entry_;  // decoded into, one message at a time
};

}  // namespace conntrack
