#include "codec.h"

#include <net/if.h>

#include <cstring>

#include "../netlink/message.h"

namespace rtnl {

namespace {

nl::MessageBuilder LinkMessage(uint16_t type, uint16_t flags, const std::string& name) {
  nl::MessageBuilder b(type, flags);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  b.Header(ifi);
  b.attrs().String(IFLA_IFNAME, name);
  return b;
}

size_t AddrLen(uint8_t family) { return family == AF_INET6 ? 16 : 4; }

nl::MessageBuilder AddressMessage(uint16_t type, uint16_t flags, const Address& a) {
  nl::MessageBuilder b(type, flags);
  ifaddrmsg ifa{};
  ifa.ifa_family = a.family;
  ifa.ifa_prefixlen = a.prefix_len;
  ifa.ifa_flags = static_cast<uint8_t>(a.flags & 0xff);
  ifa.ifa_scope = a.scope;
  ifa.ifa_index = static_cast<uint32_t>(a.index);
  b.Header(ifa);
  // As `ip addr add` sends it: the local address, and the same as the
  // peer/prefix address for a non-point-to-point link.
  b.attrs().Raw(IFA_LOCAL, a.addr, AddrLen(a.family));
  b.attrs().Raw(IFA_ADDRESS, a.addr, AddrLen(a.family));
  if (a.flags > 0xff) b.attrs().U32(IFA_FLAGS, a.flags);
  return b;
}

}  // namespace

nl::Bytes NewLink(const std::string& name, const std::string& kind, bool up) {
  nl::MessageBuilder b(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  if (up) {
    ifi.ifi_flags = IFF_UP;
    ifi.ifi_change = IFF_UP;
  }
  b.Header(ifi);
  b.attrs().String(IFLA_IFNAME, name);
  const size_t info = b.attrs().Begin(IFLA_LINKINFO);
  b.attrs().Raw(IFLA_INFO_KIND, kind.data(), kind.size());
  b.attrs().End(info);
  return b.Finish();
}

nl::Bytes SetLinkUp(const std::string& name) {
  nl::MessageBuilder b(RTM_NEWLINK, 0);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_flags = IFF_UP;
  ifi.ifi_change = IFF_UP;
  b.Header(ifi);
  b.attrs().String(IFLA_IFNAME, name);
  return b.Finish();
}

nl::Bytes GetLink(const std::string& name) { return LinkMessage(RTM_GETLINK, 0, name).Finish(); }
nl::Bytes DelLink(const std::string& name) { return LinkMessage(RTM_DELLINK, 0, name).Finish(); }

nl::Bytes DumpAddresses(uint8_t family) {
  nl::MessageBuilder b(RTM_GETADDR, 0);
  ifaddrmsg ifa{};
  ifa.ifa_family = family;
  b.Header(ifa);
  return b.Finish();
}

nl::Bytes NewAddress(const Address& a, bool replace) {
  return AddressMessage(RTM_NEWADDR, NLM_F_CREATE | (replace ? NLM_F_REPLACE : NLM_F_EXCL), a).Finish();
}

nl::Bytes DelAddress(const Address& a) { return AddressMessage(RTM_DELADDR, 0, a).Finish(); }

bool DecodeLink(const nl::Bytes& msg, Link& out, std::string& error) {
  const size_t head = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg));
  if (msg.size() < head) {
    error = "link message shorter than its header";
    return false;
  }
  ifinfomsg ifi;
  std::memcpy(&ifi, msg.data() + NLMSG_HDRLEN, sizeof ifi);
  out.index = ifi.ifi_index;
  out.flags = ifi.ifi_flags;
  nl::AttrTable t(msg.data() + head, msg.size() - head, IFLA_LINKINFO);
  if (!t.ok()) {
    error = "link: " + t.error();
    return false;
  }
  if (const nl::Attr* a = t.Get(IFLA_IFNAME)) out.name = nl::GetString(*a);
  if (const nl::Attr* a = t.Get(IFLA_LINKINFO)) {
    nl::AttrTable info(a->data, a->len, IFLA_INFO_KIND);
    if (const nl::Attr* k = info.Get(IFLA_INFO_KIND)) out.kind = nl::GetString(*k);
  }
  return true;
}

bool DecodeAddress(const nl::Bytes& msg, Address& out, std::string& error) {
  const size_t head = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifaddrmsg));
  if (msg.size() < head) {
    error = "address message shorter than its header";
    return false;
  }
  ifaddrmsg ifa;
  std::memcpy(&ifa, msg.data() + NLMSG_HDRLEN, sizeof ifa);
  out.family = ifa.ifa_family;
  out.prefix_len = ifa.ifa_prefixlen;
  out.flags = ifa.ifa_flags;
  out.scope = ifa.ifa_scope;
  out.index = static_cast<int32_t>(ifa.ifa_index);
  if (out.family != AF_INET && out.family != AF_INET6) {
    error = "address family " + std::to_string(out.family);
    return false;
  }
  nl::AttrTable t(msg.data() + head, msg.size() - head, IFA_FLAGS);
  if (!t.ok()) {
    error = "address: " + t.error();
    return false;
  }
  const nl::Attr* a = t.Get(IFA_LOCAL);
  if (!a) a = t.Get(IFA_ADDRESS);
  if (!a || a->len != AddrLen(out.family)) {
    error = "address without a valid IFA_LOCAL/IFA_ADDRESS";
    return false;
  }
  std::memcpy(out.addr, a->data, a->len);
  if (const nl::Attr* l = t.Get(IFA_LABEL)) out.label = nl::GetString(*l);
  if (const nl::Attr* f = t.Get(IFA_FLAGS)) nl::GetU32(*f, &out.flags);
  return true;
}

}  // namespace rtnl
