// Naming the attribute an extended-ack offset points at, so a refused
// change says which of its parts the kernel objected to.
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>

#include <cstring>

#include "codec.h"

namespace nft {

namespace {

struct Finder {
  uint32_t offset;
  std::string path;
  long top_item = -1;
};

void FindIn(const uint8_t* msg, size_t from, size_t to, const Schema* s, Finder& f, const std::string& path,
            bool top);

// Descends into an expression nest (NFTA_EXPR_NAME, NFTA_EXPR_DATA).
void FindInExpr(const uint8_t* msg, size_t from, size_t to, Finder& f, const std::string& path) {
  const Schema* s = nullptr;
  std::string name;
  nl::AttrReader r(msg + from, to - from);
  nl::Attr a;
  while (r.Next(a))
    if (a.type == NFTA_EXPR_NAME) name = nl::GetString(a);
  s = ExpressionSchema(name.c_str());
  const std::string here = path + "(" + name + ")";
  f.path = here;
  nl::AttrReader r2(msg + from, to - from);
  while (r2.Next(a)) {
    const size_t at = static_cast<size_t>(a.data - msg) - NLA_HDRLEN;
    if (a.type != NFTA_EXPR_DATA || f.offset < at || f.offset >= at + NLA_HDRLEN + a.len) continue;
    if (s && f.offset >= at + NLA_HDRLEN) FindIn(msg, at + NLA_HDRLEN, at + NLA_HDRLEN + a.len, s, f, here, false);
  }
}

void FindIn(const uint8_t* msg, size_t from, size_t to, const Schema* s, Finder& f, const std::string& path,
            bool top) {
  nl::AttrReader r(msg + from, to - from);
  nl::Attr a;
  while (r.Next(a)) {
    const size_t at = static_cast<size_t>(a.data - msg) - NLA_HDRLEN;
    const size_t end = at + NLA_HDRLEN + a.len;
    if (f.offset < at || f.offset >= end) continue;
    const Field* field = s ? s->ByAttr(a.type) : nullptr;
    if (!field) {
      f.path = path.empty() ? "attribute " + std::to_string(a.type) : path + ".attribute " + std::to_string(a.type);
      return;
    }
    const std::string here = path.empty() ? field->name : path + "." + field->name;
    f.path = here;
    if (f.offset < at + NLA_HDRLEN && field->kind != Kind::kExpr) return;  // the attribute itself
    switch (field->kind) {
      case Kind::kNest:
        FindIn(msg, at + NLA_HDRLEN, end, field->schema, f, here, false);
        return;
      case Kind::kExpr:
        FindInExpr(msg, at + NLA_HDRLEN, end, f, here);
        return;
      case Kind::kObjData: {
        // Shaped by the object's type, a sibling attribute.
        const char* name = nullptr;
        nl::AttrReader siblings(msg + from, to - from);
        nl::Attr t;
        uint32_t type = 0;
        while (siblings.Next(t))
          if (t.type == NFTA_OBJ_TYPE && nl::GetBe32(t, &type)) name = ObjectDataName(type);
        const Schema* data = name ? ExpressionSchema(name) : nullptr;
        if (data) FindIn(msg, at + NLA_HDRLEN, end, data, f, here + "(" + name + ")", false);
        return;
      }
      case Kind::kList:
      case Kind::kItems:
      case Kind::kExprList: {
        nl::AttrReader items(a.data, a.len);
        nl::Attr item;
        long i = 0;
        while (items.Next(item)) {
          const size_t iat = static_cast<size_t>(item.data - msg) - NLA_HDRLEN;
          const size_t iend = iat + NLA_HDRLEN + item.len;
          if (f.offset >= iat && f.offset < iend) {
            const std::string ipath = here + "[" + std::to_string(i) + "]";
            f.path = ipath;
            if (top) f.top_item = i;
            // An expression is named even when the kernel points at it whole.
            if (field->kind == Kind::kExprList) FindInExpr(msg, iat + NLA_HDRLEN, iend, f, ipath);
            else if (f.offset >= iat + NLA_HDRLEN) FindIn(msg, iat + NLA_HDRLEN, iend, field->schema, f, ipath, false);
            return;
          }
          i++;
        }
        return;
      }
      default:
        return;
    }
  }
}

}  // namespace

std::string AttrPathAt(const uint8_t* msg, size_t len, uint32_t offset, long* top_item) {
  *top_item = -1;
  const size_t at = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nfgenmsg));
  if (len < at) return "";
  nlmsghdr h;
  std::memcpy(&h, msg, sizeof h);
  const size_t end = h.nlmsg_len < len ? h.nlmsg_len : len;
  if (offset < at || offset >= end) return "";
  const MessageType* type = MessageByType(static_cast<uint8_t>(h.nlmsg_type & 0xff));
  Finder f{offset, "", -1};
  FindIn(msg, at, end, type ? ObjectSchema(type->object) : nullptr, f, "", true);
  *top_item = f.top_item;
  return f.path;
}

}  // namespace nft
