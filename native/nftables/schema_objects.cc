// Tables, chains, sets, elements, rules, stateful objects and the generation: their
// attributes, and which message type carries which.
#include <linux/netfilter/nf_tables.h>

#include <cstring>

#include "schema.h"

namespace nft {

const Field* Schema::ByAttr(uint16_t attr) const {
  for (const Field& f : fields)
    if (f.attr == attr) return &f;
  return nullptr;
}

const Field* Schema::ByName(const char* n) const {
  for (const Field& f : fields)
    if (std::strcmp(f.name, n) == 0) return &f;
  return nullptr;
}

namespace {

const Schema kCounters{"counters", NFTA_COUNTER_MAX, {
  {"bytes", NFTA_COUNTER_BYTES, Kind::kBe64Big},
  {"packets", NFTA_COUNTER_PACKETS, Kind::kBe64Big},
}};

const Schema kTable{"table", NFTA_TABLE_MAX, {
  {"name", NFTA_TABLE_NAME, Kind::kString},
  {"handle", NFTA_TABLE_HANDLE, Kind::kBe64},
  {"flags", NFTA_TABLE_FLAGS, Kind::kBe32},
  {"userdata", NFTA_TABLE_USERDATA, Kind::kBytes},
  {"use", NFTA_TABLE_USE, Kind::kBe32},
  {"owner", NFTA_TABLE_OWNER, Kind::kBe32},
}};

const Schema kHook{"hook", NFTA_HOOK_MAX, {
  {"hooknum", NFTA_HOOK_HOOKNUM, Kind::kBe32},
  {"priority", NFTA_HOOK_PRIORITY, Kind::kBeS32},
  {"dev", NFTA_HOOK_DEV, Kind::kString},
}};

const Schema kChain{"chain", NFTA_CHAIN_MAX, {
  {"table", NFTA_CHAIN_TABLE, Kind::kString},
  {"name", NFTA_CHAIN_NAME, Kind::kString},
  {"handle", NFTA_CHAIN_HANDLE, Kind::kBe64},
  {"type", NFTA_CHAIN_TYPE, Kind::kString},
  {"policy", NFTA_CHAIN_POLICY, Kind::kBe32},
  {"hook", NFTA_CHAIN_HOOK, Kind::kNest, &kHook},
  {"counters", NFTA_CHAIN_COUNTERS, Kind::kNest, &kCounters},
  {"flags", NFTA_CHAIN_FLAGS, Kind::kBe32},
  {"id", NFTA_CHAIN_ID, Kind::kBe32},
  {"userdata", NFTA_CHAIN_USERDATA, Kind::kBytes},
  {"use", NFTA_CHAIN_USE, Kind::kBe32},
}};

const Schema kRule{"rule", NFTA_RULE_MAX, {
  {"table", NFTA_RULE_TABLE, Kind::kString},
  {"chain", NFTA_RULE_CHAIN, Kind::kString},
  {"handle", NFTA_RULE_HANDLE, Kind::kBe64},
  {"expressions", NFTA_RULE_EXPRESSIONS, Kind::kExprList},
  {"position", NFTA_RULE_POSITION, Kind::kBe64},
  {"userdata", NFTA_RULE_USERDATA, Kind::kBytes},
  {"id", NFTA_RULE_ID, Kind::kBe32},
  {"positionId", NFTA_RULE_POSITION_ID, Kind::kBe32},
  {"chainId", NFTA_RULE_CHAIN_ID, Kind::kBe32},
}};

const Schema kSetField{"field", NFTA_SET_FIELD_MAX, {
  {"len", NFTA_SET_FIELD_LEN, Kind::kBe32},
}};

const Schema kSetDesc{"desc", NFTA_SET_DESC_MAX, {
  {"size", NFTA_SET_DESC_SIZE, Kind::kBe32},
  {"concat", NFTA_SET_DESC_CONCAT, Kind::kList, &kSetField},
}};

const Schema kSet{"set", NFTA_SET_MAX, {
  {"table", NFTA_SET_TABLE, Kind::kString},
  {"name", NFTA_SET_NAME, Kind::kString},
  {"handle", NFTA_SET_HANDLE, Kind::kBe64},
  {"flags", NFTA_SET_FLAGS, Kind::kBe32},
  {"keyType", NFTA_SET_KEY_TYPE, Kind::kBe32},
  {"keyLen", NFTA_SET_KEY_LEN, Kind::kBe32},
  {"dataType", NFTA_SET_DATA_TYPE, Kind::kBe32},
  {"dataLen", NFTA_SET_DATA_LEN, Kind::kBe32},
  {"objType", NFTA_SET_OBJ_TYPE, Kind::kBe32},
  {"id", NFTA_SET_ID, Kind::kBe32},
  {"policy", NFTA_SET_POLICY, Kind::kBe32},
  {"desc", NFTA_SET_DESC, Kind::kNest, &kSetDesc},
  {"timeout", NFTA_SET_TIMEOUT, Kind::kBe64},
  {"gcInterval", NFTA_SET_GC_INTERVAL, Kind::kBe32},
  {"userdata", NFTA_SET_USERDATA, Kind::kBytes},
  {"expr", NFTA_SET_EXPR, Kind::kExpr},
  {"expressions", NFTA_SET_EXPRESSIONS, Kind::kExprList},
}};

const Schema kElement{"element", NFTA_SET_ELEM_MAX, {
  {"flags", NFTA_SET_ELEM_FLAGS, Kind::kBe32},
  {"timeout", NFTA_SET_ELEM_TIMEOUT, Kind::kBe64},
  {"expiration", NFTA_SET_ELEM_EXPIRATION, Kind::kBe64},
  {"key", NFTA_SET_ELEM_KEY, Kind::kData},
  {"keyEnd", NFTA_SET_ELEM_KEY_END, Kind::kData},
  {"data", NFTA_SET_ELEM_DATA, Kind::kData},
  {"objref", NFTA_SET_ELEM_OBJREF, Kind::kString},
  {"userdata", NFTA_SET_ELEM_USERDATA, Kind::kBytes},
  {"expr", NFTA_SET_ELEM_EXPR, Kind::kExpr},
  {"expressions", NFTA_SET_ELEM_EXPRESSIONS, Kind::kExprList},
}};

const Schema kElements{"elements", NFTA_SET_ELEM_LIST_MAX, {
  {"table", NFTA_SET_ELEM_LIST_TABLE, Kind::kString},
  {"set", NFTA_SET_ELEM_LIST_SET, Kind::kString},
  {"setId", NFTA_SET_ELEM_LIST_SET_ID, Kind::kBe32},
  {"elements", NFTA_SET_ELEM_LIST_ELEMENTS, Kind::kItems, &kElement},
}};

// A named stateful object (`nft add counter inet t hits`); its state is
// NFTA_OBJ_DATA, read by its type (ObjectDataName).
const Schema kObj{"object", NFTA_OBJ_MAX, {
  {"table", NFTA_OBJ_TABLE, Kind::kString},
  {"name", NFTA_OBJ_NAME, Kind::kString},
  {"type", NFTA_OBJ_TYPE, Kind::kBe32},
  {"handle", NFTA_OBJ_HANDLE, Kind::kBe64},
  {"userdata", NFTA_OBJ_USERDATA, Kind::kBytes},
  {"data", NFTA_OBJ_DATA, Kind::kObjData},
  {"use", NFTA_OBJ_USE, Kind::kBe32},
}};

const Schema kGen{"gen", NFTA_GEN_MAX, {
  {"id", NFTA_GEN_ID, Kind::kBe32},
  {"procPid", NFTA_GEN_PROC_PID, Kind::kBe32},
  {"procName", NFTA_GEN_PROC_NAME, Kind::kString},
}};

const Schema kNone{"none", 0, {}};

const MessageType kMessages[] = {
  {"newtable", NFT_MSG_NEWTABLE, Object::kTable},
  {"gettable", NFT_MSG_GETTABLE, Object::kTable},
  {"deltable", NFT_MSG_DELTABLE, Object::kTable},
  {"newchain", NFT_MSG_NEWCHAIN, Object::kChain},
  {"getchain", NFT_MSG_GETCHAIN, Object::kChain},
  {"delchain", NFT_MSG_DELCHAIN, Object::kChain},
  {"newrule", NFT_MSG_NEWRULE, Object::kRule},
  {"getrule", NFT_MSG_GETRULE, Object::kRule},
  {"delrule", NFT_MSG_DELRULE, Object::kRule},
  {"newset", NFT_MSG_NEWSET, Object::kSet},
  {"getset", NFT_MSG_GETSET, Object::kSet},
  {"delset", NFT_MSG_DELSET, Object::kSet},
  {"newsetelem", NFT_MSG_NEWSETELEM, Object::kElements},
  {"getsetelem", NFT_MSG_GETSETELEM, Object::kElements},
  {"delsetelem", NFT_MSG_DELSETELEM, Object::kElements},
  {"newobj", NFT_MSG_NEWOBJ, Object::kObj},
  {"getobj", NFT_MSG_GETOBJ, Object::kObj},
  {"delobj", NFT_MSG_DELOBJ, Object::kObj},
  // A read that zeroes what it reads (`nft reset counters`).
  {"getobjreset", NFT_MSG_GETOBJ_RESET, Object::kObj},
  {"newgen", NFT_MSG_NEWGEN, Object::kGen},
  {"getgen", NFT_MSG_GETGEN, Object::kGen},
};

}  // namespace

const MessageType* MessageByName(const char* name) {
  for (const MessageType& m : kMessages)
    if (std::strcmp(m.name, name) == 0) return &m;
  return nullptr;
}

const MessageType* MessageByType(uint8_t msg) {
  for (const MessageType& m : kMessages)
    if (m.msg == msg) return &m;
  return nullptr;
}

const char* ObjectDataName(uint32_t type) {
  switch (type) {
    case NFT_OBJECT_COUNTER: return "counter";
    case NFT_OBJECT_QUOTA: return "quota";
    case NFT_OBJECT_LIMIT: return "limit";
    default: return nullptr;
  }
}

const Schema* ObjectSchema(Object o) {
  switch (o) {
    case Object::kTable: return &kTable;
    case Object::kChain: return &kChain;
    case Object::kRule: return &kRule;
    case Object::kSet: return &kSet;
    case Object::kElements: return &kElements;
    case Object::kGen: return &kGen;
    case Object::kObj: return &kObj;
    case Object::kNone: break;
  }
  return &kNone;
}

}  // namespace nft
