#include "codec.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "../genl/family.h"

namespace ipvs {

namespace {

// Attribute order and widths follow ipvsadm's libipvs so that the bytes we
// send can be compared with the bytes it sends. Addresses always take the
// full 16 bytes of nf_inet_addr, as libipvs sends them.
void PutServiceKey(nl::AttrWriter& w, const ServiceKey& k) {
  w.U16(IPVS_SVC_ATTR_AF, k.af);
  if (k.fwmark) {
    w.U32(IPVS_SVC_ATTR_FWMARK, k.fwmark);
  } else {
    w.U16(IPVS_SVC_ATTR_PROTOCOL, k.protocol);
    w.Raw(IPVS_SVC_ATTR_ADDR, &k.addr, sizeof k.addr);
    w.Be16(IPVS_SVC_ATTR_PORT, k.port);
  }
}

void PutService(nl::AttrWriter& w, const Service& s, bool key_only) {
  const size_t nest = w.Begin(IPVS_CMD_ATTR_SERVICE);
  PutServiceKey(w, s.key);
  if (!key_only) {
    w.String(IPVS_SVC_ATTR_SCHED_NAME, s.sched);
    if (!s.pe_name.empty()) w.String(IPVS_SVC_ATTR_PE_NAME, s.pe_name);
    ip_vs_flags f{s.flags, s.mask};
    w.Raw(IPVS_SVC_ATTR_FLAGS, &f, sizeof f);
    w.U32(IPVS_SVC_ATTR_TIMEOUT, s.timeout);
    w.U32(IPVS_SVC_ATTR_NETMASK, s.netmask);
  }
  w.End(nest);
}

void PutDest(nl::AttrWriter& w, const Destination& d, bool key_only) {
  const size_t nest = w.Begin(IPVS_CMD_ATTR_DEST);
  if (d.af) w.U16(IPVS_DEST_ATTR_ADDR_FAMILY, d.af);
  w.Raw(IPVS_DEST_ATTR_ADDR, &d.addr, sizeof d.addr);
  w.Be16(IPVS_DEST_ATTR_PORT, d.port);
  if (!key_only) {
    w.U32(IPVS_DEST_ATTR_FWD_METHOD, d.fwd_method & IP_VS_CONN_F_FWD_MASK);
    w.U32(IPVS_DEST_ATTR_WEIGHT, d.weight);
    // Sent for every destination, as ipvsadm does; kernels older than the
    // tunnel attributes ignore them.
    w.U8(IPVS_DEST_ATTR_TUN_TYPE, d.tun_type);
    w.Be16(IPVS_DEST_ATTR_TUN_PORT, d.tun_port);
    w.U16(IPVS_DEST_ATTR_TUN_FLAGS, d.tun_flags);
    w.U32(IPVS_DEST_ATTR_U_THRESH, d.u_thresh);
    w.U32(IPVS_DEST_ATTR_L_THRESH, d.l_thresh);
  }
  w.End(nest);
}

// Stopping sends state, interface and sync id too, as ipvsadm does; the
// kernel reads only the state there.
void PutDaemon(nl::AttrWriter& w, const Daemon& d, bool full) {
  const size_t nest = w.Begin(IPVS_CMD_ATTR_DAEMON);
  w.U32(IPVS_DAEMON_ATTR_STATE, d.state);
  w.String(IPVS_DAEMON_ATTR_MCAST_IFN, d.mcast_ifn);
  w.U32(IPVS_DAEMON_ATTR_SYNC_ID, d.sync_id);
  if (full) {
    if (d.has_maxlen) w.U16(IPVS_DAEMON_ATTR_SYNC_MAXLEN, d.sync_maxlen);
    if (d.has_port) w.U16(IPVS_DAEMON_ATTR_MCAST_PORT, d.mcast_port);
    if (d.has_ttl) w.U8(IPVS_DAEMON_ATTR_MCAST_TTL, d.mcast_ttl);
    if (d.mcast_af == AF_INET6)
      w.Raw(IPVS_DAEMON_ATTR_MCAST_GROUP6, &d.mcast_group.in6, 16);
    else if (d.mcast_af == AF_INET)
      w.Raw(IPVS_DAEMON_ATTR_MCAST_GROUP, &d.mcast_group.ip, 4);
  }
  w.End(nest);
}

bool DecodeStats(const nl::Attr& nest, bool wide, Stats& s, std::string& error) {
  nl::AttrTable t(nest.data, nest.len, IPVS_STATS_ATTR_MAX);
  if (!t.ok()) {
    error = "stats: " + t.error();
    return false;
  }
  uint64_t* fields[] = {nullptr,     &s.conns, &s.inpkts, &s.outpkts, &s.inbytes, &s.outbytes,
                        &s.cps,      &s.inpps, &s.outpps, &s.inbps,   &s.outbps};
  for (uint16_t type = IPVS_STATS_ATTR_CONNS; type <= IPVS_STATS_ATTR_OUTBPS; type++) {
    const nl::Attr* a = t.Get(type);
    if (!a) continue;  // absent counters stay 0
    // In the 32-bit nest only the byte counters are 64-bit wide.
    const bool is64 = wide || type == IPVS_STATS_ATTR_INBYTES || type == IPVS_STATS_ATTR_OUTBYTES;
    if (is64) {
      if (!nl::GetU64(*a, fields[type])) {
        error = "stats attribute " + std::to_string(type) + " is not a u64";
        return false;
      }
    } else {
      uint32_t v;
      if (!nl::GetU32(*a, &v)) {
        error = "stats attribute " + std::to_string(type) + " is not a u32";
        return false;
      }
      *fields[type] = v;
    }
  }
  return true;
}

bool GetAddr(const nl::Attr& a, nf_inet_addr& out) {
  if (a.len != 4 && a.len != 16) return false;
  std::memset(&out, 0, sizeof out);
  std::memcpy(&out, a.data, a.len);
  return true;
}

bool DecodeService(const nl::Attr& nest, Service& s, std::string& error) {
  nl::AttrTable t(nest.data, nest.len, IPVS_SVC_ATTR_MAX);
  if (!t.ok()) {
    error = "service: " + t.error();
    return false;
  }
  const nl::Attr* a;
  if (!(a = t.Get(IPVS_SVC_ATTR_AF)) || !nl::GetU16(*a, &s.key.af)) {
    error = "service: missing or malformed address family";
    return false;
  }
  if ((a = t.Get(IPVS_SVC_ATTR_FWMARK)) && !nl::GetU32(*a, &s.key.fwmark)) {
    error = "service: fwmark is not a u32";
    return false;
  }
  if ((a = t.Get(IPVS_SVC_ATTR_PROTOCOL)) && !nl::GetU16(*a, &s.key.protocol)) {
    error = "service: protocol is not a u16";
    return false;
  }
  if ((a = t.Get(IPVS_SVC_ATTR_ADDR)) && !GetAddr(*a, s.key.addr)) {
    error = "service: address has length " + std::to_string(a->len);
    return false;
  }
  if ((a = t.Get(IPVS_SVC_ATTR_PORT)) && !nl::GetBe16(*a, &s.key.port)) {
    error = "service: port is not a u16";
    return false;
  }
  if ((a = t.Get(IPVS_SVC_ATTR_SCHED_NAME))) s.sched = nl::GetString(*a);
  if ((a = t.Get(IPVS_SVC_ATTR_PE_NAME))) s.pe_name = nl::GetString(*a);
  if ((a = t.Get(IPVS_SVC_ATTR_FLAGS))) {
    ip_vs_flags f;
    if (a->len != sizeof f) {
      error = "service: flags have length " + std::to_string(a->len);
      return false;
    }
    std::memcpy(&f, a->data, sizeof f);
    s.flags = f.flags & f.mask;
    s.mask = f.mask;
  }
  if ((a = t.Get(IPVS_SVC_ATTR_TIMEOUT)) && !nl::GetU32(*a, &s.timeout)) {
    error = "service: timeout is not a u32";
    return false;
  }
  if ((a = t.Get(IPVS_SVC_ATTR_NETMASK)) && !nl::GetU32(*a, &s.netmask)) {
    error = "service: netmask is not a u32";
    return false;
  }
  if ((a = t.Get(IPVS_SVC_ATTR_STATS64))) {
    if (!DecodeStats(*a, true, s.stats, error)) return false;
    s.has_stats = s.has_stats64 = true;
  } else if ((a = t.Get(IPVS_SVC_ATTR_STATS))) {
    if (!DecodeStats(*a, false, s.stats, error)) return false;
    s.has_stats = true;
  }
  return true;
}

bool DecodeDest(const nl::Attr& nest, Destination& d, std::string& error) {
  nl::AttrTable t(nest.data, nest.len, IPVS_DEST_ATTR_MAX);
  if (!t.ok()) {
    error = "destination: " + t.error();
    return false;
  }
  const nl::Attr* a;
  if (!(a = t.Get(IPVS_DEST_ATTR_ADDR)) || !GetAddr(*a, d.addr)) {
    error = "destination: missing or malformed address";
    return false;
  }
  if (!(a = t.Get(IPVS_DEST_ATTR_PORT)) || !nl::GetBe16(*a, &d.port)) {
    error = "destination: missing or malformed port";
    return false;
  }
  struct U32Field {
    uint16_t type;
    uint32_t* out;
    const char* name;
  } u32s[] = {
      {IPVS_DEST_ATTR_FWD_METHOD, &d.fwd_method, "forwarding method"},
      {IPVS_DEST_ATTR_WEIGHT, &d.weight, "weight"},
      {IPVS_DEST_ATTR_U_THRESH, &d.u_thresh, "upper threshold"},
      {IPVS_DEST_ATTR_L_THRESH, &d.l_thresh, "lower threshold"},
      {IPVS_DEST_ATTR_ACTIVE_CONNS, &d.active_conns, "active connections"},
      {IPVS_DEST_ATTR_INACT_CONNS, &d.inact_conns, "inactive connections"},
      {IPVS_DEST_ATTR_PERSIST_CONNS, &d.persist_conns, "persistent connections"},
  };
  for (const U32Field& f : u32s) {
    if ((a = t.Get(f.type)) && !nl::GetU32(*a, f.out)) {
      error = std::string("destination: ") + f.name + " is not a u32";
      return false;
    }
  }
  d.fwd_method &= IP_VS_CONN_F_FWD_MASK;
  if ((a = t.Get(IPVS_DEST_ATTR_ADDR_FAMILY)) && !nl::GetU16(*a, &d.af)) {
    error = "destination: address family is not a u16";
    return false;
  }
  if ((a = t.Get(IPVS_DEST_ATTR_TUN_TYPE))) {
    if (!nl::GetU8(*a, &d.tun_type)) {
      error = "destination: tunnel type is not a u8";
      return false;
    }
    d.has_tunnel = true;
  }
  if ((a = t.Get(IPVS_DEST_ATTR_TUN_PORT)) && !nl::GetBe16(*a, &d.tun_port)) {
    error = "destination: tunnel port is not a u16";
    return false;
  }
  if ((a = t.Get(IPVS_DEST_ATTR_TUN_FLAGS)) && !nl::GetU16(*a, &d.tun_flags)) {
    error = "destination: tunnel flags are not a u16";
    return false;
  }
  if ((a = t.Get(IPVS_DEST_ATTR_STATS64))) {
    if (!DecodeStats(*a, true, d.stats, error)) return false;
    d.has_stats = d.has_stats64 = true;
  } else if ((a = t.Get(IPVS_DEST_ATTR_STATS))) {
    if (!DecodeStats(*a, false, d.stats, error)) return false;
    d.has_stats = true;
  }
  return true;
}

bool DecodeDaemon(const nl::Attr& nest, Daemon& d, std::string& error) {
  nl::AttrTable t(nest.data, nest.len, IPVS_DAEMON_ATTR_MAX);
  if (!t.ok()) {
    error = "daemon: " + t.error();
    return false;
  }
  const nl::Attr* a;
  if ((a = t.Get(IPVS_DAEMON_ATTR_STATE)) && !nl::GetU32(*a, &d.state)) {
    error = "daemon: state is not a u32";
    return false;
  }
  if ((a = t.Get(IPVS_DAEMON_ATTR_MCAST_IFN))) d.mcast_ifn = nl::GetString(*a);
  if ((a = t.Get(IPVS_DAEMON_ATTR_SYNC_ID)) && !nl::GetU32(*a, &d.sync_id)) {
    error = "daemon: sync id is not a u32";
    return false;
  }
  if ((a = t.Get(IPVS_DAEMON_ATTR_SYNC_MAXLEN))) d.has_maxlen = nl::GetU16(*a, &d.sync_maxlen);
  if ((a = t.Get(IPVS_DAEMON_ATTR_MCAST_PORT))) d.has_port = nl::GetU16(*a, &d.mcast_port);
  if ((a = t.Get(IPVS_DAEMON_ATTR_MCAST_TTL))) d.has_ttl = nl::GetU8(*a, &d.mcast_ttl);
  if ((a = t.Get(IPVS_DAEMON_ATTR_MCAST_GROUP6)) && a->len == 16) {
    d.mcast_af = AF_INET6;
    std::memcpy(&d.mcast_group.in6, a->data, 16);
  } else if ((a = t.Get(IPVS_DAEMON_ATTR_MCAST_GROUP)) && a->len == 4) {
    d.mcast_af = AF_INET;
    std::memcpy(&d.mcast_group.ip, a->data, 4);
  }
  return true;
}

}  // namespace

namespace {
void PutRequest(nl::AttrWriter& w, const Request& req) {
  if (req.has_service) PutService(w, req.service, req.service_key_only);
  if (req.has_dest) PutDest(w, req.dest, req.dest_key_only);
  if (req.has_daemon) PutDaemon(w, req.daemon, req.cmd == IPVS_CMD_NEW_DAEMON);
  if (req.has_timeouts) {
    w.U32(IPVS_CMD_ATTR_TIMEOUT_TCP, req.timeouts.tcp);
    w.U32(IPVS_CMD_ATTR_TIMEOUT_TCP_FIN, req.timeouts.tcp_fin);
    w.U32(IPVS_CMD_ATTR_TIMEOUT_UDP, req.timeouts.udp);
  }
}
}  // namespace

nl::Bytes Encode(const Request& req, uint16_t family_id) {
  nl::MessageBuilder b = genl::Start(family_id, req.cmd, IPVS_GENL_VERSION);
  PutRequest(b.attrs(), req);
  return b.Finish();
}

void EncodeInto(const Request& req, uint16_t family_id, nl::Bytes& out) {
  nl::MessageBuilder b = genl::Start(out, family_id, req.cmd, IPVS_GENL_VERSION);
  PutRequest(b.attrs(), req);
  b.Close();
}

bool Decode(const nl::Bytes& msg, Reply& out, std::string& error) {
  return Decode(msg.data(), msg.size(), out, error);
}

bool Decode(const uint8_t* msg, size_t msg_len, Reply& out, std::string& error) {
  const uint8_t* attrs;
  size_t len;
  if (!genl::Attributes(msg, msg_len, &attrs, &len, &out.cmd)) {
    error = "message shorter than a generic netlink header";
    return false;
  }
  // Top-level attribute numbers depend on the command: SET_INFO uses the
  // IPVS_INFO_ATTR_* space, everything else IPVS_CMD_ATTR_*.
  if (out.cmd == IPVS_CMD_SET_INFO) {
    nl::AttrTable t(attrs, len, IPVS_INFO_ATTR_MAX);
    if (!t.ok()) {
      error = "info: " + t.error();
      return false;
    }
    const nl::Attr* a;
    if (!(a = t.Get(IPVS_INFO_ATTR_VERSION)) || !nl::GetU32(*a, &out.info.version) ||
        !(a = t.Get(IPVS_INFO_ATTR_CONN_TAB_SIZE)) || !nl::GetU32(*a, &out.info.conn_tab_size)) {
      error = "info: missing version or connection table size";
      return false;
    }
    out.has_info = true;
    return true;
  }
  nl::AttrTable t(attrs, len, IPVS_CMD_ATTR_MAX);
  if (!t.ok()) {
    error = t.error();
    return false;
  }
  const nl::Attr* a;
  if ((a = t.Get(IPVS_CMD_ATTR_SERVICE))) {
    Service s;
    if (!DecodeService(*a, s, error)) return false;
    out.services.push_back(std::move(s));
  }
  if ((a = t.Get(IPVS_CMD_ATTR_DEST))) {
    Destination d;
    if (!DecodeDest(*a, d, error)) return false;
    out.dests.push_back(std::move(d));
  }
  if ((a = t.Get(IPVS_CMD_ATTR_DAEMON))) {
    Daemon d;
    if (!DecodeDaemon(*a, d, error)) return false;
    out.daemons.push_back(std::move(d));
  }
  const nl::Attr* tcp = t.Get(IPVS_CMD_ATTR_TIMEOUT_TCP);
  const nl::Attr* fin = t.Get(IPVS_CMD_ATTR_TIMEOUT_TCP_FIN);
  const nl::Attr* udp = t.Get(IPVS_CMD_ATTR_TIMEOUT_UDP);
  if (tcp || fin || udp) {
    if ((tcp && !nl::GetU32(*tcp, &out.timeouts.tcp)) ||
        (fin && !nl::GetU32(*fin, &out.timeouts.tcp_fin)) ||
        (udp && !nl::GetU32(*udp, &out.timeouts.udp))) {
      error = "config: a timeout is not a u32";
      return false;
    }
    out.has_timeouts = true;
  }
  return true;
}

}  // namespace ipvs
