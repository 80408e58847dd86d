// A Channel is one handle's connection to the kernel: the socket options, the
// socket itself (opened lazily, replaced after a broken conversation) and a
// per-family hook that runs on every fresh socket (e.g. resolving the genl
// family id). Jobs of one handle run one at a time under its mutex.
#pragma once

#include <functional>
#include <memory>
#include <mutex>

#include "../netlink/socket.h"

namespace addon {

class Channel {
 public:
  using OnOpen = std::function<nl::Status(nl::NetlinkSocket&)>;

  Channel(nl::SocketOptions opts, OnOpen on_open)
      : opts_(std::move(opts)), on_open_(std::move(on_open)),
        deaf_sockets_left_(opts_.test_deaf_sockets) {}

  // Opens the socket if there is none. Call with mutex() held.
  nl::Status Ensure();
  // Runs a batch on the socket; a broken conversation closes the socket so
  // the next call starts on a fresh one. Call with mutex() held.
  nl::Status Transact(std::vector<nl::Exchange>& batch);
  nl::Status Transact(nl::Batch& batch);
  // Drops the socket (after a timeout, or when asked to reconnect).
  void Reset() { sock_.reset(); }
  void Close() {
    std::lock_guard<std::mutex> g(mu_);
    closed_ = true;
    sock_.reset();
    UnpinNetns();
  }
  ~Channel() { UnpinNetns(); }
  bool closed() const { return closed_; }

  std::mutex& mutex() { return mu_; }
  nl::NetlinkSocket* socket() { return sock_.get(); }
  const nl::SocketOptions& options() const { return opts_; }
  // Totals across every socket this channel has used.
  nl::SocketCounters counters() const;

 private:
  void UnpinNetns();
  nl::SocketOptions opts_;
  OnOpen on_open_;
  std::unique_ptr<nl::NetlinkSocket> sock_;
  nl::SocketCounters retired_;
  std::mutex mu_;
  bool closed_ = false;
  int deaf_sockets_left_ = 0;
  // The namespace the first socket was opened in (opts_.netns), by its nsfs
  // device and inode: a path that no longer names it means it is gone.
  bool have_netns_id_ = false, netns_gone_ = false;
  unsigned long long netns_dev_ = 0, netns_ino_ = 0;
  int netns_pin_ = -1;  // keeps the namespace's inode number from being reused
};

}  // namespace addon
