// The generic netlink controller's answer to CTRL_CMD_GETFAMILY, read by
// genl::ResolveFamily (native/genl/family.cc) through ipvs::ResolveIpvs,
// as every fresh IPVS socket does. The reply is parsed inside
// ResolveFamily, behind Transact, so the fuzzed datagrams come from the
// scripted kernel (fake_kernel.h) through the real socket; the input is a
// script alone. Two lookups per input, the second on the same socket after
// whatever the first left behind (a late or extra answer must not be taken
// for the second one's).
//
// Checked besides memory safety: every lookup sends exactly one
// CTRL_CMD_GETFAMILY for "IPVS"; one that succeeds took an id that the
// script carried; a failed one leaves the id alone and names its step. As in
// production, a socket whose lookup failed is not used again (Channel
// drops it); one that succeeded is asked again (RecordBatch::Run after
// ENOENT).
#include <linux/genetlink.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <set>

#include "../genl/family.h"
#include "../ipvs/family.h"
#include "../ipvs/types.h"  // IPVS_GENL_NAME
#include "fake_kernel.h"

namespace {

using fuzz::Require;

// Every u16 that follows an attribute header of type CTRL_ATTR_FAMILY_ID
// anywhere in the script: a superset of the ids a reply could carry.
std::set<uint16_t> Candidates(const uint8_t* d, size_t n) {
  std::set<uint16_t> ids;
  for (size_t i = 0; i + 6 <= n; i++) {
    uint16_t len, type, id;
    std::memcpy(&len, d + i, 2);
    std::memcpy(&type, d + i + 2, 2);
    std::memcpy(&id, d + i + 4, 2);
    if ((type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID && len >= 6) ids.insert(id);
  }
  return ids;
}

void CheckRequest(size_t from) {
  const std::vector<fuzz::Sent>& sent = fuzz::KernelSent();
  Require(sent.size() == from + 1, "one lookup, one request");
  const fuzz::Sent& m = sent.back();
  Require(m.type == GENL_ID_CTRL && m.genl_cmd == CTRL_CMD_GETFAMILY, "a CTRL_CMD_GETFAMILY request");
  const uint8_t* attrs;
  size_t len;
  Require(genl::Attributes(m.bytes.data(), m.bytes.size(), &attrs, &len, nullptr), "a generic header");
  nl::AttrTable t(attrs, len, CTRL_ATTR_MAX);
  const nl::Attr* name = t.Get(CTRL_ATTR_FAMILY_NAME);
  Require(name && nl::GetString(*name) == IPVS_GENL_NAME, "asks for the IPVS family by name");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::KernelReset(data, size, fuzz::KernelConfig{});
  nl::SocketOptions opts;
  opts.protocol = NETLINK_GENERIC;
  opts.timeout_ms = 0;
  std::unique_ptr<nl::NetlinkSocket> sock;
  Require(nl::NetlinkSocket::Open(opts, sock).ok(), "the fake socket opens");
  const std::set<uint16_t> ids = Candidates(data, size);
  for (int round = 0; round < 2; round++) {
    const uint16_t before = 0xfffe - round;
    std::atomic<uint16_t> id{before};
    const size_t from = fuzz::KernelSent().size();
    const nl::Status st = ipvs::ResolveIpvs(*sock, id);
    CheckRequest(from);
    if (!st.ok()) {
      Require(id.load() == before && !st.where.empty(), "a failed lookup keeps the id and says where");
      break;
    }
    Require(ids.count(id.load()), "the id comes from a reply");
  }
  return 0;
}
