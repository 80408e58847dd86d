#include <endian.h>

#include <cstring>

#include "../netlink/message.h"
#include "codec.h"

namespace conntrack {

namespace {

// Fails a decode with `what` unless `ok`.
#define CHECK(ok, what)     \
  do {                      \
    if (!(ok)) {            \
      error = (what);       \
      return false;         \
    }                       \
  } while (0)

bool Address(const nl::Attr& a, size_t size, nf_inet_addr& out) {
  if (a.len != size) return false;
  std::memcpy(&out, a.data, size);
  return true;
}

bool DecodeIp(const nl::Attr& nest, Tuple& t, std::string& error) {
  nl::AttrReader r(nest.data, nest.len);
  nl::Attr a;
  while (r.Next(a)) {
    switch (a.type) {
      case CTA_IP_V4_SRC: CHECK(Address(a, 4, t.src), "CTA_IP_V4_SRC is not 4 bytes"); break;
      case CTA_IP_V4_DST: CHECK(Address(a, 4, t.dst), "CTA_IP_V4_DST is not 4 bytes"); break;
      case CTA_IP_V6_SRC: CHECK(Address(a, 16, t.src), "CTA_IP_V6_SRC is not 16 bytes"); break;
      case CTA_IP_V6_DST: CHECK(Address(a, 16, t.dst), "CTA_IP_V6_DST is not 16 bytes"); break;
      default: break;
    }
  }
  CHECK(r.ok(), "CTA_TUPLE_IP: " + r.error());
  return true;
}

bool DecodeProto(const nl::Attr& nest, Tuple& t, std::string& error) {
  nl::AttrReader r(nest.data, nest.len);
  nl::Attr a;
  bool has_num = false;
  while (r.Next(a)) {
    switch (a.type) {
      case CTA_PROTO_NUM: CHECK(nl::GetU8(a, &t.proto), "CTA_PROTO_NUM is not 1 byte"); has_num = true; break;
      case CTA_PROTO_SRC_PORT: CHECK(nl::GetBe16(a, &t.sport), "CTA_PROTO_SRC_PORT is not 2 bytes"); t.has_ports = true; break;
      case CTA_PROTO_DST_PORT: CHECK(nl::GetBe16(a, &t.dport), "CTA_PROTO_DST_PORT is not 2 bytes"); t.has_ports = true; break;
      case CTA_PROTO_ICMP_ID:
      case CTA_PROTO_ICMPV6_ID: CHECK(nl::GetBe16(a, &t.icmp_id), "CTA_PROTO_ICMP_ID is not 2 bytes"); t.has_icmp = true; break;
      case CTA_PROTO_ICMP_TYPE:
      case CTA_PROTO_ICMPV6_TYPE: CHECK(nl::GetU8(a, &t.icmp_type), "CTA_PROTO_ICMP_TYPE is not 1 byte"); t.has_icmp = true; break;
      case CTA_PROTO_ICMP_CODE:
      case CTA_PROTO_ICMPV6_CODE: CHECK(nl::GetU8(a, &t.icmp_code), "CTA_PROTO_ICMP_CODE is not 1 byte"); t.has_icmp = true; break;
      default: break;
    }
  }
  CHECK(r.ok(), "CTA_TUPLE_PROTO: " + r.error());
  CHECK(has_num, "CTA_TUPLE_PROTO without CTA_PROTO_NUM");
  return true;
}

bool DecodeTuple(const nl::Attr& nest, Tuple& t, std::string& error) {
  nl::AttrReader r(nest.data, nest.len);
  nl::Attr a;
  bool has_ip = false, has_proto = false;
  while (r.Next(a)) {
    switch (a.type) {
      case CTA_TUPLE_IP: if (!DecodeIp(a, t, error)) return false; has_ip = true; break;
      case CTA_TUPLE_PROTO: if (!DecodeProto(a, t, error)) return false; has_proto = true; break;
      case CTA_TUPLE_ZONE: CHECK(nl::GetBe16(a, &t.zone), "CTA_TUPLE_ZONE is not 2 bytes"); t.has_zone = true; break;
      default: break;
    }
  }
  CHECK(r.ok(), "tuple: " + r.error());
  CHECK(has_ip && has_proto, "a tuple without CTA_TUPLE_IP or CTA_TUPLE_PROTO");
  return true;
}

bool DecodeCounters(const nl::Attr& nest, uint64_t& packets, uint64_t& bytes, std::string& error) {
  nl::AttrReader r(nest.data, nest.len);
  nl::Attr a;
  uint32_t v32 = 0;
  while (r.Next(a)) {
    switch (a.type) {
      case CTA_COUNTERS_PACKETS: CHECK(nl::GetBe64(a, &packets), "CTA_COUNTERS_PACKETS is not 8 bytes"); break;
      case CTA_COUNTERS_BYTES: CHECK(nl::GetBe64(a, &bytes), "CTA_COUNTERS_BYTES is not 8 bytes"); break;
      case CTA_COUNTERS32_PACKETS: CHECK(nl::GetBe32(a, &v32), "CTA_COUNTERS32_PACKETS is not 4 bytes"); packets = v32; break;
      case CTA_COUNTERS32_BYTES: CHECK(nl::GetBe32(a, &v32), "CTA_COUNTERS32_BYTES is not 4 bytes"); bytes = v32; break;
      default: break;
    }
  }
  CHECK(r.ok(), "counters: " + r.error());
  return true;
}

// The state of TCP, SCTP or DCCP (the first attribute of each nest).
bool DecodeProtoinfo(const nl::Attr& nest, Entry& e, std::string& error) {
  nl::AttrReader r(nest.data, nest.len);
  nl::Attr a;
  while (r.Next(a)) {
    if (a.type != CTA_PROTOINFO_TCP && a.type != CTA_PROTOINFO_SCTP && a.type != CTA_PROTOINFO_DCCP) continue;
    nl::AttrReader inner(a.data, a.len);
    nl::Attr s;
    // CTA_PROTOINFO_{TCP,SCTP,DCCP}_STATE share the number 1.
    while (inner.Next(s)) {
      if (s.type != CTA_PROTOINFO_TCP_STATE) continue;
      CHECK(nl::GetU8(s, &e.state), "protocol state is not 1 byte");
      e.present |= present::kState;
    }
    CHECK(inner.ok(), "protoinfo: " + inner.error());
  }
  CHECK(r.ok(), "CTA_PROTOINFO: " + r.error());
  return true;
}

bool DecodeTimestamp(const nl::Attr& nest, Entry& e, std::string& error) {
  nl::AttrReader r(nest.data, nest.len);
  nl::Attr a;
  while (r.Next(a)) {
    if (a.type == CTA_TIMESTAMP_START) {
      CHECK(nl::GetBe64(a, &e.start_ns), "CTA_TIMESTAMP_START is not 8 bytes");
      e.present |= present::kTimestamp;
    } else if (a.type == CTA_TIMESTAMP_STOP) {
      CHECK(nl::GetBe64(a, &e.stop_ns), "CTA_TIMESTAMP_STOP is not 8 bytes");
      e.present |= present::kTimestampStop;
    }
  }
  CHECK(r.ok(), "CTA_TIMESTAMP: " + r.error());
  return true;
}

bool DecodeHelper(const nl::Attr& nest, Entry& e, std::string& error) {
  nl::AttrReader r(nest.data, nest.len);
  nl::Attr a;
  while (r.Next(a)) {
    if (a.type != CTA_HELP_NAME) continue;
    e.helper = nl::GetString(a);
    e.present |= present::kHelper;
  }
  CHECK(r.ok(), "CTA_HELP: " + r.error());
  return true;
}

// A 32-bit value that marks a part present.
bool Be32Part(const nl::Attr& a, uint32_t& out, Entry& e, uint32_t bit, const char* what, std::string& error) {
  CHECK(nl::GetBe32(a, &out), std::string(what) + " is not 4 bytes");
  e.present |= bit;
  return true;
}

bool DecodeAttrs(const uint8_t* data, size_t len, Entry& e, std::string& error) {
  nl::AttrReader r(data, len);
  nl::Attr a;
  bool has_orig = false;
  bool ok = true;
  while (ok && r.Next(a)) {
    switch (a.type) {
      case CTA_TUPLE_ORIG: ok = DecodeTuple(a, e.orig, error); has_orig = true; break;
      case CTA_TUPLE_REPLY: ok = DecodeTuple(a, e.reply, error); e.present |= present::kReply; break;
      case CTA_STATUS: ok = Be32Part(a, e.status, e, present::kStatus, "CTA_STATUS", error); break;
      case CTA_TIMEOUT: ok = Be32Part(a, e.timeout, e, present::kTimeout, "CTA_TIMEOUT", error); break;
      case CTA_MARK: ok = Be32Part(a, e.mark, e, present::kMark, "CTA_MARK", error); break;
      case CTA_ID: ok = Be32Part(a, e.id, e, present::kId, "CTA_ID", error); break;
      case CTA_USE: ok = Be32Part(a, e.use, e, present::kUse, "CTA_USE", error); break;
      case CTA_ZONE: CHECK(nl::GetBe16(a, &e.zone), "CTA_ZONE is not 2 bytes"); break;
      case CTA_COUNTERS_ORIG:
        ok = DecodeCounters(a, e.packets_orig, e.bytes_orig, error);
        e.present |= present::kCountersOrig;
        break;
      case CTA_COUNTERS_REPLY:
        ok = DecodeCounters(a, e.packets_reply, e.bytes_reply, error);
        e.present |= present::kCountersReply;
        break;
      case CTA_PROTOINFO: ok = DecodeProtoinfo(a, e, error); break;
      case CTA_TIMESTAMP: ok = DecodeTimestamp(a, e, error); break;
      case CTA_HELP: ok = DecodeHelper(a, e, error); break;
      case CTA_LABELS:
        CHECK(a.len <= sizeof e.labels, "CTA_LABELS is longer than 16 bytes");
        std::memcpy(e.labels, a.data, a.len);
        e.present |= present::kLabels;
        break;
      default: break;
    }
  }
  if (!ok) return false;
  CHECK(r.ok(), r.error());
  CHECK(has_orig, "an entry without CTA_TUPLE_ORIG");
  // The reply tuple shares the original's protocol; a kernel that left it
  // out would leave it 0.
  if (!(e.present & present::kReply)) e.reply.proto = e.orig.proto;
  return true;
}

}  // namespace

bool DecodeEntry(const uint8_t* msg, size_t len, Entry& out, std::string& error) {
  out = Entry{};
  const size_t head = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nfgenmsg));
  CHECK(len >= head, "message shorter than its headers");
  nlmsghdr h;
  std::memcpy(&h, msg, sizeof h);
  CHECK(h.nlmsg_len >= head && h.nlmsg_len <= len, "nlmsg_len out of bounds");
  CHECK((h.nlmsg_type >> 8) == NFNL_SUBSYS_CTNETLINK, "not a conntrack message");
  const uint8_t cmd = h.nlmsg_type & 0xff;
  CHECK(cmd == IPCTNL_MSG_CT_NEW || cmd == IPCTNL_MSG_CT_DELETE || cmd == IPCTNL_MSG_CT_GET,
        "not a conntrack entry (message " + std::to_string(cmd) + ")");
  if (cmd == IPCTNL_MSG_CT_DELETE) out.event = Event::kDestroy;
  else if ((h.nlmsg_flags & (NLM_F_CREATE | NLM_F_EXCL)) == (NLM_F_CREATE | NLM_F_EXCL)) out.event = Event::kNew;
  else out.event = Event::kUpdate;
  nfgenmsg g;
  std::memcpy(&g, msg + NLMSG_HDRLEN, sizeof g);
  CHECK(g.nfgen_family == NFPROTO_IPV4 || g.nfgen_family == NFPROTO_IPV6,
        "an entry of family " + std::to_string(g.nfgen_family) + " (not IPv4 or IPv6)");
  out.family = g.nfgen_family;
  return DecodeAttrs(msg + head, h.nlmsg_len - head, out, error);
}

bool DecodeCpuStats(const nl::Bytes& msg, CpuStats& out, std::string& error) {
  out = CpuStats{};
  const size_t head = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nfgenmsg));
  CHECK(msg.size() >= head, "message shorter than its headers");
  nfgenmsg g;
  std::memcpy(&g, msg.data() + NLMSG_HDRLEN, sizeof g);
  out.cpu = be16toh(g.res_id);
  nl::AttrReader r(msg.data() + head, msg.size() - head);
  nl::Attr a;
  while (r.Next(a)) {
    if (a.type == 0 || a.type > CTA_STATS_MAX) continue;
    CHECK(nl::GetBe32(a, &out.values[a.type]), "a CTA_STATS value is not 4 bytes");
    out.present |= 1u << a.type;
  }
  CHECK(r.ok(), r.error());
  return true;
}

bool DecodeGlobalStats(const nl::Bytes& msg, GlobalStats& out, std::string& error) {
  out = GlobalStats{};
  const size_t head = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nfgenmsg));
  CHECK(msg.size() >= head, "message shorter than its headers");
  nl::AttrReader r(msg.data() + head, msg.size() - head);
  nl::Attr a;
  while (r.Next(a)) {
    if (a.type == CTA_STATS_GLOBAL_ENTRIES) {
      CHECK(nl::GetBe32(a, &out.entries), "CTA_STATS_GLOBAL_ENTRIES is not 4 bytes");
      out.has_entries = true;
    } else if (a.type == CTA_STATS_GLOBAL_MAX_ENTRIES) {
      CHECK(nl::GetBe32(a, &out.max_entries), "CTA_STATS_GLOBAL_MAX_ENTRIES is not 4 bytes");
      out.has_max = true;
    }
  }
  CHECK(r.ok(), r.error());
  return true;
}

#undef CHECK

}  // namespace conntrack
