// What NetlinkSocket::Receive/Dispatch do with a datagram, minus the
// socket: split it into messages, parse NLMSG_ERROR (keeping the echo the
// way Dispatch copies it), read NLMSG_DONE's errno, and hand each data
// message to the decoder as the exact bytes Dispatch stores in
// Exchange::replies. Fuzz targets use it so the decoders see input shaped
// like the kernel's, and the split/error code is fuzzed along the way.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "../netlink/message.h"

namespace fuzz {

// Calls on_data(bytes) for each data message, in order, until it returns
// false (the handles stop at the first malformed reply). on_echo(bytes) gets
// the echoed request of each error that has one (ipset reads LINENO there).
template <typename OnData, typename OnEcho>
void ForEachReply(const uint8_t* data, size_t size, OnData on_data, OnEcho on_echo) {
  std::vector<nl::Message> parts;
  std::string err;
  if (!nl::SplitMessages(data, size, parts, err)) return;
  for (const nl::Message& m : parts) {
    if (m.hdr.nlmsg_type == NLMSG_ERROR) {
      nl::ErrorReply e;
      if (!nl::ParseError(m, e, err)) continue;
      if (e.error && e.echo) on_echo(nl::Bytes(e.echo, e.echo + e.echo_len));
      continue;
    }
    if (m.hdr.nlmsg_type == NLMSG_DONE) {
      int code = 0;
      if (m.payload_len >= sizeof(int)) std::memcpy(&code, m.payload, sizeof code);
      continue;
    }
    if (m.hdr.nlmsg_type < NLMSG_MIN_TYPE) continue;
    if (!on_data(nl::Bytes(m.payload - NLMSG_HDRLEN, m.payload + m.payload_len))) return;
  }
}

}  // namespace fuzz
