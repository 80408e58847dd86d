// A Channel is one handle's connection to the kernel: the socket options, the
// socket itself (opened lazily, replaced after a broken conversation) and a
// per-family hook that runs on every fresh socket (e.g. resolving the genl
// family id). Jobs of one handle run one at a time under its mutex.
#pragma once

#include <atomic>
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
  // Called on the JavaScript thread, so it never waits for a job: with none
  // running the socket goes at once; otherwise the job's conversation sends
  // nothing more, reads the answers to what it already sent, and the socket
  // goes when the job lets go of it (every request not sent ends EBADF).
  void Close() {
    close_requested_.store(true, std::memory_order_relaxed);
    std::unique_lock<std::mutex> l(mu_, std::try_to_lock);
    if (l.owns_lock()) CloseNow();
  }
  ~Channel() { UnpinNetns(); }

  // Called on the JavaScript thread once the handle's caller is idle:
  // gives back what a big transaction grew (NetlinkSocket::
  // ReleaseIdleBuffers) and returns its bytes. Never waits: while a job
  // runs, the caller is not idle, and nothing is done.
  size_t ReleaseIdleBuffers() {
    std::unique_lock<std::mutex> l(mu_, std::try_to_lock);
    return l.owns_lock() && sock_ ? sock_->ReleaseIdleBuffers() : 0;
  }
  // The socket's buffers resident now, for tests; 0 while a job runs.
  size_t BufferResidentBytes() {
    std::unique_lock<std::mutex> l(mu_, std::try_to_lock);
    return l.owns_lock() && sock_ ? sock_->BufferResidentBytes() : 0;
  }

  std::mutex& mutex() { return mu_; }
  nl::NetlinkSocket* socket() { return sock_.get(); }
  const nl::SocketOptions& options() const { return opts_; }
  // Totals across every socket this channel has used; safe on any thread,
  // while a job runs too.
  nl::SocketCounters counters() const { return counters_.Read(); }

 private:
  // Close()'s work, with mutex() held.
  void CloseNow();
  void UnpinNetns();
  nl::SocketOptions opts_;
  OnOpen on_open_;
  // Every socket of the channel counts into these (declared before the
  // socket, so they outlive it).
  nl::LiveCounters counters_;
  std::unique_ptr<nl::NetlinkSocket> sock_;
  std::mutex mu_;
  bool closed_ = false;
  // Set by Close() from the JavaScript thread while a job may be running;
  // the socket's conversations read it (NetlinkSocket::set_close_flag).
  std::atomic<bool> close_requested_{false};
  int deaf_sockets_left_ = 0;
  // The namespace the first socket was opened in (opts_.netns), by its nsfs
  // device and inode: a path that no longer names it means it is gone.
  bool have_netns_id_ = false, netns_gone_ = false;
  unsigned long long netns_dev_ = 0, netns_ino_ = 0;
  int netns_pin_ = -1;  // keeps the namespace's inode number from being reused
};

}  // namespace addon
