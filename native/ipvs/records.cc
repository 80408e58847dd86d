#include "records.h"

#include <arpa/inet.h>

#include <cstring>

namespace ipvs {
namespace rec {

namespace {

template <typename T>
T Get(const uint8_t* r, size_t off) {
  T v;
  std::memcpy(&v, r + off, sizeof v);
  return v;
}

template <typename T>
void Put(uint8_t* r, size_t off, T v) {
  std::memcpy(r + off, &v, sizeof v);
}

// A string field: index + 1 into the table, 0 for none.
bool GetString(const uint8_t* r, size_t off, const std::vector<std::string>& strings,
               std::string& out, const char* what, std::string& error) {
  const uint16_t i = Get<uint16_t>(r, off);
  if (i == 0) return true;
  if (i > strings.size()) {
    error = std::string(what) + " names string " + std::to_string(i - 1) + " of " +
            std::to_string(strings.size());
    return false;
  }
  out = strings[i - 1];
  return true;
}

uint16_t PutString(std::vector<std::string>& strings, const std::string& s) {
  if (s.empty()) return 0;
  strings.push_back(s);
  return static_cast<uint16_t>(strings.size());
}

bool KnownFamily(uint16_t af) { return af == AF_INET || af == AF_INET6; }

std::string AddressText(uint16_t af, const nf_inet_addr& a) {
  char buf[INET6_ADDRSTRLEN];
  return inet_ntop(af, &a, buf, sizeof buf) ? buf : "";
}

void PutStats(uint8_t* r, const Stats& s) {
  const uint64_t v[10] = {s.conns, s.inpkts, s.outpkts, s.inbytes, s.outbytes,
                          s.cps,   s.inpps,  s.outpps,  s.inbps,   s.outbps};
  std::memcpy(r + rep::kStats, v, sizeof v);
}

}  // namespace

bool ReadRequest(const uint8_t* data, size_t index, const std::vector<std::string>& strings,
                 Request& out, std::string& error) {
  const uint8_t* r = data + index * kRequestSize;
  out = Request{};
  out.cmd = r[req::kCmd];
  if (out.cmd == 0 || out.cmd > IPVS_CMD_MAX) {
    error = "unknown command " + std::to_string(out.cmd);
    return false;
  }
  const uint8_t flags = r[req::kFlags];
  out.dump = flags & kDump;
  // A destination, timeouts and a daemon share the record's second half
  // (bytes 48..95): a record claiming two of them would read one set of
  // bytes twice and send values nobody wrote.
  const int parts = !!(flags & kHasDest) + !!(flags & kHasTimeouts) + !!(flags & kHasDaemon);
  if (parts > 1) {
    error = "a record with more than one of destination, timeouts and daemon";
    return false;
  }
  if (flags & kHasService) {
    Service& s = out.service;
    out.has_service = true;
    out.service_key_only = flags & kServiceKeyOnly;
    s.key.af = Get<uint16_t>(r, req::kSvcAf);
    if (!KnownFamily(s.key.af)) {
      error = "service family " + std::to_string(s.key.af);
      return false;
    }
    s.key.protocol = Get<uint16_t>(r, req::kSvcProtocol);
    s.key.port = Get<uint16_t>(r, req::kSvcPort);
    s.key.fwmark = Get<uint32_t>(r, req::kSvcFwmark);
    std::memcpy(&s.key.addr, r + req::kSvcAddr, sizeof s.key.addr);
    s.flags = Get<uint32_t>(r, req::kSvcFlags);
    s.mask = Get<uint32_t>(r, req::kSvcMask);
    s.timeout = Get<uint32_t>(r, req::kSvcTimeout);
    s.netmask = Get<uint32_t>(r, req::kSvcNetmask);
    if (!GetString(r, req::kSvcSched, strings, s.sched, "scheduler", error) ||
        !GetString(r, req::kSvcPe, strings, s.pe_name, "persistence engine", error))
      return false;
    if (!out.service_key_only && s.sched.empty()) {
      error = "a service without a scheduler";
      return false;
    }
  }
  if (flags & kHasDest) {
    if (!out.has_service) {
      error = "a destination without its service";
      return false;
    }
    Destination& d = out.dest;
    out.has_dest = true;
    out.dest_key_only = flags & kDestKeyOnly;
    d.af = Get<uint16_t>(r, req::kDestAf);
    if (!KnownFamily(d.af)) {
      error = "destination family " + std::to_string(d.af);
      return false;
    }
    // ipvsadm always sends the destination's family; a caller may leave it
    // out for kernels older than 3.18, which lack the attribute.
    if (!(flags & kDestHasAf)) d.af = 0;
    d.port = Get<uint16_t>(r, req::kDestPort);
    std::memcpy(&d.addr, r + req::kDestAddr, sizeof d.addr);
    d.fwd_method = Get<uint32_t>(r, req::kDestFwd);
    d.weight = Get<uint32_t>(r, req::kDestWeight);
    d.u_thresh = Get<uint32_t>(r, req::kDestUThresh);
    d.l_thresh = Get<uint32_t>(r, req::kDestLThresh);
    d.tun_type = r[req::kDestTunType];
    d.tun_port = Get<uint16_t>(r, req::kDestTunPort);
    d.tun_flags = Get<uint16_t>(r, req::kDestTunFlags);
  }
  if (flags & kHasTimeouts) {
    out.has_timeouts = true;
    out.timeouts.tcp = Get<uint32_t>(r, req::kTimeoutTcp);
    out.timeouts.tcp_fin = Get<uint32_t>(r, req::kTimeoutTcpFin);
    out.timeouts.udp = Get<uint32_t>(r, req::kTimeoutUdp);
  }
  if (flags & kHasDaemon) {
    Daemon& d = out.daemon;
    out.has_daemon = true;
    d.state = Get<uint32_t>(r, req::kDaemonState);
    d.sync_id = Get<uint32_t>(r, req::kDaemonSyncId);
    if (!GetString(r, req::kDaemonIfn, strings, d.mcast_ifn, "daemon interface", error))
      return false;
    const uint8_t has = r[req::kDaemonHas];
    d.has_maxlen = has & kDaemonHasMaxlen;
    d.has_port = has & kDaemonHasPort;
    d.has_ttl = has & kDaemonHasTtl;
    d.sync_maxlen = Get<uint16_t>(r, req::kDaemonMaxlen);
    d.mcast_port = Get<uint16_t>(r, req::kDaemonPort);
    d.mcast_ttl = r[req::kDaemonTtl];
    d.mcast_af = Get<uint16_t>(r, req::kDaemonGroupAf);
    if (d.mcast_af && !KnownFamily(d.mcast_af)) {
      error = "daemon group family " + std::to_string(d.mcast_af);
      return false;
    }
    std::memcpy(&d.mcast_group, r + req::kDaemonGroup, sizeof d.mcast_group);
  }
  return true;
}

uint16_t ServiceAf(const uint8_t* data, size_t index) {
  const uint8_t* r = data + index * kRequestSize;
  return (r[req::kFlags] & kHasService) ? Get<uint16_t>(r, req::kSvcAf) : AF_INET;
}

void WriteRequest(const Request& q, uint8_t* r, std::vector<std::string>& strings) {
  std::memset(r, 0, kRequestSize);
  uint8_t flags = 0;
  r[req::kCmd] = q.cmd;
  if (q.dump) flags |= kDump;
  if (q.has_service) {
    const Service& s = q.service;
    flags |= kHasService | (q.service_key_only ? kServiceKeyOnly : 0);
    Put<uint16_t>(r, req::kSvcAf, s.key.af);
    Put<uint16_t>(r, req::kSvcProtocol, s.key.protocol);
    Put<uint16_t>(r, req::kSvcPort, s.key.port);
    Put<uint32_t>(r, req::kSvcFwmark, s.key.fwmark);
    std::memcpy(r + req::kSvcAddr, &s.key.addr, sizeof s.key.addr);
    Put<uint32_t>(r, req::kSvcFlags, s.flags);
    Put<uint32_t>(r, req::kSvcMask, s.mask);
    Put<uint32_t>(r, req::kSvcTimeout, s.timeout);
    Put<uint32_t>(r, req::kSvcNetmask, s.netmask);
    Put<uint16_t>(r, req::kSvcSched, PutString(strings, s.sched));
    Put<uint16_t>(r, req::kSvcPe, PutString(strings, s.pe_name));
  }
  if (q.has_dest) {
    const Destination& d = q.dest;
    flags |= kHasDest | (q.dest_key_only ? kDestKeyOnly : 0) | (d.af ? kDestHasAf : 0);
    Put<uint16_t>(r, req::kDestAf, d.af ? d.af : q.service.key.af);
    Put<uint16_t>(r, req::kDestPort, d.port);
    std::memcpy(r + req::kDestAddr, &d.addr, sizeof d.addr);
    Put<uint32_t>(r, req::kDestFwd, d.fwd_method);
    Put<uint32_t>(r, req::kDestWeight, d.weight);
    Put<uint32_t>(r, req::kDestUThresh, d.u_thresh);
    Put<uint32_t>(r, req::kDestLThresh, d.l_thresh);
    r[req::kDestTunType] = d.tun_type;
    Put<uint16_t>(r, req::kDestTunPort, d.tun_port);
    Put<uint16_t>(r, req::kDestTunFlags, d.tun_flags);
  }
  if (q.has_timeouts) {
    flags |= kHasTimeouts;
    Put<uint32_t>(r, req::kTimeoutTcp, q.timeouts.tcp);
    Put<uint32_t>(r, req::kTimeoutTcpFin, q.timeouts.tcp_fin);
    Put<uint32_t>(r, req::kTimeoutUdp, q.timeouts.udp);
  }
  if (q.has_daemon) {
    const Daemon& d = q.daemon;
    flags |= kHasDaemon;
    Put<uint32_t>(r, req::kDaemonState, d.state);
    Put<uint32_t>(r, req::kDaemonSyncId, d.sync_id);
    Put<uint16_t>(r, req::kDaemonIfn, PutString(strings, d.mcast_ifn));
    r[req::kDaemonHas] = (d.has_maxlen ? kDaemonHasMaxlen : 0) | (d.has_port ? kDaemonHasPort : 0) |
                         (d.has_ttl ? kDaemonHasTtl : 0);
    Put<uint16_t>(r, req::kDaemonMaxlen, d.sync_maxlen);
    Put<uint16_t>(r, req::kDaemonPort, d.mcast_port);
    r[req::kDaemonTtl] = d.mcast_ttl;
    Put<uint16_t>(r, req::kDaemonGroupAf, d.mcast_af);
    std::memcpy(r + req::kDaemonGroup, &d.mcast_group, sizeof d.mcast_group);
  }
  r[req::kFlags] = flags;
}

uint8_t* ReplyWriter::Next(uint8_t kind, uint32_t request) {
  const size_t at = bytes_.size();
  bytes_.resize(at + kReplySize);  // value-initialized: zeros
  uint8_t* r = bytes_.data() + at;
  r[rep::kKind] = kind;
  Put<uint32_t>(r, rep::kRequest, request);
  return r;
}

uint32_t ReplyWriter::Intern(const std::string& s) {
  if (s.empty()) return 0;
  auto it = interned_.find(s);
  if (it != interned_.end()) return it->second;
  strings_.push_back(s);
  const uint32_t id = static_cast<uint32_t>(strings_.size());
  interned_.emplace(s, id);
  return id;
}

uint32_t ReplyWriter::Text(const std::string& s) {
  strings_.push_back(s);
  return static_cast<uint32_t>(strings_.size());
}

void ReplyWriter::AddService(uint32_t request, const Service& s) {
  uint8_t* r = Next(kService, request);
  r[rep::kHasStats] = s.has_stats;
  Put<uint16_t>(r, rep::kAf, s.key.af);
  Put<uint16_t>(r, rep::kPort, s.key.port);
  std::memcpy(r + rep::kAddr, &s.key.addr, sizeof s.key.addr);
  if (s.key.af == AF_INET6 && !s.key.fwmark)
    Put<uint32_t>(r, rep::kAddrText, Text(AddressText(AF_INET6, s.key.addr)));
  Put<uint16_t>(r, rep::kSvcProtocol, s.key.protocol);
  // Interned names are few; a table past 65535 entries would be a bug.
  Put<uint16_t>(r, rep::kSvcSched, static_cast<uint16_t>(Intern(s.sched)));
  Put<uint32_t>(r, rep::kSvcFwmark, s.key.fwmark);
  Put<uint32_t>(r, rep::kSvcFlags, s.flags);
  Put<uint32_t>(r, rep::kSvcTimeout, s.timeout);
  Put<uint32_t>(r, rep::kSvcNetmask, s.netmask);
  Put<uint16_t>(r, rep::kSvcPe, static_cast<uint16_t>(Intern(s.pe_name)));
  if (s.has_stats) PutStats(r, s.stats);
}

void ReplyWriter::AddDest(uint32_t request, const Destination& d, uint16_t default_af) {
  uint8_t* r = Next(kDest, request);
  // Kernels before 3.18 leave out the destination's family: it is the service's.
  const uint16_t af = d.af ? d.af : default_af;
  r[rep::kHasStats] = d.has_stats;
  r[rep::kHasTunnel] = d.has_tunnel;
  Put<uint16_t>(r, rep::kAf, af);
  Put<uint16_t>(r, rep::kPort, d.port);
  std::memcpy(r + rep::kAddr, &d.addr, sizeof d.addr);
  if (af == AF_INET6) Put<uint32_t>(r, rep::kAddrText, Text(AddressText(AF_INET6, d.addr)));
  Put<uint32_t>(r, rep::kDestFwd, d.fwd_method);
  Put<uint32_t>(r, rep::kDestWeight, d.weight);
  Put<uint32_t>(r, rep::kDestUThresh, d.u_thresh);
  Put<uint32_t>(r, rep::kDestLThresh, d.l_thresh);
  Put<uint32_t>(r, rep::kDestActive, d.active_conns);
  Put<uint32_t>(r, rep::kDestInactive, d.inact_conns);
  Put<uint32_t>(r, rep::kDestPersist, d.persist_conns);
  r[rep::kDestTunType] = d.tun_type;
  Put<uint16_t>(r, rep::kDestTunPort, d.tun_port);
  Put<uint16_t>(r, rep::kDestTunFlags, d.tun_flags);
  if (d.has_stats) PutStats(r, d.stats);
}

void ReplyWriter::Add(uint32_t request, const Reply& reply, uint16_t default_af) {
  for (const Service& s : reply.services) AddService(request, s);
  for (const Destination& d : reply.dests) AddDest(request, d, default_af);
  for (const Daemon& d : reply.daemons) {
    uint8_t* r = Next(kDaemon, request);
    Put<uint32_t>(r, rep::kDaemonState, d.state);
    Put<uint32_t>(r, rep::kDaemonSyncId, d.sync_id);
    Put<uint16_t>(r, rep::kDaemonIfn, static_cast<uint16_t>(Intern(d.mcast_ifn)));
    Put<uint16_t>(r, rep::kDaemonMaxlen, d.sync_maxlen);
    Put<uint16_t>(r, rep::kDaemonPort, d.mcast_port);
    r[rep::kDaemonTtl] = d.mcast_ttl;
    r[rep::kDaemonHas] = (d.has_maxlen ? kDaemonHasMaxlen : 0) | (d.has_port ? kDaemonHasPort : 0) |
                         (d.has_ttl ? kDaemonHasTtl : 0);
    Put<uint16_t>(r, rep::kDaemonGroupAf, d.mcast_af);
    if (d.mcast_af) Put<uint32_t>(r, rep::kDaemonGroup, Text(AddressText(d.mcast_af, d.mcast_group)));
  }
  if (reply.has_info) {
    uint8_t* r = Next(kInfo, request);
    Put<uint32_t>(r, rep::kInfoVersion, reply.info.version);
    Put<uint32_t>(r, rep::kInfoConnTab, reply.info.conn_tab_size);
  }
  if (reply.has_timeouts) {
    uint8_t* r = Next(kTimeouts, request);
    Put<uint32_t>(r, rep::kTimeoutTcp, reply.timeouts.tcp);
    Put<uint32_t>(r, rep::kTimeoutTcpFin, reply.timeouts.tcp_fin);
    Put<uint32_t>(r, rep::kTimeoutUdp, reply.timeouts.udp);
  }
}

Napi::Object Layout(Napi::Env env) {
  Napi::Object layout = Napi::Object::New(env);
#define FIELD(obj, ns, name) obj.Set(#name, Napi::Number::New(env, ns::k##name))

  Napi::Object q = Napi::Object::New(env);
  q.Set("size", Napi::Number::New(env, kRequestSize));
  FIELD(q, req, Cmd); FIELD(q, req, Flags);
  FIELD(q, req, SvcAf); FIELD(q, req, SvcProtocol); FIELD(q, req, SvcPort); FIELD(q, req, SvcFwmark);
  FIELD(q, req, SvcAddr); FIELD(q, req, SvcFlags); FIELD(q, req, SvcMask); FIELD(q, req, SvcTimeout);
  FIELD(q, req, SvcNetmask); FIELD(q, req, SvcSched); FIELD(q, req, SvcPe);
  FIELD(q, req, DestAf); FIELD(q, req, DestPort); FIELD(q, req, DestAddr); FIELD(q, req, DestFwd);
  FIELD(q, req, DestWeight); FIELD(q, req, DestUThresh); FIELD(q, req, DestLThresh);
  FIELD(q, req, DestTunType); FIELD(q, req, DestTunPort); FIELD(q, req, DestTunFlags);
  FIELD(q, req, TimeoutTcp); FIELD(q, req, TimeoutTcpFin); FIELD(q, req, TimeoutUdp);
  FIELD(q, req, DaemonState); FIELD(q, req, DaemonGroup); FIELD(q, req, DaemonSyncId);
  FIELD(q, req, DaemonIfn); FIELD(q, req, DaemonMaxlen); FIELD(q, req, DaemonPort);
  FIELD(q, req, DaemonTtl); FIELD(q, req, DaemonHas); FIELD(q, req, DaemonGroupAf);
  layout.Set("request", q);

  Napi::Object p = Napi::Object::New(env);
  p.Set("size", Napi::Number::New(env, kReplySize));
  FIELD(p, rep, Kind); FIELD(p, rep, HasStats); FIELD(p, rep, HasTunnel); FIELD(p, rep, Request);
  FIELD(p, rep, Af); FIELD(p, rep, Port); FIELD(p, rep, Addr); FIELD(p, rep, AddrText);
  FIELD(p, rep, SvcProtocol); FIELD(p, rep, SvcSched); FIELD(p, rep, SvcFwmark); FIELD(p, rep, SvcFlags);
  FIELD(p, rep, SvcTimeout); FIELD(p, rep, SvcNetmask); FIELD(p, rep, SvcPe);
  FIELD(p, rep, DestFwd); FIELD(p, rep, DestWeight); FIELD(p, rep, DestUThresh); FIELD(p, rep, DestLThresh);
  FIELD(p, rep, DestActive); FIELD(p, rep, DestInactive); FIELD(p, rep, DestPersist);
  FIELD(p, rep, DestTunType); FIELD(p, rep, DestTunPort); FIELD(p, rep, DestTunFlags); FIELD(p, rep, Stats);
  FIELD(p, rep, DaemonState); FIELD(p, rep, DaemonSyncId); FIELD(p, rep, DaemonIfn);
  FIELD(p, rep, DaemonMaxlen); FIELD(p, rep, DaemonPort); FIELD(p, rep, DaemonTtl); FIELD(p, rep, DaemonHas);
  FIELD(p, rep, DaemonGroupAf); FIELD(p, rep, DaemonGroup);
  FIELD(p, rep, InfoVersion); FIELD(p, rep, InfoConnTab);
  FIELD(p, rep, TimeoutTcp); FIELD(p, rep, TimeoutTcpFin); FIELD(p, rep, TimeoutUdp);
  layout.Set("reply", p);
#undef FIELD

  Napi::Object f = Napi::Object::New(env);
  f.Set("hasService", kHasService);
  f.Set("serviceKeyOnly", kServiceKeyOnly);
  f.Set("hasDest", kHasDest);
  f.Set("destKeyOnly", kDestKeyOnly);
  f.Set("dump", kDump);
  f.Set("destHasAf", kDestHasAf);
  f.Set("hasTimeouts", kHasTimeouts);
  f.Set("hasDaemon", kHasDaemon);
  f.Set("daemonHasMaxlen", kDaemonHasMaxlen);
  f.Set("daemonHasPort", kDaemonHasPort);
  f.Set("daemonHasTtl", kDaemonHasTtl);
  layout.Set("flags", f);

  Napi::Object k = Napi::Object::New(env);
  k.Set("service", kService);
  k.Set("destination", kDest);
  k.Set("daemon", kDaemon);
  k.Set("info", kInfo);
  k.Set("timeouts", kTimeouts);
  layout.Set("kinds", k);
  return layout;
}

}  // namespace rec
}  // namespace ipvs
