// Conversion between the plain objects of the TypeScript layer and the
// ipset structs. Runs on the JavaScript thread only; bad values throw
// TypeError/RangeError naming the field.
#pragma once

#include <napi.h>

#include "codec.h"
#include "entry_text.h"
#include "types.h"

namespace ipset {

// "hash:ip" -> its descriptor; throws TypeError for unsupported types.
const SetType& SetTypeFromJs(const Napi::Object& o, const char* key);
// 'inet' | 'inet6' (default inet) -> NFPROTO_IPV4 / NFPROTO_IPV6.
uint8_t FamilyFromJs(const Napi::Object& o, const char* key, const SetType& type);
// A set name: 1..31 characters, no NUL.
std::string SetNameFromJs(const Napi::Object& o, const char* key, const std::string& field,
                          bool optional = false);

// { name, type, family?, hashSize?, maxElem?, timeout?, counters?, comment?,
//   skbinfo?, range?, size?, netmask? } -> CreateSpec.
CreateSpec CreateSpecFromJs(const Napi::Object& o);
// { timeout, counters, comment, skbinfo } -> OptionSupport (all true if absent).
OptionSupport OptionSupportFromJs(const Napi::Object& o, const char* key);

Napi::Object HeaderToJs(Napi::Env env, const Header& h);
Napi::Object ListedSetToJs(Napi::Env env, ListedSet& s);

// Throws the TypeError/RangeError for a bad entry at `index`, with its
// parts (index, entry, field, code) as properties; `context`, when not
// empty, says what the entry was parsed against and ends the message.
[[noreturn]] void ThrowEntryError(Napi::Env env, size_t index, std::string_view text,
                                  const ParseFailure& why, const std::string& context = "");

}  // namespace ipset
