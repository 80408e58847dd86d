// rtnetlink replies (link and address dumps, acks, errors) as RtnlHandle
// decodes them: only RTM_NEWLINK and RTM_NEWADDR carry data it reads. The
// input is a fake-kernel script (fake_kernel.h): the datagrams reach the
// decoders through the real socket (replies.h).
#include <string>

#include "../rtnl/codec.h"
#include "replies.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::ForEachReply(
      data, size, NETLINK_ROUTE, RTM_GETLINK,
      [](const nl::Bytes& msg) {
        nlmsghdr h;
        std::memcpy(&h, msg.data(), sizeof h);
        std::string error;
        if (h.nlmsg_type == RTM_NEWLINK) {
          rtnl::Link l;
          return rtnl::DecodeLink(msg, l, error);
        }
        if (h.nlmsg_type == RTM_NEWADDR) {
          rtnl::Address a;
          return rtnl::DecodeAddress(msg, a, error);
        }
        return true;
      },
      [](const nl::Bytes&) {});
  return 0;
}
