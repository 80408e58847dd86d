// Netlink attributes: a writer that appends TLVs (with nesting) to a byte
// buffer, and a reader that walks TLVs in a byte span with bounds checks.
// The reader keeps its first error (like mdlayher/netlink's decoder) so
// callers decode a whole tree and check once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace nl {

using Bytes = std::vector<uint8_t>;

constexpr size_t Align4(size_t n) { return (n + 3) & ~size_t{3}; }

// Appends attributes to a message buffer. Integers are written in host order
// unless the caller asks for network order (`Be16`, `Be32`, `Be64`).
class AttrWriter {
 public:
  explicit AttrWriter(Bytes& buf) : buf_(buf) {}

  void Raw(uint16_t type, const void* data, size_t len);
  void U8(uint16_t type, uint8_t v) { Raw(type, &v, 1); }
  void U16(uint16_t type, uint16_t v) { Raw(type, &v, 2); }
  void U32(uint16_t type, uint32_t v) { Raw(type, &v, 4); }
  void U64(uint16_t type, uint64_t v) { Raw(type, &v, 8); }
  void Be16(uint16_t type, uint16_t v);
  void Be32(uint16_t type, uint32_t v);
  void Be64(uint16_t type, uint64_t v);
  // A NUL-terminated string, as the kernel's NLA_NUL_STRING / NLA_STRING expect.
  void String(uint16_t type, std::string_view s);

  // Opens a nested attribute; returns its offset for End().
  size_t Begin(uint16_t type);
  void End(size_t start);
  // Drops a nest that was begun but must not be sent (libipset's nest_cancel).
  void Cancel(size_t start) { buf_.resize(start); }

  size_t size() const { return buf_.size(); }

 private:
  Bytes& buf_;
};

// One attribute seen by the reader.
struct Attr {
  uint16_t type = 0;   // without NLA_F_NESTED / NLA_F_NET_BYTEORDER
  uint16_t flags = 0;  // the NLA_F_* bits that came with it
  const uint8_t* data = nullptr;
  size_t len = 0;
};

// Walks attributes in [data, data+len). Malformed input never reads out of
// bounds: it stops and records an error instead.
class AttrReader {
 public:
  AttrReader(const uint8_t* data, size_t len) : p_(data), end_(data + len) {}

  // Advances to the next attribute; false at the end or on error.
  bool Next(Attr& a);
  bool ok() const { return err_.empty(); }
  const std::string& error() const { return err_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  std::string err_;
};

// Typed access to an attribute's payload with length checks. Each returns
// false (leaving *out untouched) when the payload has the wrong size.
bool GetU8(const Attr& a, uint8_t* out);
bool GetU16(const Attr& a, uint16_t* out);
bool GetU32(const Attr& a, uint32_t* out);
bool GetU64(const Attr& a, uint64_t* out);
bool GetBe16(const Attr& a, uint16_t* out);
bool GetBe32(const Attr& a, uint32_t* out);
bool GetBe64(const Attr& a, uint64_t* out);
// Reads a string attribute, stopping at the first NUL or the payload's end.
std::string GetString(const Attr& a);

// Collects the attributes of one level into an index by type, so decoders can
// look them up directly. Types beyond `max_type` are ignored (newer kernels
// add attributes; old decoders must not fail on them).
class AttrTable {
 public:
  AttrTable(const uint8_t* data, size_t len, uint16_t max_type);
  const Attr* Get(uint16_t type) const {
    return type < present_.size() && present_[type] ? &attrs_[type] : nullptr;
  }
  bool ok() const { return err_.empty(); }
  const std::string& error() const { return err_; }

 private:
  std::vector<Attr> attrs_;
  std::vector<bool> present_;
  std::string err_;
};

}  // namespace nl
