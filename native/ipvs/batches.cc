#include "batches.h"

#include <algorithm>

#include "../genl/family.h"
#include "codec.h"
#include "family.h"

namespace ipvs {

nl::RequestKind KindOf(const Request& r) {
  if (r.dump) return nl::RequestKind::kDump;
  if (r.cmd == IPVS_CMD_GET_SERVICE || r.cmd == IPVS_CMD_GET_INFO || r.cmd == IPVS_CMD_GET_CONFIG)
    return nl::RequestKind::kGet;
  return nl::RequestKind::kPlain;
}

void RecordBatch::OnData(size_t i, const nl::Message& m) {
  const size_t at = Map(i);
  if (malformed_ == at) return;  // already failed
  if (writing_ != at) {
    writing_ = at;
    mark_ = out_.count();
  }
  reply_.services.clear();
  reply_.dests.clear();
  reply_.daemons.clear();
  reply_.has_info = reply_.has_timeouts = false;
  std::string err;
  if (!Decode(m.payload - NLMSG_HDRLEN, m.hdr.nlmsg_len, reply_, err)) {
    malformed_ = at;
    malformed_why_ = "malformed reply: " + err;
    out_.Truncate(mark_);
    return;
  }
  OnReply(at, reply_);
}

void RecordBatch::OnRestart(size_t i) {
  const size_t at = Map(i);
  if (writing_ == at) out_.Truncate(mark_);
  if (malformed_ == at) malformed_ = SIZE_MAX;
  OnDropped(at);
}

void RecordBatch::OnDone(size_t i, const nl::Outcome& o) {
  const size_t at = Map(i);
  if (o.sent) sent_++;
  if (o.error) {
    if (writing_ == at) out_.Truncate(mark_);
    failures_.push_back({ResultIndex(at), o.error, o.message, o.where ? o.where : ""});
  } else if (malformed_ == at) {
    failures_.push_back({ResultIndex(at), EBADMSG, malformed_why_, ""});
  }
  // A failed request keeps nothing: its records are gone, and so must be
  // what a subclass kept from them (it may be sent again, after a reload).
  if (o.error || malformed_ == at) OnDropped(at);
  if (malformed_ == at) malformed_ = SIZE_MAX;
  if (writing_ == at) writing_ = SIZE_MAX;
  AfterDone(at);
}

nl::Status RecordBatch::Run(addon::Channel& ch, std::atomic<uint16_t>& family_id) {
  nl::Status st = ch.Ensure();
  if (!st.ok()) return st;
  family_ = family_id.load();
  sent_ = 0;
  st = ch.Transact(*this);
  // A conversation that broke before anything went out fails the call as a
  // whole. Once requests went out, some may have been applied: every one
  // reports its own outcome instead (answered, lost, or not sent).
  if (!st.ok()) return sent_ == 0 ? st : nl::Status::Ok();

  // A module reload gives IPVS a new family id; requests sent with the old
  // one fail with ENOENT from genetlink itself. Resolve again and, if the
  // id changed, send exactly those requests again.
  std::vector<size_t> enoent;
  for (const Failure& f : failures_)
    if (f.error == ENOENT) enoent.push_back(f.index - first_result_);
  if (enoent.empty() || !ch.socket()) return nl::Status::Ok();
  const uint16_t before = family_;
  st = ResolveIpvs(*ch.socket(), family_id);
  if (!st.ok() || family_id.load() == before) return nl::Status::Ok();
  failures_.erase(std::remove_if(failures_.begin(), failures_.end(),
                                 [](const Failure& f) { return f.error == ENOENT; }),
                  failures_.end());
  family_ = family_id.load();
  subset_ = &enoent;
  // The first round was answered, so the call stands whatever happens to
  // the re-send: a request it could not carry reports its own outcome (not
  // sent, or lost) beside the others' results.
  ch.Transact(*this);
  subset_ = nullptr;
  std::sort(failures_.begin(), failures_.end(),
            [](const Failure& a, const Failure& b) { return a.index < b.index; });
  return nl::Status::Ok();
}

}  // namespace ipvs
