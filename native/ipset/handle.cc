#include "handle.h"

#include <linux/netlink.h>

#include "../addon/js_values.h"
#include "js_bridge.h"
#include "set_types.h"
#include "test_entry_points.h"

namespace ipset {

namespace {

using addon::GetBool;
using addon::GetString;
using addon::Has;

Napi::Object ArgObject(const Napi::CallbackInfo& info, const char* what) {
  if (!info[0].IsObject()) throw Napi::TypeError::New(info.Env(), std::string(what) + " takes an object");
  return info[0].As<Napi::Object>();
}

uint8_t CommandFromJs(const Napi::Object& o) {
  const std::string c = GetString(o, "cmd", "cmd", 16);
  if (c == "create") return IPSET_CMD_CREATE;
  if (c == "destroy") return IPSET_CMD_DESTROY;
  if (c == "flush") return IPSET_CMD_FLUSH;
  if (c == "rename") return IPSET_CMD_RENAME;
  if (c == "swap") return IPSET_CMD_SWAP;
  throw Napi::TypeError::New(o.Env(), "unknown command '" + c + "'");
}

uint8_t ElementCommandFromJs(const Napi::Object& o) {
  const std::string c = GetString(o, "cmd", "cmd", 16);
  if (c == "add") return IPSET_CMD_ADD;
  if (c == "del") return IPSET_CMD_DEL;
  if (c == "test") return IPSET_CMD_TEST;
  throw Napi::TypeError::New(o.Env(), "unknown element command '" + c + "'");
}

uint32_t ListFlagsFromJs(const Napi::Object& o) {
  const std::string m = GetString(o, "mode", "mode", 16, "full");
  if (m == "full") return 0;
  if (m == "header") return IPSET_FLAG_LIST_HEADER;
  if (m == "names") return IPSET_FLAG_LIST_SETNAME;
  throw Napi::TypeError::New(o.Env(), "mode must be 'full', 'header' or 'names'");
}

// The numbers the TypeScript layer needs, from the uapi headers.
Napi::Object Constants(Napi::Env env) {
  Napi::Object c = Napi::Object::New(env);
#define IPSET_CONST(name) c.Set(#name, Napi::Number::New(env, name))
  IPSET_CONST(IPSET_PROTOCOL);
  IPSET_CONST(IPSET_PROTOCOL_MIN);
  IPSET_CONST(IPSET_MAXNAMELEN);
  IPSET_CONST(IPSET_MAX_COMMENT_SIZE);
  IPSET_CONST(IPSET_ERR_PRIVATE);
  IPSET_CONST(IPSET_ERR_PROTOCOL);
  IPSET_CONST(IPSET_ERR_EXIST);
  IPSET_CONST(IPSET_ERR_EXIST_SETNAME2);
  IPSET_CONST(IPSET_ERR_TYPE_MISMATCH);
  IPSET_CONST(IPSET_ERR_BUSY);
  IPSET_CONST(IPSET_ERR_TIMEOUT);
  IPSET_CONST(IPSET_ERR_TYPE_SPECIFIC);
  IPSET_CONST(IPSET_ERR_HASH_FULL);
  IPSET_CONST(IPSET_ERR_BITMAP_RANGE);
  IPSET_CONST(IPSET_ERR_LIST_FULL);
  IPSET_CONST(IPSET_ERR_FIND_TYPE);
  IPSET_CONST(NFPROTO_IPV4);
  IPSET_CONST(NFPROTO_IPV6);
#undef IPSET_CONST
  c.Set("kMaxBulkBytes", Napi::Number::New(env, static_cast<double>(kMaxBulkBytes)));
  size_t n = 0;
  const SetType* const* types = AllSetTypes(&n);
  Napi::Array names = Napi::Array::New(env, n);
  for (size_t i = 0; i < n; i++) names.Set(static_cast<uint32_t>(i), types[i]->name);
  c.Set("setTypes", names);
  return c;
}

}  // namespace

void IpsetHandle::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function f = DefineClass(env, "IpsetHandle",
                                 {InstanceMethod("open", &IpsetHandle::Open),
                                  InstanceMethod("protocol", &IpsetHandle::Protocol),
                                  InstanceMethod("command", &IpsetHandle::Command),
                                  InstanceMethod("list", &IpsetHandle::List),
                                  InstanceMethod("elements", &IpsetHandle::Elements),
                                  InstanceMethod("check", &IpsetHandle::Check),
                                  InstanceMethod("close", &IpsetHandle::Close),
                                  InstanceMethod("counters", &IpsetHandle::Counters),
                                  InstanceMethod("releaseBuffers", &IpsetHandle::ReleaseBuffers),
                                  InstanceMethod("testBufferResidency", &IpsetHandle::TestBufferResidency)});
  exports.Set("IpsetHandle", f);
  exports.Set("ipsetConstants", Constants(env));
  RegisterTestEntryPoints(env, exports);
}

IpsetHandle::IpsetHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<IpsetHandle>(info) {
  nl::SocketOptions opts = addon::SocketOptionsFromJs(info[0], NETLINK_NETFILTER);
  shared_.session = std::make_shared<Session>();
  std::shared_ptr<Session> session = shared_.session;
  shared_.channel = std::make_shared<addon::Channel>(
      opts, [session](nl::NetlinkSocket& s) { return Negotiate(s, *session); });
}

IpsetHandle::~IpsetHandle() { shared_.channel->Close(); }

Napi::Value IpsetHandle::Open(const Napi::CallbackInfo& info) {
  return addon::Schedule(info.Env(), MakeOpenJob(shared_));
}

Napi::Value IpsetHandle::Protocol(const Napi::CallbackInfo& info) {
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("version", shared_.session->protocol.load());
  o.Set("min", shared_.session->kernel_min.load());
  o.Set("kernel", shared_.session->kernel_protocol.load());
  return o;
}

Napi::Value IpsetHandle::Command(const Napi::CallbackInfo& info) {
  Napi::Object o = ArgObject(info, "command()");
  CommandOp op;
  op.cmd = CommandFromJs(o);
  op.exist = GetBool(o, "exist");
  switch (op.cmd) {
    case IPSET_CMD_CREATE:
      op.create = CreateSpecFromJs(o);
      op.name = op.create.name;
      break;
    case IPSET_CMD_RENAME:
    case IPSET_CMD_SWAP:
      op.name = SetNameFromJs(o, "name", "name");
      op.name2 = SetNameFromJs(o, "to", "to");
      break;
    default:
      op.name = SetNameFromJs(o, "name", "name", true);
      break;
  }
  return addon::Schedule(info.Env(), MakeCommandJob(shared_, std::move(op)));
}

Napi::Value IpsetHandle::List(const Napi::CallbackInfo& info) {
  Napi::Object o = ArgObject(info, "list()");
  std::string name = SetNameFromJs(o, "name", "name", true);
  const uint32_t flags = ListFlagsFromJs(o);
  return addon::Schedule(info.Env(), MakeListJob(shared_, std::move(name), flags));
}

namespace {

// Reads an elements() / check() argument and parses its entries, here on
// the JavaScript thread: a bad entry throws before any byte is sent.
ElementsOp ParseElements(const Napi::CallbackInfo& info, const char* what) {
  Napi::Env env = info.Env();
  Napi::Object o = ArgObject(info, what);
  ElementsOp op;
  op.cmd = ElementCommandFromJs(o);
  op.name = SetNameFromJs(o, "name", "name");
  op.type = &SetTypeFromJs(o, "type");
  op.family = FamilyFromJs(o, "family", *op.type);
  op.exist = GetBool(o, "exist");
  op.single = GetBool(o, "single");
  OptionSupport support = OptionSupportFromJs(o, "support");
  support.cmd = op.cmd;
  const std::string context = GetString(o, "context", "context", 1024);
  if (!Has(o, "entries") || !o.Get("entries").IsString())
    throw Napi::TypeError::New(env, "entries must be a string of entries separated by newlines");
  const std::string text = o.Get("entries").As<Napi::String>().Utf8Value();
  size_t index = 0;
  ParseFailure why;
  if (op.single) {
    op.entries.resize(1);
    if (!ParseEntry(text, *op.type, op.family, support, op.entries[0], why))
      ThrowEntryError(env, 0, text, why, context);
  } else if (!ParseEntries(text, *op.type, op.family, support, op.entries, index, why)) {
    size_t start = 0;
    for (size_t i = 0; i < index; i++) start = text.find('\n', start) + 1;
    const size_t end = text.find('\n', start);
    ThrowEntryError(env, index, std::string_view(text).substr(start, end == std::string::npos ? std::string::npos : end - start), why, context);
  }
  if (op.cmd == IPSET_CMD_TEST && !op.single)
    throw Napi::TypeError::New(env, "test takes a single entry");
  return op;
}

}  // namespace

Napi::Value IpsetHandle::Elements(const Napi::CallbackInfo& info) {
  ElementsOp op = ParseElements(info, "elements()");
  return addon::Schedule(info.Env(), MakeElementsJob(shared_, std::move(op)));
}

Napi::Value IpsetHandle::Check(const Napi::CallbackInfo& info) {
  ParseElements(info, "check()");
  return info.Env().Undefined();
}

Napi::Value IpsetHandle::Close(const Napi::CallbackInfo& info) {
  shared_.channel->Close();
  return info.Env().Undefined();
}

Napi::Value IpsetHandle::Counters(const Napi::CallbackInfo& info) {
  return addon::CountersToJs(info.Env(), shared_.channel->counters());
}

Napi::Value IpsetHandle::ReleaseBuffers(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(shared_.channel->ReleaseIdleBuffers()));
}

Napi::Value IpsetHandle::TestBufferResidency(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(shared_.channel->BufferResidentBytes()));
}

}  // namespace ipset
