#include "transaction.h"

#include <errno.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "../netlink/message.h"

namespace nft {

namespace {

// The most an element list's nest may hold: its length is 16 bits.
constexpr size_t kMaxNestBytes = 0xffff;

}  // namespace

Transaction::Transaction(const std::vector<Request>& changes, bool with_genid, uint32_t genid) {
  msgs_.emplace_back();
  EncodeBatchBegin(msgs_.back(), with_genid, genid);
  origins_.push_back({SIZE_MAX, -1});
  for (size_t i = 0; i < changes.size(); i++) Add(changes[i], i);
  msgs_.emplace_back();
  EncodeBatchEnd(msgs_.back());
  origins_.push_back({SIZE_MAX, -1});
}

void Transaction::Add(const Request& r, size_t change) {
  const Value* elements = r.attrs.Get("elements");
  std::vector<nl::Attr> items;
  if (r.type->object == Object::kElements && elements)
    items = ItemsOf(reinterpret_cast<const uint8_t*>(elements->str.data()), elements->str.size());
  if (items.size() < 2) {
    msgs_.emplace_back();
    EncodeMessage(msgs_.back(), *r.type, r.family, r.flags, r.attrs);
    origins_.push_back({change, -1});
    return;
  }
  const Schema& schema = *ObjectSchema(Object::kElements);
  Value head = r.attrs;
  for (auto it = head.fields.begin(); it != head.fields.end(); ++it)
    if (it->first->attr == NFTA_SET_ELEM_LIST_ELEMENTS) {
      head.fields.erase(it);
      break;
    }
  // As many elements per message as the nest holds.
  const size_t n = items.size();
  size_t i = 0;
  while (i < n) {
    nl::Bytes m;
    nl::MessageBuilder b(m, static_cast<uint16_t>((NFNL_SUBSYS_NFTABLES << 8) | r.type->msg), r.flags);
    nfgenmsg g{};
    g.nfgen_family = r.family;
    g.version = NFNETLINK_V0;
    b.Header(g);
    nl::AttrWriter& w = b.attrs();
    EncodeAttrs(w, schema, head);
    const size_t nest = w.Begin(NFTA_SET_ELEM_LIST_ELEMENTS);
    const size_t first = i;
    size_t bytes = NLA_HDRLEN;
    for (; i < n; i++) {
      const size_t item = NLA_ALIGN(NLA_HDRLEN + items[i].len);
      if (bytes + item > kMaxNestBytes && i > first) break;
      bytes += item;
    }
    AppendItems(w, items, first, i, 1);
    w.End(nest);
    b.Close();
    msgs_.push_back(std::move(m));
    origins_.push_back({change, static_cast<long>(first)});
  }
}

nl::RequestKind Transaction::Encode(size_t i, nl::Bytes& out) {
  out.insert(out.end(), msgs_[i].begin(), msgs_[i].end());
  return nl::RequestKind::kPlain;
}

void Transaction::OnDone(size_t i, const nl::Outcome& o) {
  if (!o.error) return;
  const bool marker = i == 0 || i + 1 == msgs_.size();
  if (marker || o.where) {
    // About the whole transaction: BEGIN refused, or no answer at all.
    if (!whole_set_) {
      whole_ = o;
      whole_.echo = nullptr;  // both point into the conversation's memory
      whole_.where = nullptr;
      whole_set_ = true;
    }
    return;
  }
  if (o.error == ECANCELED && whole_set_) return;  // ended with BEGIN's refusal
  Failure f;
  f.change = origins_[i].change;
  f.error = o.error;
  f.message = o.message;
  if (o.offset >= 0) {
    long item = -1;
    f.path = AttrPathAt(msgs_[i].data(), msgs_[i].size(), static_cast<uint32_t>(o.offset), &item);
    if (origins_[i].first_element >= 0 && item >= 0 && f.path.rfind("elements[", 0) == 0)
      f.element = origins_[i].first_element + item;
  }
  failures_.push_back(std::move(f));
}

}  // namespace nft
