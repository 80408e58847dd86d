// Names the `ipset` tool prints and accepts for protocols, ICMP types and
// services, so our text matches its text on the same machine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ipset {

// The protocol's name from the system's protocol database, as libipset
// prints it (getprotobynumber), or its number when it has no name.
const std::string& ProtoName(uint8_t proto);
// A protocol name (case as in the database; "icmpv6" is accepted for
// ipv6-icmp, like the tool) or number 1..255. False when unknown.
bool ParseProto(std::string_view s, uint8_t* out);

// ICMP / ICMPv6 type+code names (libipset's tables). nullptr if unnamed.
const char* IcmpName(uint8_t type, uint8_t code);
const char* Icmpv6Name(uint8_t type, uint8_t code);
// A name (case-insensitive) -> type << 8 | code. False when unknown.
bool ParseIcmpName(std::string_view s, bool v6, uint16_t* typecode);

// A service name for a protocol ("http" for tcp) -> port. False when unknown.
bool ParseServiceName(std::string_view s, uint8_t proto, uint16_t* port);

}  // namespace ipset
