#include "test_entry_points.h"

#include <linux/netlink.h>

#include <endian.h>
#include <errno.h>

#include <cstring>

#include "../addon/js_values.h"
#include "bulk.h"
#include "codec.h"
#include "errors.h"
#include "jobs.h"
#include "js_bridge.h"
#include "session.h"
#include "set_types.h"

namespace ipset {

namespace {

using addon::GetBool;
using addon::GetString;
using addon::GetUint;
using addon::Has;

// Marks a request as the socket sends it.
void AsSent(nl::Bytes& b, bool dump) {
  nlmsghdr h;
  std::memcpy(&h, b.data(), sizeof h);
  h.nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0);
  std::memcpy(b.data(), &h, sizeof h);
}

std::vector<Entry> EntriesFromJs(const Napi::Object& o, const SetType& type, uint8_t family,
                                 uint8_t cmd = IPSET_CMD_ADD) {
  const std::string text = GetString(o, "entries", "entries", 64 << 20);
  std::vector<Entry> out;
  size_t index = 0;
  ParseFailure why;
  OptionSupport support;
  support.cmd = cmd;
  if (!ParseEntries(text, type, family, support, out, index, why))
    ThrowEntryError(o.Env(), index, "", why);
  return out;
}

// ipsetEncode({ cmd, protocol?, revision?, name?, to?, type?, family?,
//   entries?, exist?, mode?, maxBytes?, ...create options }) -> Buffer[]
Napi::Value Encode(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = info[0].As<Napi::Object>();
  const std::string cmd = GetString(o, "cmd", "cmd", 16);
  const uint8_t protocol = static_cast<uint8_t>(GetUint(o, "protocol", "protocol", 255, IPSET_PROTOCOL));
  const bool exist = GetBool(o, "exist");
  const std::string name = GetString(o, "name", "name", 64);
  std::vector<nl::Bytes> out;
  bool dump = false;
  if (cmd == "protocol") {
    out.push_back(EncodeProtocol(protocol));
  } else if (cmd == "type") {
    out.push_back(EncodeTypeQuery(SetTypeFromJs(o, "type"), protocol));
  } else if (cmd == "create") {
    CreateSpec s = CreateSpecFromJs(o);
    const uint8_t rev = static_cast<uint8_t>(GetUint(o, "revision", "revision", 255, s.type->max_revision));
    out.push_back(EncodeCreate(s, rev, protocol, exist));
  } else if (cmd == "destroy" || cmd == "flush") {
    out.push_back(EncodeNamed(cmd == "destroy" ? IPSET_CMD_DESTROY : IPSET_CMD_FLUSH, name, protocol));
  } else if (cmd == "rename" || cmd == "swap") {
    out.push_back(EncodeTwoNames(cmd == "rename" ? IPSET_CMD_RENAME : IPSET_CMD_SWAP, name,
                                 GetString(o, "to", "to", 64), protocol));
  } else if (cmd == "list" || cmd == "save" || cmd == "header") {
    if (cmd == "header") {
      out.push_back(EncodeNamed(IPSET_CMD_HEADER, name, protocol));
    } else {
      const std::string mode = GetString(o, "mode", "mode", 16, "full");
      const uint32_t flags = mode == "names" ? IPSET_FLAG_LIST_SETNAME
                             : mode == "header" ? IPSET_FLAG_LIST_HEADER : 0;
      out.push_back(EncodeList(cmd == "list" ? IPSET_CMD_LIST : IPSET_CMD_SAVE, name, flags, protocol));
      dump = true;
    }
  } else if (cmd == "add" || cmd == "del" || cmd == "test" || cmd == "addMany" || cmd == "delMany") {
    const SetType& type = SetTypeFromJs(o, "type");
    const uint8_t family = FamilyFromJs(o, "family", type);
    const uint8_t c = cmd == "add" || cmd == "addMany" ? IPSET_CMD_ADD
                      : cmd == "test"                   ? IPSET_CMD_TEST
                                                        : IPSET_CMD_DEL;
    const std::vector<Entry> entries = EntriesFromJs(o, type, family, c);
    if (cmd == "addMany" || cmd == "delMany") {
      const size_t max = GetUint(o, "maxBytes", "maxBytes", 1 << 20, kMaxBulkBytes);
      for (size_t from = 0; from < entries.size();) {
        size_t next = from;
        out.push_back(EncodeBulk(c, name, type, family, entries, from, max, protocol, exist, &next));
        from = next;
      }
    } else {
      out.push_back(EncodeElement(c, name, type, family, entries[0], protocol, exist));
    }
  } else {
    throw Napi::TypeError::New(env, "unknown cmd '" + cmd + "'");
  }
  Napi::Array arr = Napi::Array::New(env, out.size());
  for (size_t i = 0; i < out.size(); i++) {
    AsSent(out[i], dump);
    arr.Set(static_cast<uint32_t>(i), Napi::Buffer<uint8_t>::Copy(env, out[i].data(), out[i].size()));
  }
  return arr;
}

// ipsetDecodeList(Buffer[]) -> sets, as Ipset.list() returns them.
Napi::Value DecodeList(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array msgs = info[0].As<Napi::Array>();
  ListDecoder d;
  for (uint32_t i = 0; i < msgs.Length(); i++) {
    Napi::Buffer<uint8_t> b = msgs.Get(i).As<Napi::Buffer<uint8_t>>();
    nl::Bytes m(b.Data(), b.Data() + b.Length());
    std::string err;
    if (!d.Add(m, err)) throw Napi::Error::New(env, "malformed ipset message " + std::to_string(i) + ": " + err);
  }
  Napi::Array out = Napi::Array::New(env, d.sets().size());
  for (size_t i = 0; i < d.sets().size(); i++) out.Set(static_cast<uint32_t>(i), ListedSetToJs(env, d.sets()[i]));
  return out;
}

// ipsetDecodeReply(Buffer, 'protocol'|'type') -> { version, min } / { revision, min }
Napi::Value DecodeReply(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Buffer<uint8_t> b = info[0].As<Napi::Buffer<uint8_t>>();
  nl::Bytes m(b.Data(), b.Data() + b.Length());
  const std::string kind = info[1].As<Napi::String>().Utf8Value();
  std::string err;
  Napi::Object o = Napi::Object::New(env);
  if (kind == "protocol") {
    ProtocolReply r;
    if (!DecodeProtocol(m, r, err)) throw Napi::Error::New(env, err);
    o.Set("version", r.version);
    o.Set("min", r.min);
  } else {
    TypeReply r;
    if (!DecodeTypeReply(m, r, err)) throw Napi::Error::New(env, err);
    o.Set("revision", r.revision);
    o.Set("min", r.revision_min);
  }
  return o;
}

Napi::Value EchoedLinenoJs(const Napi::CallbackInfo& info) {
  Napi::Buffer<uint8_t> b = info[0].As<Napi::Buffer<uint8_t>>();
  return Napi::Number::New(info.Env(), EchoedLineno(nl::Bytes(b.Data(), b.Data() + b.Length())));
}

// ipsetCanonical(type, family, text) -> the text parsed and printed back.
Napi::Value Canonical(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("type", info[0]);
  o.Set("family", info[1]);
  const SetType& type = SetTypeFromJs(o, "type");
  const uint8_t family = FamilyFromJs(o, "family", type);
  const std::string text = info[2].As<Napi::String>().Utf8Value();
  Entry e;
  ParseFailure why;
  if (!ParseEntry(text, type, family, OptionSupport{}, e, why)) ThrowEntryError(env, 0, text, why);
  std::string out;
  FormatEntry(e, type, family, out);
  return Napi::String::New(env, out);
}

Napi::Value Describe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int err = info[0].As<Napi::Number>().Int32Value();
  const uint8_t cmd = static_cast<uint8_t>(info[1].As<Napi::Number>().Uint32Value());
  const SetType* type = info.Length() > 2 && info[2].IsString()
                            ? FindSetType(info[2].As<Napi::String>().Utf8Value())
                            : nullptr;
  ErrorMeaning m = DescribeError(err, cmd, type != nullptr, type ? type->kind : Kind::kHash);
  Napi::Object o = Napi::Object::New(env);
  o.Set("code", m.code);
  o.Set("message", m.message);
  return o;
}


// The element LINENOs of a bulk message, in order.
std::vector<uint32_t> MessageLines(const nl::Bytes& msg) {
  std::vector<uint32_t> out;
  const size_t head = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nfgenmsg));
  nl::AttrTable t(msg.data() + head, msg.size() - head, IPSET_ATTR_CMD_MAX);
  const nl::Attr* adt = t.Get(IPSET_ATTR_ADT);
  if (!adt) return out;
  nl::AttrReader r(adt->data, adt->len);
  nl::Attr a;
  while (r.Next(a)) {
    nl::AttrTable d(a.data, a.len, IPSET_ATTR_ADT_MAX);
    uint32_t v = 0;
    if (const nl::Attr* l = d.Get(IPSET_ATTR_LINENO)) nl::GetBe32(*l, &v);
    out.push_back(v);
  }
  return out;
}

// The request as the kernel echoes it when element `lineno` is refused:
// the command-level LINENO overwritten with the element's (call_ad()).
nl::Bytes EchoNaming(const nl::Bytes& msg, uint32_t lineno) {
  nl::Bytes echo = msg;
  const size_t head = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nfgenmsg));
  nl::AttrTable t(echo.data() + head, echo.size() - head, IPSET_ATTR_CMD_MAX);
  if (const nl::Attr* l = t.Get(IPSET_ATTR_LINENO)) {
    const uint32_t be = htobe32(lineno);
    std::memcpy(const_cast<uint8_t*>(l->data), &be, sizeof be);
  }
  return echo;
}

// ipsetBulkSimulate({ cmd, type, family?, entries, exist?, budget, maxBytes? },
//   answer(window) -> answers) -> the result Ipset's bulk calls get, plus
// `windows` (each window's messages as their element LINENOs). `answer`
// plays the kernel: it gets [[lineno, ...], ...] and returns, per message,
// { error: 0 } | { error, lineno? } | { broken: true } (sent, no answer
// came) | { unsent: true } (never sent: the handle was closed first).
Napi::Value BulkSimulate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = info[0].As<Napi::Object>();
  Napi::Function answer = info[1].As<Napi::Function>();
  const std::string cmd = GetString(o, "cmd", "cmd", 16);
  const SetType& type = SetTypeFromJs(o, "type");
  BulkRequest req;
  req.cmd = cmd == "del" ? IPSET_CMD_DEL : IPSET_CMD_ADD;
  req.name = "s";
  req.kind = type.kind;
  req.family = FamilyFromJs(o, "family", type);
  req.exist = GetBool(o, "exist");
  req.max_bytes = GetUint(o, "maxBytes", "maxBytes", 1 << 20, kMaxBulkBytes);
  const size_t budget = GetUint(o, "budget", "budget", 1u << 31);
  const std::vector<Entry> entries = EntriesFromJs(o, type, req.family);
  BulkLoad load(req, entries);
  Napi::Array windows = Napi::Array::New(env);
  while (!load.finished()) {
    std::vector<nl::Exchange> window = load.NextWindow(budget);
    Napi::Array shown = Napi::Array::New(env, window.size());
    for (size_t i = 0; i < window.size(); i++) {
      const std::vector<uint32_t> lines = MessageLines(window[i].request);
      Napi::Array l = Napi::Array::New(env, lines.size());
      for (size_t k = 0; k < lines.size(); k++) l.Set(static_cast<uint32_t>(k), lines[k]);
      shown.Set(static_cast<uint32_t>(i), l);
    }
    windows.Set(windows.Length(), shown);
    Napi::Value got = answer.Call({shown});
    if (!got.IsArray()) throw Napi::TypeError::New(env, "answer must return an array");
    Napi::Array answers = got.As<Napi::Array>();
    // The conversation's failure, as the socket core reports it: a timeout
    // once something sent went unanswered, else the close that stopped it.
    nl::Status st;
    for (size_t i = 0; i < window.size(); i++) {
      Napi::Object a = answers.Get(static_cast<uint32_t>(i)).As<Napi::Object>();
      if (GetBool(a, "broken") && st.ok())
        st = nl::Status::Errno(ETIMEDOUT, "recvmmsg", "no reply from the kernel within 5000 ms");
    }
    for (size_t i = 0; i < window.size(); i++) {
      Napi::Object a = answers.Get(static_cast<uint32_t>(i)).As<Napi::Object>();
      if (GetBool(a, "unsent") && st.ok()) st = nl::Status::Errno(EBADF, "open", "the handle is closed");
    }
    for (size_t i = 0; i < window.size(); i++) {
      Napi::Object a = answers.Get(static_cast<uint32_t>(i)).As<Napi::Object>();
      nl::Exchange& x = window[i];
      x.done = true;
      const bool unsent = GetBool(a, "unsent");
      if (GetBool(a, "broken") || unsent) {
        x.broken = true;
        x.sent = !unsent;
        x.error = st.err;
        x.ext_message = st.message;
        continue;
      }
      x.error = static_cast<int>(GetUint(a, "error", "error", 1u << 31));
      if (Has(a, "lineno")) x.error_echo = EchoNaming(x.request, GetUint(a, "lineno", "lineno", 0xFFFFFFFF));
    }
    load.Absorb(window, st);
  }
  load.Finish();
  Napi::Object r = BulkResultToJs(env, load, req.cmd, &type);
  r.Set("windows", windows);
  return r;
}

// ipsetNegotiate(answer) -> { errno, where, message, version, min, kernel,
// requests }: the protocol negotiation of a fresh socket, with `answer`
// playing the kernel: it gets each request (a Buffer) and returns
// { error } or { reply: Buffer }.
Napi::Value NegotiateJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Function answer = info[0].As<Napi::Function>();
  Napi::Array requests = Napi::Array::New(env);
  Session session;
  nl::Status st = NegotiateWith(
      [&](nl::Bytes request, nl::Exchange& x) {
        AsSent(request, false);
        requests.Set(requests.Length(), Napi::Buffer<uint8_t>::Copy(env, request.data(), request.size()));
        Napi::Object a = answer.Call({requests.Get(requests.Length() - 1)}).As<Napi::Object>();
        x = nl::Exchange{};
        x.done = true;
        x.error = static_cast<int>(GetUint(a, "error", "error", 1u << 31));
        if (Has(a, "reply")) {
          Napi::Buffer<uint8_t> b = a.Get("reply").As<Napi::Buffer<uint8_t>>();
          x.replies.emplace_back(b.Data(), b.Data() + b.Length());
        }
        return nl::Status::Ok();
      },
      session);
  Napi::Object o = Napi::Object::New(env);
  o.Set("errno", st.err);
  o.Set("where", st.where);
  o.Set("message", st.message);
  o.Set("version", session.protocol.load());
  o.Set("min", session.kernel_min.load());
  o.Set("kernel", session.kernel_protocol.load());
  o.Set("requests", requests);
  return o;
}
}  // namespace

void RegisterTestEntryPoints(Napi::Env env, Napi::Object exports) {
  exports.Set("ipsetEncode", Napi::Function::New(env, Encode));
  exports.Set("ipsetDecodeList", Napi::Function::New(env, DecodeList));
  exports.Set("ipsetDecodeReply", Napi::Function::New(env, DecodeReply));
  exports.Set("ipsetEchoedLineno", Napi::Function::New(env, EchoedLinenoJs));
  exports.Set("ipsetCanonical", Napi::Function::New(env, Canonical));
  exports.Set("ipsetDescribeError", Napi::Function::New(env, Describe));
  exports.Set("ipsetBulkSimulate", Napi::Function::New(env, BulkSimulate));
  exports.Set("ipsetNegotiate", Napi::Function::New(env, NegotiateJs));
}

}  // namespace ipset
