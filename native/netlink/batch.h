// What a caller hands the socket core to send: a Batch of requests, each
// asked for when it is about to be sent and told its outcome as its answer
// arrives (so that a 100,000-request batch is never held encoded in
// memory), and Exchanges, the simple form for small batches built whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attribute.h"
#include "message.h"

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
  const char* where = nullptr;  // valid during OnDone only, as echo
  bool sent = true;
};

// The caller's side of a batch. The socket asks for each request when it is
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
  // True when the batch is one nfnetlink transaction (see conversation.h):
  // request 0 is NFNL_MSG_BATCH_BEGIN, the last is NFNL_MSG_BATCH_END,
  // every one between is a plain change, and there is at least one.
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
  // No answer came: the conversation broke first (Outcome::where was set).
  // `sent` then says whether the request went out (its fate unknown) or
  // not (it was not applied).
  bool broken = false;
  bool sent = true;
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

}  // namespace nl
