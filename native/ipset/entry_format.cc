// Formatting of elements exactly as `ipset save` prints them (libipset
// lib/print.c and session.c list_adt): the element, then the options the
// kernel reported in the order of the type's add arguments: timeout,
// nomatch, wildcard, packets, bytes, comment, skbmark, skbprio, skbqueue.
#include <arpa/inet.h>

#include <cinttypes>
#include <cstdio>

#include "entry_text.h"
#include "names.h"
#include "set_types.h"

namespace ipset {

namespace {

void AppendAddress(std::string& out, uint8_t family, const nf_inet_addr& a) {
  char buf[INET6_ADDRSTRLEN];
  if (inet_ntop(family == NFPROTO_IPV6 ? AF_INET6 : AF_INET, &a, buf, sizeof buf)) out += buf;
}

// ADDR, ADDR/CIDR when the kernel sent a prefix shorter than a host (/0
// included), and "-ADDR" for a range.
void AppendIp(std::string& out, uint8_t family, const nf_inet_addr& ip, bool has_cidr,
              uint8_t cidr, bool has_to, const nf_inet_addr& to) {
  AppendAddress(out, family, ip);
  if (has_cidr && cidr != HostCidr(family)) {
    out += '/';
    out += std::to_string(cidr);
  }
  if (has_to) {
    out += '-';
    AppendAddress(out, family, to);
  }
}

void AppendPort(std::string& out, const Entry& e) {
  out += std::to_string(e.port);
  if (e.has_port_to) {
    out += '-';
    out += std::to_string(e.port_to);
  }
}

void AppendProtoPort(std::string& out, const Entry& e) {
  if (e.has_proto) {
    out += ProtoName(e.proto);
    out += ':';
    if (e.proto == IPPROTO_ICMP || e.proto == IPPROTO_ICMPV6) {
      const uint8_t type = e.port >> 8, code = e.port & 0xFF;
      const char* name = e.proto == IPPROTO_ICMP ? IcmpName(type, code) : Icmpv6Name(type, code);
      if (name) {
        out += name;
      } else {
        out += std::to_string(type);
        out += '/';
        out += std::to_string(code);
      }
      return;
    }
  }
  AppendPort(out, e);
}

void AppendHex(std::string& out, const char* fmt, uint32_t a, uint32_t b = 0) {
  char buf[40];
  snprintf(buf, sizeof buf, fmt, a, b);
  out += buf;
}

}  // namespace

void FormatEntry(const Entry& e, const SetType& type, uint8_t family, std::string& out) {
  for (size_t i = 0; i < type.dims; i++) {
    if (i) out += ',';
    switch (type.parts[i]) {
      case Part::kIp:
      case Part::kNet:
        AppendIp(out, family, e.ip, e.has_cidr, e.cidr, e.has_ip_to, e.ip_to);
        break;
      case Part::kIp2:
      case Part::kNet2:
        AppendIp(out, family, e.ip2, e.has_cidr2, e.cidr2, e.has_ip2_to, e.ip2_to);
        break;
      case Part::kProtoPort:
        AppendProtoPort(out, e);
        break;
      case Part::kPort:
        AppendPort(out, e);
        break;
      case Part::kIface:
        if (e.physdev) out += "physdev:";
        out += e.iface;
        break;
      case Part::kSetName:
        out += e.name;
        break;
      case Part::kMac:
        // bitmap:ip,mac lists an element the kernel has no address for yet
        // without it (and without the comma).
        if (!e.has_ether) {
          if (i) out.pop_back();
          break;
        }
        for (int k = 0; k < 6; k++) AppendHex(out, k ? ":%02" PRIX32 : "%02" PRIX32, e.ether[k]);
        break;
      case Part::kMark:
        AppendHex(out, "0x%08" PRIx32, e.mark);
        break;
    }
  }
  if (e.has_timeout) {
    out += " timeout ";
    out += std::to_string(e.timeout);
  }
  if (e.nomatch) out += " nomatch";
  if (e.wildcard) out += " wildcard";
  if (e.has_packets) {
    out += " packets ";
    out += std::to_string(e.packets);
  }
  if (e.has_bytes) {
    out += " bytes ";
    out += std::to_string(e.bytes);
  }
  if (e.has_comment) {
    out += " comment \"";
    out += e.comment;
    out += '"';
  }
  if (e.has_skbmark) {
    if (e.skbmarkmask == 0xFFFFFFFF)
      AppendHex(out, " skbmark 0x%" PRIx32, e.skbmark);
    else
      AppendHex(out, " skbmark 0x%" PRIx32 "/0x%" PRIx32, e.skbmark, e.skbmarkmask);
  }
  if (e.has_skbprio) AppendHex(out, " skbprio %" PRIx32 ":%" PRIx32, e.skbprio >> 16, e.skbprio & 0xFFFF);
  if (e.has_skbqueue) {
    out += " skbqueue ";
    out += std::to_string(e.skbqueue);
  }
}

}  // namespace ipset
