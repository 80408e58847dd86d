// One IPVS generic-netlink reply, as RecordBatch::OnData hands it over:
// ipvs::Decode of the message in the receive buffer (pointer and length),
// then ReplyWriter::Add turning the Reply into reply records. The cheap,
// deep target for the decoder itself; ipvs_batch runs the same code behind
// the socket. Checks that the records are whole, of a known kind, and only
// name strings that are in the table.
#include <cstring>
#include <string>

#include "../ipvs/codec.h"
#include "../ipvs/records.h"
#include "fake_kernel.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy of exactly `size` bytes, so reading past the message is caught.
  std::unique_ptr<uint8_t[]> msg(new uint8_t[size ? size : 1]);
  if (size) std::memcpy(msg.get(), data, size);
  ipvs::Reply reply;
  std::string error;
  if (!ipvs::Decode(msg.get(), size, reply, error)) {
    fuzz::Require(!error.empty(), "a malformed reply says why");
    return 0;
  }
  ipvs::rec::ReplyWriter w;
  w.Add(3, reply, size % 2 ? AF_INET6 : AF_INET);
  const size_t expected = reply.services.size() + reply.dests.size() + reply.daemons.size() +
                          reply.has_info + reply.has_timeouts;
  fuzz::Require(w.count() == expected && w.bytes().size() == expected * ipvs::rec::kReplySize,
                "one whole record per decoded object");
  for (size_t i = 0; i < w.count(); i++) {
    const uint8_t* r = w.bytes().data() + i * ipvs::rec::kReplySize;
    uint32_t request, text;
    std::memcpy(&request, r + ipvs::rec::rep::kRequest, 4);
    std::memcpy(&text, r + ipvs::rec::rep::kAddrText, 4);
    fuzz::Require(request == 3, "records carry their request index");
    if (r[0] == ipvs::rec::kService || r[0] == ipvs::rec::kDest)
      fuzz::Require(text <= w.strings().size(), "address text inside the string table");
  }
  w.Truncate(0);
  fuzz::Require(w.count() == 0, "Truncate(0) drops every record");
  return 0;
}
