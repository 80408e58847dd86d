// The names conntrack uses for status bits, protocol states and protocols,
// built from the uapi headers' own identifiers (the preprocessor spells
// each name from its constant), so nothing is retyped.
#pragma once

#include <cstdint>
#include <string>

namespace conntrack {

struct Named {
  const char* name;
  uint32_t value;
};

// IPS_*_BIT without the prefix and suffix: "SEEN_REPLY", "ASSURED", ...
const Named* StatusBits(size_t* count);
// TCP_CONNTRACK_* / SCTP_CONNTRACK_* / DCCP states as `conntrack -L`
// prints them ("ESTABLISHED", "TIME_WAIT", ...); nullptr when unknown.
const char* StateName(uint8_t proto, uint8_t state);
// The states of one protocol, in value order (for the typed layer).
const Named* States(uint8_t proto, size_t* count);
// "tcp", "udp", "icmp", "icmpv6", "sctp", "udplite", "dccp", "gre" and
// their numbers (the protocols conntrack tracks by name).
const Named* Protocols(size_t* count);

}  // namespace conntrack
