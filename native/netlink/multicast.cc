#include "multicast.h"

#include <errno.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

namespace nl {

MulticastReader::MulticastReader(size_t max_queued, Wake wake, std::string what)
    : max_queued_(max_queued), wake_(std::move(wake)), what_(std::move(what)) {}

MulticastReader::~MulticastReader() {
  Stop();
  if (stop_fd_ >= 0) close(stop_fd_);
}

Status MulticastReader::Start(const SocketOptions& socket, const std::vector<int>& groups,
                              const std::string& no_group_hint) {
  Status st = NetlinkSocket::Open(socket, sock_);
  if (!st.ok()) return st;
  for (int group : groups) {
    if (setsockopt(sock_->fd(), SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof group) < 0)
      return Status::Errno(errno, "setsockopt",
                           "NETLINK_ADD_MEMBERSHIP " + std::to_string(group) +
                               (errno == ENOENT || errno == EINVAL ? ": " + no_group_hint : ""));
  }
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) return Status::Errno(errno, "eventfd");
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

void MulticastReader::Stop() {
  if (stopping_.exchange(true)) return;
  if (stop_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!write(stop_fd_, &one, sizeof one);
  }
  // Under the lock: a reader between checking for room and sleeping would
  // otherwise miss the notification and sleep for good.
  { std::lock_guard<std::mutex> g(mu_); }
  room_.notify_all();
  if (thread_.joinable()) thread_.join();
  sock_.reset();
}

Status MulticastReader::Taken() {
  woken_ = false;
  room_.notify_all();
  return error_;
}

bool MulticastReader::ShouldWake() {
  const bool wake = !woken_;
  woken_ = true;
  return wake;
}

void MulticastReader::Fail(Status st) {
  {
    std::lock_guard<std::mutex> g(mu_);
    error_ = std::move(st);
    woken_ = true;
  }
  wake_();
}

bool MulticastReader::Drain(uint8_t* buf, size_t size) {
  std::vector<Message> parts;
  std::string why;
  for (;;) {
    // A flood would keep the reader here until the queue filled: a stop ends it at once.
    if (stopping_) return false;
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
        // The kernel dropped messages; the socket goes on with the next ones.
        bool wake;
        {
          std::lock_guard<std::mutex> g(mu_);
          QueueOverrun();
          wake = ShouldWake();
        }
        if (wake) wake_();
        continue;
      }
      Fail(Status::Errno(errno, "recvmsg", what_));
      return false;
    }
    if (from.nl_pid != 0) continue;  // only the kernel speaks here
    if (mh.msg_flags & MSG_TRUNC) {
      Fail(Status::Errno(EMSGSIZE, "recvmsg", what_ + ": a message was larger than the read buffer"));
      return false;
    }
    parts.clear();
    if (!SplitMessages(buf, static_cast<size_t>(n), parts, why)) {
      Fail(Status::Errno(EBADMSG, "recvmsg", why));
      return false;
    }
    bool wake = false, ok = true, full;
    {
      std::lock_guard<std::mutex> g(mu_);
      const size_t before = Queued();
      for (const Message& m : parts)
        if (!(ok = Queue(m, why))) break;
      if (Queued() != before) wake = ShouldWake();
      full = Queued() >= max_queued_;
    }
    if (wake) wake_();
    if (!ok) {
      Fail(Status::Errno(EBADMSG, "recvmsg", what_ + ": malformed message: " + why));
      return false;
    }
    if (full) return true;  // Run() waits for room
  }
}

void MulticastReader::Run() {
  constexpr size_t kBuf = 64 * 1024;
  std::unique_ptr<uint8_t[]> buf(new uint8_t[kBuf]);
  while (!stopping_) {
    {
      // A consumer that does not keep up: stop reading and let the
      // kernel drop (and then report) what does not fit its buffer.
      std::unique_lock<std::mutex> g(mu_);
      room_.wait(g, [this] { return stopping_ || Queued() < max_queued_; });
    }
    if (stopping_) break;
    pollfd p[2] = {{sock_->fd(), POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    const int r = poll(p, 2, -1);
    if (r < 0) {
      if (errno == EINTR) continue;
      Fail(Status::Errno(errno, "poll", what_));
      return;
    }
    if (p[1].revents) break;
    if (p[0].revents && !Drain(buf.get(), kBuf)) return;
  }
}

}  // namespace nl
