// Work that talks to the kernel runs as a Job: Run() on a libuv pool thread
// (it may block on the socket), Result() back on the JavaScript thread. The
// event loop never waits on the kernel.
#pragma once

#include <napi.h>

#include <memory>

#include "../netlink/socket.h"

namespace addon {

class Job {
 public:
  virtual ~Job() = default;
  // Worker thread. Must not touch Napi values. Sets `status` when the
  // conversation with the kernel failed as a whole.
  virtual void Run() = 0;
  // JavaScript thread, only when `status` is ok.
  virtual Napi::Value Result(Napi::Env env) = 0;

  nl::Status status;
};

// Runs the job off-thread; the promise resolves with Result() or rejects
// with an Error carrying errno, code and syscall.
Napi::Promise Schedule(Napi::Env env, std::unique_ptr<Job> job);

// An Error for a failed conversation: { message, errno, code, syscall }.
Napi::Error StatusError(Napi::Env env, const nl::Status& st);

// Helpers for building results.
Napi::Value ErrorFields(Napi::Env env, const nl::Exchange& x);  // {errno, code, message}

}  // namespace addon
