// nf_tables messages as the decoder meets them: a datagram split into
// messages (nl::SplitMessages), each decoded by schema (nft::DecodeMessage).
// What decodes must encode back to what decodes the same (the property the
// library's "read, then write back" rests on), and encoding is stable. The
// extended-ack path finder runs on every message with an offset taken from
// the input, and must stay inside it.
#include <linux/netfilter/nfnetlink.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../netlink/message.h"
#include "../nftables/codec.h"
#include "fake_kernel.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy of exactly `size` bytes, so reading past the datagram is caught.
  std::unique_ptr<uint8_t[]> buf(new uint8_t[size ? size : 1]);
  if (size) std::memcpy(buf.get(), data, size);
  std::vector<nl::Message> parts;
  std::string error;
  if (!nl::SplitMessages(buf.get(), size, parts, error)) return 0;
  for (const nl::Message& m : parts) {
    const uint8_t* whole = m.payload - NLMSG_HDRLEN;
    const size_t len = m.payload_len + NLMSG_HDRLEN;
    long item = -2;
    const std::string path = nft::AttrPathAt(whole, len, static_cast<uint32_t>(size * 7 % (len + 1)), &item);
    fuzz::Require(item >= -1, "the path finder says which list item, or none");
    fuzz::Require(item < 0 || path.find('[') != std::string::npos, "a list item shows in the path");
    nft::Message d;
    if (!nft::DecodeMessage(whole, len, d, error)) {
      fuzz::Require(!error.empty(), "a malformed message says why");
      continue;
    }
    nl::Bytes once;
    nft::EncodeMessage(once, *d.type, d.family, m.hdr.nlmsg_flags, d.attrs);
    nft::Message again;
    fuzz::Require(nft::DecodeMessage(once.data(), once.size(), again, error), "what we encode decodes");
    fuzz::Require(again.type == d.type && again.family == d.family, "the same message type and family");
    fuzz::Require(again.attrs == d.attrs, "what is read encodes back to the same object");
    nl::Bytes twice;
    nft::EncodeMessage(twice, *again.type, again.family, m.hdr.nlmsg_flags, again.attrs);
    fuzz::Require(once == twice, "encoding is stable");
  }
  return 0;
}
