// The expressions rules are built from: each one's attributes, by the
// kernel's name for it. A field the kernel calls "type" is named for its
// expression ("natType"), since `type` names the expression itself.
#include <linux/netfilter/nf_tables.h>

#include <cstring>

#include "schema.h"

namespace nft {

namespace {

const Schema kVerdict{"verdict", NFTA_VERDICT_MAX, {
  {"code", NFTA_VERDICT_CODE, Kind::kBeS32},
  {"chain", NFTA_VERDICT_CHAIN, Kind::kString},
  {"chainId", NFTA_VERDICT_CHAIN_ID, Kind::kBe32},
}};

const Schema kImmediate{"immediate", NFTA_IMMEDIATE_MAX, {
  {"dreg", NFTA_IMMEDIATE_DREG, Kind::kBe32},
  {"data", NFTA_IMMEDIATE_DATA, Kind::kData},
}};

const Schema kCmp{"cmp", NFTA_CMP_MAX, {
  {"sreg", NFTA_CMP_SREG, Kind::kBe32},
  {"op", NFTA_CMP_OP, Kind::kBe32},
  {"data", NFTA_CMP_DATA, Kind::kData},
}};

const Schema kRange{"range", NFTA_RANGE_MAX, {
  {"sreg", NFTA_RANGE_SREG, Kind::kBe32},
  {"op", NFTA_RANGE_OP, Kind::kBe32},
  {"fromData", NFTA_RANGE_FROM_DATA, Kind::kData},
  {"toData", NFTA_RANGE_TO_DATA, Kind::kData},
}};

const Schema kPayload{"payload", NFTA_PAYLOAD_MAX, {
  {"sreg", NFTA_PAYLOAD_SREG, Kind::kBe32},
  {"dreg", NFTA_PAYLOAD_DREG, Kind::kBe32},
  {"base", NFTA_PAYLOAD_BASE, Kind::kBe32},
  {"offset", NFTA_PAYLOAD_OFFSET, Kind::kBe32},
  {"len", NFTA_PAYLOAD_LEN, Kind::kBe32},
  {"csumType", NFTA_PAYLOAD_CSUM_TYPE, Kind::kBe32},
  {"csumOffset", NFTA_PAYLOAD_CSUM_OFFSET, Kind::kBe32},
  {"csumFlags", NFTA_PAYLOAD_CSUM_FLAGS, Kind::kBe32},
}};

const Schema kMeta{"meta", NFTA_META_MAX, {
  {"key", NFTA_META_KEY, Kind::kBe32},
  {"dreg", NFTA_META_DREG, Kind::kBe32},
  {"sreg", NFTA_META_SREG, Kind::kBe32},
}};

const Schema kBitwise{"bitwise", NFTA_BITWISE_MAX, {
  {"sreg", NFTA_BITWISE_SREG, Kind::kBe32},
  {"dreg", NFTA_BITWISE_DREG, Kind::kBe32},
  {"op", NFTA_BITWISE_OP, Kind::kBe32},
  {"len", NFTA_BITWISE_LEN, Kind::kBe32},
  {"mask", NFTA_BITWISE_MASK, Kind::kData},
  {"xor", NFTA_BITWISE_XOR, Kind::kData},
  {"data", NFTA_BITWISE_DATA, Kind::kData},
}};

const Schema kByteorder{"byteorder", NFTA_BYTEORDER_MAX, {
  {"sreg", NFTA_BYTEORDER_SREG, Kind::kBe32},
  {"dreg", NFTA_BYTEORDER_DREG, Kind::kBe32},
  {"op", NFTA_BYTEORDER_OP, Kind::kBe32},
  {"len", NFTA_BYTEORDER_LEN, Kind::kBe32},
  {"size", NFTA_BYTEORDER_SIZE, Kind::kBe32},
}};

const Schema kLookup{"lookup", NFTA_LOOKUP_MAX, {
  {"sreg", NFTA_LOOKUP_SREG, Kind::kBe32},
  {"dreg", NFTA_LOOKUP_DREG, Kind::kBe32},
  {"set", NFTA_LOOKUP_SET, Kind::kString},
  {"setId", NFTA_LOOKUP_SET_ID, Kind::kBe32},
  {"flags", NFTA_LOOKUP_FLAGS, Kind::kBe32},
}};

const Schema kCt{"ct", NFTA_CT_MAX, {
  {"key", NFTA_CT_KEY, Kind::kBe32},
  {"dreg", NFTA_CT_DREG, Kind::kBe32},
  {"direction", NFTA_CT_DIRECTION, Kind::kU8},
  {"sreg", NFTA_CT_SREG, Kind::kBe32},
}};

const Schema kCounter{"counter", NFTA_COUNTER_MAX, {
  {"bytes", NFTA_COUNTER_BYTES, Kind::kBe64Big},
  {"packets", NFTA_COUNTER_PACKETS, Kind::kBe64Big},
}};

const Schema kNat{"nat", NFTA_NAT_MAX, {
  {"natType", NFTA_NAT_TYPE, Kind::kBe32},
  {"family", NFTA_NAT_FAMILY, Kind::kBe32},
  {"regAddrMin", NFTA_NAT_REG_ADDR_MIN, Kind::kBe32},
  {"regAddrMax", NFTA_NAT_REG_ADDR_MAX, Kind::kBe32},
  {"regProtoMin", NFTA_NAT_REG_PROTO_MIN, Kind::kBe32},
  {"regProtoMax", NFTA_NAT_REG_PROTO_MAX, Kind::kBe32},
  {"flags", NFTA_NAT_FLAGS, Kind::kBe32},
}};

const Schema kMasq{"masq", NFTA_MASQ_MAX, {
  {"flags", NFTA_MASQ_FLAGS, Kind::kBe32},
  {"regProtoMin", NFTA_MASQ_REG_PROTO_MIN, Kind::kBe32},
  {"regProtoMax", NFTA_MASQ_REG_PROTO_MAX, Kind::kBe32},
}};

const Schema kRedir{"redir", NFTA_REDIR_MAX, {
  {"regProtoMin", NFTA_REDIR_REG_PROTO_MIN, Kind::kBe32},
  {"regProtoMax", NFTA_REDIR_REG_PROTO_MAX, Kind::kBe32},
  {"flags", NFTA_REDIR_FLAGS, Kind::kBe32},
}};

const Schema kReject{"reject", NFTA_REJECT_MAX, {
  {"rejectType", NFTA_REJECT_TYPE, Kind::kBe32},
  {"icmpCode", NFTA_REJECT_ICMP_CODE, Kind::kU8},
}};

const Schema kFib{"fib", NFTA_FIB_MAX, {
  {"flags", NFTA_FIB_FLAGS, Kind::kBe32},
  {"result", NFTA_FIB_RESULT, Kind::kBe32},
  {"dreg", NFTA_FIB_DREG, Kind::kBe32},
}};

// In the order libnftnl writes them.
const Schema kDynset{"dynset", NFTA_DYNSET_MAX, {
  {"sregKey", NFTA_DYNSET_SREG_KEY, Kind::kBe32},
  {"sregData", NFTA_DYNSET_SREG_DATA, Kind::kBe32},
  {"op", NFTA_DYNSET_OP, Kind::kBe32},
  {"timeout", NFTA_DYNSET_TIMEOUT, Kind::kBe64},
  {"set", NFTA_DYNSET_SET_NAME, Kind::kString},
  {"setId", NFTA_DYNSET_SET_ID, Kind::kBe32},
  {"expr", NFTA_DYNSET_EXPR, Kind::kExpr},
  {"expressions", NFTA_DYNSET_EXPRESSIONS, Kind::kExprList},
  {"flags", NFTA_DYNSET_FLAGS, Kind::kBe32},
}};

const Schema kLog{"log", NFTA_LOG_MAX, {
  {"group", NFTA_LOG_GROUP, Kind::kBe16},
  {"prefix", NFTA_LOG_PREFIX, Kind::kString},
  {"snaplen", NFTA_LOG_SNAPLEN, Kind::kBe32},
  {"qthreshold", NFTA_LOG_QTHRESHOLD, Kind::kBe16},
  {"level", NFTA_LOG_LEVEL, Kind::kBe32},
  {"flags", NFTA_LOG_FLAGS, Kind::kBe32},
}};

const Schema kLimit{"limit", NFTA_LIMIT_MAX, {
  {"rate", NFTA_LIMIT_RATE, Kind::kBe64},
  {"unit", NFTA_LIMIT_UNIT, Kind::kBe64},
  {"burst", NFTA_LIMIT_BURST, Kind::kBe32},
  {"limitType", NFTA_LIMIT_TYPE, Kind::kBe32},
  {"flags", NFTA_LIMIT_FLAGS, Kind::kBe32},
}};

// In the order libnftnl writes them.
const Schema kQuota{"quota", NFTA_QUOTA_MAX, {
  {"bytes", NFTA_QUOTA_BYTES, Kind::kBe64Big},
  {"consumed", NFTA_QUOTA_CONSUMED, Kind::kBe64Big},
  {"flags", NFTA_QUOTA_FLAGS, Kind::kBe32},
}};

const Schema kObjref{"objref", NFTA_OBJREF_MAX, {
  {"immType", NFTA_OBJREF_IMM_TYPE, Kind::kBe32},
  {"immName", NFTA_OBJREF_IMM_NAME, Kind::kStringUnterminated},
  {"setSreg", NFTA_OBJREF_SET_SREG, Kind::kBe32},
  {"setName", NFTA_OBJREF_SET_NAME, Kind::kStringUnterminated},
  {"setId", NFTA_OBJREF_SET_ID, Kind::kBe32},
}};

const Schema kNotrack{"notrack", 0, {}};

// A number from a counter or at random, modulo `modulus` (kube-proxy's way to pick an endpoint).
const Schema kNumgen{"numgen", NFTA_NG_MAX, {
  {"dreg", NFTA_NG_DREG, Kind::kBe32},
  {"modulus", NFTA_NG_MODULUS, Kind::kBe32},
  {"ngType", NFTA_NG_TYPE, Kind::kBe32},
  {"offset", NFTA_NG_OFFSET, Kind::kBe32},
}};

const Schema kHash{"hash", NFTA_HASH_MAX, {
  {"sreg", NFTA_HASH_SREG, Kind::kBe32},
  {"dreg", NFTA_HASH_DREG, Kind::kBe32},
  {"len", NFTA_HASH_LEN, Kind::kBe32},
  {"modulus", NFTA_HASH_MODULUS, Kind::kBe32},
  {"seed", NFTA_HASH_SEED, Kind::kBe32},
  {"offset", NFTA_HASH_OFFSET, Kind::kBe32},
  {"hashType", NFTA_HASH_TYPE, Kind::kBe32},
}};

const std::vector<const Schema*> kAll = {
  &kImmediate, &kCmp, &kRange, &kPayload, &kMeta, &kBitwise, &kByteorder, &kLookup, &kCt,
  &kCounter, &kNat, &kMasq, &kRedir, &kReject, &kFib, &kDynset, &kLog, &kLimit, &kQuota,
  &kObjref, &kNotrack, &kNumgen, &kHash,
};

}  // namespace

const Schema* ExpressionSchema(const char* name) {
  for (const Schema* s : kAll)
    if (std::strcmp(s->name, name) == 0) return s;
  return nullptr;
}

const std::vector<const Schema*>& AllExpressionSchemas() { return kAll; }

const Schema& VerdictSchema() { return kVerdict; }

}  // namespace nft
