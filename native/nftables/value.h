// A decoded (or to-be-encoded) nf_tables object, without Node: the decoder
// builds these on a worker thread, the encoder reads them, and the fuzz
// targets check one against the other. Field names and kinds come from the
// schema (schema.h) the object was read with.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "schema.h"

namespace nft {

struct Value {
  enum class Type : uint8_t {
    kNone,
    kNumber,  // every integer kind; signed kinds hold the value sign-extended
    kString,
    kBytes,   // kBytes and kItems fields, and a kData's NFTA_DATA_VALUE
    kObject,  // a nest, an expression, or a kData's verdict (schema = VerdictSchema())
    kList,    // kList / kExprList items
    kFlag,    // a kFlag attribute that is present
  };
  Type type = Type::kNone;
  uint64_t num = 0;
  // kString / kBytes: the payload. An expression: its kernel name.
  std::string str;
  // kObject: the schema its fields come from. An expression this library
  // does not know has none, and keeps its NFTA_EXPR_DATA in `raw`.
  const Schema* schema = nullptr;
  std::string raw;
  std::vector<std::pair<const Field*, Value>> fields;
  std::vector<Value> items;

  const Value* Get(const char* name) const;
  bool operator==(const Value& o) const;
  bool operator!=(const Value& o) const { return !(*this == o); }
};

}  // namespace nft
