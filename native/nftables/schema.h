// The shape of every nf_tables message and expression this library speaks:
// for each object (table, chain, set, element, rule, stateful object,
// generation) and each
// expression (payload, cmp, lookup, nat, ...), which attribute carries which
// field, of which kind. One table drives both directions: the encoder reads
// a JavaScript object's fields by these names, the decoder produces objects
// with the same names, so what is read can be written back.
//
// Fields are listed in the order nft sends them, so that the same change
// encodes to the same bytes as nft's.
//
// Values here are the kernel's own numbers (registers, enum values, flag
// bits); the TypeScript layer gives them names. Attribute numbers come from
// <linux/netfilter/nf_tables.h>.
#pragma once

#include <cstdint>
#include <vector>

namespace nft {

enum class Kind : uint8_t {
  kU8,
  kBe16,
  kBe32,
  kBeS32,     // a signed 32-bit value (hook priority, verdict code)
  kBe64,      // a 64-bit value shown as a number (handles, milliseconds)
  kBe64Big,   // a 64-bit value shown as a BigInt (counters)
  kString,
  kStringUnterminated,  // a string sent without its NUL (libnftnl's mnl_attr_put_str: objref names)
  kBytes,     // opaque bytes (userdata, raw expression data)
  kNest,      // one nested attribute holding an object of `schema`
  kList,      // a nest of NFTA_LIST_ELEM items, each an object of `schema`
  kExpr,      // one expression: NFTA_EXPR_NAME + NFTA_EXPR_DATA
  kExprList,  // a nest of NFTA_LIST_ELEM expressions
  kData,      // struct nft_data: NFTA_DATA_VALUE bytes or an NFTA_DATA_VERDICT
  kFlag,      // an attribute without payload, present or not
  kItems,     // a nest of list items kept as their bytes (ItemsOk, AppendItems in codec.h)
  kObjData,   // a stateful object's state (NFTA_OBJ_DATA), shaped by the object's type: held as
              // an expression of the same name, whose attributes the kernel shares with it
};

struct Schema;

struct Field {
  const char* name;
  uint16_t attr;
  Kind kind;
  const Schema* schema = nullptr;  // kNest, kList; kItems: what an item holds (to name a refused part)
};

struct Schema {
  const char* name;  // for messages: "table", "payload", ...
  uint16_t max_attr;
  std::vector<Field> fields;

  const Field* ByAttr(uint16_t attr) const;
  const Field* ByName(const char* name) const;
};

// The schema of an expression by its kernel name ("payload", "cmp", ...);
// nullptr for expressions this library does not know (they travel as raw
// bytes, so a rule read with one can still be written back).
const Schema* ExpressionSchema(const char* name);
// Every expression this library knows, for the TypeScript layer.
const std::vector<const Schema*>& AllExpressionSchemas();

// The expression whose attributes a stateful object of kernel type `type`
// (NFT_OBJECT_*) keeps its state in ("counter" for a counter object);
// nullptr for a type this library does not know (its state travels as bytes).
const char* ObjectDataName(uint32_t type);

// The verdict nest inside struct nft_data: { code, chain }.
const Schema& VerdictSchema();

// Message kinds: what a NFT_MSG_* type carries.
enum class Object : uint8_t { kTable, kChain, kRule, kSet, kElements, kGen, kObj, kNone };

struct MessageType {
  const char* name;  // "newtable", "getrule", ...
  uint8_t msg;       // NFT_MSG_*
  Object object;
};

const MessageType* MessageByName(const char* name);
const MessageType* MessageByType(uint8_t msg);
const Schema* ObjectSchema(Object o);

}  // namespace nft
