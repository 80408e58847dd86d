// Netlink messages: building one request (header + family header + attributes)
// and splitting a received datagram into messages, including the kernel's
// error/ack messages with their extended-ack text.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attribute.h"

namespace nl {

// Builds one netlink message, in a buffer of its own or appended to a
// caller's buffer (a batch encoded back to back, with no allocation per
// message). The socket fills in the sequence number and port id when it
// sends; the caller chooses type, flags and payload.
class MessageBuilder {
 public:
  MessageBuilder(uint16_t type, uint16_t flags);
  MessageBuilder(Bytes& into, uint16_t type, uint16_t flags);
  MessageBuilder(MessageBuilder&& o) noexcept;
  MessageBuilder(const MessageBuilder&) = delete;
  MessageBuilder& operator=(const MessageBuilder&) = delete;

  // Appends a fixed family header (genlmsghdr, nfgenmsg, ifaddrmsg, ...).
  template <typename T>
  void Header(const T& h) {
    const size_t at = buf_->size();
    buf_->resize(at + Align4(sizeof(T)), 0);
    std::memcpy(buf_->data() + at, &h, sizeof(T));
  }
  AttrWriter& attrs() { return writer_; }
  // Sets the length field. Enough for a message appended to a caller's buffer.
  void Close();
  // Closes the message and hands its bytes over (own buffer only).
  Bytes Finish();
  size_t size() const { return buf_->size() - start_; }

 private:
  Bytes own_;
  Bytes* buf_;
  size_t start_;
  AttrWriter writer_;
};

// A view of one message inside a received datagram.
struct Message {
  nlmsghdr hdr{};
  const uint8_t* payload = nullptr;  // after the nlmsghdr
  size_t payload_len = 0;
};

// Splits a datagram into messages. Returns false (with `error`) when a
// header is truncated or a length runs past the end.
bool SplitMessages(const uint8_t* data, size_t len, std::vector<Message>& out,
                   std::string& error);

// What an NLMSG_ERROR message says: errno 0 is an ack.
struct ErrorReply {
  int error = 0;               // positive errno, 0 for an ack
  uint32_t request_seq = 0;    // nlmsg_seq of the request it answers
  std::string message;         // NLMSGERR_ATTR_MSG, if the kernel sent one
  int32_t offset = -1;         // NLMSGERR_ATTR_OFFS, if present
  const uint8_t* echo = nullptr;  // the echoed request, when not capped
  size_t echo_len = 0;
};

bool ParseError(const Message& m, ErrorReply& out, std::string& error);

// The positive errno in the error field of NLMSG_ERROR and NLMSG_DONE (the
// kernel sends it negated). False for INT_MIN, which has no positive
// counterpart: no kernel sends it, so the message is malformed.
bool ErrnoOf(int32_t field, int& out);

}  // namespace nl
