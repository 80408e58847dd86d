// rtnetlink codec for what the proxy needs from the routing stack: dummy
// links (create, look up, delete, bring up) and interface addresses (dump,
// add, delete). Pure functions, unit-tested and fuzzed like the others.
#pragma once

#include <netinet/in.h>  // before the uapi headers, which then skip their copies
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../netlink/attribute.h"

namespace rtnl {

struct Link {
  int32_t index = 0;
  std::string name;
  uint32_t flags = 0;  // IFF_*
  std::string kind;    // IFLA_INFO_KIND, empty for physical links
};

struct Address {
  uint8_t family = 0;
  uint8_t prefix_len = 0;
  int32_t index = 0;
  uint8_t scope = 0;
  uint32_t flags = 0;  // IFA_F_*
  uint8_t addr[16] = {};  // IFA_LOCAL when present (the address itself), else IFA_ADDRESS
  std::string label;
};

// Requests. `flags` are the NLM_F_* create/exclusive bits; the socket adds
// REQUEST and ACK.
nl::Bytes NewLink(const std::string& name, const std::string& kind, bool up);
nl::Bytes SetLinkUp(const std::string& name);
nl::Bytes GetLink(const std::string& name);
nl::Bytes DelLink(const std::string& name);
nl::Bytes DumpAddresses(uint8_t family);
nl::Bytes NewAddress(const Address& a, bool replace);
nl::Bytes DelAddress(const Address& a);

// Replies (RTM_NEWLINK / RTM_NEWADDR). False with `error` when malformed.
bool DecodeLink(const nl::Bytes& msg, Link& out, std::string& error);
bool DecodeAddress(const nl::Bytes& msg, Address& out, std::string& error);

}  // namespace rtnl
