// Small helpers the entry parsers share (entry_parse.cc, entry_options.cc).
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "entry_text.h"

namespace ipset {

inline bool Fail(ParseFailure& why, std::string field, std::string message, bool range = false) {
  why.field = std::move(field);
  why.message = std::move(message);
  why.range = range;
  return false;
}

inline std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// Decimal digits only.
template <typename T>
bool ParseDecimal(std::string_view s, T* out, int base = 10) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  auto r = std::from_chars(s.data(), end, *out, base);
  return r.ec == std::errc() && r.ptr == end;
}

// A number as the tool reads one (strtoull with base 0): decimal, 0x hex or
// 0-led octal, no sign.
template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) return ParseDecimal(s.substr(2), out, 16);
  if (s.size() > 1 && s[0] == '0') return ParseDecimal(s.substr(1), out, 8);
  return ParseDecimal(s, out);
}

// 0x-prefixed hex (skbmark).
inline bool ParseHex(std::string_view s, uint32_t* out) {
  if (s.size() < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return false;
  return ParseDecimal(s.substr(2), out, 16);
}

// Whether a value that did not parse is a number too large (RangeError)
// rather than something of the wrong form (TypeError).
inline bool IsDecimal(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace ipset
