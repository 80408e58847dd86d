#include "jobs.h"

#include <errno.h>

#include "../addon/errno_name.h"
#include "../netlink/message.h"
#include "codec.h"
#include "filter.h"
#include "records.h"
#include "stats.h"

namespace conntrack {

namespace {

// One dump whose replies are decoded as they arrive (never held whole),
// each entry the filter takes going to `on_entry`.
class DumpBatch : public nl::Batch {
 public:
  using OnEntry = std::function<void(const Entry&)>;
  DumpBatch(nl::Bytes request, const Filter& filter, OnEntry on_entry, std::function<void()> on_restart)
      : request_(std::move(request)), filter_(filter), on_entry_(std::move(on_entry)),
        on_restart_(std::move(on_restart)) {}

  size_t size() const override { return 1; }
  nl::RequestKind Encode(size_t, nl::Bytes& out) override {
    out.insert(out.end(), request_.begin(), request_.end());
    return nl::RequestKind::kDump;
  }
  void OnData(size_t, const nl::Message& m) override {
    if (!malformed_.empty()) return;
    const uint8_t* msg = m.payload - NLMSG_HDRLEN;
    if (!DecodeEntry(msg, m.hdr.nlmsg_len, entry_, malformed_)) return;
    if (Matches(entry_, filter_)) on_entry_(entry_);
  }
  void OnRestart(size_t) override {
    malformed_.clear();
    on_restart_();
  }
  void OnDone(size_t, const nl::Outcome& o) override { outcome_ = o; outcome_message_ = o.message; }

  // The kernel's refusal, or a reply we could not read, as a Status.
  nl::Status Verdict() const {
    if (!malformed_.empty()) return nl::Status::Errno(EBADMSG, "IPCTNL_MSG_CT_GET", "malformed reply: " + malformed_);
    if (outcome_.error) return nl::Status::Errno(outcome_.error, "IPCTNL_MSG_CT_GET", outcome_message_);
    return nl::Status::Ok();
  }
  int retries() const { return outcome_.dump_retries; }

 private:
  nl::Bytes request_;
  const Filter& filter_;
  OnEntry on_entry_;
  std::function<void()> on_restart_;
  Entry entry_;
  std::string malformed_;
  nl::Outcome outcome_;
  std::string outcome_message_;
};

// Deletes keys in order, many per sendmsg; every key gets its own outcome.
class DeleteBatch : public nl::Batch {
 public:
  explicit DeleteBatch(const std::vector<Key>& keys) : keys_(keys), outcomes_(keys.size()) {}
  size_t size() const override { return keys_.size(); }
  nl::RequestKind Encode(size_t i, nl::Bytes& out) override {
    EncodeDelete(keys_[i], out);
    return nl::RequestKind::kPlain;
  }
  void OnData(size_t, const nl::Message&) override {}
  void OnDone(size_t i, const nl::Outcome& o) override {
    outcomes_[i].error = o.error;
    outcomes_[i].message = o.message;
    outcomes_[i].where = o.where ? o.where : "";
  }

  struct Result {
    int error = 0;
    std::string message, where;
  };
  const std::vector<Result>& outcomes() const { return outcomes_; }

 private:
  const std::vector<Key>& keys_;
  std::vector<Result> outcomes_;
};

Napi::Object DeleteResultToJs(Napi::Env env, const std::vector<DeleteBatch::Result>& outcomes, Napi::Object o) {
  Napi::Array failures = Napi::Array::New(env);
  size_t deleted = 0;
  for (size_t i = 0; i < outcomes.size(); i++) {
    const DeleteBatch::Result& r = outcomes[i];
    if (!r.error) {
      deleted++;
      continue;
    }
    Napi::Object f = Napi::Object::New(env);
    f.Set("index", static_cast<double>(i));
    f.Set("errno", r.error);
    f.Set("code", addon::ErrnoName(r.error));
    f.Set("message", r.message);
    f.Set("text", addon::ErrnoText(r.error));
    if (!r.where.empty()) f.Set("syscall", r.where);
    failures.Set(failures.Length(), f);
  }
  o.Set("deleted", static_cast<double>(deleted));
  o.Set("failures", failures);
  return o;
}

// A dump of the entries a filter takes; with `then_delete`, each one is
// then deleted by its key (deleteMatching).
class DumpJob : public addon::Job {
 public:
  DumpJob(ChannelPtr ch, Filter filter, bool then_delete)
      : ch_(std::move(ch)), filter_(filter), then_delete_(then_delete) {}
  void Run() override {
    std::lock_guard<std::mutex> g(ch_->mutex());
    DumpBatch dump(
        EncodeDump(filter_), filter_,
        [this](const Entry& e) {
          writer_.Add(e, static_cast<uint32_t>(keys_.size()));
          if (then_delete_) keys_.push_back(KeyOf(e));
        },
        [this] {
          writer_ = rec::Writer();
          keys_.clear();
        });
    status = ch_->Transact(dump);
    if (status.ok()) status = dump.Verdict();
    retries_ = dump.retries();
    if (!status.ok() || !then_delete_) return;
    deletes_ = std::make_unique<DeleteBatch>(keys_);
    // A broken conversation is reported per entry, not as the call's failure.
    ch_->Transact(*deletes_);
  }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object o = writer_.ToJs(env);
    o.Set("dumpRetries", retries_);
    return deletes_ ? DeleteResultToJs(env, deletes_->outcomes(), o) : o;
  }

 private:
  ChannelPtr ch_;
  Filter filter_;
  bool then_delete_;
  rec::Writer writer_;
  std::vector<Key> keys_;
  std::unique_ptr<DeleteBatch> deletes_;
  int retries_ = 0;
};

class GetJob : public addon::Job {
 public:
  GetJob(ChannelPtr ch, Key key) : ch_(std::move(ch)), key_(key) {}
  void Run() override {
    std::lock_guard<std::mutex> g(ch_->mutex());
    std::vector<nl::Exchange> batch(1);
    batch[0].request = EncodeGet(key_);
    batch[0].expects_data = true;
    status = ch_->Transact(batch);
    if (!status.ok()) return;
    error_ = batch[0].error;
    message_ = batch[0].ext_message;
    if (error_) return;
    std::string why;
    Entry e;
    for (const nl::Bytes& m : batch[0].replies) {
      if (!DecodeEntry(m, e, why)) {
        status = nl::Status::Errno(EBADMSG, "IPCTNL_MSG_CT_GET", "malformed reply: " + why);
        return;
      }
      writer_.Add(e, 0);
    }
  }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object o = writer_.ToJs(env);
    o.Set("errno", error_);
    o.Set("code", error_ ? addon::ErrnoName(error_) : "");
    o.Set("message", message_);
    return o;
  }

 private:
  ChannelPtr ch_;
  Key key_;
  rec::Writer writer_;
  int error_ = 0;
  std::string message_;
};

class DeleteJob : public addon::Job {
 public:
  DeleteJob(ChannelPtr ch, std::vector<Key> keys) : ch_(std::move(ch)), keys_(std::move(keys)), batch_(keys_) {}
  void Run() override {
    std::lock_guard<std::mutex> g(ch_->mutex());
    // A broken conversation is reported per key, not as the call's failure.
    ch_->Transact(batch_);
  }
  Napi::Value Result(Napi::Env env) override {
    return DeleteResultToJs(env, batch_.outcomes(), Napi::Object::New(env));
  }

 private:
  ChannelPtr ch_;
  std::vector<Key> keys_;
  DeleteBatch batch_;
};

class FlushJob : public addon::Job {
 public:
  FlushJob(ChannelPtr ch, uint8_t family) : ch_(std::move(ch)), family_(family) {}
  void Run() override {
    std::lock_guard<std::mutex> g(ch_->mutex());
    std::vector<nl::Exchange> batch(1);
    batch[0].request = EncodeFlush(family_);
    status = ch_->Transact(batch);
    if (status.ok() && batch[0].error)
      status = nl::Status::Errno(batch[0].error, "IPCTNL_MSG_CT_DELETE", batch[0].ext_message);
  }
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }

 private:
  ChannelPtr ch_;
  uint8_t family_;
};

class StatsJob : public addon::Job {
 public:
  explicit StatsJob(ChannelPtr ch) : ch_(std::move(ch)) {}
  void Run() override {
    std::lock_guard<std::mutex> g(ch_->mutex());
    std::vector<nl::Exchange> batch(2);
    batch[0].request = EncodeStatsCpu();
    batch[0].dump = true;
    batch[1].request = EncodeStatsGlobal();
    batch[1].expects_data = true;
    status = ch_->Transact(batch);
    if (!status.ok()) return;
    if (batch[0].error) {
      status = nl::Status::Errno(batch[0].error, "IPCTNL_MSG_CT_GET_STATS_CPU", batch[0].ext_message);
      return;
    }
    std::string why;
    for (const nl::Bytes& m : batch[0].replies) {
      cpus_.emplace_back();
      if (!DecodeCpuStats(m, cpus_.back(), why)) {
        status = nl::Status::Errno(EBADMSG, "IPCTNL_MSG_CT_GET_STATS_CPU", "malformed reply: " + why);
        return;
      }
    }
    // Kernels before 4.x have no IPCTNL_MSG_CT_GET_STATS: the counters stand alone then.
    if (!batch[1].error && !batch[1].replies.empty() && !DecodeGlobalStats(batch[1].replies[0], global_, why))
      status = nl::Status::Errno(EBADMSG, "IPCTNL_MSG_CT_GET_STATS", "malformed reply: " + why);
  }
  Napi::Value Result(Napi::Env env) override { return StatsToJs(env, cpus_, global_); }

 private:
  ChannelPtr ch_;
  std::vector<CpuStats> cpus_;
  GlobalStats global_;
};

}  // namespace

std::unique_ptr<addon::Job> MakeListJob(ChannelPtr ch, Filter filter) {
  return std::make_unique<DumpJob>(std::move(ch), filter, false);
}
std::unique_ptr<addon::Job> MakeGetJob(ChannelPtr ch, Key key) {
  return std::make_unique<GetJob>(std::move(ch), key);
}
std::unique_ptr<addon::Job> MakeDeleteJob(ChannelPtr ch, std::vector<Key> keys) {
  return std::make_unique<DeleteJob>(std::move(ch), std::move(keys));
}
std::unique_ptr<addon::Job> MakeDeleteMatchingJob(ChannelPtr ch, Filter filter) {
  return std::make_unique<DumpJob>(std::move(ch), filter, true);
}
std::unique_ptr<addon::Job> MakeFlushJob(ChannelPtr ch, uint8_t family) {
  return std::make_unique<FlushJob>(std::move(ch), family);
}
std::unique_ptr<addon::Job> MakeStatsJob(ChannelPtr ch) { return std::make_unique<StatsJob>(std::move(ch)); }

}  // namespace conntrack
