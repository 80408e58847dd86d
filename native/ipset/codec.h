// The ipset nfnetlink codec: requests to bytes, replies to structs. Pure
// functions of their inputs, so they are unit-tested against bytes captured
// from the `ipset` tool and fuzzed.
//
// Requests come out as libipset builds them: nfgenmsg {NFPROTO_IPV4,
// NFNETLINK_V0, 0}, command-level PROTOCOL first, attributes in ascending
// type order with an element's LINENO last, numbers big-endian with
// NLA_F_NET_BYTEORDER, containers NLA_F_NESTED, and libipset's per-command
// netlink flags (cmdflags[] in lib/mnl.c). The socket adds NLM_F_REQUEST,
// NLM_F_ACK and, for dumps, NLM_F_DUMP.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "../netlink/attribute.h"
#include "types.h"

namespace ipset {

// The request's nlmsg_type.
constexpr uint16_t MessageType(uint8_t cmd) {
  return static_cast<uint16_t>(NFNL_SUBSYS_IPSET << 8 | cmd);
}

// What a create request carries besides name and type.
struct CreateSpec {
  std::string name;
  const SetType* type = nullptr;
  uint8_t family = NFPROTO_IPV4;
  bool has_hashsize = false, has_maxelem = false, has_timeout = false;
  bool has_netmask = false, has_size = false, has_bucketsize = false, has_initval = false;
  uint32_t hashsize = 0, maxelem = 0, timeout = 0, size = 0, initval = 0;
  uint8_t netmask = 0, bucketsize = 0;
  uint32_t cadt_flags = 0;  // counters / comment / skbinfo / forceadd
  uint32_t options = 0;     // a bit (1 << Option) for each option given
  bool has_bitmask = false, has_markmask = false;
  nf_inet_addr bitmask{};  // of `family`
  uint32_t markmask = 0;
  // bitmap:ip / bitmap:ip,mac range: from-to, or from/cidr (/0 included);
  // bitmap:port: port range
  bool has_ip_range = false;
  nf_inet_addr range_from{}, range_to{};
  bool has_range_cidr = false;
  uint8_t range_cidr = 0;
  bool has_port_range = false;
  uint16_t port_from = 0, port_to = 0;
};

nl::Bytes EncodeProtocol(uint8_t protocol);
nl::Bytes EncodeTypeQuery(const SetType& type, uint8_t protocol);
nl::Bytes EncodeCreate(const CreateSpec& spec, uint8_t revision, uint8_t protocol, bool exist);
// DESTROY / FLUSH of one set, or of all when `name` is empty.
nl::Bytes EncodeNamed(uint8_t cmd, const std::string& name, uint8_t protocol);
// RENAME / SWAP.
nl::Bytes EncodeTwoNames(uint8_t cmd, const std::string& from, const std::string& to,
                         uint8_t protocol);
// LIST / SAVE dumps (NLM_F_DUMP added by the socket); `flags` is
// IPSET_FLAG_LIST_SETNAME / IPSET_FLAG_LIST_HEADER or 0; empty name = all.
nl::Bytes EncodeList(uint8_t cmd, const std::string& name, uint32_t flags, uint8_t protocol);
// One element: ADD / DEL / TEST. ADD and DEL carry LINENO 0 in DATA, as the
// tool does for a single command.
nl::Bytes EncodeElement(uint8_t cmd, const std::string& name, const SetType& type,
                        uint8_t family, const Entry& e, uint8_t protocol, bool exist);

// Many elements in one ADD / DEL message: SETNAME, LINENO of the first,
// then ADT { DATA { ..., LINENO = index + 1 }, ... }. Takes entries from
// `from` while the message stays within `max_bytes`; `*next` is where the
// next message starts. Line numbers are the caller's index + 1, so an
// error names the entry in the caller's list.
nl::Bytes EncodeBulk(uint8_t cmd, const std::string& name, const SetType& type, uint8_t family,
                     const std::vector<Entry>& entries, size_t from, size_t max_bytes,
                     uint8_t protocol, bool exist, size_t* next);

// The same, for the entries named by `order` (indices into `entries`, each
// element's LINENO still its index + 1), starting at order[from]: how a bulk
// load resends what the kernel has not yet attempted.
nl::Bytes EncodeBulkOf(uint8_t cmd, const std::string& name, uint8_t family,
                       const std::vector<Entry>& entries, const std::vector<uint32_t>& order,
                       size_t from, size_t max_bytes, uint8_t protocol, bool exist, size_t* next);

// Replies.
struct ProtocolReply {
  uint8_t version = 0;
  uint8_t min = 0;  // 0 when the kernel does not send PROTOCOL_MIN
};
bool DecodeProtocol(const nl::Bytes& msg, ProtocolReply& out, std::string& error);

struct TypeReply {
  uint8_t revision = 0;
  uint8_t revision_min = 0;
};
bool DecodeTypeReply(const nl::Bytes& msg, TypeReply& out, std::string& error);

// Collects the sets of a LIST/SAVE dump, merging the messages of one set.
class ListDecoder {
 public:
  // Decodes one message of the dump. False with `error` on malformed input.
  bool Add(const nl::Bytes& msg, std::string& error);
  std::vector<ListedSet>& sets() { return sets_; }

 private:
  std::vector<ListedSet> sets_;
  std::map<std::string, size_t> by_name_;
};

// The command-level LINENO of an echoed request (the kernel writes the
// failing element's line number there). 0 when absent or malformed.
uint32_t EchoedLineno(const nl::Bytes& echo);

// Decodes one element's DATA attributes (exposed for tests and fuzzing).
bool DecodeEntry(const uint8_t* data, size_t len, Entry& out, std::string& error);

}  // namespace ipset
