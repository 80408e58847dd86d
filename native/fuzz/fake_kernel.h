// A scripted netlink peer for the fuzz targets, so that fuzzed datagrams
// go through the addon's real socket code (nl::NetlinkSocket: Open,
// Send, Receive; nl::Transaction: SendNext, OnMessage, Finish) and not
// through a copy of it. The fuzz binary defines the socket syscalls that
// native/netlink calls (socket, setsockopt, getsockopt, bind, getsockname,
// sendmsg, recvmmsg, poll); for AF_NETLINK sockets they talk to this fake
// kernel, for anything else they pass through to libc. Executable symbols
// win over libc's (and over the sanitizer runtime's weak interceptors), so
// the socket code is compiled and linked unchanged.
//
// The script (fuzz input) is a list of entries, each one thing recvmmsg
// returns:
//   u8 ctl, u16 len (little endian), len bytes
// ctl bits:
//   kSameBurst  deliver in the same recvmmsg call as the entry before
//               (otherwise each recvmmsg call returns one datagram, so the
//               socket sends its next requests between datagrams, as with a
//               real kernel that answers as it goes)
//   kTrunc      the datagram is flagged MSG_TRUNC
//   kForeign    it comes from another process (nl_pid != 0)
//   kRaw        sequence numbers and port ids are delivered as written
//   kErrno      not a datagram: recvmmsg fails; the first byte picks the
//               errno (EAGAIN once, EINTR, ENOBUFS, EBADF)
// Unless kRaw, each message's header is patched on delivery, so inputs
// need not guess the sequence numbers a run happens to use:
//   nlmsg_seq 0          -> the latest request sent on this socket
//   nlmsg_seq 1..0xffff  -> the k-th request sent on this socket (1-based;
//                           past the last one: a sequence not yet used)
//   anything else        -> as written (stale or foreign)
//   nlmsg_pid 0          -> the socket's port id (as the kernel answers)
// The seeds (native/fuzz/seeds.mjs) turn recorded kernel replies into
// scripts: seq 0, or the index of the request a reply answered.
//
// sendmsg checks what the socket core promises about what it sends (each
// message whole and padded, NLM_F_REQUEST, our port id, consecutive
// sequence numbers, only the last message of a sendmsg asking for an ack
// when it is a plain request, a dump always last) and aborts if not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fuzz {

constexpr uint8_t kSameBurst = 1, kTrunc = 2, kForeign = 4, kRaw = 8, kErrno = 16;

struct KernelConfig {
  int rcvbuf = 8 << 20;     // what getsockopt(SO_RCVBUF) reports
  int sndbuf = 4 << 20;     // what getsockopt(SO_SNDBUF) reports
  int fail_sendmsg_at = 0;  // this sendmsg call (1-based, across sockets) fails; 0: none
  int sendmsg_errno = 0;    // with this errno (EINTR is retried by the socket)
};

// One request the fake kernel received.
struct Sent {
  int socket;          // which socket (0 = the first opened since Reset)
  uint16_t type;
  uint16_t flags;
  uint32_t seq;
  uint8_t genl_cmd;    // the generic netlink command byte, 0 if too short
  int sendmsg_call;    // which sendmsg carried it (1-based, across sockets)
  bool last;           // the last message of its sendmsg
  std::vector<uint8_t> bytes;
};

// Starts a new conversation: forgets every socket and takes a new script
// (not copied: it must outlive the run).
void KernelReset(const uint8_t* script, size_t len, const KernelConfig& config);
// Script entries not delivered yet.
bool KernelHasMore();
// Every request received since Reset, in order.
const std::vector<Sent>& KernelSent();
// Sockets opened since Reset.
int KernelSockets();

// Appends a script entry (for tests of the targets and for seeds made in C++).
void AppendEntry(std::vector<uint8_t>& script, uint8_t ctl, const uint8_t* data, size_t len);

// Aborts with a message: an invariant of the code under test is broken.
[[noreturn]] void Broken(const std::string& what);
inline void Require(bool ok, const char* what) {
  if (!ok) Broken(what);
}

}  // namespace fuzz
