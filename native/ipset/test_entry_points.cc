#include "test_entry_points.h"

#include <linux/netlink.h>

#include <cstring>

#include "../addon/js_values.h"
#include "codec.h"
#include "errors.h"
#include "jobs.h"
#include "js_bridge.h"
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

std::vector<Entry> EntriesFromJs(const Napi::Object& o, const SetType& type, uint8_t family) {
  const std::string text = GetString(o, "entries", "entries", 64 << 20);
  std::vector<Entry> out;
  size_t index = 0;
  ParseFailure why;
  if (!ParseEntries(text, type, family, OptionSupport{}, out, index, why))
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
    const std::vector<Entry> entries = EntriesFromJs(o, type, family);
    const uint8_t c = cmd == "add" || cmd == "addMany" ? IPSET_CMD_ADD
                      : cmd == "test"                   ? IPSET_CMD_TEST
                                                        : IPSET_CMD_DEL;
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

}  // namespace

void RegisterTestEntryPoints(Napi::Env env, Napi::Object exports) {
  exports.Set("ipsetEncode", Napi::Function::New(env, Encode));
  exports.Set("ipsetDecodeList", Napi::Function::New(env, DecodeList));
  exports.Set("ipsetDecodeReply", Napi::Function::New(env, DecodeReply));
  exports.Set("ipsetEchoedLineno", Napi::Function::New(env, EchoedLinenoJs));
  exports.Set("ipsetCanonical", Napi::Function::New(env, Canonical));
  exports.Set("ipsetDescribeError", Napi::Function::New(env, Describe));
}

}  // namespace ipset
