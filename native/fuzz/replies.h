// Replies as a handle's Exchange-based jobs receive them (ipset's RunOne
// and session lookups, the rtnetlink jobs): the fuzz input is a script for
// the fake kernel (fake_kernel.h), and the datagrams go through the real
// NetlinkSocket and Transaction (Receive, SplitMessages, OnMessage, the
// Exchange adapter) one request at a time, each collecting data until
// NLMSG_DONE or an error, for as long as the script lasts. A broken
// conversation gets a fresh socket, as Channel does. Each data message
// reaches on_data as the bytes Exchange::replies holds; each error's
// echoed request reaches on_echo.
#pragma once

#include <memory>
#include <vector>

#include "../netlink/socket.h"
#include "fake_kernel.h"

namespace fuzz {

// on_data(bytes) returns false to stop (the handles stop at the first
// malformed reply of a request).
template <typename OnData, typename OnEcho>
void ForEachReply(const uint8_t* data, size_t size, int protocol, uint16_t request_type,
                  OnData on_data, OnEcho on_echo) {
  KernelReset(data, size, KernelConfig{});
  nl::SocketOptions opts;
  opts.protocol = protocol;
  opts.timeout_ms = 0;  // an answer the script does not hold never comes
  std::unique_ptr<nl::NetlinkSocket> sock;
  // Each round consumes at least one entry or ends in a timeout.
  for (int round = 0; KernelHasMore() && round < 64; round++) {
    if (!sock) Require(nl::NetlinkSocket::Open(opts, sock).ok(), "the fake socket opens");
    std::vector<nl::Exchange> batch(1);
    nl::MessageBuilder b(request_type, 0);
    batch[0].request = b.Finish();
    batch[0].dump = true;
    const nl::Status st = sock->Transact(batch);
    const nl::Exchange& x = batch[0];
    // Every request ends. (A broken conversation need not be its outcome:
    // the break may come after the answer, e.g. a malformed datagram in
    // the same recvmmsg batch.)
    Require(x.done, "every request ends");
    for (const nl::Bytes& m : x.replies) {
      Require(m.size() >= NLMSG_HDRLEN, "a reply holds its header");
      if (!on_data(m)) break;
    }
    if (x.error && !x.error_echo.empty()) on_echo(x.error_echo);
    if (!st.ok()) sock.reset();
  }
}

}  // namespace fuzz
