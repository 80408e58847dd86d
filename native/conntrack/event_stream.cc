#include "event_stream.h"

#include <errno.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstring>

#include "../netlink/message.h"
#include "codec.h"
#include "filter.h"

namespace conntrack {

nl::Status EventStream::Open(const EventOptions& opts, Wake wake, std::unique_ptr<EventStream>& out) {
  std::unique_ptr<nl::NetlinkSocket> sock;
  nl::Status st = nl::NetlinkSocket::Open(opts.socket, sock);
  if (!st.ok()) return st;
  for (int group = NFNLGRP_CONNTRACK_NEW; group <= NFNLGRP_CONNTRACK_DESTROY; group++) {
    if (!(opts.groups & (1u << group))) continue;
    if (setsockopt(sock->fd(), SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof group) < 0)
      return nl::Status::Errno(errno, "setsockopt",
                               "NETLINK_ADD_MEMBERSHIP " + std::to_string(group) +
                                   (errno == ENOENT || errno == EINVAL
                                        ? ": no conntrack events here (load nf_conntrack_netlink)"
                                        : ""));
  }
  const int stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd < 0) return nl::Status::Errno(errno, "eventfd");
  out.reset(new EventStream(std::move(sock), stop_fd, opts, std::move(wake)));
  out->thread_ = std::thread([s = out.get()] { s->Run(); });
  return nl::Status::Ok();
}

EventStream::EventStream(std::unique_ptr<nl::NetlinkSocket> sock, int stop_fd, const EventOptions& opts, Wake wake)
    : sock_(std::move(sock)), stop_fd_(stop_fd), opts_(opts), wake_(std::move(wake)) {}

EventStream::~EventStream() {
  Stop();
  close(stop_fd_);
}

void EventStream::Stop() {
  if (stopping_.exchange(true)) return;
  const uint64_t one = 1;
  (void)!write(stop_fd_, &one, sizeof one);
  room_.notify_all();
  if (thread_.joinable()) thread_.join();
  sock_.reset();
}

void EventStream::Take(rec::Writer& out, nl::Status& error) {
  std::lock_guard<std::mutex> g(mu_);
  out = std::move(queue_);
  queue_ = rec::Writer();
  error = error_;
  woken_ = false;
  room_.notify_all();
}

void EventStream::Push(const Entry* e) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (e) queue_.Add(*e, 0);
    else queue_.AddMarker(kOverrunRecord);
    wake = !woken_;
    woken_ = true;
  }
  if (wake) wake_();
}

void EventStream::Fail(nl::Status st) {
  {
    std::lock_guard<std::mutex> g(mu_);
    error_ = std::move(st);
    woken_ = true;
  }
  wake_();
}

bool EventStream::Drain(uint8_t* buf, size_t size) {
  std::vector<nl::Message> parts;
  Entry e;
  std::string why;
  for (;;) {
    sockaddr_nl from{};
    iovec iov{buf, size};
    msghdr mh{};
    mh.msg_name = &from;
    mh.msg_namelen = sizeof from;
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    const ssize_t n = recvmsg(sock_->fd(), &mh, MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
      if (errno == ENOBUFS) {
        // The kernel dropped events; the socket goes on with the next ones.
        Push(nullptr);
        continue;
      }
      Fail(nl::Status::Errno(errno, "recvmsg", "conntrack events"));
      return false;
    }
    if (from.nl_pid != 0) continue;  // only the kernel speaks here
    if (mh.msg_flags & MSG_TRUNC) {
      Fail(nl::Status::Errno(EMSGSIZE, "recvmsg", "an event was larger than the read buffer"));
      return false;
    }
    parts.clear();
    if (!nl::SplitMessages(buf, static_cast<size_t>(n), parts, why)) {
      Fail(nl::Status::Errno(EBADMSG, "recvmsg", why));
      return false;
    }
    for (const nl::Message& m : parts) {
      if ((m.hdr.nlmsg_type >> 8) != NFNL_SUBSYS_CTNETLINK) continue;
      if (!DecodeEntry(m.payload - NLMSG_HDRLEN, m.hdr.nlmsg_len, e, why)) {
        Fail(nl::Status::Errno(EBADMSG, "recvmsg", "malformed conntrack event: " + why));
        return false;
      }
      if (Matches(e, opts_.filter)) Push(&e);
    }
    std::lock_guard<std::mutex> g(mu_);
    if (queue_.count() >= opts_.max_queued) return true;  // Run() waits for room
  }
}

void EventStream::Run() {
  constexpr size_t kBuf = 64 * 1024;
  std::unique_ptr<uint8_t[]> buf(new uint8_t[kBuf]);
  while (!stopping_) {
    {
      // A consumer that does not keep up: stop reading and let the
      // kernel drop (and then report) what does not fit its buffer.
      std::unique_lock<std::mutex> g(mu_);
      room_.wait(g, [this] { return stopping_ || queue_.count() < opts_.max_queued; });
    }
    if (stopping_) break;
    pollfd p[2] = {{sock_->fd(), POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    const int r = poll(p, 2, -1);
    if (r < 0) {
      if (errno == EINTR) continue;
      Fail(nl::Status::Errno(errno, "poll", "conntrack events"));
      return;
    }
    if (p[1].revents) break;
    if (p[0].revents && !Drain(buf.get(), kBuf)) return;
  }
}

}  // namespace conntrack
