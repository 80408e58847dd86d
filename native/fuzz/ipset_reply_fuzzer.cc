// ipset replies as the session and the jobs decode them: PROTOCOL and TYPE
// answers, LIST/SAVE dumps merged per set with every element formatted to
// `ipset save` text, and the LINENO read back from an error's echo. The
// input is a fake-kernel script (fake_kernel.h): the datagrams reach the
// decoders through the real socket (replies.h).
#include <string>

#include "../ipset/codec.h"
#include "replies.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ipset::ListDecoder list;
  bool list_ok = true;
  fuzz::ForEachReply(
      data, size, NETLINK_NETFILTER, (NFNL_SUBSYS_IPSET << 8) | IPSET_CMD_LIST,
      [&](const nl::Bytes& msg) {
        nlmsghdr h;
        std::memcpy(&h, msg.data(), sizeof h);
        std::string error;
        switch (h.nlmsg_type & 0xff) {
          case IPSET_CMD_PROTOCOL: {
            ipset::ProtocolReply r;
            ipset::DecodeProtocol(msg, r, error);
            return true;
          }
          case IPSET_CMD_TYPE: {
            ipset::TypeReply r;
            ipset::DecodeTypeReply(msg, r, error);
            return true;
          }
          default:
            // ListJob stops at the first malformed message.
            if (list_ok) list_ok = list.Add(msg, error);
            return true;
        }
      },
      [](const nl::Bytes& echo) { ipset::EchoedLineno(echo); });
  return 0;
}
