// IPVS batches as the socket core runs them (nl::Batch): requests encoded
// just before they are sent, replies decoded straight into reply records
// as they arrive, and only failures kept per request. Nothing here grows
// with the batch except the reply records themselves.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "../addon/channel.h"
#include "../netlink/socket.h"
#include "records.h"
#include "types.h"

namespace ipvs {

// A request that failed, and why. `index` is its result index. `where` is
// set when the conversation broke rather than the kernel refusing: it names
// the step, and `message` is ours.
struct Failure {
  size_t index;
  int error;
  std::string message;
  std::string where;
};

class RecordBatch : public nl::Batch {
 public:
  // Replies are written to `out`; requests 0..n-1 of this batch are
  // reported as results first..first+n-1.
  explicit RecordBatch(rec::ReplyWriter& out, uint32_t first_result = 0)
      : out_(out), first_result_(first_result) {}

  void OnData(size_t i, const nl::Message& m) final;
  void OnRestart(size_t i) final;
  void OnDone(size_t i, const nl::Outcome& o) final;
  size_t size() const final { return subset_ ? subset_->size() : Count(); }
  nl::RequestKind Encode(size_t i, nl::Bytes& out) final { return EncodeRequest(Map(i), family_, out); }

  // Sends the batch; requests the kernel refused with ENOENT because IPVS
  // came back under a new family id (a module reload) are sent again.
  nl::Status Run(addon::Channel& ch, std::atomic<uint16_t>& family_id);

  std::vector<Failure>& failures() { return failures_; }

 protected:
  virtual size_t Count() const = 0;
  virtual nl::RequestKind EncodeRequest(size_t i, uint16_t family, nl::Bytes& out) = 0;
  // The family a destination without IPVS_DEST_ATTR_ADDR_FAMILY is in.
  virtual uint16_t DefaultAf(size_t i) const = 0;
  // A reply decoded for request i; the default writes it as records.
  virtual void OnReply(size_t i, const Reply& r) { out_.Add(ResultIndex(i), r, DefaultAf(i)); }
  // Request i's records were dropped: its dump starts over, or it failed
  // (and may be sent again). Drop whatever was kept from them.
  virtual void OnDropped(size_t i) {}
  // Request i is finished and its records are final: a batch that streams
  // its records may hand them over now.
  virtual void AfterDone(size_t i) {}
  uint32_t ResultIndex(size_t i) const { return first_result_ + static_cast<uint32_t>(i); }

  rec::ReplyWriter& out_;

 private:
  size_t Map(size_t i) const { return subset_ ? (*subset_)[i] : i; }

  uint32_t first_result_;
  uint16_t family_ = 0;
  const std::vector<size_t>* subset_ = nullptr;
  std::vector<Failure> failures_;
  size_t sent_ = 0;  // requests that went out (answered or not)
  Reply reply_;  // reused for every message
  // The request whose replies are being written, and how many records
  // there were before its first one (an interrupted dump starts over).
  size_t writing_ = SIZE_MAX;
  size_t mark_ = 0;
  // A reply that could not be decoded fails its request.
  size_t malformed_ = SIZE_MAX;
  std::string malformed_why_;
};

// The request kind the socket needs for an IPVS request.
nl::RequestKind KindOf(const Request& r);

}  // namespace ipvs
