// Values to and from JavaScript, by schema. The TypeScript layer checks
// every argument first (lib/util/check.ts); these checks are the last line,
// so a bad value still throws a TypeError/RangeError naming its field and
// nothing is sent.
#pragma once

#include <napi.h>

#include <string>
#include <vector>

#include "codec.h"

namespace nft {

// An object of schema `s` from a JavaScript object (every key must be one
// of the schema's fields). `path` names it in errors.
Value ObjectFromJs(const Napi::Value& v, const Schema& s, const std::string& path);
// An expression: { type: 'payload', ...fields }, or { type, raw } for one
// this library does not know.
Value ExpressionFromJs(const Napi::Value& v, const std::string& path);

Napi::Value ToJs(Napi::Env env, const Value& v, Kind kind);
Napi::Object MessageToJs(Napi::Env env, const Message& m);

// One change of a transaction, or one query: { type: 'newrule', family,
// flags?, attrs }.
struct Request {
  const MessageType* type = nullptr;
  uint8_t family = 0;
  uint16_t flags = 0;
  Value attrs;
};
Request RequestFromJs(const Napi::Value& v, const std::string& path);

}  // namespace nft
