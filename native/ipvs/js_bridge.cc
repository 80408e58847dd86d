#include "js_bridge.h"

#include <memory>

#include "../addon/errno_name.h"

namespace ipvs {

RequestBatch RequestBatchFromJs(const Napi::CallbackInfo& info, size_t first) {
  Napi::Env env = info.Env();
  if (!info[first].IsTypedArray() || info[first].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    throw Napi::TypeError::New(env, "request records must be a Uint8Array");
  if (!info[first + 1].IsNumber()) throw Napi::TypeError::New(env, "the request count must be a number");
  if (!info[first + 2].IsArray()) throw Napi::TypeError::New(env, "request strings must be an array");
  Napi::Uint8Array bytes = info[first].As<Napi::Uint8Array>();
  RequestBatch b;
  b.count = info[first + 1].As<Napi::Number>().Uint32Value();
  if (bytes.ByteLength() != b.count * rec::kRequestSize)
    throw Napi::TypeError::New(env, std::to_string(b.count) + " requests need " +
                                        std::to_string(b.count * rec::kRequestSize) + " bytes, got " +
                                        std::to_string(bytes.ByteLength()));
  b.ref = Napi::Persistent(bytes);
  b.data = bytes.Data();
  Napi::Array strings = info[first + 2].As<Napi::Array>();
  b.strings.reserve(strings.Length());
  for (uint32_t i = 0; i < strings.Length(); i++) {
    Napi::Value v = strings.Get(i);
    if (!v.IsString()) throw Napi::TypeError::New(env, "request strings must be strings");
    b.strings.push_back(v.As<Napi::String>().Utf8Value());
  }
  return b;
}

Napi::Array StringsToJs(Napi::Env env, const std::vector<std::string>& s, size_t first) {
  const size_t n = s.size() > first ? s.size() - first : 0;
  Napi::Array strings = Napi::Array::New(env, n);
  for (size_t i = 0; i < n; i++) strings.Set(i, Napi::String::New(env, s[first + i]));
  return strings;
}

Napi::Object RepliesToJs(Napi::Env env, const std::vector<Failure>& failures,
                         rec::ReplyWriter& replies, size_t first_string) {
  Napi::Object out = Napi::Object::New(env);
  Napi::Array list = Napi::Array::New(env, failures.size());
  for (size_t k = 0; k < failures.size(); k++) {
    const Failure& x = failures[k];
    Napi::Object f = Napi::Object::New(env);
    f.Set("index", Napi::Number::New(env, static_cast<double>(x.index)));
    f.Set("errno", Napi::Number::New(env, x.error));
    f.Set("code", Napi::String::New(env, addon::ErrnoName(x.error)));
    f.Set("message", Napi::String::New(env, x.message));
    f.Set("text", Napi::String::New(env, addon::ErrnoText(x.error)));
    if (!x.where.empty()) f.Set("syscall", Napi::String::New(env, x.where));
    list.Set(k, f);
  }
  out.Set("failures", list);

  // The records are lent, not copied: an external ArrayBuffer over the
  // writer's arena, which it keeps alive. Whoever lends it must detach it
  // before the arena is written again (ArenaSlot in handle.cc).
  std::vector<uint8_t>& bytes = replies.bytes();
  Napi::ArrayBuffer records =
      bytes.empty() ? Napi::ArrayBuffer::New(env, 0)
                    : Napi::ArrayBuffer::New(env, bytes.data(), bytes.size(),
                                             [](Napi::Env, void*, rec::Arena* keep) { delete keep; },
                                             new rec::Arena(replies.arena()));
  out.Set("records", records);

  out.Set("strings", StringsToJs(env, replies.strings(), first_string));
  return out;
}

}  // namespace ipvs
