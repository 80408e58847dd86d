#include "handle.h"

#include <linux/genetlink.h>

#include "../addon/job.h"
#include "../addon/js_values.h"
#include "../genl/family.h"
#include "codec.h"
#include "js_bridge.h"

namespace ipvs {

namespace {

using FamilyId = std::shared_ptr<std::atomic<uint16_t>>;

nl::Status ResolveIpvs(nl::NetlinkSocket& s, std::atomic<uint16_t>& id) {
  uint16_t got = 0;
  int kernel_error = 0;
  nl::Status st = genl::ResolveFamily(s, IPVS_GENL_NAME, &got, &kernel_error);
  if (!st.ok()) return st;
  if (kernel_error == ENOENT)
    return nl::Status::Errno(
        EPROTONOSUPPORT, "IPVS",
        "this kernel has no IPVS: the generic netlink family \"IPVS\" is not registered. "
        "Load the module (modprobe ip_vs) or run where IPVS is available");
  if (kernel_error) return nl::Status::Errno(kernel_error, "CTRL_CMD_GETFAMILY", "IPVS");
  id = got;
  return nl::Status::Ok();
}

class ExecuteJob : public addon::Job {
 public:
  ExecuteJob(std::shared_ptr<addon::Channel> ch, FamilyId id, std::vector<Request> reqs)
      : ch_(std::move(ch)), id_(std::move(id)), reqs_(std::move(reqs)) {}

  void Run() override {
    std::lock_guard<std::mutex> g(ch_->mutex());
    batch_.resize(reqs_.size());
    status = ch_->Ensure();
    if (!status.ok()) return;
    const uint16_t family = id_->load();
    for (size_t i = 0; i < reqs_.size(); i++) Prepare(i, family);
    status = ch_->Transact(batch_);
    if (!status.ok()) return;
    RetryAfterModuleReload(family);
    Decode();
  }

  Napi::Value Result(Napi::Env env) override {
    Napi::Array out = Napi::Array::New(env, reqs_.size());
    for (size_t i = 0; i < reqs_.size(); i++) {
      Napi::Object r = addon::ErrorFields(env, batch_[i]).As<Napi::Object>();
      if (!batch_[i].error) ReplyToJs(env, replies_[i], ServiceAf(i), r);
      out.Set(i, r);
    }
    return out;
  }

 private:
  void Prepare(size_t i, uint16_t family) {
    nl::Exchange& x = batch_[i];
    x = nl::Exchange{};
    x.request = Encode(reqs_[i], family);
    x.dump = reqs_[i].dump;
    const uint8_t cmd = reqs_[i].cmd;
    x.expects_data = cmd == IPVS_CMD_GET_SERVICE || cmd == IPVS_CMD_GET_INFO ||
                     cmd == IPVS_CMD_GET_CONFIG;
  }

  // A module reload gives IPVS a new family id; requests sent with the old
  // one fail with ENOENT from genetlink itself. Resolve again and, if the id
  // changed, resend exactly those requests.
  void RetryAfterModuleReload(uint16_t family) {
    std::vector<size_t> enoent;
    for (size_t i = 0; i < batch_.size(); i++)
      if (batch_[i].error == ENOENT) enoent.push_back(i);
    if (enoent.empty() || !ch_->socket()) return;
    nl::Status st = ResolveIpvs(*ch_->socket(), *id_);
    if (!st.ok() || id_->load() == family) return;
    std::vector<nl::Exchange> again(enoent.size());
    for (size_t k = 0; k < enoent.size(); k++) {
      Prepare(enoent[k], id_->load());
      again[k] = std::move(batch_[enoent[k]]);
    }
    ch_->Transact(again);
    for (size_t k = 0; k < enoent.size(); k++) batch_[enoent[k]] = std::move(again[k]);
  }

  void Decode() {
    replies_.resize(batch_.size());
    for (size_t i = 0; i < batch_.size(); i++) {
      nl::Exchange& x = batch_[i];
      if (x.error) continue;
      for (const nl::Bytes& m : x.replies) {
        std::string err;
        if (!ipvs::Decode(m, replies_[i], err)) {
          x.error = EBADMSG;
          x.ext_message = "malformed reply: " + err;
          break;
        }
      }
      x.replies.clear();
    }
  }

  uint16_t ServiceAf(size_t i) const {
    return reqs_[i].has_service ? reqs_[i].service.key.af : AF_INET;
  }

  std::shared_ptr<addon::Channel> ch_;
  FamilyId id_;
  std::vector<Request> reqs_;
  std::vector<nl::Exchange> batch_;
  std::vector<Reply> replies_;
};

// The numbers the TypeScript layer needs, straight from <linux/ip_vs.h> and
// the libc headers, so nothing is retyped by hand.
Napi::Object Constants(Napi::Env env) {
  Napi::Object c = Napi::Object::New(env);
#define IPVS_CONST(name) c.Set(#name, Napi::Number::New(env, name))
  IPVS_CONST(AF_INET);
  IPVS_CONST(AF_INET6);
  IPVS_CONST(IPPROTO_TCP);
  IPVS_CONST(IPPROTO_UDP);
  IPVS_CONST(IPPROTO_SCTP);
  IPVS_CONST(IP_VS_VERSION_CODE);
  IPVS_CONST(IP_VS_SCHEDNAME_MAXLEN);
  IPVS_CONST(IP_VS_PENAME_MAXLEN);
  IPVS_CONST(IP_VS_IFNAME_MAXLEN);
  IPVS_CONST(IPVS_CMD_NEW_SERVICE);
  IPVS_CONST(IPVS_CMD_SET_SERVICE);
  IPVS_CONST(IPVS_CMD_DEL_SERVICE);
  IPVS_CONST(IPVS_CMD_GET_SERVICE);
  IPVS_CONST(IPVS_CMD_NEW_DEST);
  IPVS_CONST(IPVS_CMD_SET_DEST);
  IPVS_CONST(IPVS_CMD_DEL_DEST);
  IPVS_CONST(IPVS_CMD_GET_DEST);
  IPVS_CONST(IPVS_CMD_NEW_DAEMON);
  IPVS_CONST(IPVS_CMD_DEL_DAEMON);
  IPVS_CONST(IPVS_CMD_GET_DAEMON);
  IPVS_CONST(IPVS_CMD_SET_CONFIG);
  IPVS_CONST(IPVS_CMD_GET_CONFIG);
  IPVS_CONST(IPVS_CMD_SET_INFO);
  IPVS_CONST(IPVS_CMD_GET_INFO);
  IPVS_CONST(IPVS_CMD_ZERO);
  IPVS_CONST(IPVS_CMD_FLUSH);
  IPVS_CONST(IP_VS_SVC_F_PERSISTENT);
  IPVS_CONST(IP_VS_SVC_F_HASHED);
  IPVS_CONST(IP_VS_SVC_F_ONEPACKET);
  IPVS_CONST(IP_VS_SVC_F_SCHED1);
  IPVS_CONST(IP_VS_SVC_F_SCHED2);
  IPVS_CONST(IP_VS_SVC_F_SCHED3);
  IPVS_CONST(IP_VS_CONN_F_FWD_MASK);
  IPVS_CONST(IP_VS_CONN_F_MASQ);
  IPVS_CONST(IP_VS_CONN_F_LOCALNODE);
  IPVS_CONST(IP_VS_CONN_F_TUNNEL);
  IPVS_CONST(IP_VS_CONN_F_DROUTE);
  IPVS_CONST(IP_VS_CONN_F_BYPASS);
  IPVS_CONST(IP_VS_CONN_F_TUNNEL_TYPE_IPIP);
  IPVS_CONST(IP_VS_CONN_F_TUNNEL_TYPE_GUE);
  IPVS_CONST(IP_VS_CONN_F_TUNNEL_TYPE_GRE);
  IPVS_CONST(IP_VS_TUNNEL_ENCAP_FLAG_NOCSUM);
  IPVS_CONST(IP_VS_TUNNEL_ENCAP_FLAG_CSUM);
  IPVS_CONST(IP_VS_TUNNEL_ENCAP_FLAG_REMCSUM);
  IPVS_CONST(IP_VS_STATE_NONE);
  IPVS_CONST(IP_VS_STATE_MASTER);
  IPVS_CONST(IP_VS_STATE_BACKUP);
#undef IPVS_CONST
  return c;
}

}  // namespace

void IpvsHandle::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function f = DefineClass(env, "IpvsHandle",
                                 {InstanceMethod("open", &IpvsHandle::Open),
                                  InstanceMethod("execute", &IpvsHandle::Execute),
                                  InstanceMethod("close", &IpvsHandle::Close),
                                  InstanceMethod("counters", &IpvsHandle::Counters),
                                  InstanceMethod("familyId", &IpvsHandle::FamilyId)});
  exports.Set("IpvsHandle", f);
  exports.Set("ipvsConstants", Constants(env));
  exports.Set("ipvsEncode", Napi::Function::New(env, EncodeForTest));
  exports.Set("ipvsDecode", Napi::Function::New(env, DecodeForTest));
}

IpvsHandle::IpvsHandle(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<IpvsHandle>(info),
      family_id_(std::make_shared<std::atomic<uint16_t>>(0)) {
  nl::SocketOptions opts = addon::SocketOptionsFromJs(info[0], NETLINK_GENERIC);
  std::shared_ptr<std::atomic<uint16_t>> id = family_id_;
  channel_ = std::make_shared<addon::Channel>(
      opts, [id](nl::NetlinkSocket& s) { return ResolveIpvs(s, *id); });
}

IpvsHandle::~IpvsHandle() { channel_->Close(); }

Napi::Value IpvsHandle::Open(const Napi::CallbackInfo& info) {
  std::shared_ptr<std::atomic<uint16_t>> id = family_id_;
  return addon::Schedule(info.Env(), std::make_unique<addon::OpenJob>(
                                         channel_, [id](Napi::Env env) { return Napi::Number::New(env, id->load()); }));
}

Napi::Value IpvsHandle::Execute(const Napi::CallbackInfo& info) {
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
  return addon::Schedule(env, std::make_unique<ExecuteJob>(channel_, family_id_, std::move(reqs)));
}

Napi::Value IpvsHandle::Close(const Napi::CallbackInfo& info) {
  channel_->Close();
  return info.Env().Undefined();
}

Napi::Value IpvsHandle::Counters(const Napi::CallbackInfo& info) {
  return addon::CountersToJs(info.Env(), channel_->counters());
}

Napi::Value IpvsHandle::FamilyId(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), family_id_->load());
}

Napi::Value EncodeForTest(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Request r = RequestFromJs(info[0].As<Napi::Object>());
  const uint16_t family = static_cast<uint16_t>(info[1].As<Napi::Number>().Uint32Value());
  nl::Bytes b = Encode(r, family);
  // The flags the socket adds when it sends (seq and port id stay 0).
  nlmsghdr h;
  std::memcpy(&h, b.data(), sizeof h);
  h.nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK | (r.dump ? NLM_F_DUMP : 0);
  std::memcpy(b.data(), &h, sizeof h);
  return Napi::Buffer<uint8_t>::Copy(env, b.data(), b.size());
}

Napi::Value DecodeForTest(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Buffer<uint8_t> buf = info[0].As<Napi::Buffer<uint8_t>>();
  const uint16_t default_af =
      info.Length() > 1 && info[1].IsNumber() ? info[1].As<Napi::Number>().Uint32Value() : AF_INET;
  nl::Bytes msg(buf.Data(), buf.Data() + buf.Length());
  Reply r;
  std::string err;
  if (!Decode(msg, r, err)) throw Napi::Error::New(env, "malformed IPVS message: " + err);
  Napi::Object out = Napi::Object::New(env);
  out.Set("cmd", r.cmd);
  ReplyToJs(env, r, default_af, out);
  return out;
}

}  // namespace ipvs
