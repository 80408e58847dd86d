// IPVS batches end to end on the worker-thread side, against a scripted
// kernel (fake_kernel.h): the production batch classes of handle.cc and
// dump_job.cc (JsRequests, ServiceDump, DestinationDumps) run RecordBatch::Run over a
// real addon::Channel and nl::NetlinkSocket, so fuzzed datagrams go
// through Receive -> SplitMessages -> Transaction::OnMessage ->
// RecordBatch::OnData -> ipvs::Decode -> ReplyWriter, and the family lookup (ResolveIpvs on every
// fresh socket, and again after ENOENT) reads fuzzed CTRL replies.
//
// Input: a header, then the script (fake_kernel.h).
//   byte 0  bits 0-1: jobs: 0 execute, 1 dump, 2 execute then dump, 3 dump then execute
//           bit 2: a sendmsg fails (bit 3: with EINTR, which is retried; else ENOBUFS):
//           the first (the family lookup), or with bit 4 the second (the
//           batch's first, once the lookup went through)
//   byte 1  receive buffer the socket gets: 1 KiB << (b % 14)
//   byte 2  send buffer: 1 KiB << (b % 13)
//   byte 3  dump restarts allowed: b % 4
//   byte 4  request count n: 1 + b % 12
//   n bytes request templates: bits 0-4 IPVS_CMD_*, bit 5 IPv6, bit 6 a
//           dump (GET_SERVICE), bit 7 a destination without its family
//           (IPVS_DEST_ATTR_ADDR_FAMILY left out; replies use the service's)
//
// What is checked beyond memory safety and UB, after every job:
//  - reply records: whole records, known kinds, request indexes of this
//    job, string references inside the string table;
//  - failures: in index order, each request at most once, a positive errno;
//    a request a failed sendmsg carried is reported not sent (a failed
//    netlink sendmsg delivers nothing), never as lost on the way;
//  - a failed request has no reply records (Truncate on error, malformed
//    reply and restart); without an ENOENT re-send, records come in
//    request order (completion in index order);
//  - a non-ok job status means nothing of the job was answered: no
//    records, no request that succeeded, none the kernel refused;
//  - a dump job's service keys match its service records one to one;
//  - on the wire (fake_kernel.cc checks the rest): every IPVS request sent
//    is the encoding of one of the batch's records, and a plain request
//    asks for an ack only as the last message of its sendmsg.
// Not covered: the N-API halves of the jobs (RequestBatchFromJs,
// RepliesToJs), the poll() wait (the script never answers late: a missing
// answer is an immediate timeout), setns into another namespace.

// The production classes live in the anonymous namespaces of handle.cc and
// dump_job.cc; this translation unit compiles those files (their N-API
// parts are linked but never called: see napi_stubs in scripts/fuzz.sh).
// The dump's hand-over to JavaScript in chunks (ChunkStream) is N-API and
// is not run here: the dump runs as it does without a stream.
#include "../ipvs/dump_job.cc"
#include "../ipvs/handle.cc"

#include <linux/genetlink.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "fake_kernel.h"

namespace {

using fuzz::Require;
using ipvs::Request;

Request Template(uint8_t b) {
  Request r;
  r.cmd = static_cast<uint8_t>(1 + (b & 0x1f) % IPVS_CMD_MAX);
  const bool v6 = b & 0x20;
  ipvs::Service& s = r.service;
  s.key.af = v6 ? AF_INET6 : AF_INET;
  s.key.protocol = IPPROTO_TCP;
  if (v6) {
    s.key.addr.in6.s6_addr[0] = 0xfd;
    s.key.addr.in6.s6_addr[15] = 1;
  } else {
    s.key.addr.ip = htonl(0x0a000001);
  }
  s.key.port = 80;
  s.sched = "rr";
  s.netmask = v6 ? 128 : 0xffffffff;
  ipvs::Destination& d = r.dest;
  d.af = (b & 0x80) ? 0 : s.key.af;
  d.addr = s.key.addr;
  d.addr.all[3] ^= htonl(0x10);
  d.port = 8080;
  d.weight = 3;
  switch (r.cmd) {
    case IPVS_CMD_NEW_SERVICE:
    case IPVS_CMD_SET_SERVICE:
      r.has_service = true;
      break;
    case IPVS_CMD_DEL_SERVICE:
    case IPVS_CMD_ZERO:
      r.has_service = r.service_key_only = true;
      break;
    case IPVS_CMD_GET_SERVICE:
      r.dump = b & 0x40;
      r.has_service = r.service_key_only = !r.dump;
      break;
    case IPVS_CMD_NEW_DEST:
    case IPVS_CMD_SET_DEST:
      r.has_service = r.service_key_only = r.has_dest = true;
      break;
    case IPVS_CMD_DEL_DEST:
      r.has_service = r.service_key_only = r.has_dest = r.dest_key_only = true;
      break;
    case IPVS_CMD_GET_DEST:
      r.has_service = r.service_key_only = r.dump = true;
      break;
    case IPVS_CMD_NEW_DAEMON:
    case IPVS_CMD_DEL_DAEMON:
      r.has_daemon = true;
      r.daemon.state = IP_VS_STATE_MASTER;
      r.daemon.mcast_ifn = "eth0";
      r.daemon.sync_id = 7;
      r.daemon.has_port = true;
      r.daemon.mcast_port = 8848;
      r.daemon.mcast_af = s.key.af;
      r.daemon.mcast_group = s.key.addr;
      break;
    case IPVS_CMD_GET_DAEMON:
      r.dump = true;
      break;
    case IPVS_CMD_SET_CONFIG:
      r.has_timeouts = true;
      r.timeouts = {900, 120, 300};
      break;
    default:  // GET_CONFIG, SET_INFO, GET_INFO, FLUSH: the command alone
      break;
  }
  return r;
}

uint32_t U32(const uint8_t* r, size_t off) {
  uint32_t v;
  std::memcpy(&v, r + off, sizeof v);
  return v;
}
uint16_t U16(const uint8_t* r, size_t off) {
  uint16_t v;
  std::memcpy(&v, r + off, sizeof v);
  return v;
}

// FUZZ_TRACE=1: say what each job ended with (to check what seeds reach).
void Trace(const char* job, const ipvs::rec::ReplyWriter& out, const std::vector<ipvs::Failure>& failures,
           const nl::Status& st) {
  static const bool on = std::getenv("FUZZ_TRACE");
  if (!on) return;
  std::fprintf(stderr, "%s: status %d %s %s; %zu records; sent %zu; failures:", job, st.err, st.where.c_str(),
               st.message.c_str(), out.count(), fuzz::KernelSent().size());
  for (const ipvs::Failure& f : failures) std::fprintf(stderr, " [%zu] errno %d %s;", f.index, f.error, f.message.c_str());
  std::fprintf(stderr, "\n");
}

// The invariants every job's output keeps (see the top of this file). A
// job's requests are results first..requests-1, its records those from
// byte `from` of `out` (the destination dumps follow the service dump's).
void CheckOutput(ipvs::rec::ReplyWriter& out, const std::vector<ipvs::Failure>& failures,
                 size_t requests, const nl::Status& st, bool resent, size_t first = 0, size_t from = 0) {
  namespace rep = ipvs::rec::rep;
  const std::vector<uint8_t>& b = out.bytes();
  Require(b.size() % ipvs::rec::kReplySize == 0, "records: whole records only");
  const size_t strings = out.strings().size();
  std::set<uint32_t> failed;
  size_t last = 0;
  for (size_t k = 0; k < failures.size(); k++) {
    const ipvs::Failure& f = failures[k];
    Require(f.index < requests, "failures: index inside the batch");
    Require(k == 0 || f.index > last, "failures: in index order, once each");
    Require(f.error > 0, "failures: a positive errno");
    Require(f.where != "sendmsg" || f.message.rfind("not sent", 0) == 0,
            "failures: what a failed sendmsg carried is not sent, not lost");
    failed.insert(static_cast<uint32_t>(f.index));
    last = f.index;
  }
  uint32_t previous = 0;
  for (size_t at = 0; at < b.size(); at += ipvs::rec::kReplySize) {
    const uint8_t* r = b.data() + at;
    const uint8_t kind = r[rep::kKind];
    const uint32_t request = U32(r, rep::kRequest);
    Require(kind >= ipvs::rec::kService && kind <= ipvs::rec::kTimeouts, "records: a known kind");
    Require(request < requests, "records: request index inside the batch");
    Require(!failed.count(request), "records: none for a failed request");
    if (!resent) Require(request >= previous, "records: in request order");
    previous = request;
    switch (kind) {
      case ipvs::rec::kService:
        Require(U32(r, rep::kAddrText) <= strings && U16(r, rep::kSvcSched) <= strings &&
                    U16(r, rep::kSvcPe) <= strings,
                "service record: strings in the table");
        break;
      case ipvs::rec::kDest:
        Require(U32(r, rep::kAddrText) <= strings, "destination record: strings in the table");
        break;
      case ipvs::rec::kDaemon:
        Require(U16(r, rep::kDaemonIfn) <= strings && U32(r, rep::kDaemonGroup) <= strings,
                "daemon record: strings in the table");
        break;
    }
  }
  // A job fails as a whole only when nothing of it went out: once a
  // request was sent (and perhaps applied), every request reports its own
  // outcome and the job itself succeeds, however the conversation ended
  // (a break after the last answer, or in the re-send after ENOENT).
  if (!st.ok()) {
    Require(b.size() == from, "status: a job that failed as a whole has no reply records");
    Require(failures.empty() || failures.size() == requests - first,
            "status: a job that failed as a whole has no request that succeeded");
    for (const ipvs::Failure& f : failures)
      Require(!f.where.empty(), "status: a job that failed as a whole has no request the kernel answered");
  }
}

nl::RequestKind WireKind(const fuzz::Sent& m) {
  if (m.flags & NLM_F_DUMP) return nl::RequestKind::kDump;
  if (m.genl_cmd == IPVS_CMD_GET_SERVICE || m.genl_cmd == IPVS_CMD_GET_INFO ||
      m.genl_cmd == IPVS_CMD_GET_CONFIG)
    return nl::RequestKind::kGet;
  return nl::RequestKind::kPlain;
}

// What went out: IPVS requests are encodings of the batch's records (the
// family id aside), and acks are asked for as socket.h says.
void CheckWire(size_t from, const std::vector<nl::Bytes>& expected) {
  const std::vector<fuzz::Sent>& sent = fuzz::KernelSent();
  for (size_t i = from; i < sent.size(); i++) {
    const fuzz::Sent& m = sent[i];
    if (m.type == GENL_ID_CTRL) continue;
    if (!m.last && WireKind(m) == nl::RequestKind::kPlain)
      Require(!(m.flags & NLM_F_ACK), "wire: only the last plain request of a sendmsg asks for an ack");
    if (WireKind(m) != nl::RequestKind::kPlain) Require(m.flags & NLM_F_ACK, "wire: gets and dumps ask for an ack");
    bool found = false;
    for (const nl::Bytes& e : expected)
      found |= e.size() == m.bytes.size() && std::equal(e.begin() + NLMSG_HDRLEN, e.end(), m.bytes.begin() + NLMSG_HDRLEN);
    Require(found, "wire: an IPVS request is the encoding of one of the batch's records");
  }
}

// Whether the batch read the family again (ENOENT) and re-sent requests.
bool Resent(size_t from) {
  const std::vector<fuzz::Sent>& sent = fuzz::KernelSent();
  bool ipvs_seen = false;
  for (size_t i = from; i < sent.size(); i++) {
    if (sent[i].type != GENL_ID_CTRL) ipvs_seen = true;
    else if (ipvs_seen) return true;
  }
  return false;
}

using FamilyId = ipvs::FamilyIdRef;

// ExecuteJob::Run (handle.cc), with its results where checks can see them.
void Execute(addon::Channel& ch, const FamilyId& id, const std::vector<uint8_t>& templates) {
  const size_t n = templates.size();
  std::vector<uint8_t> records(n * ipvs::rec::kRequestSize);
  ipvs::RequestBatch in;
  std::vector<nl::Bytes> expected;
  for (size_t i = 0; i < n; i++) {
    const Request r = Template(templates[i]);
    ipvs::rec::WriteRequest(r, records.data() + i * ipvs::rec::kRequestSize, in.strings);
  }
  in.data = records.data();
  in.count = n;
  for (size_t i = 0; i < n; i++) {
    Request r;
    std::string err;
    Require(ipvs::rec::ReadRequest(in.data, i, in.strings, r, err), "a valid record is read back");
    expected.push_back(ipvs::Encode(r, 0));
  }
  ipvs::rec::ReplyWriter out;
  ipvs::JsRequests batch(out, in);
  Require(batch.Check().ok(), "valid records pass Check");
  const size_t from = fuzz::KernelSent().size();
  nl::Status st;
  {
    std::lock_guard<std::mutex> g(ch.mutex());
    st = batch.Run(ch, *id);
  }
  Trace("execute", out, batch.failures(), st);
  CheckOutput(out, batch.failures(), n, st, Resent(from));
  CheckWire(from, expected);
}

// DumpJob::Run (dump_job.cc, without a stream), likewise.
void Dump(addon::Channel& ch, const FamilyId& id) {
  std::lock_guard<std::mutex> g(ch.mutex());
  const size_t from = fuzz::KernelSent().size();
  ipvs::rec::ReplyWriter out;
  bool broken = false;
  ipvs::ServiceDump services(out, nullptr, &broken);
  nl::Status st = services.Run(ch, *id);
  std::vector<ipvs::Failure> failures = std::move(services.failures());
  Trace("services", out, failures, st);
  CheckOutput(out, failures, 1, st, Resent(from));
  if (st.ok() && failures.empty()) {
    const std::vector<uint8_t>& b = out.bytes();
    size_t listed = 0;
    for (size_t at = 0; at < b.size(); at += ipvs::rec::kReplySize)
      listed += b[at + ipvs::rec::rep::kKind] == ipvs::rec::kService;
    // Destinations are attributed by position: request i + 1 lists those
    // of service record i.
    Require(services.keys.size() == listed, "dump: one service key per service record");
  }
  if (!st.ok() || !failures.empty()) return;
  std::vector<nl::Bytes> expected;
  {
    Request r;
    r.cmd = IPVS_CMD_GET_SERVICE;
    r.dump = true;
    expected.push_back(ipvs::Encode(r, 0));
  }
  for (const ipvs::ServiceKey& k : services.keys) {
    Request r;
    r.cmd = IPVS_CMD_GET_DEST;
    r.dump = r.has_service = r.service_key_only = true;
    r.service.key = k;
    expected.push_back(ipvs::Encode(r, 0));
  }
  const size_t from_dests = fuzz::KernelSent().size();
  const size_t services_bytes = out.bytes().size();
  ipvs::DestinationDumps dests(out, services.keys, nullptr, &broken);
  st = dests.Run(ch, *id);
  Trace("destinations", out, dests.failures(), st);
  CheckOutput(out, dests.failures(), 1 + services.keys.size(), st, Resent(from_dests), 1, services_bytes);
  CheckWire(from, expected);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const size_t n = 1 + data[4] % 12;
  if (size < 5 + n) return 0;
  fuzz::KernelConfig kc;
  kc.rcvbuf = 1024 << (data[1] % 14);
  kc.sndbuf = 1024 << (data[2] % 13);
  if (data[0] & 4) {
    kc.fail_sendmsg_at = (data[0] & 16) ? 2 : 1;
    kc.sendmsg_errno = (data[0] & 8) ? EINTR : ENOBUFS;
  }
  fuzz::KernelReset(data + 5 + n, size - 5 - n, kc);

  nl::SocketOptions opts;
  opts.protocol = NETLINK_GENERIC;
  opts.timeout_ms = 0;  // an answer the script does not hold never comes
  opts.max_dump_retries = data[3] % 4;
  FamilyId id = std::make_shared<std::atomic<uint16_t>>(0);
  // As IpvsHandle builds its channel.
  addon::Channel ch(opts, [id](nl::NetlinkSocket& s) { return ipvs::ResolveIpvs(s, *id); });
  const std::vector<uint8_t> templates(data + 5, data + 5 + n);
  switch (data[0] & 3) {
    case 0: Execute(ch, id, templates); break;
    case 1: Dump(ch, id); break;
    case 2: Execute(ch, id, templates); Dump(ch, id); break;
    case 3: Dump(ch, id); Execute(ch, id, templates); break;
  }
  return 0;
}
