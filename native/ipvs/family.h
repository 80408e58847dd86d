// Finding IPVS: the generic netlink family id, resolved on every fresh
// socket and again after a module reload.
#pragma once

#include <atomic>
#include <cstdint>

#include "../netlink/socket.h"

namespace ipvs {

// Looks up the "IPVS" family and stores its id. A kernel without IPVS is
// EPROTONOSUPPORT with a message that says so and what to do.
nl::Status ResolveIpvs(nl::NetlinkSocket& s, std::atomic<uint16_t>& id);

}  // namespace ipvs
