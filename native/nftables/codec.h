// nf_tables messages to and from Values, driven by the schemas: one
// encoder and one decoder for every object and expression. The decoder never
// reads out of bounds and keeps its first error, with the path of the
// attribute it was reading ("expressions[2].data").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../netlink/attribute.h"
#include "value.h"

namespace nft {

// Appends the attributes of `v` (an object of schema `s`) to `w`.
void EncodeAttrs(nl::AttrWriter& w, const Schema& s, const Value& v);

// Reads attributes of schema `s` into `out` (an object). False on malformed
// input, with `error` saying what and where.
bool DecodeAttrs(const uint8_t* data, size_t len, const Schema& s, Value& out, std::string& error,
                 const std::string& path = "");

// Set elements cross to and from JavaScript as bytes (Kind::kItems): the
// items of their list nest, each an element's attributes, which the
// TypeScript layer writes and reads itself (lib/nftables/element-codec.ts).
// A set of 100,000 elements is that many small nests; made into objects
// and converted one by one at the boundary, they cost several times what
// the kernel spends on them. Here they are only checked and numbered.
//
// Whether `data` is a list of items, each holding well-formed attributes;
// `error` says what is wrong where (`[3]: attribute length 90 out of bounds`).
bool ItemsOk(const uint8_t* data, size_t len, std::string& error);
// Appends items (checked with ItemsOk) to `w`, each nested and numbered from
// `first`, as nft numbers set elements (the kernel reads any item type).
void AppendItems(nl::AttrWriter& w, const std::vector<nl::Attr>& items, size_t from, size_t to, uint16_t first);
// The items of `data` (checked with ItemsOk), in order.
std::vector<nl::Attr> ItemsOf(const uint8_t* data, size_t len);

// One nf_tables message.
struct Message {
  const MessageType* type = nullptr;
  uint8_t family = 0;     // nfgenmsg.nfgen_family (NFPROTO_*)
  uint16_t res_id = 0;    // nfgenmsg.res_id, host order: the generation's low 16 bits in replies
  Value attrs;            // an object of the type's schema
};

// Builds a complete netlink message (type NFNL_SUBSYS_NFTABLES << 8 | msg,
// `flags` NLM_F_*), appended to `out`. The socket sets seq and port id.
void EncodeMessage(nl::Bytes& out, const MessageType& type, uint8_t family, uint16_t flags,
                   const Value& attrs);

// Decodes one whole netlink message (header included).
bool DecodeMessage(const uint8_t* data, size_t len, Message& out, std::string& error);

// NFNL_MSG_BATCH_BEGIN (with NFNL_BATCH_GENID when `genid` is set) and
// NFNL_MSG_BATCH_END, appended to `out`.
void EncodeBatchBegin(nl::Bytes& out, bool with_genid, uint32_t genid);
void EncodeBatchEnd(nl::Bytes& out);

// Where in a message the kernel's extended-ack offset points: the path of
// the innermost attribute that contains it ("elements[3].key"), and the
// index of the list item it fell in at the top level (-1 if none). Empty
// when the offset is outside the message's attributes.
std::string AttrPathAt(const uint8_t* msg, size_t len, uint32_t offset, long* top_item);

}  // namespace nft
