#include "attribute.h"

#include <endian.h>
#include <linux/netlink.h>

namespace nl {

void AttrWriter::Raw(uint16_t type, const void* data, size_t len) {
  const size_t start = buf_.size();
  const size_t total = NLA_HDRLEN + len;
  buf_.resize(start + Align4(total), 0);
  nlattr hdr{static_cast<uint16_t>(total), type};
  std::memcpy(buf_.data() + start, &hdr, sizeof hdr);
  if (len) std::memcpy(buf_.data() + start + NLA_HDRLEN, data, len);
}

void AttrWriter::Be16(uint16_t type, uint16_t v) {
  v = htobe16(v);
  Raw(type, &v, 2);
}
void AttrWriter::Be32(uint16_t type, uint32_t v) {
  v = htobe32(v);
  Raw(type, &v, 4);
}
void AttrWriter::Be64(uint16_t type, uint64_t v) {
  v = htobe64(v);
  Raw(type, &v, 8);
}

void AttrWriter::String(uint16_t type, std::string_view s) {
  const size_t start = buf_.size();
  const size_t total = NLA_HDRLEN + s.size() + 1;
  buf_.resize(start + Align4(total), 0);
  nlattr hdr{static_cast<uint16_t>(total), type};
  std::memcpy(buf_.data() + start, &hdr, sizeof hdr);
  std::memcpy(buf_.data() + start + NLA_HDRLEN, s.data(), s.size());
}

size_t AttrWriter::Begin(uint16_t type) {
  const size_t start = buf_.size();
  buf_.resize(start + NLA_HDRLEN, 0);
  nlattr hdr{0, static_cast<uint16_t>(type | NLA_F_NESTED)};
  std::memcpy(buf_.data() + start, &hdr, sizeof hdr);
  return start;
}

void AttrWriter::End(size_t start) {
  const uint16_t len = static_cast<uint16_t>(buf_.size() - start);
  std::memcpy(buf_.data() + start, &len, sizeof len);
}

bool AttrReader::Next(Attr& a) {
  if (!err_.empty()) return false;
  const size_t left = static_cast<size_t>(end_ - p_);
  if (left == 0) return false;
  if (left < NLA_HDRLEN) {
    err_ = "attribute header truncated";
    return false;
  }
  nlattr hdr;
  std::memcpy(&hdr, p_, sizeof hdr);
  if (hdr.nla_len < NLA_HDRLEN || hdr.nla_len > left) {
    err_ = "attribute length " + std::to_string(hdr.nla_len) + " out of bounds";
    return false;
  }
  a.type = hdr.nla_type & NLA_TYPE_MASK;
  a.flags = hdr.nla_type & (NLA_F_NESTED | NLA_F_NET_BYTEORDER);
  a.data = p_ + NLA_HDRLEN;
  a.len = hdr.nla_len - NLA_HDRLEN;
  const size_t step = Align4(hdr.nla_len);
  p_ += step < left ? step : left;
  return true;
}

template <typename T>
static bool GetExact(const Attr& a, T* out) {
  if (a.len != sizeof(T)) return false;
  std::memcpy(out, a.data, sizeof(T));
  return true;
}

bool GetU8(const Attr& a, uint8_t* out) { return GetExact(a, out); }
bool GetU16(const Attr& a, uint16_t* out) { return GetExact(a, out); }
bool GetU32(const Attr& a, uint32_t* out) { return GetExact(a, out); }
bool GetU64(const Attr& a, uint64_t* out) { return GetExact(a, out); }
bool GetBe16(const Attr& a, uint16_t* out) {
  if (!GetExact(a, out)) return false;
  *out = be16toh(*out);
  return true;
}
bool GetBe32(const Attr& a, uint32_t* out) {
  if (!GetExact(a, out)) return false;
  *out = be32toh(*out);
  return true;
}
bool GetBe64(const Attr& a, uint64_t* out) {
  if (!GetExact(a, out)) return false;
  *out = be64toh(*out);
  return true;
}

std::string GetString(const Attr& a) {
  const char* s = reinterpret_cast<const char*>(a.data);
  return std::string(s, strnlen(s, a.len));
}

AttrTable::AttrTable(const uint8_t* data, size_t len, uint16_t max_type)
    : attrs_(max_type + 1), present_(max_type + 1, false) {
  AttrReader r(data, len);
  Attr a;
  while (r.Next(a)) {
    if (a.type > max_type) continue;
    attrs_[a.type] = a;
    present_[a.type] = true;
  }
  if (!r.ok()) err_ = r.error();
}

}  // namespace nl
