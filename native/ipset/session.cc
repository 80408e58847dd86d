#include "session.h"

#include <errno.h>

#include <algorithm>

#include "codec.h"

namespace ipset {

namespace {

// One request expecting one data reply, on the given socket.
nl::Status AskSocket(nl::NetlinkSocket& s, nl::Bytes request, nl::Exchange& x) {
  x = nl::Exchange{};
  x.request = std::move(request);
  x.expects_data = true;
  std::vector<nl::Exchange> batch(1);
  batch[0] = std::move(x);
  nl::Status st = s.Transact(batch);
  x = std::move(batch[0]);
  return st;
}

}  // namespace

nl::Status Negotiate(nl::NetlinkSocket& s, Session& session) {
  return NegotiateWith([&s](nl::Bytes request, nl::Exchange& x) { return AskSocket(s, std::move(request), x); },
                       session);
}

nl::Status NegotiateWith(const Ask& ask, Session& session) {
  session.revisions.clear();
  nl::Exchange x;
  nl::Status st = ask(EncodeProtocol(IPSET_PROTOCOL), x);
  if (!st.ok()) return st;
  // A kernel that speaks only an older protocol refuses ours by number
  // (before protocol 7, the kernel wanted exactly its own version).
  if (x.error == IPSET_ERR_PROTOCOL) {
    st = ask(EncodeProtocol(IPSET_PROTOCOL_MIN), x);
    if (!st.ok()) return st;
  }
  if (x.error == EPROTONOSUPPORT || x.error == ENOENT)
    return nl::Status::Errno(EPROTONOSUPPORT, "IPSET_CMD_PROTOCOL",
                             "this kernel has no ipset: load the ip_set module (modprobe ip_set)");
  if (x.error) return nl::Status::Errno(x.error, "IPSET_CMD_PROTOCOL", x.ext_message);
  if (x.replies.empty())
    return nl::Status::Errno(EBADMSG, "IPSET_CMD_PROTOCOL", "the kernel sent no protocol version");
  ProtocolReply r;
  std::string err;
  if (!DecodeProtocol(x.replies[0], r, err))
    return nl::Status::Errno(EBADMSG, "IPSET_CMD_PROTOCOL", "malformed reply: " + err);
  const uint8_t version = std::min<uint8_t>(r.version, IPSET_PROTOCOL);
  if (version < IPSET_PROTOCOL_MIN)
    return nl::Status::Errno(EPROTONOSUPPORT, "IPSET_CMD_PROTOCOL",
                             "the kernel speaks ipset protocol " + std::to_string(r.version) +
                                 "; at least " + std::to_string(IPSET_PROTOCOL_MIN) +
                                 " is needed");
  session.protocol = version;
  session.kernel_protocol = r.version;
  session.kernel_min = r.min;
  return nl::Status::Ok();
}

nl::Status PickRevision(nl::NetlinkSocket& s, Session& session, const SetType& type,
                        uint8_t* revision, int* kernel_error) {
  *kernel_error = 0;
  auto it = session.revisions.find(type.name);
  if (it != session.revisions.end()) {
    *revision = it->second;
    return nl::Status::Ok();
  }
  nl::Exchange x;
  nl::Status st = AskSocket(s, EncodeTypeQuery(type, session.protocol), x);
  if (!st.ok()) return st;
  if (x.error) {
    *kernel_error = x.error;
    return nl::Status::Ok();
  }
  TypeReply r;
  std::string err;
  if (x.replies.empty() || !DecodeTypeReply(x.replies[0], r, err))
    return nl::Status::Errno(EBADMSG, "IPSET_CMD_TYPE", "malformed reply: " + err);
  if (r.revision_min > type.max_revision) {
    // Every revision this kernel offers is newer than the ones we know.
    *kernel_error = IPSET_ERR_FIND_TYPE;
    return nl::Status::Ok();
  }
  *revision = std::min(r.revision, type.max_revision);
  session.revisions[type.name] = *revision;
  return nl::Status::Ok();
}

}  // namespace ipset
