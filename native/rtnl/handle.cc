#include "handle.h"

#include <arpa/inet.h>
#include <linux/if_addr.h>
#include <net/if.h>

#include "../addon/job.h"
#include "../addon/js_values.h"
#include "codec.h"

namespace rtnl {

namespace {

enum class Kind { kNewLink, kSetLinkUp, kGetLink, kDelLink, kDumpAddresses, kNewAddress, kDelAddress };

struct Request {
  Kind kind;
  nl::Bytes msg;
};

Address AddressFromJs(const Napi::Object& o) {
  Address a;
  const std::string fam = addon::GetString(o, "family", "family", 5);
  if (fam != "inet" && fam != "inet6") throw Napi::TypeError::New(o.Env(), "family must be 'inet' or 'inet6'");
  a.family = fam == "inet6" ? AF_INET6 : AF_INET;
  nf_inet_addr addr{};
  addon::GetAddress(o, "address", "address", a.family, addr);
  std::memcpy(a.addr, &addr, a.family == AF_INET6 ? 16 : 4);
  a.prefix_len = static_cast<uint8_t>(
      addon::GetUint(o, "prefixLength", "prefixLength", a.family == AF_INET6 ? 128 : 32));
  a.index = static_cast<int32_t>(addon::GetUint(o, "index", "index", 0x7FFFFFFF));
  if (a.index == 0) throw Napi::RangeError::New(o.Env(), "index must name a link");
  a.flags = addon::GetUint(o, "flags", "flags", 0xFFFFFFFF);
  return a;
}

Request RequestFromJs(const Napi::Object& o) {
  const std::string op = addon::GetString(o, "op", "op", 32);
  auto name = [&] { return addon::GetString(o, "name", "name", IFNAMSIZ - 1); };
  if (op == "newLink") return {Kind::kNewLink, NewLink(name(), addon::GetString(o, "kind", "kind", 32), addon::GetBool(o, "up"))};
  if (op == "setLinkUp") return {Kind::kSetLinkUp, SetLinkUp(name())};
  if (op == "getLink") return {Kind::kGetLink, GetLink(name())};
  if (op == "delLink") return {Kind::kDelLink, DelLink(name())};
  if (op == "dumpAddresses") return {Kind::kDumpAddresses, DumpAddresses(AF_UNSPEC)};
  if (op == "newAddress") return {Kind::kNewAddress, NewAddress(AddressFromJs(o), addon::GetBool(o, "replace"))};
  if (op == "delAddress") return {Kind::kDelAddress, DelAddress(AddressFromJs(o))};
  throw Napi::TypeError::New(o.Env(), "unknown rtnetlink op '" + op + "'");
}

class ExecuteJob : public addon::Job {
 public:
  ExecuteJob(std::shared_ptr<addon::Channel> ch, std::vector<Request> reqs)
      : ch_(std::move(ch)), reqs_(std::move(reqs)) {}

  void Run() override {
    std::lock_guard<std::mutex> g(ch_->mutex());
    batch_.resize(reqs_.size());
    for (size_t i = 0; i < reqs_.size(); i++) {
      batch_[i].request = std::move(reqs_[i].msg);
      batch_[i].dump = reqs_[i].kind == Kind::kDumpAddresses;
      batch_[i].expects_data = reqs_[i].kind == Kind::kGetLink;
    }
    status = ch_->Transact(batch_);
    if (!status.ok()) return;
    links_.resize(batch_.size());
    addrs_.resize(batch_.size());
    for (size_t i = 0; i < batch_.size(); i++) {
      nl::Exchange& x = batch_[i];
      if (x.error) continue;
      std::string err;
      for (const nl::Bytes& m : x.replies) {
        nlmsghdr h;
        std::memcpy(&h, m.data(), sizeof h);
        bool ok = true;
        if (h.nlmsg_type == RTM_NEWLINK) {
          Link l;
          ok = DecodeLink(m, l, err);
          if (ok) links_[i].push_back(std::move(l));
        } else if (h.nlmsg_type == RTM_NEWADDR) {
          Address a;
          ok = DecodeAddress(m, a, err);
          if (ok) addrs_[i].push_back(std::move(a));
        }
        if (!ok) {
          x.error = EBADMSG;
          x.ext_message = "malformed reply: " + err;
          break;
        }
      }
      x.replies.clear();
    }
  }

  Napi::Value Result(Napi::Env env) override {
    Napi::Array out = Napi::Array::New(env, batch_.size());
    for (size_t i = 0; i < batch_.size(); i++) {
      Napi::Object r = addon::ErrorFields(env, batch_[i]).As<Napi::Object>();
      if (!batch_[i].error) {
        if (!links_[i].empty()) {
          const Link& l = links_[i][0];
          Napi::Object o = Napi::Object::New(env);
          o.Set("index", l.index);
          o.Set("name", l.name);
          o.Set("up", (l.flags & IFF_UP) != 0);
          o.Set("kind", l.kind);
          r.Set("link", o);
        }
        if (!addrs_[i].empty()) {
          Napi::Array a = Napi::Array::New(env, addrs_[i].size());
          for (size_t k = 0; k < addrs_[i].size(); k++) {
            const Address& x = addrs_[i][k];
            Napi::Object o = Napi::Object::New(env);
            o.Set("family", x.family == AF_INET6 ? "inet6" : "inet");
            o.Set("address", addon::FormatAddress(x.family, x.addr));
            o.Set("prefixLength", x.prefix_len);
            o.Set("index", x.index);
            o.Set("scope", x.scope);
            o.Set("flags", x.flags);
            if (!x.label.empty()) o.Set("label", x.label);
            a.Set(k, o);
          }
          r.Set("addresses", a);
        }
      }
      out.Set(i, r);
    }
    return out;
  }

 private:
  std::shared_ptr<addon::Channel> ch_;
  std::vector<Request> reqs_;
  std::vector<nl::Exchange> batch_;
  std::vector<std::vector<Link>> links_;
  std::vector<std::vector<Address>> addrs_;
};

}  // namespace

void RtnlHandle::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function f = DefineClass(env, "RtnlHandle",
                                 {InstanceMethod("open", &RtnlHandle::Open),
                                  InstanceMethod("execute", &RtnlHandle::Execute),
                                  InstanceMethod("close", &RtnlHandle::Close),
                                  InstanceMethod("counters", &RtnlHandle::Counters),
                                  InstanceMethod("releaseBuffers", &RtnlHandle::ReleaseBuffers),
                                  InstanceMethod("testBufferResidency", &RtnlHandle::TestBufferResidency)});
  exports.Set("RtnlHandle", f);
  // What the TypeScript side checks and sends, as the headers define it.
  Napi::Object c = Napi::Object::New(env);
  c.Set("IFNAMSIZ", IFNAMSIZ);
  c.Set("IFA_F_NODAD", IFA_F_NODAD);
  exports.Set("rtnlConstants", c);
}

RtnlHandle::RtnlHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<RtnlHandle>(info) {
  channel_ = std::make_shared<addon::Channel>(addon::SocketOptionsFromJs(info[0], NETLINK_ROUTE),
                                              addon::Channel::OnOpen{});
}

RtnlHandle::~RtnlHandle() { channel_->Close(); }

Napi::Value RtnlHandle::Open(const Napi::CallbackInfo& info) {
  return addon::Schedule(info.Env(), std::make_unique<addon::OpenJob>(channel_));
}

Napi::Value RtnlHandle::Execute(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsArray()) throw Napi::TypeError::New(env, "execute() takes an array of operations");
  Napi::Array ops = info[0].As<Napi::Array>();
  std::vector<Request> reqs;
  reqs.reserve(ops.Length());
  for (uint32_t i = 0; i < ops.Length(); i++) {
    Napi::Value v = ops.Get(i);
    if (!v.IsObject()) throw Napi::TypeError::New(env, "operation " + std::to_string(i) + " must be an object");
    reqs.push_back(RequestFromJs(v.As<Napi::Object>()));
  }
  return addon::Schedule(env, std::make_unique<ExecuteJob>(channel_, std::move(reqs)));
}

Napi::Value RtnlHandle::Close(const Napi::CallbackInfo& info) {
  channel_->Close();
  return info.Env().Undefined();
}

Napi::Value RtnlHandle::Counters(const Napi::CallbackInfo& info) {
  return addon::CountersToJs(info.Env(), channel_->counters());
}

Napi::Value RtnlHandle::ReleaseBuffers(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(channel_->ReleaseIdleBuffers()));
}

Napi::Value RtnlHandle::TestBufferResidency(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(channel_->BufferResidentBytes()));
}

}  // namespace rtnl
