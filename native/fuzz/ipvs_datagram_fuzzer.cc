// IPVS replies as they arrive: datagrams (the seeds are ipvsadm's received
// datagrams, concatenated) split into messages, errors parsed, every data
// message decoded into one Reply as IpvsHandle's Decode() does for a dump.
#include <string>

#include "../ipvs/codec.h"
#include "replies.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ipvs::Reply reply;
  fuzz::ForEachReply(
      data, size,
      [&](const nl::Bytes& msg) {
        std::string error;
        return ipvs::Decode(msg, reply, error);
      },
      [](const nl::Bytes&) {});
  return 0;
}
