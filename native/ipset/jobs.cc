#include "jobs.h"

#include <errno.h>

#include "bulk.h"
#include "errors.h"
#include "js_bridge.h"
#include "set_types.h"

namespace ipset {

namespace {

// The kernel's verdict on one request, as the TypeScript layer sees it.
struct Verdict {
  int error = 0;
  std::string kernel_message;
};

Napi::Object VerdictToJs(Napi::Env env, const Verdict& v, uint8_t cmd, const SetType* type) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("errno", v.error);
  if (v.error) {
    ErrorMeaning m = DescribeError(v.error, cmd, type != nullptr, type ? type->kind : Kind::kHash);
    o.Set("code", m.code);
    o.Set("message", m.message);
    if (!v.kernel_message.empty()) o.Set("kernelMessage", v.kernel_message);
  } else {
    o.Set("code", "");
    o.Set("message", "");
  }
  return o;
}

// Runs one request on the channel. A broken conversation (timeout, socket
// error) is not the kernel's answer: it goes to `conversation`, which the
// job makes its status, so the call rejects as Ipvs and Rtnl calls do (the
// channel already dropped that socket).
Verdict RunOne(addon::Channel& ch, nl::Bytes request, bool dump, bool expects_data,
               nl::Status* conversation, std::vector<nl::Bytes>* replies = nullptr) {
  std::vector<nl::Exchange> batch(1);
  batch[0].request = std::move(request);
  batch[0].dump = dump;
  batch[0].expects_data = expects_data;
  *conversation = ch.Transact(batch);
  Verdict v{batch[0].error, batch[0].ext_message};
  if (replies) *replies = std::move(batch[0].replies);
  return v;
}

}  // namespace

// { errno, code, message, kernelMessage?, applied, index, messages,
//   failures: [{ index, errno, code, message, kernelMessage? }], skipped,
//   unconfirmed, halt?: { errno, code, message, kernelMessage? } }.
// The top-level verdict is the first refused entry's, or the reason the
// load stopped when no entry was refused.
Napi::Object BulkResultToJs(Napi::Env env, const BulkLoad& b, uint8_t cmd, const SetType* type) {
  const std::vector<BulkRefusal>& refusals = b.refusals();
  Verdict top;
  int64_t index = -1;
  if (!refusals.empty()) {
    top = {refusals[0].error, refusals[0].kernel_message};
    index = refusals[0].index;
  } else if (b.halt_error()) {
    top = {b.halt_error(), b.halt_message()};
  }
  Napi::Object o = VerdictToJs(env, top, cmd, type);
  o.Set("applied", static_cast<double>(b.applied()));
  o.Set("index", static_cast<double>(index));
  o.Set("messages", static_cast<double>(b.messages_sent()));
  Napi::Array failures = Napi::Array::New(env, refusals.size());
  for (size_t i = 0; i < refusals.size(); i++) {
    Napi::Object f = VerdictToJs(env, {refusals[i].error, refusals[i].kernel_message}, cmd, type);
    f.Set("index", static_cast<double>(refusals[i].index));
    failures.Set(static_cast<uint32_t>(i), f);
  }
  o.Set("failures", failures);
  auto indices = [&](Fate fate) {
    const std::vector<uint32_t> v = b.Indices(fate);
    Napi::Array a = Napi::Array::New(env, v.size());
    for (size_t i = 0; i < v.size(); i++) a.Set(static_cast<uint32_t>(i), static_cast<double>(v[i]));
    return a;
  };
  o.Set("skipped", indices(Fate::kSkipped));
  o.Set("unconfirmed", indices(Fate::kUnconfirmed));
  if (b.halt_error()) o.Set("halt", VerdictToJs(env, {b.halt_error(), b.halt_message()}, cmd, type));
  return o;
}

namespace {

class OpenJob : public addon::Job {
 public:
  explicit OpenJob(Shared s) : s_(std::move(s)) {}
  void Run() override {
    std::lock_guard<std::mutex> g(s_.channel->mutex());
    status = s_.channel->Ensure();
  }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    o.Set("version", s_.session->protocol.load());
    o.Set("min", s_.session->kernel_min.load());
    o.Set("kernel", s_.session->kernel_protocol.load());
    return o;
  }

 private:
  Shared s_;
};

class CommandJob : public addon::Job {
 public:
  CommandJob(Shared s, CommandOp op) : s_(std::move(s)), op_(std::move(op)) {}

  void Run() override {
    std::lock_guard<std::mutex> g(s_.channel->mutex());
    status = s_.channel->Ensure();
    if (!status.ok()) return;
    const uint8_t protocol = s_.session->protocol;
    nl::Bytes request;
    switch (op_.cmd) {
      case IPSET_CMD_CREATE: {
        uint8_t revision = 0;
        int kernel_error = 0;
        status = PickRevision(*s_.channel->socket(), *s_.session, *op_.create.type, &revision,
                              &kernel_error);
        if (!status.ok()) {
          s_.channel->Reset();
          return;
        }
        if (kernel_error) {
          verdict_.error = kernel_error;
          return;
        }
        revision_ = revision;
        // An option this revision lacks would be ignored by the kernel
        // without a word: refuse it, sending nothing.
        too_new_ = FirstTooNew(*op_.create.type, op_.create.options, revision);
        if (too_new_ != Option::kCount) {
          verdict_.error = EOPNOTSUPP;
          return;
        }
        request = EncodeCreate(op_.create, revision, protocol, op_.exist);
        break;
      }
      case IPSET_CMD_RENAME:
      case IPSET_CMD_SWAP:
        request = EncodeTwoNames(op_.cmd, op_.name, op_.name2, protocol);
        break;
      default:
        request = EncodeNamed(op_.cmd, op_.name, protocol);
        break;
    }
    verdict_ = RunOne(*s_.channel, std::move(request), false, false, &status);
  }

  // Create adds the revision it chose (or would have) and, when that
  // revision lacks an option given, the option and the revision it needs.
  Napi::Value Result(Napi::Env env) override {
    const SetType* type = op_.cmd == IPSET_CMD_CREATE ? op_.create.type : nullptr;
    Napi::Object o = VerdictToJs(env, verdict_, op_.cmd, type);
    if (revision_ >= 0) o.Set("revision", revision_);
    if (type && too_new_ != Option::kCount) {
      o.Set("option", OptionName(too_new_));
      o.Set("needs", type->Since(too_new_));
    }
    return o;
  }

 private:
  Shared s_;
  CommandOp op_;
  Verdict verdict_;
  int revision_ = -1;
  Option too_new_ = Option::kCount;
};

class ListJob : public addon::Job {
 public:
  ListJob(Shared s, std::string name, uint32_t flags)
      : s_(std::move(s)), name_(std::move(name)), flags_(flags) {}

  void Run() override {
    std::lock_guard<std::mutex> g(s_.channel->mutex());
    status = s_.channel->Ensure();
    if (!status.ok()) return;
    std::vector<nl::Bytes> replies;
    verdict_ = RunOne(*s_.channel, EncodeList(IPSET_CMD_LIST, name_, flags_, s_.session->protocol),
                      true, false, &status, &replies);
    if (!status.ok() || verdict_.error) return;
    // Decode here, off the JavaScript thread: large sets take a while.
    std::string err;
    for (const nl::Bytes& m : replies) {
      if (!decoder_.Add(m, err)) {
        verdict_.error = EBADMSG;
        verdict_.kernel_message = "malformed list reply: " + err;
        return;
      }
    }
  }

  Napi::Value Result(Napi::Env env) override {
    Napi::Object o = VerdictToJs(env, verdict_, IPSET_CMD_LIST, nullptr);
    if (verdict_.error == EBADMSG) o.Set("message", verdict_.kernel_message);
    std::vector<ListedSet>& sets = decoder_.sets();
    Napi::Array arr = Napi::Array::New(env, sets.size());
    for (size_t i = 0; i < sets.size(); i++) arr.Set(static_cast<uint32_t>(i), ListedSetToJs(env, sets[i]));
    o.Set("sets", arr);
    return o;
  }

 private:
  Shared s_;
  std::string name_;
  uint32_t flags_;
  Verdict verdict_;
  ListDecoder decoder_;
};

class ElementsJob : public addon::Job {
 public:
  ElementsJob(Shared s, ElementsOp op) : s_(std::move(s)), op_(std::move(op)) {}

  void Run() override {
    std::lock_guard<std::mutex> g(s_.channel->mutex());
    status = s_.channel->Ensure();
    if (!status.ok()) return;
    const uint8_t protocol = s_.session->protocol;
    if (op_.single) {
      verdict_ = RunOne(*s_.channel,
                        EncodeElement(op_.cmd, op_.name, *op_.type, op_.family, op_.entries[0],
                                      protocol, op_.exist),
                        false, false, &status);
      applied_ = verdict_.error ? 0 : 1;
      if (verdict_.error) index_ = 0;
      return;
    }
    BulkRequest req;
    req.cmd = op_.cmd;
    req.name = op_.name;
    req.kind = op_.type->kind;
    req.family = op_.family;
    req.exist = op_.exist;
    req.protocol = protocol;
    bulk_ = std::make_unique<BulkLoad>(std::move(req), op_.entries);
    while (!bulk_->finished()) {
      // A socket replaced after a broken conversation must not take the
      // rest: Absorb() halts on that, and a failure to open one stops here.
      nl::Status st = s_.channel->Ensure();
      if (!st.ok()) {
        bulk_->Abandon(st.err, st.message);
        break;
      }
      // Half the receive buffer, as the socket core budgets unread answers.
      std::vector<nl::Exchange> window =
          bulk_->NextWindow(static_cast<size_t>(s_.channel->socket()->rcvbuf()) / 2);
      st = s_.channel->Transact(window);
      bulk_->Absorb(window, st);
    }
    bulk_->Finish();
  }

  Napi::Value Result(Napi::Env env) override {
    if (bulk_) return BulkResultToJs(env, *bulk_, op_.cmd, op_.type);
    Napi::Object o = VerdictToJs(env, verdict_, op_.cmd, op_.type);
    o.Set("applied", static_cast<double>(applied_));
    o.Set("index", static_cast<double>(index_));
    o.Set("messages", static_cast<double>(op_.single ? 1 : 0));
    return o;
  }

 private:
  Shared s_;
  ElementsOp op_;
  Verdict verdict_;
  size_t applied_ = 0;
  int64_t index_ = -1;
  std::unique_ptr<BulkLoad> bulk_;
};

}  // namespace

std::unique_ptr<addon::Job> MakeOpenJob(Shared s) { return std::make_unique<OpenJob>(std::move(s)); }

std::unique_ptr<addon::Job> MakeCommandJob(Shared s, CommandOp op) {
  return std::make_unique<CommandJob>(std::move(s), std::move(op));
}

std::unique_ptr<addon::Job> MakeListJob(Shared s, std::string name, uint32_t flags) {
  return std::make_unique<ListJob>(std::move(s), std::move(name), flags);
}

std::unique_ptr<addon::Job> MakeElementsJob(Shared s, ElementsOp op) {
  return std::make_unique<ElementsJob>(std::move(s), std::move(op));
}

}  // namespace ipset
