#include "family.h"

#include <linux/genetlink.h>

#include <vector>

namespace genl {

nl::MessageBuilder Start(uint16_t family_id, uint8_t cmd, uint8_t version, uint16_t flags) {
  nl::MessageBuilder b(family_id, flags);
  genlmsghdr g{};
  g.cmd = cmd;
  g.version = version;
  b.Header(g);
  return b;
}

nl::MessageBuilder Start(nl::Bytes& into, uint16_t family_id, uint8_t cmd, uint8_t version) {
  nl::MessageBuilder b(into, family_id, 0);
  genlmsghdr g{};
  g.cmd = cmd;
  g.version = version;
  b.Header(g);
  return b;
}

bool Attributes(const nl::Bytes& msg, const uint8_t** attrs, size_t* len, uint8_t* cmd) {
  return Attributes(msg.data(), msg.size(), attrs, len, cmd);
}

bool Attributes(const uint8_t* msg, size_t msg_len, const uint8_t** attrs, size_t* len, uint8_t* cmd) {
  const size_t head = NLMSG_HDRLEN + GENL_HDRLEN;
  if (msg_len < head) return false;
  genlmsghdr g;
  std::memcpy(&g, msg + NLMSG_HDRLEN, sizeof g);
  if (cmd) *cmd = g.cmd;
  *attrs = msg + head;
  *len = msg_len - head;
  return true;
}

nl::Status ResolveFamily(nl::NetlinkSocket& sock, const std::string& name, uint16_t* id,
                         int* kernel_error) {
  nl::MessageBuilder b = Start(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
  b.attrs().String(CTRL_ATTR_FAMILY_NAME, name);
  std::vector<nl::Exchange> batch(1);
  batch[0].request = b.Finish();
  batch[0].expects_data = true;
  nl::Status st = sock.Transact(batch);
  if (!st.ok()) return st;
  *kernel_error = batch[0].error;
  if (batch[0].error) return nl::Status::Ok();
  for (const nl::Bytes& reply : batch[0].replies) {
    const uint8_t* attrs;
    size_t len;
    if (!Attributes(reply, &attrs, &len, nullptr)) continue;
    nl::AttrTable t(attrs, len, CTRL_ATTR_FAMILY_ID);
    if (const nl::Attr* a = t.Get(CTRL_ATTR_FAMILY_ID); a && nl::GetU16(*a, id))
      return nl::Status::Ok();
  }
  return nl::Status::Errno(EBADMSG, "CTRL_CMD_GETFAMILY", "reply without a family id for " + name);
}

}  // namespace genl
