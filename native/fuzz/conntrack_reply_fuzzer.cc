// Conntrack replies as the list, get, delete-by-filter and stats jobs
// decode them: the input is a fake-kernel script (fake_kernel.h) whose
// datagrams reach the decoders through the real socket (replies.h). Each
// entry is decoded, tested against filters (every part the kernel may or
// may not have applied), written as a record, and turned into the delete
// request deleteMatching() would send, which must come out well formed.
#include <cstring>
#include <string>

#include "../conntrack/codec.h"
#include "../conntrack/filter.h"
#include "../conntrack/records.h"
#include "../netlink/message.h"
#include "replies.h"

namespace {

conntrack::Filter Udp53() {
  conntrack::Filter f;
  f.family = NFPROTO_IPV4;
  f.has_proto = true;
  f.proto = IPPROTO_UDP;
  f.orig.fields = conntrack::field::kDport;
  f.orig.dport = 53;
  f.reply.fields = conntrack::field::kSrc;
  f.reply.src.ip = htonl(0x0af4010a);  // 10.244.1.10
  f.has_mark = true;
  f.mark = 7;
  f.mark_mask = 0xff;
  f.status_mask = f.status_value = IPS_ASSURED;
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const conntrack::Filter kAll{};
  static const conntrack::Filter kUdp53 = Udp53();
  conntrack::rec::Writer records;
  fuzz::ForEachReply(
      data, size, NETLINK_NETFILTER, conntrack::MessageType(IPCTNL_MSG_CT_GET),
      [&](const nl::Bytes& msg) {
        nlmsghdr h;
        std::memcpy(&h, msg.data(), sizeof h);
        std::string error;
        switch (h.nlmsg_type & 0xff) {
          case IPCTNL_MSG_CT_GET_STATS_CPU: {
            conntrack::CpuStats s;
            conntrack::DecodeCpuStats(msg, s, error);
            return true;
          }
          case IPCTNL_MSG_CT_GET_STATS: {
            conntrack::GlobalStats s;
            conntrack::DecodeGlobalStats(msg, s, error);
            return true;
          }
          default:
            break;
        }
        conntrack::Entry e;
        if (!conntrack::DecodeEntry(msg, e, error)) {
          fuzz::Require(!error.empty(), "a refused entry says why");
          return false;  // the list job stops at the first malformed reply
        }
        fuzz::Require(conntrack::Matches(e, kAll), "the empty filter takes every entry");
        conntrack::Matches(e, kUdp53);
        records.Add(e, 0);
        const nl::Bytes del = conntrack::EncodeDelete(conntrack::KeyOf(e));
        std::vector<nl::Message> parts;
        fuzz::Require(nl::SplitMessages(del.data(), del.size(), parts, error) && parts.size() == 1,
                      "a delete built from a decoded entry is one well-formed message");
        return true;
      },
      [](const nl::Bytes&) {});
  fuzz::Require(records.bytes().size() == records.count() * conntrack::rec::kSize, "records are whole");
  return 0;
}
