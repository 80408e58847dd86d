// Netlink sockets in another network namespace.
#pragma once

#include <string>

#include "status.h"

namespace nl {

// Creates an AF_NETLINK socket of `protocol` inside the network namespace
// at `path` (/run/netns/NAME, /proc/PID/ns/net). setns() changes only the
// calling thread, so this runs on a throwaway thread: if switching back
// fails, that thread simply ends and no other work ever runs in the wrong
// namespace (the approach of mdlayher/socket's withNetNS).
Status SocketInNamespace(const std::string& path, int protocol, int* fd_out);

}  // namespace nl
