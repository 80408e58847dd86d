// A bulk add/del of many elements (Ipset.addMany / delMany): pipelined, and
// nothing lost when the kernel refuses an element.
//
// The kernel works through the elements of one ADT message in order and
// stops at the first one it refuses, answering with that element's LINENO;
// the ones before it are applied, the ones after it are never looked at.
// So a BulkLoad sends many messages per sendmsg (windows bounded by the
// socket's receive budget, since a refusal echoes the whole message back),
// and after each window resends the rest of every refused message without
// its refused element: every entry is attempted exactly once. It stops
// sending only when the answer means nothing more can go in (the set is
// full, the set is gone, or an error every entry would hit); the entries it
// then never had the kernel attempt are reported as skipped.
//
// The class only plans and books: the caller moves each window through a
// socket (jobs.cc) or, in unit tests, through scripted kernel answers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../netlink/socket.h"
#include "types.h"

namespace ipset {

// Bulk message size. The kernel answers a refused element with an error
// that echoes the whole request, and that answer must fit one 64 KiB
// receive slot (and the ADT nest length is a u16), so stay well below it.
constexpr size_t kMaxBulkBytes = 60 * 1024;
// Resent remainders shrink towards this size round after round: when
// refusals are dense, each one costs an echo of its message, so smaller
// messages keep a call with thousands of refusals from copying gigabytes.
constexpr size_t kMinResendBytes = 2 * 1024;

// What became of one entry.
enum class Fate : uint8_t {
  kPending,      // not attempted yet
  kApplied,      // the kernel took it
  kRefused,      // the kernel refused it (see refusals())
  kSkipped,      // never attempted: sending stopped before the kernel got to it
  kUnconfirmed,  // sent, but the conversation broke before its answer came
};

struct BulkRefusal {
  uint32_t index = 0;  // in the caller's list
  int error = 0;       // positive errno or IPSET_ERR_*
  std::string kernel_message;
};

struct BulkRequest {
  uint8_t cmd = 0;  // IPSET_CMD_ADD / IPSET_CMD_DEL
  std::string name;
  Kind kind = Kind::kHash;
  uint8_t family = NFPROTO_IPV4;
  bool exist = false;
  uint8_t protocol = IPSET_PROTOCOL;
  size_t max_bytes = kMaxBulkBytes;  // first round's message size (tests lower it)
};

class BulkLoad {
 public:
  BulkLoad(BulkRequest request, const std::vector<Entry>& entries);

  // True when nothing is left to send (or sending stopped).
  bool finished() const;

  // The next messages to send, as exchanges: as many as fit `budget` bytes
  // of answers (each refusal may echo its whole message) and one sendmsg
  // (IOV_MAX), at least one. Empty when finished().
  std::vector<nl::Exchange> NextWindow(size_t budget);

  // Books the answers to the window NextWindow() returned. `conversation`
  // is what Transact returned: when it failed, the exchanges it left
  // unanswered are marked broken, and whether each went out.
  void Absorb(const std::vector<nl::Exchange>& window, const nl::Status& conversation);

  // Nothing more can be sent (the socket could not be opened).
  void Abandon(int error, const std::string& message);

  // Marks whatever was never attempted as skipped. Call once, at the end.
  void Finish();

  size_t applied() const { return applied_; }
  size_t messages_sent() const { return messages_sent_; }
  // In the caller's order.
  const std::vector<BulkRefusal>& refusals() const { return refusals_; }
  std::vector<uint32_t> Indices(Fate fate) const;
  // Why sending stopped early (0: it did not).
  int halt_error() const { return halt_error_; }
  const std::string& halt_message() const { return halt_message_; }

  // Whether an element refused with `error` means no later element can go
  // in either (exposed for tests).
  static bool StopsEverything(int error, Kind kind);

 private:
  // One message of the current round: order_[begin, end).
  struct Planned {
    nl::Bytes bytes;
    size_t begin = 0, end = 0;
  };

  void EncodeRound();
  void Halt(int error, const std::string& message);
  void Mark(size_t begin, size_t end, Fate fate);

  BulkRequest req_;
  const std::vector<Entry>& entries_;
  std::vector<Fate> fates_;
  std::vector<uint32_t> pending_;  // ascending: still to attempt, next round
  std::vector<uint32_t> order_;    // this round's entries, ascending
  std::vector<Planned> planned_;   // this round's messages
  size_t cursor_ = 0;              // next planned_ to send
  size_t window_begin_ = 0, window_end_ = 0;
  size_t next_max_bytes_;
  size_t applied_ = 0;
  size_t messages_sent_ = 0;
  std::vector<BulkRefusal> refusals_;
  bool halted_ = false;
  int halt_error_ = 0;
  std::string halt_message_;
};

}  // namespace ipset
