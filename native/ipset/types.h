// ipset objects as plain structs: the set types we speak, one element of a
// set (binary, as the kernel sees it), a set's header, and the requests.
// Every number comes from the kernel's uapi headers, never retyped.
#pragma once

#include <netinet/in.h>  // before the uapi headers, which then skip their copies
#include <sys/socket.h>
#include <linux/netfilter.h>  // union nf_inet_addr, NFPROTO_*
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/ipset/ip_set.h>
#include <linux/netfilter/ipset/ip_set_bitmap.h>
#include <linux/netfilter/ipset/ip_set_hash.h>
#include <linux/netfilter/ipset/ip_set_list.h>
#include <linux/version.h>

// Linux 6.2 added these to the uapi header (hash:ip, hash:ip,port and
// hash:net,net "bitmask"); older headers lack them, and the kernel's values
// follow their neighbours there.
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
enum { IPSET_ATTR_BITMASK = IPSET_ATTR_MARKMASK + 1 };
enum { IPSET_ERR_BITMASK_NETMASK_EXCL = IPSET_ERR_SKBINFO + 1 };
#endif

#include <cstdint>
#include <string>
#include <vector>

namespace ipset {

// What one dimension of an element holds, in the order the type lists them.
enum class Part : uint8_t {
  kIp,         // address; optional /cidr or a-b range (the kernel expands them)
  kNet,        // network: address/cidr (cidr omitted = host)
  kProtoPort,  // [proto:]port, ICMP type names for icmp/icmpv6
  kPort,       // bare port or port range (bitmap:port)
  kIp2,        // second address (hash:ip,port,ip)
  kNet2,       // second network (hash:ip,port,net)
  kIface,      // [physdev:]interface name (hash:net,iface)
  kSetName,    // a member set's name (list:set)
  kMac,        // ethernet address (hash:mac, hash:ip,mac, bitmap:ip,mac)
  kMark,       // 32-bit packet mark (hash:ip,mark)
};

// Create and element options whose presence depends on the set type and on
// the revision the kernel has of it (ip_set_*.c: "N  X support added").
enum class Option : uint8_t {
  kCounters,
  kComment,
  kForceadd,
  kSkbinfo,
  kBucketsize,  // and initval: the same revision brought both
  kNetmask,
  kBitmask,
  kMarkmask,
  kNomatch,
  kWildcard,
  kCount,
};
constexpr size_t kOptionCount = static_cast<size_t>(Option::kCount);
// A type that never takes the option.
constexpr uint8_t kNever = 0xFF;

enum class Kind : uint8_t { kHash, kBitmap, kList };

struct SetType {
  const char* name;
  Kind kind;
  uint8_t dims;
  Part parts[3];
  bool inet6;           // also exists for family inet6
  bool unspec_family;   // created with NFPROTO_UNSPEC (bitmap:port, list:set, hash:mac)
  // The highest revision this code knows (see set_types.cc).
  uint8_t max_revision;
  // The first revision that takes each Option; kNever if none does.
  uint8_t since[kOptionCount];
  // Parts that may be left out at the end (bitmap:ip,mac's MAC).
  uint8_t optional_parts = 0;
  // Networks may have prefix length 0 (hash:net,iface, hash:net,port,net).
  bool zero_prefix = false;

  bool Takes(Option o) const { return since[static_cast<size_t>(o)] != kNever; }
  uint8_t Since(Option o) const { return since[static_cast<size_t>(o)]; }
};

// The option's name as `ipset` spells it.
const char* OptionName(Option o);

// An element and its per-element options, in host order.
struct Entry {
  nf_inet_addr ip{}, ip_to{}, ip2{}, ip2_to{};
  uint8_t cidr = 0, cidr2 = 0;  // when has_cidr / has_cidr2 (/0 is a prefix too)
  bool has_cidr = false, has_cidr2 = false;
  bool has_ip = false, has_ip_to = false, has_ip2 = false, has_ip2_to = false;
  uint8_t proto = 0;
  bool has_proto = false;
  uint16_t port = 0, port_to = 0;
  bool has_port = false, has_port_to = false;
  std::string iface;  // as given, "+" wildcards included (the kernel keeps it so)
  bool physdev = false;
  std::string name;   // list:set member
  // list:set positioning: the member `nameref` is next to (before or
  // after); never stored, so never listed.
  std::string nameref;
  bool before = false;
  bool has_ether = false;
  uint8_t ether[6] = {};
  bool has_mark = false;
  uint32_t mark = 0;
  bool wildcard = false;  // hash:net,iface: the name is a prefix

  bool has_timeout = false;
  uint32_t timeout = 0;
  bool nomatch = false;
  bool has_packets = false, has_bytes = false;
  uint64_t packets = 0, bytes = 0;
  bool has_comment = false;
  std::string comment;
  bool has_skbmark = false;
  uint32_t skbmark = 0, skbmarkmask = 0xFFFFFFFF;
  bool has_skbprio = false;
  uint32_t skbprio = 0;  // major << 16 | minor
  bool has_skbqueue = false;
  uint16_t skbqueue = 0;
};

// Create options and what a header reports (the kernel-only fields last).
struct Header {
  std::string name;
  std::string type;
  uint8_t revision = 0;
  uint8_t family = NFPROTO_UNSPEC;  // NFPROTO_IPV4 / NFPROTO_IPV6 / UNSPEC
  bool has_hashsize = false, has_maxelem = false, has_timeout = false;
  bool has_netmask = false, has_size = false, has_bucketsize = false;
  bool has_initval = false;
  uint32_t hashsize = 0, maxelem = 0, timeout = 0, size = 0, initval = 0;
  uint8_t netmask = 0, bucketsize = 0;
  uint32_t cadt_flags = 0;  // IPSET_FLAG_WITH_COUNTERS / _COMMENT / _SKBINFO / _FORCEADD
  bool has_bitmask = false, has_markmask = false;
  nf_inet_addr bitmask{};
  uint32_t markmask = 0;
  // bitmap range: IP..IP_TO (or IP/CIDR when created so) or PORT..PORT_TO
  bool has_range = false;
  nf_inet_addr range_from{}, range_to{};
  uint8_t range_cidr = 0;
  uint16_t port_from = 0, port_to = 0;
  bool has_index = false;
  uint16_t index = 0;
  uint32_t references = 0, memsize = 0, elements = 0;
  bool has_elements = false;
};

// One set as a LIST dump returns it, merged over all its messages.
struct ListedSet {
  Header header;
  bool has_header = false;
  std::vector<std::string> entries;  // formatted as `ipset save` prints them
};

}  // namespace ipset
