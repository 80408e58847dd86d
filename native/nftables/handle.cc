#include "handle.h"

#include <errno.h>
#include <linux/netlink.h>

#include "../addon/errno_name.h"
#include "../addon/job.h"
#include "../addon/js_values.h"
#include "transaction.h"

namespace nft {

namespace {

Napi::Object ErrorToJs(Napi::Env env, int error, const std::string& message) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("errno", error);
  o.Set("code", error ? addon::ErrnoName(error) : "");
  o.Set("message", message);
  o.Set("text", error ? addon::ErrnoText(error) : "");
  return o;
}

class CommitJob : public addon::Job {
 public:
  CommitJob(std::shared_ptr<addon::Channel> ch, std::unique_ptr<Transaction> txn)
      : ch_(std::move(ch)), txn_(std::move(txn)) {}

  void Run() override {
    std::lock_guard<std::mutex> g(ch_->mutex());
    status = ch_->Transact(*txn_);
  }

  Napi::Value Result(Napi::Env env) override {
    Napi::Object out = Napi::Object::New(env);
    const std::vector<Failure>& fs = txn_->failures();
    Napi::Array failures = Napi::Array::New(env, fs.size());
    for (size_t i = 0; i < fs.size(); i++) {
      Napi::Object f = ErrorToJs(env, fs[i].error, fs[i].message);
      f.Set("change", static_cast<double>(fs[i].change));
      f.Set("element", static_cast<double>(fs[i].element));
      f.Set("path", fs[i].path);
      failures.Set(static_cast<uint32_t>(i), f);
    }
    out.Set("failures", failures);
    if (const nl::Outcome* w = txn_->whole()) out.Set("whole", ErrorToJs(env, w->error, w->message));
    out.Set("messages", static_cast<double>(txn_->size()));
    return out;
  }

 private:
  std::shared_ptr<addon::Channel> ch_;
  std::unique_ptr<Transaction> txn_;
};

class QueryJob : public addon::Job {
 public:
  QueryJob(std::shared_ptr<addon::Channel> ch, std::vector<nl::Exchange> xs)
      : ch_(std::move(ch)), xs_(std::move(xs)) {}

  void Run() override {
    std::lock_guard<std::mutex> g(ch_->mutex());
    status = ch_->Transact(xs_);
    if (!status.ok()) return;
    decoded_.resize(xs_.size());
    for (size_t i = 0; i < xs_.size(); i++) {
      nl::Exchange& x = xs_[i];
      if (x.error) continue;
      for (const nl::Bytes& m : x.replies) {
        Message d;
        std::string err;
        if (!DecodeMessage(m.data(), m.size(), d, err)) {
          x.error = EBADMSG;
          x.ext_message = "malformed reply: " + err;
          decoded_[i].clear();
          break;
        }
        decoded_[i].push_back(std::move(d));
      }
      x.replies.clear();
    }
  }

  Napi::Value Result(Napi::Env env) override {
    Napi::Array out = Napi::Array::New(env, xs_.size());
    for (size_t i = 0; i < xs_.size(); i++) {
      Napi::Object r = ErrorToJs(env, xs_[i].error, xs_[i].ext_message);
      Napi::Array msgs = Napi::Array::New(env, decoded_[i].size());
      for (size_t k = 0; k < decoded_[i].size(); k++) msgs.Set(static_cast<uint32_t>(k), MessageToJs(env, decoded_[i][k]));
      r.Set("messages", msgs);
      out.Set(static_cast<uint32_t>(i), r);
    }
    return out;
  }

 private:
  std::shared_ptr<addon::Channel> ch_;
  std::vector<nl::Exchange> xs_;
  std::vector<std::vector<Message>> decoded_;
};

}  // namespace

void NftablesHandle::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function f = DefineClass(env, "NftablesHandle",
                                 {InstanceMethod("open", &NftablesHandle::Open),
                                  InstanceMethod("commit", &NftablesHandle::Commit),
                                  InstanceMethod("query", &NftablesHandle::Query),
                                  InstanceMethod("close", &NftablesHandle::Close),
                                  InstanceMethod("counters", &NftablesHandle::Counters),
                                  InstanceMethod("releaseBuffers", &NftablesHandle::ReleaseBuffers),
                                  InstanceMethod("testBufferResidency", &NftablesHandle::TestBufferResidency)});
  exports.Set("NftablesHandle", f);
  exports.Set("nftablesConstants", Constants(env));
  RegisterTestEntryPoints(env, exports);
}

NftablesHandle::NftablesHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<NftablesHandle>(info) {
  channel_ = std::make_shared<addon::Channel>(addon::SocketOptionsFromJs(info[0], NETLINK_NETFILTER),
                                              addon::Channel::OnOpen{});
}

NftablesHandle::~NftablesHandle() { channel_->Close(); }

Napi::Value NftablesHandle::Open(const Napi::CallbackInfo& info) {
  return addon::Schedule(info.Env(), std::make_unique<addon::OpenJob>(channel_));
}

std::unique_ptr<Transaction> TransactionFromJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsArray()) throw Napi::TypeError::New(env, "changes must be an array");
  Napi::Array a = info[0].As<Napi::Array>();
  std::vector<Request> changes;
  changes.reserve(a.Length());
  for (uint32_t i = 0; i < a.Length(); i++) changes.push_back(RequestFromJs(a.Get(i), "changes[" + std::to_string(i) + "]"));
  if (changes.empty()) throw Napi::RangeError::New(env, "a transaction needs at least one change");
  bool with_genid = false;
  uint32_t genid = 0;
  if (info[1].IsObject()) {
    Napi::Object o = info[1].As<Napi::Object>();
    if (addon::Has(o, "genid")) {
      with_genid = true;
      genid = addon::GetUint(o, "genid", "genid", 0xffffffffu);
    }
  }
  return std::make_unique<Transaction>(changes, with_genid, genid);
}

Napi::Value NftablesHandle::Commit(const Napi::CallbackInfo& info) {
  return addon::Schedule(info.Env(), std::make_unique<CommitJob>(channel_, TransactionFromJs(info)));
}

Napi::Value NftablesHandle::Query(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsArray()) throw Napi::TypeError::New(env, "requests must be an array");
  Napi::Array a = info[0].As<Napi::Array>();
  std::vector<nl::Exchange> xs(a.Length());
  for (uint32_t i = 0; i < a.Length(); i++) {
    const std::string path = "requests[" + std::to_string(i) + "]";
    const Request r = RequestFromJs(a.Get(i), path);
    const bool dump = addon::GetBool(a.Get(i).As<Napi::Object>(), "dump");
    EncodeMessage(xs[i].request, *r.type, r.family, r.flags, r.attrs);
    xs[i].dump = dump;
    xs[i].expects_data = !dump;
  }
  return addon::Schedule(env, std::make_unique<QueryJob>(channel_, std::move(xs)));
}

Napi::Value NftablesHandle::Close(const Napi::CallbackInfo& info) {
  channel_->Close();
  return info.Env().Undefined();
}

Napi::Value NftablesHandle::Counters(const Napi::CallbackInfo& info) {
  return addon::CountersToJs(info.Env(), channel_->counters());
}

Napi::Value NftablesHandle::ReleaseBuffers(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(channel_->ReleaseIdleBuffers()));
}

Napi::Value NftablesHandle::TestBufferResidency(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(channel_->BufferResidentBytes()));
}

}  // namespace nft
