#include "channel.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace addon {

nl::Status Channel::Ensure() {
  if (close_requested_.load(std::memory_order_relaxed)) CloseNow();
  if (closed_) return nl::Status::Errno(EBADF, "open", "the handle is closed");
  if (!opts_.netns.empty()) {
    struct stat st;
    const bool there = stat(opts_.netns.c_str(), &st) == 0;
    if (have_netns_id_ && (netns_gone_ || !there || st.st_dev != netns_dev_ || st.st_ino != netns_ino_)) {
      netns_gone_ = true;
      UnpinNetns();
      // Our socket may still hold the namespace, but nothing else can reach
      // it: let it go, and say so on every call.
      sock_.reset();
      return nl::Status::Errno(ENOENT, "netns",
                               "the network namespace " + opts_.netns +
                                   " is gone (deleted, or replaced by another one): this handle "
                                   "cannot reach the namespace it was opened in; open a new handle");
    }
    if (!have_netns_id_ && there) {
      have_netns_id_ = true;
      netns_pin_ = open(opts_.netns.c_str(), O_RDONLY | O_CLOEXEC);
      netns_dev_ = st.st_dev;
      netns_ino_ = st.st_ino;
    }
  }
  if (sock_) return nl::Status::Ok();
  std::unique_ptr<nl::NetlinkSocket> s;
  nl::Status st = nl::NetlinkSocket::Open(opts_, s);
  if (!st.ok()) return st;
  // Counted from its first message: the family's own (on_open_) too.
  s->count_into(&counters_);
  if (on_open_) {
    st = on_open_(*s);
    if (!st.ok()) return st;
  }
  if (deaf_sockets_left_ > 0) {
    deaf_sockets_left_--;
    s->set_drop_replies(true);
  }
  s->set_close_flag(&close_requested_);
  sock_ = std::move(s);
  return nl::Status::Ok();
}

nl::Status Channel::Transact(nl::Batch& batch) {
  nl::Status st = Ensure();
  if (!st.ok()) {
    // Nothing went out (the handle was closed since the caller's own
    // Ensure(), or no socket could be opened): say so, so that no caller
    // takes these for requests lost on the way.
    nl::Outcome o;
    o.error = st.err;
    o.message = st.message;
    o.where = st.where.c_str();  // read during OnDone only, while st lives
    o.sent = false;
    for (size_t i = 0; i < batch.size(); i++) batch.OnDone(i, o);
    return st;
  }
  st = sock_->Transact(batch);
  if (!st.ok()) {
    // Whatever was in flight may still answer later: never reuse this socket.
    sock_.reset();
  }
  if (close_requested_.load(std::memory_order_relaxed)) CloseNow();
  return st;
}

nl::Status Channel::Transact(std::vector<nl::Exchange>& batch) {
  nl::ExchangeBatch b(batch);
  return Transact(b);
}

void Channel::CloseNow() {
  closed_ = true;
  sock_.reset();
  UnpinNetns();
}

void Channel::UnpinNetns() {
  if (netns_pin_ >= 0) close(netns_pin_);
  netns_pin_ = -1;
}

}  // namespace addon
