// NLMSG_ERROR parsing: acks and errors with or without the echoed request
// (NLM_F_CAPPED) and extended-ack TLVs (NLM_F_ACK_TLVS). Besides memory
// safety, checks what Transaction::OnMessage relies on: the echo lies inside the message.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../netlink/message.h"

static void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "invariant broken: %s\n", what);
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<nl::Message> parts;
  std::string err;
  if (!nl::SplitMessages(data, size, parts, err)) return 0;
  for (const nl::Message& m : parts) {
    Require(m.payload >= data + NLMSG_HDRLEN && m.payload + m.payload_len <= data + size,
            "message inside the datagram");
    // Parse every message as an error, whatever its type: ParseError only
    // looks at the flags, and the fuzzer need not guess NLMSG_ERROR.
    nl::ErrorReply e;
    if (!nl::ParseError(m, e, err)) continue;
    Require(e.error >= 0, "errno is positive");
    if (e.echo) {
      Require(e.echo >= m.payload && e.echo + e.echo_len <= m.payload + m.payload_len,
              "echo inside the message");
      nl::Bytes copy(e.echo, e.echo + e.echo_len);  // as OnMessage keeps it
    }
  }
  return 0;
}
