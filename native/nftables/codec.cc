#include "codec.h"

#include <arpa/inet.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>

#include <algorithm>
#include <cstring>

#include "../netlink/message.h"

namespace nft {

const Value* Value::Get(const char* name) const {
  for (const auto& [f, v] : fields)
    if (std::strcmp(f->name, name) == 0) return &v;
  return nullptr;
}

bool Value::operator==(const Value& o) const {
  if (type != o.type || num != o.num || str != o.str || schema != o.schema || raw != o.raw ||
      fields.size() != o.fields.size() || items != o.items)
    return false;
  for (size_t i = 0; i < fields.size(); i++)
    if (fields[i].first != o.fields[i].first || fields[i].second != o.fields[i].second) return false;
  return true;
}

namespace {

void EncodeExpr(nl::AttrWriter& w, const Value& v) {
  w.String(NFTA_EXPR_NAME, v.str);
  if (v.schema) {
    const size_t data = w.Begin(NFTA_EXPR_DATA);
    EncodeAttrs(w, *v.schema, v);
    w.End(data);
  } else {
    w.Raw(NFTA_EXPR_DATA | NLA_F_NESTED, v.raw.data(), v.raw.size());
  }
}

void EncodeField(nl::AttrWriter& w, const Field& f, const Value& v) {
  switch (f.kind) {
    case Kind::kU8: w.U8(f.attr, static_cast<uint8_t>(v.num)); break;
    case Kind::kBe16: w.Be16(f.attr, static_cast<uint16_t>(v.num)); break;
    case Kind::kBe32:
    case Kind::kBeS32: w.Be32(f.attr, static_cast<uint32_t>(v.num)); break;
    case Kind::kBe64:
    case Kind::kBe64Big: w.Be64(f.attr, v.num); break;
    case Kind::kString: w.String(f.attr, v.str); break;
    case Kind::kStringUnterminated: w.Raw(f.attr, v.str.data(), v.str.size()); break;
    case Kind::kBytes: w.Raw(f.attr, v.str.data(), v.str.size()); break;
    case Kind::kFlag: w.Raw(f.attr, nullptr, 0); break;
    case Kind::kNest: {
      const size_t at = w.Begin(f.attr);
      EncodeAttrs(w, *f.schema, v);
      w.End(at);
      break;
    }
    case Kind::kList:
    case Kind::kExprList: {
      const size_t at = w.Begin(f.attr);
      for (const Value& item : v.items) {
        const size_t elem = w.Begin(NFTA_LIST_ELEM);
        if (f.kind == Kind::kList) EncodeAttrs(w, *f.schema, item);
        else EncodeExpr(w, item);
        w.End(elem);
      }
      w.End(at);
      break;
    }
    case Kind::kItems: {
      const size_t at = w.Begin(f.attr);
      const auto* data = reinterpret_cast<const uint8_t*>(v.str.data());
      const std::vector<nl::Attr> items = ItemsOf(data, v.str.size());
      AppendItems(w, items, 0, items.size(), 1);
      w.End(at);
      break;
    }
    case Kind::kExpr: {
      const size_t at = w.Begin(f.attr);
      EncodeExpr(w, v);
      w.End(at);
      break;
    }
    case Kind::kObjData:
      if (v.schema) {
        const size_t at = w.Begin(f.attr);
        EncodeAttrs(w, *v.schema, v);
        w.End(at);
      } else {
        w.Raw(f.attr | NLA_F_NESTED, v.raw.data(), v.raw.size());
      }
      break;
    case Kind::kData: {
      const size_t at = w.Begin(f.attr);
      if (v.type == Value::Type::kBytes) {
        w.Raw(NFTA_DATA_VALUE, v.str.data(), v.str.size());
      } else {
        const size_t verdict = w.Begin(NFTA_DATA_VERDICT);
        EncodeAttrs(w, VerdictSchema(), v);
        w.End(verdict);
      }
      w.End(at);
      break;
    }
  }
}

bool DecodeExpr(const uint8_t* data, size_t len, Value& out, std::string& error, const std::string& path) {
  nl::AttrTable t(data, len, NFTA_EXPR_MAX);
  if (!t.ok()) {
    error = path + ": " + t.error();
    return false;
  }
  const nl::Attr* name = t.Get(NFTA_EXPR_NAME);
  if (!name) {
    error = path + ": an expression without a name";
    return false;
  }
  out.type = Value::Type::kObject;
  out.str = nl::GetString(*name);
  out.schema = ExpressionSchema(out.str.c_str());
  const nl::Attr* body = t.Get(NFTA_EXPR_DATA);
  if (!out.schema) {
    if (body) out.raw.assign(reinterpret_cast<const char*>(body->data), body->len);
    return true;
  }
  if (!body) return true;
  return DecodeAttrs(body->data, body->len, *out.schema, out, error, path + "(" + out.str + ")");
}

bool DecodeData(const uint8_t* data, size_t len, Value& out, std::string& error, const std::string& path) {
  nl::AttrTable t(data, len, NFTA_DATA_MAX);
  if (!t.ok()) {
    error = path + ": " + t.error();
    return false;
  }
  if (const nl::Attr* v = t.Get(NFTA_DATA_VALUE)) {
    out.type = Value::Type::kBytes;
    out.str.assign(reinterpret_cast<const char*>(v->data), v->len);
    return true;
  }
  if (const nl::Attr* v = t.Get(NFTA_DATA_VERDICT)) return DecodeAttrs(v->data, v->len, VerdictSchema(), out, error, path);
  error = path + ": data with neither a value nor a verdict";
  return false;
}

template <typename T, bool (*Get)(const nl::Attr&, T*)>
bool ReadNumber(const nl::Attr& a, uint64_t* out) {
  T x;
  if (!Get(a, &x)) return false;
  *out = x;
  return true;
}

bool DecodeField(const Field& f, const nl::Attr& a, Value& v, std::string& error, const std::string& path) {
  auto bad_size = [&] {
    error = path + ": " + std::to_string(a.len) + " bytes is the wrong size";
    return false;
  };
  v.type = Value::Type::kNumber;
  switch (f.kind) {
    case Kind::kU8:
      return ReadNumber<uint8_t, nl::GetU8>(a, &v.num) || bad_size();
    case Kind::kBe16:
      return ReadNumber<uint16_t, nl::GetBe16>(a, &v.num) || bad_size();
    case Kind::kBe32:
      return ReadNumber<uint32_t, nl::GetBe32>(a, &v.num) || bad_size();
    case Kind::kBeS32:
      if (!ReadNumber<uint32_t, nl::GetBe32>(a, &v.num)) return bad_size();
      v.num = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v.num)));
      return true;
    case Kind::kBe64:
    case Kind::kBe64Big:
      return ReadNumber<uint64_t, nl::GetBe64>(a, &v.num) || bad_size();
    case Kind::kString:
    case Kind::kStringUnterminated:
      v.type = Value::Type::kString;
      v.str = nl::GetString(a);
      return true;
    case Kind::kBytes:
      v.type = Value::Type::kBytes;
      v.str.assign(reinterpret_cast<const char*>(a.data), a.len);
      return true;
    case Kind::kFlag:
      v.type = Value::Type::kFlag;
      return true;
    case Kind::kNest:
      v.type = Value::Type::kObject;
      return DecodeAttrs(a.data, a.len, *f.schema, v, error, path);
    case Kind::kExpr:
      return DecodeExpr(a.data, a.len, v, error, path);
    case Kind::kObjData:
      // Kept as bytes until the object's type is known (ReadObjData).
      v.type = Value::Type::kObject;
      v.raw.assign(reinterpret_cast<const char*>(a.data), a.len);
      return true;
    case Kind::kData:
      return DecodeData(a.data, a.len, v, error, path);
    case Kind::kItems: {
      if (!ItemsOk(a.data, a.len, error)) {
        error = path + error;
        return false;
      }
      // Kept numbered 1, 2, ..., as they are sent: one form, whoever wrote them.
      nl::Bytes items;
      nl::AttrWriter w(items);
      const std::vector<nl::Attr> list = ItemsOf(a.data, a.len);
      AppendItems(w, list, 0, list.size(), 1);
      v.type = Value::Type::kBytes;
      v.str.assign(items.begin(), items.end());
      return true;
    }
    case Kind::kList:
    case Kind::kExprList: {
      v.type = Value::Type::kList;
      nl::AttrReader r(a.data, a.len);
      nl::Attr item;
      while (r.Next(item)) {
        Value x;  // any item type
        const std::string at = path + "[" + std::to_string(v.items.size()) + "]";
        const bool ok = f.kind == Kind::kList ? DecodeAttrs(item.data, item.len, *f.schema, x, error, at)
                                              : DecodeExpr(item.data, item.len, x, error, at);
        if (!ok) return false;
        v.items.push_back(std::move(x));
      }
      if (!r.ok()) {
        error = path + ": " + r.error();
        return false;
      }
      return true;
    }
  }
  return true;
}

// A stateful object's state, read by the object's type (which may come
// after it): as the expression of the same name, or left as bytes.
// DecodeMessage calls it for object messages, whose top level holds both.
bool ReadObjData(Value& object, std::string& error, const std::string& path) {
  for (auto& [f, v] : object.fields) {
    if (f->kind != Kind::kObjData) continue;
    const Value* type = object.Get("type");
    const char* name = type ? ObjectDataName(static_cast<uint32_t>(type->num)) : nullptr;
    const Schema* schema = name ? ExpressionSchema(name) : nullptr;
    if (!schema) return true;
    std::string raw = std::move(v.raw);
    v = Value{};
    if (!DecodeAttrs(reinterpret_cast<const uint8_t*>(raw.data()), raw.size(), *schema, v, error,
                     (path.empty() ? "" : path + ".") + f->name + "(" + name + ")"))
      return false;
    v.str = name;
  }
  return true;
}

}  // namespace

bool ItemsOk(const uint8_t* data, size_t len, std::string& error) {
  nl::AttrReader r(data, len);
  nl::Attr item;
  size_t i = 0;
  for (; r.Next(item); i++) {
    nl::AttrReader attrs(item.data, item.len);
    nl::Attr a;
    while (attrs.Next(a)) {
    }
    if (!attrs.ok()) {
      error = "[" + std::to_string(i) + "]: " + attrs.error();
      return false;
    }
  }
  if (!r.ok()) {
    error = "[" + std::to_string(i) + "]: " + r.error();
    return false;
  }
  return true;
}

std::vector<nl::Attr> ItemsOf(const uint8_t* data, size_t len) {
  std::vector<nl::Attr> out;
  nl::AttrReader r(data, len);
  nl::Attr item;
  while (r.Next(item)) out.push_back(item);
  return out;
}

void AppendItems(nl::AttrWriter& w, const std::vector<nl::Attr>& items, size_t from, size_t to, uint16_t first) {
  for (size_t i = from; i < to; i++)
    w.Raw(static_cast<uint16_t>((first + (i - from)) | NLA_F_NESTED), items[i].data, items[i].len);
}

void EncodeAttrs(nl::AttrWriter& w, const Schema& s, const Value& v) {
  // In the schema's order, which is the order nft sends them in.
  for (const Field& f : s.fields)
    for (const auto& [field, value] : v.fields)
      if (field == &f) EncodeField(w, f, value);
}

bool DecodeAttrs(const uint8_t* data, size_t len, const Schema& s, Value& out, std::string& error,
                 const std::string& path) {
  out.type = Value::Type::kObject;
  out.schema = &s;
  nl::AttrReader r(data, len);
  nl::Attr a;
  while (r.Next(a)) {
    const Field* f = s.ByAttr(a.type);
    if (!f) continue;  // an attribute from a newer kernel
    Value v;
    if (!DecodeField(*f, a, v, error, path.empty() ? f->name : path + "." + f->name)) return false;
    bool replaced = false;
    for (auto& [field, old] : out.fields)
      if (field == f) {
        old = std::move(v);
        replaced = true;
      }
    if (!replaced) out.fields.emplace_back(f, std::move(v));
  }
  if (!r.ok()) {
    error = (path.empty() ? s.name : path) + ": " + r.error();
    return false;
  }
  // In the schema's order, whatever order they came in: one object, one form.
  std::stable_sort(out.fields.begin(), out.fields.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return true;
}

void EncodeMessage(nl::Bytes& out, const MessageType& type, uint8_t family, uint16_t flags, const Value& attrs) {
  nl::MessageBuilder b(out, static_cast<uint16_t>((NFNL_SUBSYS_NFTABLES << 8) | type.msg), flags);
  nfgenmsg g{};
  g.nfgen_family = family;
  g.version = NFNETLINK_V0;
  b.Header(g);
  EncodeAttrs(b.attrs(), *ObjectSchema(type.object), attrs);
  b.Close();
}

bool DecodeMessage(const uint8_t* data, size_t len, Message& out, std::string& error) {
  if (len < NLMSG_HDRLEN + sizeof(nfgenmsg)) {
    error = "an nf_tables message shorter than its headers";
    return false;
  }
  nlmsghdr h;
  std::memcpy(&h, data, sizeof h);
  if (h.nlmsg_len < NLMSG_HDRLEN + sizeof(nfgenmsg) || h.nlmsg_len > len) {
    error = "nlmsg_len " + std::to_string(h.nlmsg_len) + " out of bounds";
    return false;
  }
  if ((h.nlmsg_type >> 8) != NFNL_SUBSYS_NFTABLES) {
    error = "message type " + std::to_string(h.nlmsg_type) + " is not nf_tables'";
    return false;
  }
  out.type = MessageByType(static_cast<uint8_t>(h.nlmsg_type & 0xff));
  if (!out.type) {
    error = "unknown nf_tables message type " + std::to_string(h.nlmsg_type & 0xff);
    return false;
  }
  nfgenmsg g;
  std::memcpy(&g, data + NLMSG_HDRLEN, sizeof g);
  out.family = g.nfgen_family;
  out.res_id = ntohs(g.res_id);
  const size_t at = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nfgenmsg));
  const size_t end = h.nlmsg_len;
  if (!DecodeAttrs(data + at, end > at ? end - at : 0, *ObjectSchema(out.type->object), out.attrs, error)) return false;
  // Only an object message has a state shaped by a sibling attribute: read once the whole message is.
  return out.type->object != Object::kObj || ReadObjData(out.attrs, error, "");
}

namespace {

// BEGIN and END name the subsystem in res_id; BEGIN may carry a generation.
void EncodeBatchMarker(nl::Bytes& out, uint16_t type, const uint32_t* genid) {
  nl::MessageBuilder b(out, type, 0);
  nfgenmsg g{};
  g.nfgen_family = AF_UNSPEC;
  g.version = NFNETLINK_V0;
  g.res_id = htons(NFNL_SUBSYS_NFTABLES);
  b.Header(g);
  if (genid) b.attrs().Be32(NFNL_BATCH_GENID, *genid);
  b.Close();
}

}  // namespace

void EncodeBatchBegin(nl::Bytes& out, bool with_genid, uint32_t genid) {
  EncodeBatchMarker(out, NFNL_MSG_BATCH_BEGIN, with_genid ? &genid : nullptr);
}

void EncodeBatchEnd(nl::Bytes& out) { EncodeBatchMarker(out, NFNL_MSG_BATCH_END, nullptr); }

}  // namespace nft
