#include "channel.h"

#include <errno.h>

namespace addon {

nl::Status Channel::Ensure() {
  if (closed_) return nl::Status::Errno(EBADF, "open", "the handle is closed");
  if (sock_) return nl::Status::Ok();
  std::unique_ptr<nl::NetlinkSocket> s;
  nl::Status st = nl::NetlinkSocket::Open(opts_, s);
  if (!st.ok()) return st;
  if (on_open_) {
    st = on_open_(*s);
    if (!st.ok()) return st;
  }
  if (deaf_sockets_left_ > 0) {
    deaf_sockets_left_--;
    s->set_drop_replies(true);
  }
  sock_ = std::move(s);
  return nl::Status::Ok();
}

nl::Status Channel::Transact(nl::Batch& batch) {
  nl::Status st = Ensure();
  if (!st.ok()) {
    nl::Outcome o;
    o.error = st.err;
    o.message = st.message;
    for (size_t i = 0; i < batch.size(); i++) batch.OnDone(i, o);
    return st;
  }
  st = sock_->Transact(batch);
  if (!st.ok()) {
    // Whatever was in flight may still answer later: never reuse this socket.
    retired_ += sock_->counters();
    sock_.reset();
  }
  return st;
}

nl::Status Channel::Transact(std::vector<nl::Exchange>& batch) {
  nl::ExchangeBatch b(batch);
  return Transact(b);
}

nl::SocketCounters Channel::counters() const {
  nl::SocketCounters c = retired_;
  if (sock_) c += sock_->counters();
  return c;
}

}  // namespace addon
