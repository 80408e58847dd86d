#include "names.h"

#include <netinet/in.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_sctp.h>
#include <linux/netfilter/nf_conntrack_tcp.h>

namespace conntrack {

namespace {

#define STATUS(name) {#name, IPS_##name##_BIT}
const Named kStatus[] = {
    STATUS(EXPECTED),     STATUS(SEEN_REPLY),    STATUS(ASSURED),       STATUS(CONFIRMED),
    STATUS(SRC_NAT),      STATUS(DST_NAT),       STATUS(SEQ_ADJUST),    STATUS(SRC_NAT_DONE),
    STATUS(DST_NAT_DONE), STATUS(DYING),         STATUS(FIXED_TIMEOUT), STATUS(TEMPLATE),
    STATUS(UNTRACKED),    STATUS(HELPER),        STATUS(OFFLOAD),       STATUS(HW_OFFLOAD),
};
#undef STATUS

#define TCP(name) {#name, TCP_CONNTRACK_##name}
const Named kTcp[] = {
    TCP(NONE),       TCP(SYN_SENT),  TCP(SYN_RECV),  TCP(ESTABLISHED), TCP(FIN_WAIT),
    TCP(CLOSE_WAIT), TCP(LAST_ACK),  TCP(TIME_WAIT), TCP(CLOSE),       TCP(SYN_SENT2),
};
#undef TCP

#define SCTP(name) {#name, SCTP_CONNTRACK_##name}
const Named kSctp[] = {
    SCTP(NONE),          SCTP(CLOSED),        SCTP(COOKIE_WAIT),       SCTP(COOKIE_ECHOED),
    SCTP(ESTABLISHED),   SCTP(SHUTDOWN_SENT), SCTP(SHUTDOWN_RECD),     SCTP(SHUTDOWN_ACK_SENT),
    SCTP(HEARTBEAT_SENT), SCTP(HEARTBEAT_ACKED),
};
#undef SCTP

// IPPROTO_* in lower case, as conntrack prints them; ICMPv6 is the one
// whose name conntrack spells differently from the constant.
#define PROTO(name, constant) {name, constant}
const Named kProtocols[] = {
    PROTO("tcp", IPPROTO_TCP),     PROTO("udp", IPPROTO_UDP),         PROTO("icmp", IPPROTO_ICMP),
    PROTO("icmpv6", IPPROTO_ICMPV6), PROTO("sctp", IPPROTO_SCTP),     PROTO("udplite", IPPROTO_UDPLITE),
    PROTO("dccp", IPPROTO_DCCP),   PROTO("gre", IPPROTO_GRE),
};
#undef PROTO

template <size_t N>
const Named* Table(const Named (&t)[N], size_t* count) {
  *count = N;
  return t;
}

}  // namespace

const Named* StatusBits(size_t* count) { return Table(kStatus, count); }
const Named* Protocols(size_t* count) { return Table(kProtocols, count); }

const Named* States(uint8_t proto, size_t* count) {
  if (proto == IPPROTO_TCP) return Table(kTcp, count);
  if (proto == IPPROTO_SCTP) return Table(kSctp, count);
  *count = 0;
  return nullptr;
}

const char* StateName(uint8_t proto, uint8_t state) {
  size_t n = 0;
  const Named* t = States(proto, &n);
  for (size_t i = 0; i < n; i++)
    if (t[i].value == state) return t[i].name;
  return nullptr;
}

}  // namespace conntrack
