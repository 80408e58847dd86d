// IPVS request records (records.h), the boundary where TypeScript hands the
// worker thread a whole batch: rec::ReadRequest over arbitrary records and
// string tables, and the round trip WriteRequest -> ReadRequest -> Encode.
//
// Input: byte 0 picks the half.
//  - Raw records (even): up to 8 records of arbitrary bytes, in a buffer of
//    exactly count * kRequestSize bytes (as RequestBatchFromJs guarantees),
//    and up to 4 strings. Every record is read; a refused record must say
//    why; an accepted one must be what the rules allow (known command and
//    families, string references in the table, a scheduler unless only the
//    identity is sent, a destination only with its service), must encode
//    to one well-formed message, and must survive WriteRequest ->
//    ReadRequest with identical encoding. ServiceAf agrees with it. A
//    record may hold only one of destination, timeouts and daemon: they
//    share the same bytes.
//  - Requests (odd): a Request built from the input (at most one of
//    destination, timeouts and daemon, as the TypeScript layer writes
//    them) goes through WriteRequest -> ReadRequest. It must be read back
//    exactly when it is valid, and then encode byte for byte as the
//    original does.
#include <fuzzer/FuzzedDataProvider.h>
#include <linux/genetlink.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../genl/family.h"
#include "../ipvs/codec.h"
#include "../ipvs/records.h"
#include "../netlink/message.h"
#include "fake_kernel.h"

namespace {

using fuzz::Require;
using ipvs::Request;
namespace rec = ipvs::rec;

constexpr uint16_t kFamily = 0x2a;

bool Known(uint16_t af) { return af == AF_INET || af == AF_INET6; }

// The rules ReadRequest enforces (records.h), restated. The destination,
// timeouts and daemon parts share bytes 48..95 of a record: one record can
// hold only one of them (a record claiming two reads one set of bytes as
// both, e.g. a daemon's interface string index as a destination's weight).
bool Valid(const Request& r) {
  if (r.cmd == 0 || r.cmd > IPVS_CMD_MAX) return false;
  if (r.has_dest + r.has_timeouts + r.has_daemon > 1) return false;
  if (r.has_service && (!Known(r.service.key.af) || (!r.service_key_only && r.service.sched.empty())))
    return false;
  if (r.has_dest && (!r.has_service || (r.dest.af && !Known(r.dest.af)))) return false;
  if (r.has_daemon && r.daemon.mcast_af && !Known(r.daemon.mcast_af)) return false;
  return true;
}

// One message, generic header, attributes that parse.
void CheckEncoding(const Request& r) {
  const nl::Bytes b = ipvs::Encode(r, kFamily);
  std::vector<nl::Message> parts;
  std::string err;
  Require(nl::SplitMessages(b.data(), b.size(), parts, err) && parts.size() == 1,
          "an accepted record encodes to one message");
  Require(parts[0].hdr.nlmsg_len == b.size() && parts[0].hdr.nlmsg_type == kFamily,
          "encoding: length and family");
  const uint8_t* attrs;
  size_t len;
  uint8_t cmd;
  Require(genl::Attributes(b, &attrs, &len, &cmd) && cmd == r.cmd, "encoding: generic header");
  nl::AttrTable t(attrs, len, IPVS_CMD_ATTR_MAX);
  Require(t.ok(), "encoding: attributes parse");
}

std::string Describe(const Request& r) {
  return "cmd " + std::to_string(r.cmd) + (r.has_service ? " service af " + std::to_string(r.service.key.af) : "") +
         (r.service_key_only ? " (key only)" : "") +
         (r.has_dest ? " dest af " + std::to_string(r.dest.af) + (r.dest_key_only ? " (key only)" : "") : "") +
         (r.has_timeouts ? " timeouts" : "") +
         (r.has_daemon ? " daemon group af " + std::to_string(r.daemon.mcast_af) : "");
}

// WriteRequest -> ReadRequest keeps the encoding.
void RoundTrip(const Request& r) {
  std::vector<uint8_t> record(rec::kRequestSize);
  std::vector<std::string> strings;
  rec::WriteRequest(r, record.data(), strings);
  Request back;
  std::string err;
  Require(rec::ReadRequest(record.data(), 0, strings, back, err), "a written valid request reads back");
  if (ipvs::Encode(r, kFamily) != ipvs::Encode(back, kFamily))
    fuzz::Broken("round trip keeps the encoding: " + Describe(r) + " read back as " + Describe(back));
  Require(rec::ServiceAf(record.data(), 0) == (r.has_service ? r.service.key.af : AF_INET),
          "ServiceAf names the service's family");
}

void RawRecords(FuzzedDataProvider& in) {
  const size_t count = in.ConsumeIntegralInRange<size_t>(0, 8);
  std::vector<std::string> strings(in.ConsumeIntegralInRange<size_t>(0, 4));
  for (std::string& s : strings) s = in.ConsumeRandomLengthString(24);
  // Exactly count records: reading past them is caught by ASan.
  const size_t bytes = count * rec::kRequestSize;
  std::unique_ptr<uint8_t[]> data(new uint8_t[bytes ? bytes : 1]);
  std::vector<uint8_t> raw = in.ConsumeBytes<uint8_t>(bytes);
  std::memset(data.get(), 0, bytes);
  if (!raw.empty()) std::memcpy(data.get(), raw.data(), raw.size());
  for (size_t i = 0; i < count; i++) {
    Request r;
    std::string err;
    if (!rec::ReadRequest(data.get(), i, strings, r, err)) {
      Require(!err.empty(), "a refused record says why");
      continue;
    }
    Require(Valid(r), "an accepted record follows the rules");
    Require(rec::ServiceAf(data.get(), i) == (r.has_service ? r.service.key.af : AF_INET),
            "ServiceAf names the service's family");
    CheckEncoding(r);
    RoundTrip(r);
  }
}

void Addr(FuzzedDataProvider& in, nf_inet_addr& a) {
  std::vector<uint8_t> b = in.ConsumeBytes<uint8_t>(sizeof a);
  b.resize(sizeof a);
  std::memcpy(&a, b.data(), sizeof a);
}

uint16_t Af(FuzzedDataProvider& in) {
  const uint16_t choices[] = {AF_INET, AF_INET6, 0, in.ConsumeIntegral<uint16_t>()};
  return choices[in.ConsumeIntegralInRange<int>(0, 3)];
}

void Requests(FuzzedDataProvider& in) {
  Request r;
  r.cmd = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint8_t>(1, IPVS_CMD_MAX) : in.ConsumeIntegral<uint8_t>();
  r.dump = in.ConsumeBool();
  if ((r.has_service = in.ConsumeBool())) {
    ipvs::Service& s = r.service;
    r.service_key_only = in.ConsumeBool();
    s.key.af = Af(in);
    s.key.protocol = in.ConsumeIntegral<uint16_t>();
    s.key.port = in.ConsumeIntegral<uint16_t>();
    s.key.fwmark = in.ConsumeBool() ? in.ConsumeIntegral<uint32_t>() : 0;
    Addr(in, s.key.addr);
    s.flags = in.ConsumeIntegral<uint32_t>();
    s.mask = in.ConsumeIntegral<uint32_t>();
    s.timeout = in.ConsumeIntegral<uint32_t>();
    s.netmask = in.ConsumeIntegral<uint32_t>();
    s.sched = in.ConsumeRandomLengthString(20);
    s.pe_name = in.ConsumeRandomLengthString(20);
  }
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 1: {
      r.has_dest = true;
      r.dest_key_only = in.ConsumeBool();
      ipvs::Destination& d = r.dest;
      d.af = Af(in);
      Addr(in, d.addr);
      d.port = in.ConsumeIntegral<uint16_t>();
      d.fwd_method = in.ConsumeIntegral<uint32_t>();
      d.weight = in.ConsumeIntegral<uint32_t>();
      d.u_thresh = in.ConsumeIntegral<uint32_t>();
      d.l_thresh = in.ConsumeIntegral<uint32_t>();
      d.tun_type = in.ConsumeIntegral<uint8_t>();
      d.tun_port = in.ConsumeIntegral<uint16_t>();
      d.tun_flags = in.ConsumeIntegral<uint16_t>();
      break;
    }
    case 2:
      r.has_timeouts = true;
      r.timeouts = {in.ConsumeIntegral<uint32_t>(), in.ConsumeIntegral<uint32_t>(), in.ConsumeIntegral<uint32_t>()};
      break;
    case 3: {
      r.has_daemon = true;
      ipvs::Daemon& d = r.daemon;
      d.state = in.ConsumeIntegral<uint32_t>();
      d.sync_id = in.ConsumeIntegral<uint32_t>();
      d.mcast_ifn = in.ConsumeRandomLengthString(20);
      d.has_maxlen = in.ConsumeBool();
      d.has_port = in.ConsumeBool();
      d.has_ttl = in.ConsumeBool();
      d.sync_maxlen = in.ConsumeIntegral<uint16_t>();
      d.mcast_port = in.ConsumeIntegral<uint16_t>();
      d.mcast_ttl = in.ConsumeIntegral<uint8_t>();
      d.mcast_af = Af(in);
      Addr(in, d.mcast_group);
      break;
    }
    default:
      break;
  }
  std::vector<uint8_t> record(rec::kRequestSize);
  std::vector<std::string> strings;
  rec::WriteRequest(r, record.data(), strings);
  Request back;
  std::string err;
  const bool ok = rec::ReadRequest(record.data(), 0, strings, back, err);
  Require(ok == Valid(r), "a written request reads back exactly when it is valid");
  if (!ok) return;
  Require(ipvs::Encode(r, kFamily) == ipvs::Encode(back, kFamily), "round trip keeps the encoding");
  CheckEncoding(back);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  FuzzedDataProvider in(data + 1, size - 1);
  if (data[0] % 2 == 0)
    RawRecords(in);
  else
    Requests(in);
  return 0;
}
