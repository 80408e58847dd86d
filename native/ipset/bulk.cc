#include "bulk.h"

#include <errno.h>
#include <limits.h>

#include <algorithm>

#include "codec.h"

namespace ipset {

namespace {

// What a message's answer may take of the receive buffer: the socket
// core's own reckoning (an ack's skb, or an error echoing the message).
size_t AnswerCost(const nl::Bytes& request) { return 1024 + request.size(); }

}  // namespace

BulkLoad::BulkLoad(BulkRequest request, const std::vector<Entry>& entries)
    : req_(std::move(request)), entries_(entries), fates_(entries.size(), Fate::kPending),
      next_max_bytes_(req_.max_bytes) {
  pending_.resize(entries.size());
  for (size_t i = 0; i < entries.size(); i++) pending_[i] = static_cast<uint32_t>(i);
}

bool BulkLoad::StopsEverything(int error, Kind kind) {
  switch (error) {
    // The set changed under us (swapped for another type or family), or
    // our request does not fit this kernel: every entry would hit it.
    case IPSET_ERR_PROTOCOL:
    case IPSET_ERR_FIND_TYPE:
    case IPSET_ERR_INVALID_FAMILY:
    case IPSET_ERR_IPADDR_IPV4:
    case IPSET_ERR_IPADDR_IPV6:
    case IPSET_ERR_TYPE_MISMATCH:
    // Nothing the kernel can allocate or look up any more.
    case ENOMEM:
    case ENOENT:
    case EPERM:
      return true;
    default:
      break;
  }
  // Type-specific codes share numbers across kinds: full means full only
  // for the kind that says so.
  if (kind == Kind::kHash && error == IPSET_ERR_HASH_FULL) return true;
  if (kind == Kind::kList && error == IPSET_ERR_LIST_FULL) return true;
  return false;
}

bool BulkLoad::finished() const {
  return halted_ || (cursor_ == planned_.size() && pending_.empty());
}

void BulkLoad::EncodeRound() {
  order_ = std::move(pending_);
  pending_.clear();
  std::sort(order_.begin(), order_.end());
  planned_.clear();
  cursor_ = 0;
  for (size_t from = 0; from < order_.size();) {
    size_t next = from;
    Planned p;
    p.bytes = EncodeBulkOf(req_.cmd, req_.name, req_.family, entries_, order_, from,
                           next_max_bytes_, req_.protocol, req_.exist, &next);
    p.begin = from;
    p.end = next;
    planned_.push_back(std::move(p));
    from = next;
  }
  next_max_bytes_ = std::max(next_max_bytes_ / 2, kMinResendBytes);
}

std::vector<nl::Exchange> BulkLoad::NextWindow(size_t budget) {
  std::vector<nl::Exchange> window;
  if (halted_) return window;
  if (cursor_ == planned_.size()) {
    if (pending_.empty()) return window;
    EncodeRound();
  }
  window_begin_ = cursor_;
  size_t cost = 0;
  while (cursor_ < planned_.size()) {
    const size_t c = AnswerCost(planned_[cursor_].bytes);
    if (!window.empty() && (cost + c > budget || window.size() >= static_cast<size_t>(IOV_MAX)))
      break;
    nl::Exchange x;
    x.request = std::move(planned_[cursor_].bytes);
    window.push_back(std::move(x));
    cost += c;
    cursor_++;
  }
  window_end_ = cursor_;
  return window;
}

void BulkLoad::Mark(size_t begin, size_t end, Fate fate) {
  for (size_t i = begin; i < end; i++) {
    fates_[order_[i]] = fate;
    if (fate == Fate::kApplied) applied_++;
  }
}

void BulkLoad::Halt(int error, const std::string& message) {
  if (halted_) return;
  halted_ = true;
  halt_error_ = error;
  halt_message_ = message;
}

void BulkLoad::Absorb(const std::vector<nl::Exchange>& window, const nl::Status& conversation) {
  for (size_t j = 0; j < window.size() && window_begin_ + j < window_end_; j++) {
    const nl::Exchange& x = window[j];
    const Planned& p = planned_[window_begin_ + j];
    if (x.sent) messages_sent_++;
    if (x.error == 0) {
      Mark(p.begin, p.end, Fate::kApplied);
      continue;
    }
    if (x.broken) {
      // No answer came. Sent, the kernel may or may not have taken these;
      // not sent (the handle closed first), none was attempted.
      if (x.sent) {
        Mark(p.begin, p.end, Fate::kUnconfirmed);
      } else {
        pending_.insert(pending_.end(), order_.begin() + static_cast<std::ptrdiff_t>(p.begin),
                        order_.begin() + static_cast<std::ptrdiff_t>(p.end));
      }
      Halt(conversation.err, conversation.message);
      continue;
    }
    // The refused element's LINENO (its index + 1) comes back in the echo.
    const uint32_t lineno = EchoedLineno(x.error_echo);
    const auto first = order_.begin() + static_cast<std::ptrdiff_t>(p.begin);
    const auto last = order_.begin() + static_cast<std::ptrdiff_t>(p.end);
    const auto at = lineno ? std::lower_bound(first, last, lineno - 1) : last;
    if (at == last || *at != lineno - 1) {
      // Refused as a whole, before any element was looked at (the set is
      // gone, a malformed request): none of these were attempted.
      pending_.insert(pending_.end(), first, last);
      Halt(x.error, x.ext_message);
      continue;
    }
    const size_t pos = static_cast<size_t>(at - order_.begin());
    Mark(p.begin, pos, Fate::kApplied);
    fates_[*at] = Fate::kRefused;
    refusals_.push_back({*at, x.error, x.ext_message});
    // The kernel never looked at the rest of this message: resend it
    // (unless nothing more can go in, and then it is skipped).
    pending_.insert(pending_.end(), at + 1, last);
    if (StopsEverything(x.error, req_.kind)) Halt(x.error, x.ext_message);
  }
}

void BulkLoad::Abandon(int error, const std::string& message) { Halt(error, message); }

void BulkLoad::Finish() {
  for (Fate& f : fates_)
    if (f == Fate::kPending) f = Fate::kSkipped;
  pending_.clear();
  cursor_ = planned_.size();
  std::sort(refusals_.begin(), refusals_.end(),
            [](const BulkRefusal& a, const BulkRefusal& b) { return a.index < b.index; });
}

std::vector<uint32_t> BulkLoad::Indices(Fate fate) const {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < fates_.size(); i++)
    if (fates_[i] == fate) out.push_back(static_cast<uint32_t>(i));
  return out;
}

}  // namespace ipset
