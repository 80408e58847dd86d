#include "message.h"

#include <climits>
#include <cstring>

namespace nl {

namespace {
void PutHeader(Bytes& buf, size_t at, uint16_t type, uint16_t flags) {
  buf.resize(at + NLMSG_HDRLEN, 0);
  nlmsghdr h{};
  h.nlmsg_type = type;
  h.nlmsg_flags = flags;
  std::memcpy(buf.data() + at, &h, sizeof h);
}
}  // namespace

MessageBuilder::MessageBuilder(uint16_t type, uint16_t flags) : buf_(&own_), start_(0), writer_(own_) {
  PutHeader(own_, 0, type, flags);
}

MessageBuilder::MessageBuilder(Bytes& into, uint16_t type, uint16_t flags)
    : buf_(&into), start_(into.size()), writer_(into) {
  PutHeader(into, start_, type, flags);
}

MessageBuilder::MessageBuilder(MessageBuilder&& o) noexcept
    : own_(std::move(o.own_)),
      buf_(o.buf_ == &o.own_ ? &own_ : o.buf_),
      start_(o.start_),
      writer_(*buf_) {}

void MessageBuilder::Close() {
  const uint32_t len = static_cast<uint32_t>(buf_->size() - start_);
  std::memcpy(buf_->data() + start_, &len, sizeof len);
}

Bytes MessageBuilder::Finish() {
  Close();
  return std::move(own_);
}

bool SplitMessages(const uint8_t* data, size_t len, std::vector<Message>& out,
                   std::string& error) {
  size_t at = 0;
  while (len - at >= NLMSG_HDRLEN) {
    Message m;
    std::memcpy(&m.hdr, data + at, sizeof m.hdr);
    if (m.hdr.nlmsg_len < NLMSG_HDRLEN || m.hdr.nlmsg_len > len - at) {
      error = "netlink message length " + std::to_string(m.hdr.nlmsg_len) +
              " out of bounds (" + std::to_string(len - at) + " bytes left)";
      return false;
    }
    m.payload = data + at + NLMSG_HDRLEN;
    m.payload_len = m.hdr.nlmsg_len - NLMSG_HDRLEN;
    out.push_back(m);
    // The last message's padding may be missing: never step past the end
    // (len - at would wrap around and the loop would read beyond it).
    const size_t step = Align4(m.hdr.nlmsg_len);
    at += step < len - at ? step : len - at;
  }
  if (at < len && len - at >= NLMSG_HDRLEN) {
    error = "trailing bytes after netlink messages";
    return false;
  }
  return true;
}

bool ErrnoOf(int32_t field, int& out) {
  if (field == INT_MIN) return false;
  out = field < 0 ? -field : field;
  return true;
}

bool ParseError(const Message& m, ErrorReply& out, std::string& error) {
  if (m.payload_len < sizeof(nlmsgerr)) {
    error = "NLMSG_ERROR too short";
    return false;
  }
  nlmsgerr e;
  std::memcpy(&e, m.payload, sizeof e);
  if (!ErrnoOf(e.error, out.error)) {
    error = "NLMSG_ERROR with errno INT_MIN";
    return false;
  }
  out.request_seq = e.msg.nlmsg_seq;
  // The echoed request follows: only its header when NLM_F_CAPPED, else all
  // of it. Extended-ack attributes come after the echo.
  size_t echo = sizeof(nlmsghdr);
  if (!(m.hdr.nlmsg_flags & NLM_F_CAPPED)) {
    if (e.msg.nlmsg_len < sizeof(nlmsghdr) ||
        e.msg.nlmsg_len > m.payload_len - sizeof(int)) {
      echo = sizeof(nlmsghdr);  // malformed echo: keep what we know
    } else {
      echo = e.msg.nlmsg_len;
    }
    out.echo = m.payload + sizeof(int);
    out.echo_len = echo;
  }
  const size_t tlv_at = sizeof(int) + Align4(echo);
  if ((m.hdr.nlmsg_flags & NLM_F_ACK_TLVS) && tlv_at < m.payload_len) {
    AttrReader r(m.payload + tlv_at, m.payload_len - tlv_at);
    Attr a;
    while (r.Next(a)) {
      if (a.type == NLMSGERR_ATTR_MSG) {
        out.message = GetString(a);
      } else if (a.type == NLMSGERR_ATTR_OFFS) {
        uint32_t off;
        if (GetU32(a, &off)) out.offset = static_cast<int32_t>(off);
      }
    }
  }
  return true;
}

}  // namespace nl
