// The ipset entry parser, which takes user input (Ipset.add/addMany and
// restore text). Input: byte 0 picks the set type, byte 1 the family (bit 0)
// and which per-element options the set supports (bits 1..4), the rest is
// the text. Beyond memory safety it checks the round trips the library
// promises:
//  - text -> entry -> text is stable: formatting what was parsed and parsing
//    that again gives the same text (ipsetCanonical relies on it);
//  - entry -> ADD request -> DecodeEntry -> text gives the same text, for
//    single and bulk requests (the kernel echoes elements in dumps with the
//    attributes we sent).
#include <linux/netlink.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../ipset/codec.h"
#include "../ipset/entry_text.h"
#include "../ipset/set_types.h"

namespace {

void Require(bool ok, const char* what, const std::string& a, const std::string& b) {
  if (ok) return;
  std::fprintf(stderr, "round trip broken (%s):\n  [%s]\n  [%s]\n", what, a.c_str(), b.c_str());
  std::abort();
}

std::string Format(const ipset::Entry& e, const ipset::SetType& type, uint8_t family) {
  std::string s;
  ipset::FormatEntry(e, type, family, s);
  return s;
}

// The attributes after nlmsghdr + nfgenmsg of a request we built.
nl::AttrTable Top(const nl::Bytes& msg) {
  const size_t head = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nfgenmsg));
  return nl::AttrTable(msg.data() + head, msg.size() - head, IPSET_ATTR_CMD_MAX);
}

// Decodes one DATA nest back into text.
std::string Decoded(const nl::Attr& data, const ipset::SetType& type, uint8_t family) {
  ipset::Entry back;
  std::string error;
  Require(ipset::DecodeEntry(data.data, data.len, back, error), "decode our own DATA", error, "");
  return Format(back, type, family);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  size_t count;
  const ipset::SetType* const* types = ipset::AllSetTypes(&count);
  const ipset::SetType& type = *types[data[0] % count];
  // FamilyFromJs refuses inet6 for types without it.
  const uint8_t family = (data[1] & 1) && type.inet6 ? NFPROTO_IPV6 : NFPROTO_IPV4;
  ipset::OptionSupport support;
  support.timeout = data[1] & 2;
  support.counters = data[1] & 4;
  support.comment = data[1] & 8;
  support.skbinfo = data[1] & 16;
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);

  std::vector<ipset::Entry> entries;
  size_t index = 0;
  ipset::ParseFailure why;
  if (!ipset::ParseEntries(text, type, family, support, entries, index, why)) return 0;

  std::vector<std::string> texts;
  for (const ipset::Entry& e : entries) {
    const std::string once = Format(e, type, family);
    ipset::Entry again;
    ipset::ParseFailure why2;
    Require(ipset::ParseEntry(once, type, family, support, again, why2), "reparse", once,
            why2.field + ": " + why2.message);
    Require(Format(again, type, family) == once, "format(parse(format))", once, Format(again, type, family));

    const nl::Bytes single = ipset::EncodeElement(IPSET_CMD_ADD, "s", type, family, e, 7, false);
    nl::AttrTable top = Top(single);
    Require(top.ok() && top.Get(IPSET_ATTR_DATA), "single request has DATA", once, top.error());
    Require(Decoded(*top.Get(IPSET_ATTR_DATA), type, family) == once, "single request", once,
            Decoded(*top.Get(IPSET_ATTR_DATA), type, family));
    texts.push_back(once);
  }

  // Bulk: a small budget so several messages come out; every entry must
  // appear exactly once, in order.
  size_t got = 0;
  for (size_t from = 0; from < entries.size();) {
    size_t next = from;
    const nl::Bytes msg = ipset::EncodeBulk(IPSET_CMD_ADD, "s", type, family, entries, from, 1024,
                                            7, false, &next);
    Require(next > from, "bulk makes progress", "", "");
    nl::AttrTable top = Top(msg);
    const nl::Attr* adt = top.Get(IPSET_ATTR_ADT);
    Require(top.ok() && adt, "bulk request has ADT", "", top.error());
    nl::AttrReader r(adt->data, adt->len);
    nl::Attr a;
    while (r.Next(a)) {
      Require(got < texts.size(), "no extra entries", "", "");
      Require(Decoded(a, type, family) == texts[got], "bulk request", texts[got], Decoded(a, type, family));
      got++;
    }
    Require(r.ok() && got == next, "bulk holds from..next", r.error(), std::to_string(got));
    from = next;
  }
  return 0;
}
