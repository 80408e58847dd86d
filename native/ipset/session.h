// Per-socket ipset state: the negotiated protocol version and the revision
// to create each set type with. Negotiated on every fresh socket (the
// Channel's OnOpen hook) so a handle works the same on old and new kernels.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>

#include "../netlink/socket.h"
#include "types.h"

namespace ipset {

struct Session {
  // Written by OnOpen and read by jobs, both under the channel mutex; the
  // JavaScript thread reads them (protocol()) without it, hence atomics.
  std::atomic<uint8_t> protocol{0};
  std::atomic<uint8_t> kernel_protocol{0};
  std::atomic<uint8_t> kernel_min{0};
  // type name -> revision, for this socket. Channel mutex held.
  std::map<std::string, uint8_t> revisions;
};

// Sends IPSET_CMD_PROTOCOL and picks min(kernel's version, IPSET_PROTOCOL);
// fails unless that is at least IPSET_PROTOCOL_MIN.
nl::Status Negotiate(nl::NetlinkSocket& s, Session& session);

// The same conversation through `ask`, which sends one request that expects
// a data reply and fills in the exchange (unit tests play the kernel).
using Ask = std::function<nl::Status(nl::Bytes request, nl::Exchange& x)>;
nl::Status NegotiateWith(const Ask& ask, Session& session);

// The revision to create `type` with: the kernel's maximum (IPSET_CMD_TYPE,
// asked once per socket) capped at the highest one we know. A kernel
// error (e.g. IPSET_ERR_FIND_TYPE) is returned in `kernel_error`.
nl::Status PickRevision(nl::NetlinkSocket& s, Session& session, const SetType& type,
                        uint8_t* revision, int* kernel_error);

}  // namespace ipset
