// The outcome of talking to the kernel, kept apart from what the kernel
// answered to each request: a Status is a failure of the conversation itself
// (a system call failed, no reply came in time, the reply was malformed).
#pragma once

#include <string>

namespace nl {

struct Status {
  int err = 0;          // errno (positive); 0 means success
  std::string where;    // the system call or step that failed
  std::string message;  // human-readable detail

  bool ok() const { return err == 0; }
  static Status Ok() { return {}; }
  static Status Errno(int e, std::string where, std::string message = "") {
    return Status{e, std::move(where), std::move(message)};
  }
};

}  // namespace nl
