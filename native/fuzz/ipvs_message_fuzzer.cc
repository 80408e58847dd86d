// One IPVS generic-netlink reply, as ipvs::Decode receives it from the
// handle (or from ipvsDecode in tests): arbitrary bytes, any command.
#include <string>

#include "../ipvs/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ipvs::Reply reply;
  std::string error;
  ipvs::Decode(nl::Bytes(data, data + size), reply, error);
  return 0;
}
