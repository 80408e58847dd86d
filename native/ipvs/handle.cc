#include "handle.h"

#include <linux/genetlink.h>

#include <cstring>

#include "../addon/job.h"
#include "../addon/js_values.h"
#include "arena.h"
#include "batches.h"
#include "codec.h"
#include "dump_job.h"
#include "family.h"
#include "js_bridge.h"

namespace ipvs {

namespace {

// Requests written by the TypeScript layer as records, read where
// JavaScript wrote them (the job holds a reference to the buffer, which
// nothing else ever sees): no copy, and each request is decoded and encoded
// only when the socket is about to send it.
class JsRequests : public RecordBatch {
 public:
  JsRequests(rec::ReplyWriter& out, const RequestBatch& in) : RecordBatch(out), in_(in) {}

  // Every record is read once before anything is sent: a bad one is a bug
  // on our side, and must not leave half a batch applied.
  nl::Status Check() {
    for (size_t i = 0; i < in_.count; i++) {
      std::string err;
      if (!rec::ReadRequest(in_.data, i, in_.strings, req_, err))
        return nl::Status::Errno(EINVAL, "ipvs request record " + std::to_string(i),
                                 "a bug in ipvs-netlink's TypeScript layer: " + err);
    }
    return nl::Status::Ok();
  }

 private:
  size_t Count() const override { return in_.count; }
  nl::RequestKind EncodeRequest(size_t i, uint16_t family, nl::Bytes& out) override {
    std::string err;
    rec::ReadRequest(in_.data, i, in_.strings, req_, err);  // checked by Check()
    EncodeInto(req_, family, out);
    return KindOf(req_);
  }
  uint16_t DefaultAf(size_t i) const override { return rec::ServiceAf(in_.data, i); }

  const RequestBatch& in_;
  Request req_;  // reused for every record
};

class ExecuteJob : public addon::Job {
 public:
  ExecuteJob(std::shared_ptr<addon::Channel> ch, FamilyIdRef id, RequestBatch in, std::shared_ptr<ArenaSlot> slot)
      : ch_(std::move(ch)),
        id_(std::move(id)),
        in_(std::move(in)),
        lease_(std::move(slot)),
        out_(lease_.arena()),
        batch_(out_, in_) {}

  void Run() override {
    status = batch_.Check();
    if (!status.ok()) return;
    std::lock_guard<std::mutex> g(ch_->mutex());
    status = batch_.Run(*ch_, *id_);
  }

  Napi::Value Result(Napi::Env env) override { return lease_.Lend(RepliesToJs(env, batch_.failures(), out_)); }

 private:
  std::shared_ptr<addon::Channel> ch_;
  FamilyIdRef id_;
  RequestBatch in_;
  ArenaLease lease_;
  rec::ReplyWriter out_;  // writes into lease_'s arena
  JsRequests batch_;      // after in_ and out_, which it refers to
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
                                  InstanceMethod("dump", &IpvsHandle::Dump),
                                  InstanceMethod("close", &IpvsHandle::Close),
                                  InstanceMethod("releaseReplies", &IpvsHandle::ReleaseReplies),
                                  InstanceMethod("counters", &IpvsHandle::Counters),
                                  InstanceMethod("releaseBuffers", &IpvsHandle::ReleaseBuffers),
                                  InstanceMethod("testBufferResidency", &IpvsHandle::TestBufferResidency),
                                  InstanceMethod("familyId", &IpvsHandle::FamilyId)});
  exports.Set("IpvsHandle", f);
  exports.Set("ipvsConstants", Constants(env));
  exports.Set("ipvsRecordLayout", rec::Layout(env));
  exports.Set("ipvsEncode", Napi::Function::New(env, EncodeForTest));
  exports.Set("ipvsDecode", Napi::Function::New(env, DecodeForTest));
}

IpvsHandle::IpvsHandle(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<IpvsHandle>(info),
      family_id_(std::make_shared<std::atomic<uint16_t>>(0)),
      arena_(std::make_shared<ArenaSlot>()) {
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
  return addon::Schedule(info.Env(),
                         std::make_unique<ExecuteJob>(channel_, family_id_, RequestBatchFromJs(info, 0), arena_));
}

Napi::Value IpvsHandle::Dump(const Napi::CallbackInfo& info) {
  return addon::Schedule(info.Env(), MakeDumpJob(info.Env(), channel_, family_id_, arena_, info[0]));
}

Napi::Value IpvsHandle::ReleaseReplies(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(arena_->TakeBack()));
}

Napi::Value IpvsHandle::Close(const Napi::CallbackInfo& info) {
  channel_->Close();
  return info.Env().Undefined();
}

Napi::Value IpvsHandle::Counters(const Napi::CallbackInfo& info) {
  return addon::CountersToJs(info.Env(), channel_->counters());
}

Napi::Value IpvsHandle::ReleaseBuffers(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(channel_->ReleaseIdleBuffers()));
}

Napi::Value IpvsHandle::TestBufferResidency(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(channel_->BufferResidentBytes()));
}

Napi::Value IpvsHandle::FamilyId(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), family_id_->load());
}

// (records, count, strings, familyId) -> one Buffer per request, as the
// socket would send it alone (seq and port id left 0).
Napi::Value EncodeForTest(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  RequestBatch in = RequestBatchFromJs(info, 0);
  const uint16_t family = static_cast<uint16_t>(info[3].As<Napi::Number>().Uint32Value());
  Napi::Array out = Napi::Array::New(env, in.count);
  for (size_t i = 0; i < in.count; i++) {
    Request r;
    std::string err;
    if (!rec::ReadRequest(in.data, i, in.strings, r, err))
      throw Napi::TypeError::New(env, "request record " + std::to_string(i) + ": " + err);
    nl::Bytes b = Encode(r, family);
    nlmsghdr h;
    std::memcpy(&h, b.data(), sizeof h);
    h.nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK | (r.dump ? NLM_F_DUMP : 0);
    std::memcpy(b.data(), &h, sizeof h);
    out.Set(i, Napi::Buffer<uint8_t>::Copy(env, b.data(), b.size()));
  }
  return out;
}

// (message, defaultAf?) -> { records, strings } as a reply to request 0.
Napi::Value DecodeForTest(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Buffer<uint8_t> buf = info[0].As<Napi::Buffer<uint8_t>>();
  const uint16_t default_af =
      info.Length() > 1 && info[1].IsNumber() ? info[1].As<Napi::Number>().Uint32Value() : AF_INET;
  nl::Bytes msg(buf.Data(), buf.Data() + buf.Length());
  Reply r;
  std::string err;
  if (!Decode(msg, r, err)) throw Napi::Error::New(env, "malformed IPVS message: " + err);
  rec::ReplyWriter w;
  w.Add(0, r, default_af);
  Napi::Object out = RepliesToJs(env, {}, w);
  out.Set("cmd", r.cmd);
  return out;
}

}  // namespace ipvs
