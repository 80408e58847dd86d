#include "netns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

namespace nl {

Status SocketInNamespace(const std::string& path, int protocol, int* fd_out) {
  Status st;
  std::thread t([&] {
    int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (self < 0) {
      st = Status::Errno(errno, "open", "/proc/thread-self/ns/net");
      return;
    }
    int target = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (target < 0) {
      st = Status::Errno(errno, "open", "network namespace " + path);
      close(self);
      return;
    }
    if (setns(target, CLONE_NEWNET) < 0) {
      st = Status::Errno(errno, "setns", "entering network namespace " + path);
      close(target);
      close(self);
      return;
    }
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
    int sock_errno = errno;
    setns(self, CLONE_NEWNET);  // the thread ends next, restored or not
    close(target);
    close(self);
    if (fd < 0) {
      st = Status::Errno(sock_errno, "socket", "AF_NETLINK in " + path);
      return;
    }
    *fd_out = fd;
  });
  t.join();
  return st;
}

}  // namespace nl
