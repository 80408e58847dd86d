// One nf_tables transaction: NFNL_MSG_BATCH_BEGIN, the changes, END, sent
// in one datagram (see "Transactions" in netlink/socket.h), applied by the
// kernel all or nothing. Built whole on the JavaScript thread (so a bad
// change throws before anything is sent); each change becomes one message,
// except element lists, which are split across as many messages as their
// size needs (a nested attribute holds at most 64 KiB). Every message
// remembers the change it came from, so a refusal names the change, the
// element and the attribute.
#pragma once

#include <string>
#include <vector>

#include "../netlink/socket.h"
#include "js_bridge.h"

namespace nft {

// What the kernel said about one message of the transaction.
struct Failure {
  size_t change = 0;   // index in the caller's list of changes
  long element = -1;   // for element lists: the element's index in the change
  int error = 0;
  std::string message; // the kernel's extended-ack text
  std::string path;    // the attribute the kernel pointed at ("expressions[2](payload)")
};

class Transaction : public nl::Batch {
 public:
  // `genid`: the generation the changes were computed against; the kernel
  // refuses the whole transaction (ERESTART) if the ruleset moved since.
  Transaction(const std::vector<Request>& changes, bool with_genid, uint32_t genid);

  size_t size() const override { return msgs_.size(); }
  nl::RequestKind Encode(size_t i, nl::Bytes& out) override;
  void OnData(size_t, const nl::Message&) override {}
  void OnDone(size_t i, const nl::Outcome& o) override;
  bool IsTransaction() const override { return true; }

  // The messages as sent (seq and port id aside): BEGIN, changes, END.
  const std::vector<nl::Bytes>& messages() const { return msgs_; }
  // Every message the kernel refused, in order.
  const std::vector<Failure>& failures() const { return failures_; }
  // Set when the kernel refused the transaction as a whole (BEGIN's error:
  // a stale generation, a failed commit), or it never got an answer.
  const nl::Outcome* whole() const { return whole_set_ ? &whole_ : nullptr; }

 private:
  struct Origin {
    size_t change;
    long first_element;  // -1 unless the message carries a slice of an element list
  };
  void Add(const Request& r, size_t change);

  std::vector<nl::Bytes> msgs_;
  std::vector<Origin> origins_;
  std::vector<Failure> failures_;
  nl::Outcome whole_;
  bool whole_set_ = false;
};

}  // namespace nft
