// Generic netlink: building requests for a family and resolving a family's
// id by name through the genl controller.
#pragma once

#include <cstdint>
#include <string>

#include "../netlink/message.h"
#include "../netlink/socket.h"

namespace genl {

// Starts a generic netlink message: nlmsghdr + genlmsghdr.
nl::MessageBuilder Start(uint16_t family_id, uint8_t cmd, uint8_t version, uint16_t flags = 0);
// The same, appended to `into`.
nl::MessageBuilder Start(nl::Bytes& into, uint16_t family_id, uint8_t cmd, uint8_t version);

// Where a generic message's attributes begin and how long they are.
bool Attributes(const nl::Bytes& msg, const uint8_t** attrs, size_t* len, uint8_t* cmd);
bool Attributes(const uint8_t* msg, size_t msg_len, const uint8_t** attrs, size_t* len, uint8_t* cmd);

// Looks the family up with CTRL_CMD_GETFAMILY. `kernel_error` is the errno
// the controller answered (ENOENT: the family is not registered); the
// returned Status reports failures of the exchange itself.
nl::Status ResolveFamily(nl::NetlinkSocket& sock, const std::string& name, uint16_t* id,
                         int* kernel_error);

}  // namespace genl
