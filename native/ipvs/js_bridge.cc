#include "js_bridge.h"

#include <arpa/inet.h>

#include "../addon/js_values.h"

namespace ipvs {

using addon::GetAddress;
using addon::GetBool;
using addon::GetObject;
using addon::GetString;
using addon::GetUint;
using addon::Has;

namespace {

uint16_t GetFamily(const Napi::Object& o, const std::string& field) {
  const uint32_t af = GetUint(o, "af", field + ".af", 0xFFFF);
  if (af != AF_INET && af != AF_INET6)
    throw Napi::RangeError::New(o.Env(), field + ".af must be AF_INET (2) or AF_INET6 (10)");
  return static_cast<uint16_t>(af);
}

Service ServiceFromJs(const Napi::Object& o, bool key_only) {
  Service s;
  s.key.af = GetFamily(o, "service");
  s.key.fwmark = GetUint(o, "fwmark", "service.fwmark", 0xFFFFFFFF);
  if (!s.key.fwmark) {
    s.key.protocol = static_cast<uint16_t>(GetUint(o, "protocol", "service.protocol", 255));
    GetAddress(o, "address", "service.address", s.key.af, s.key.addr);
    s.key.port = static_cast<uint16_t>(GetUint(o, "port", "service.port", 65535));
  }
  if (key_only) return s;
  s.sched = GetString(o, "scheduler", "service.scheduler", IP_VS_SCHEDNAME_MAXLEN - 1, "wlc");
  s.pe_name = GetString(o, "peName", "service.peName", IP_VS_PENAME_MAXLEN - 1);
  s.flags = GetUint(o, "flags", "service.flags", 0xFFFFFFFF);
  s.mask = GetUint(o, "mask", "service.mask", 0xFFFFFFFF, 0xFFFFFFFF);
  s.timeout = GetUint(o, "timeout", "service.timeout", 0xFFFFFFFF);
  if (s.key.af == AF_INET) {
    // The kernel keeps an IPv4 netmask in network byte order.
    nf_inet_addr m{};
    if (Has(o, "netmask")) {
      GetAddress(o, "netmask", "service.netmask", AF_INET, m);
    } else {
      m.ip = 0xFFFFFFFF;
    }
    s.netmask = m.ip;
  } else {
    // For IPv6 it is a prefix length, as a plain number.
    s.netmask = GetUint(o, "netmask", "service.netmask", 128, 128);
  }
  return s;
}

Destination DestinationFromJs(const Napi::Object& o, uint16_t service_af, bool key_only) {
  Destination d;
  d.af = Has(o, "af") ? GetFamily(o, "destination") : service_af;
  GetAddress(o, "address", "destination.address", d.af, d.addr);
  d.port = static_cast<uint16_t>(GetUint(o, "port", "destination.port", 65535));
  if (key_only) return d;
  d.fwd_method = GetUint(o, "forward", "destination.forward", IP_VS_CONN_F_FWD_MASK);
  d.weight = GetUint(o, "weight", "destination.weight", 0x7FFFFFFF, 1);
  d.u_thresh = GetUint(o, "upperThreshold", "destination.upperThreshold", 0xFFFFFFFF);
  d.l_thresh = GetUint(o, "lowerThreshold", "destination.lowerThreshold", 0xFFFFFFFF);
  if (Has(o, "tunnel")) {
    Napi::Object t = GetObject(o, "tunnel", "destination.tunnel");
    d.has_tunnel = true;
    d.tun_type = static_cast<uint8_t>(
        GetUint(t, "type", "destination.tunnel.type", IP_VS_CONN_F_TUNNEL_TYPE_MAX - 1));
    d.tun_port = static_cast<uint16_t>(GetUint(t, "port", "destination.tunnel.port", 65535));
    d.tun_flags = static_cast<uint16_t>(GetUint(t, "flags", "destination.tunnel.flags", 0xFFFF));
  }
  return d;
}

Daemon DaemonFromJs(const Napi::Object& o) {
  Daemon d;
  d.state = GetUint(o, "state", "daemon.state", IP_VS_STATE_MASTER | IP_VS_STATE_BACKUP);
  d.mcast_ifn = GetString(o, "mcastIfn", "daemon.mcastIfn", IP_VS_IFNAME_MAXLEN - 1);
  d.sync_id = GetUint(o, "syncId", "daemon.syncId", 255);
  if (Has(o, "syncMaxlen")) {
    d.has_maxlen = true;
    d.sync_maxlen = static_cast<uint16_t>(GetUint(o, "syncMaxlen", "daemon.syncMaxlen", 65535));
  }
  if (Has(o, "mcastPort")) {
    d.has_port = true;
    d.mcast_port = static_cast<uint16_t>(GetUint(o, "mcastPort", "daemon.mcastPort", 65535));
  }
  if (Has(o, "mcastTtl")) {
    d.has_ttl = true;
    d.mcast_ttl = static_cast<uint8_t>(GetUint(o, "mcastTtl", "daemon.mcastTtl", 255));
  }
  if (Has(o, "mcastGroup")) {
    const std::string g = GetString(o, "mcastGroup", "daemon.mcastGroup", 64);
    d.mcast_af = g.find(':') != std::string::npos ? AF_INET6 : AF_INET;
    GetAddress(o, "mcastGroup", "daemon.mcastGroup", d.mcast_af, d.mcast_group);
  }
  return d;
}

Napi::Object StatsToJs(Napi::Env env, const Stats& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("conns", Napi::BigInt::New(env, s.conns));
  o.Set("inPackets", Napi::BigInt::New(env, s.inpkts));
  o.Set("outPackets", Napi::BigInt::New(env, s.outpkts));
  o.Set("inBytes", Napi::BigInt::New(env, s.inbytes));
  o.Set("outBytes", Napi::BigInt::New(env, s.outbytes));
  o.Set("cps", Napi::BigInt::New(env, s.cps));
  o.Set("inPps", Napi::BigInt::New(env, s.inpps));
  o.Set("outPps", Napi::BigInt::New(env, s.outpps));
  o.Set("inBps", Napi::BigInt::New(env, s.inbps));
  o.Set("outBps", Napi::BigInt::New(env, s.outbps));
  return o;
}

}  // namespace

Request RequestFromJs(const Napi::Object& op) {
  Request r;
  const uint32_t cmd = GetUint(op, "cmd", "cmd", IPVS_CMD_MAX);
  if (cmd == 0) throw Napi::RangeError::New(op.Env(), "cmd must be an IPVS_CMD_* value");
  r.cmd = static_cast<uint8_t>(cmd);
  r.dump = GetBool(op, "dump");
  if (Has(op, "service")) {
    r.has_service = true;
    r.service_key_only = GetBool(op, "serviceKeyOnly");
    r.service = ServiceFromJs(GetObject(op, "service", "service"), r.service_key_only);
  }
  if (Has(op, "destination")) {
    if (!r.has_service)
      throw Napi::TypeError::New(op.Env(), "a destination needs its service");
    r.has_dest = true;
    r.dest_key_only = GetBool(op, "destinationKeyOnly");
    r.dest = DestinationFromJs(GetObject(op, "destination", "destination"), r.service.key.af,
                               r.dest_key_only);
  }
  if (Has(op, "daemon")) {
    r.has_daemon = true;
    r.daemon = DaemonFromJs(GetObject(op, "daemon", "daemon"));
  }
  if (Has(op, "timeouts")) {
    Napi::Object t = GetObject(op, "timeouts", "timeouts");
    r.has_timeouts = true;
    r.timeouts.tcp = GetUint(t, "tcp", "timeouts.tcp", 0x7FFFFFFF);
    r.timeouts.tcp_fin = GetUint(t, "tcpFin", "timeouts.tcpFin", 0x7FFFFFFF);
    r.timeouts.udp = GetUint(t, "udp", "timeouts.udp", 0x7FFFFFFF);
  }
  return r;
}

Napi::Object ServiceToJs(Napi::Env env, const Service& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("af", s.key.af);
  if (s.key.fwmark) {
    o.Set("fwmark", s.key.fwmark);
  } else {
    o.Set("protocol", s.key.protocol);
    o.Set("address", addon::FormatAddress(s.key.af, &s.key.addr));
    o.Set("port", s.key.port);
  }
  o.Set("scheduler", s.sched);
  o.Set("flags", s.flags);
  o.Set("timeout", s.timeout);
  if (s.key.af == AF_INET)
    o.Set("netmask", addon::FormatAddress(AF_INET, &s.netmask));
  else
    o.Set("netmask", s.netmask);
  if (!s.pe_name.empty()) o.Set("peName", s.pe_name);
  if (s.has_stats) o.Set("stats", StatsToJs(env, s.stats));
  return o;
}

Napi::Object DestinationToJs(Napi::Env env, const Destination& d, uint16_t default_af) {
  Napi::Object o = Napi::Object::New(env);
  const uint16_t af = d.af ? d.af : default_af;
  o.Set("af", af);
  o.Set("address", addon::FormatAddress(af, &d.addr));
  o.Set("port", d.port);
  o.Set("forward", d.fwd_method);
  o.Set("weight", d.weight);
  o.Set("upperThreshold", d.u_thresh);
  o.Set("lowerThreshold", d.l_thresh);
  o.Set("activeConns", d.active_conns);
  o.Set("inactiveConns", d.inact_conns);
  o.Set("persistentConns", d.persist_conns);
  if (d.has_tunnel) {
    Napi::Object t = Napi::Object::New(env);
    t.Set("type", d.tun_type);
    t.Set("port", d.tun_port);
    t.Set("flags", d.tun_flags);
    o.Set("tunnel", t);
  }
  if (d.has_stats) o.Set("stats", StatsToJs(env, d.stats));
  return o;
}

Napi::Object DaemonToJs(Napi::Env env, const Daemon& d) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("state", d.state);
  o.Set("mcastIfn", d.mcast_ifn);
  o.Set("syncId", d.sync_id);
  if (d.has_maxlen) o.Set("syncMaxlen", d.sync_maxlen);
  if (d.mcast_af) o.Set("mcastGroup", addon::FormatAddress(d.mcast_af, &d.mcast_group));
  if (d.has_port) o.Set("mcastPort", d.mcast_port);
  if (d.has_ttl) o.Set("mcastTtl", d.mcast_ttl);
  return o;
}

void ReplyToJs(Napi::Env env, const Reply& r, uint16_t default_af, Napi::Object& out) {
  if (!r.services.empty()) {
    Napi::Array a = Napi::Array::New(env, r.services.size());
    for (size_t i = 0; i < r.services.size(); i++) a.Set(i, ServiceToJs(env, r.services[i]));
    out.Set("services", a);
  }
  if (!r.dests.empty()) {
    Napi::Array a = Napi::Array::New(env, r.dests.size());
    for (size_t i = 0; i < r.dests.size(); i++)
      a.Set(i, DestinationToJs(env, r.dests[i], default_af));
    out.Set("destinations", a);
  }
  if (!r.daemons.empty()) {
    Napi::Array a = Napi::Array::New(env, r.daemons.size());
    for (size_t i = 0; i < r.daemons.size(); i++) a.Set(i, DaemonToJs(env, r.daemons[i]));
    out.Set("daemons", a);
  }
  if (r.has_info) {
    Napi::Object i = Napi::Object::New(env);
    i.Set("version", r.info.version);
    i.Set("connTableSize", r.info.conn_tab_size);
    out.Set("info", i);
  }
  if (r.has_timeouts) {
    Napi::Object t = Napi::Object::New(env);
    t.Set("tcp", r.timeouts.tcp);
    t.Set("tcpFin", r.timeouts.tcp_fin);
    t.Set("udp", r.timeouts.udp);
    out.Set("timeouts", t);
  }
}

}  // namespace ipvs
