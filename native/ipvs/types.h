// IPVS objects as plain structs, with the identity of a service or a
// destination kept apart from what the kernel reports about it (counters,
// connection counts), as cloudflare/ipvs does. Constants come from the
// kernel's uapi header, never retyped.
#pragma once

#include <netinet/in.h>  // before the uapi headers, which then skip their copies
#include <sys/socket.h>
#include <linux/ip_vs.h>
#include <linux/netfilter.h>  // union nf_inet_addr

#include <cstdint>
#include <string>
#include <vector>

namespace ipvs {

struct Stats {
  uint64_t conns = 0, inpkts = 0, outpkts = 0, inbytes = 0, outbytes = 0;
  uint64_t cps = 0, inpps = 0, outpps = 0, inbps = 0, outbps = 0;
};

// What identifies a service: (af, protocol, addr, port) or (af, fwmark).
struct ServiceKey {
  uint16_t af = 0;
  uint16_t protocol = 0;
  nf_inet_addr addr{};
  uint16_t port = 0;  // host order here; network order on the wire
  uint32_t fwmark = 0;
};

struct Service {
  ServiceKey key;
  std::string sched;
  uint32_t flags = 0;
  uint32_t mask = 0xFFFFFFFF;
  uint32_t timeout = 0;
  // The kernel's raw netmask word: an IPv4 mask in network byte order, or
  // an IPv6 prefix length as a host-order number.
  uint32_t netmask = 0;
  std::string pe_name;
  // Reported by the kernel only.
  Stats stats;
  bool has_stats = false;
  bool has_stats64 = false;
};

struct Destination {
  uint16_t af = 0;  // 0: the service's family (attribute left out)
  nf_inet_addr addr{};
  uint16_t port = 0;
  uint32_t fwd_method = IP_VS_CONN_F_MASQ;
  uint32_t weight = 1;
  uint32_t u_thresh = 0;
  uint32_t l_thresh = 0;
  bool has_tunnel = false;
  uint8_t tun_type = IP_VS_CONN_F_TUNNEL_TYPE_IPIP;
  uint16_t tun_port = 0;  // host order here
  uint16_t tun_flags = 0;
  // Reported by the kernel only.
  uint32_t active_conns = 0, inact_conns = 0, persist_conns = 0;
  Stats stats;
  bool has_stats = false;
  bool has_stats64 = false;
};

struct Daemon {
  uint32_t state = 0;  // IP_VS_STATE_MASTER or IP_VS_STATE_BACKUP
  std::string mcast_ifn;
  uint32_t sync_id = 0;
  uint16_t sync_maxlen = 0;
  uint16_t mcast_af = 0;  // AF_INET / AF_INET6 when a group is set
  nf_inet_addr mcast_group{};
  uint16_t mcast_port = 0;
  uint8_t mcast_ttl = 0;
  bool has_maxlen = false, has_port = false, has_ttl = false;
};

struct Timeouts {
  uint32_t tcp = 0, tcp_fin = 0, udp = 0;
};

struct Info {
  uint32_t version = 0;
  uint32_t conn_tab_size = 0;
};

// One request. `cmd` is an IPVS_CMD_* value; which parts are sent depends on it.
struct Request {
  uint8_t cmd = 0;
  bool has_service = false;
  bool service_key_only = false;  // send only the identity (destinations, zero, get)
  Service service;
  bool has_dest = false;
  Destination dest;
  bool dest_key_only = false;  // send only address and port (delete)
  bool has_daemon = false;
  Daemon daemon;
  bool has_timeouts = false;
  Timeouts timeouts;
  bool dump = false;  // GET_SERVICE of all, GET_DEST, GET_DAEMON
};

// Everything a reply message may carry.
struct Reply {
  uint8_t cmd = 0;
  std::vector<Service> services;
  std::vector<Destination> dests;
  std::vector<Daemon> daemons;
  bool has_info = false;
  Info info;
  bool has_timeouts = false;
  Timeouts timeouts;
};

}  // namespace ipvs
