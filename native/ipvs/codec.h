// The IPVS generic netlink codec: requests to bytes, replies to structs.
// Pure functions of their inputs, so they are unit-tested against bytes
// captured from ipvsadm and fuzzed.
#pragma once

#include <string>

#include "../netlink/attribute.h"
#include "types.h"

namespace ipvs {

// Encodes a request for the IPVS family id (resolved per socket).
nl::Bytes Encode(const Request& req, uint16_t family_id);
// The same, appended to `out` (a batch encoded back to back).
void EncodeInto(const Request& req, uint16_t family_id, nl::Bytes& out);

// Decodes one reply message (NEW_SERVICE, NEW_DEST, NEW_DAEMON, SET_INFO,
// SET_CONFIG) into `out`, appending to its lists. False with `error` set
// when the message is malformed.
bool Decode(const nl::Bytes& msg, Reply& out, std::string& error);
// The same for a message inside a receive buffer.
bool Decode(const uint8_t* msg, size_t len, Reply& out, std::string& error);

}  // namespace ipvs
